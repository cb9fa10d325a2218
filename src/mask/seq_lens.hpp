#pragma once
// Per-sequence lengths of forward / backward calls and block masks (SeqLens): the host-side checks
// and the kernel parameter. Kernels built with SEQ_LENS take it as a parameter of their own.
#include "../../templates/flexjit_params.cuh"
#include "flexjit/block_mask.hpp"
#include "flexjit/expr.hpp"
#include "flexjit/seq_lens.hpp"

namespace flexjit::mask {

// Checks `lens` against a call's padded sizes (`what`: "forward", "backward" or "block mask"):
// device arrays [B] int32 with stride 1, host copies inside [0, q_len] / [0, kv_len]; and the
// block mask of the call, if any: tables built with other lengths (BlockMask::built_lengths) are
// refused, and tables of the padded lengths unless mask_mod ignores q_len and kv_len. Throws
// ShapeError (tensors, lengths) or UsageError (the block mask). Returns the kernel parameter.
FlexjitSeqLens check_seq_lens(const SeqLens& lens, int batch, int q_len, int kv_len, const Expr& mask_mod,
                              const BlockMask* block_mask, const char* what);

}  // namespace flexjit::mask
