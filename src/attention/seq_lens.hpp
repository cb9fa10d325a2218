#pragma once
// Per-sequence lengths of forward / backward calls (CallOptions::seq_lens): the host-side checks and
// the kernel parameter. Kernels built with SEQ_LENS take it as a parameter of their own.
#include "../../templates/flexjit_params.cuh"
#include "attention/tensor_checks.hpp"
#include "flexjit/block_mask.hpp"
#include "flexjit/expr.hpp"
#include "flexjit/seq_lens.hpp"

namespace flexjit::attention {

// Checks `lens` against the call's padded shape (`what`: "forward" or "backward"): device arrays
// [B] int32 with stride 1, host copies inside [0, Sq] / [0, Skv], and a block mask only when
// mask_mod does not read q_len or kv_len. Throws ShapeError (tensors, lengths) or UsageError (a
// block mask with a length-dependent mask_mod). Returns the kernel parameter.
FlexjitSeqLens check_seq_lens(const SeqLens& lens, const ProblemShape& shape, const Expr& mask_mod,
                              const BlockMask* block_mask, const char* what);

}  // namespace flexjit::attention
