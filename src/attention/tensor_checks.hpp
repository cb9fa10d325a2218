#pragma once
// Validation of the tensors handed to attention kernels: every message names the tensor, the
// dimension and what was expected, so a caller can fix the call without reading kernel code.
#include <cstdint>
#include <optional>
#include <string>

#include "flexjit/block_mask.hpp"
#include "flexjit/tensor.hpp"

namespace flexjit::attention {

// The longest sequence (queries, keys, a cache's capacity) a call takes: the kernels count rows,
// keys and tiles in 32-bit integers (a length rounded up to a tile, a tile's end, row statistics
// padded to whole tiles, the mods' q_idx + kv_len - q_len), and 2^30 leaves them room. Broadcast
// (stride-0) views make longer ones cheap to ask for.
constexpr int64_t kMaxSequenceLength = int64_t{1} << 30;

struct ProblemShape {
  int batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_dim = 0, head_dim_v = 0;
  bool negative_scale = false;  // the call's scale is negative (KernelSpec::negative_scale)
  bool small_scale = false;     // the call's scale is positive and small (KernelSpec::small_scale)
  // q, k and v can be read through TMA (strides positive, below 2^40 bytes): the warp-specialised
  // forward's condition. When not, a default or tuned 'ws' config runs as its 'g' twin.
  bool tma_ok = true;
  bool seq_lens = false;        // per-sequence lengths (KernelSpec::seq_lens)
  bool buffer_offsets_32 = false;  // the mods' buffers fit 32-bit reads (KernelSpec::buffer_offsets_32)
  bool fast_dq = false;         // backward, fast mode: the dK/dV kernel sums dQ (KernelSpec::dq_accumulate)
  bool ordered_dq = false;      // with fast_dq: in a fixed order (KernelSpec::dq_ordered, the deterministic mode)
  bool kv_head_splits = false;  // with fast_dq: GQA groups split over CTAs (KernelSpec::dkdv_head_splits)
  int gqa_group() const { return q_heads / kv_heads; }
};

// Checks one [B, H, S, D] operand: rank 4, dtype, contiguous last dim, 16-byte aligned pointer
// and strides (kernels move 16-byte vectors). `dim_names` label dimensions in messages.
void check_operand(const TensorView& t, const char* name, DType dtype);

// Checks q, k, v, out (and lse when its data is not null) against each other and the variant's
// dtype and head dims; returns the problem sizes.
ProblemShape check_forward_tensors(const TensorView& q, const TensorView& k, const TensorView& v,
                                   const TensorView& out, const TensorView& lse, DType dtype,
                                   int head_dim, int head_dim_v);

// Checks that `mask` was built for this problem (lengths, batch/head broadcast).
void check_block_mask(const BlockMask& mask, const ProblemShape& shape);

// The scale of a call: the given one (default 1/sqrt(head_dim)); 0, infinities and NaN are refused
// with a UsageError naming `what`, a negative scale is legal and returned as it is.
float checked_scale(std::optional<float> given, int head_dim, const char* what);

// Checks a [B, H, S] fp32 tensor such as lse or delta.
void check_row_stats(const TensorView& t, const char* name, const ProblemShape& shape);

// An output a kernel writes: no stride 0 on a dimension of more than one element (broadcast views
// are for inputs; written, their elements would race and overwrite each other).
void check_written(const TensorView& t, const char* name);

}  // namespace flexjit::attention
