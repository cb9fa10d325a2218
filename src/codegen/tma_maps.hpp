#pragma once
// TMA tensor maps of the warp-specialised forward (sm_90a): Q, K and V described to the copy
// engine as 4-D (D, S, H, B) tensors with boxes of 64 columns by the kernel's tile rows and the
// 128-byte swizzle the wgmma shared-memory layout expects.
#include <string>

#include "flexjit/config.hpp"
#include "flexjit/tensor.hpp"
#include "codegen/kernel_spec.hpp"
#include "../../templates/flexjit_params.cuh"

namespace flexjit::codegen {

// Who reads a tensor through TMA and how a caller avoids it, for the error messages.
struct TmaReader {
  const char* who;  // "the warp-specialised forward"
  const char* fix;  // "choose a config ending in 'g'"
};
inline constexpr TmaReader kForwardTmaReader{"the warp-specialised forward", "choose a config ending in 'g'"};
inline constexpr TmaReader kBackwardTmaReader{"the warp-specialised dK/dV kernel of the fast backward",
                                              "choose a dK/dV config ending in 'g' or run the deterministic backward"};
inline constexpr TmaReader kDecodeTmaReader{"decoding with a TMA config ('t')",
                                            "use a decode config without the trailing 't'"};

// Why `t` (named `name`) cannot be read through TMA, or "" when it can: the first element must be
// 16-byte aligned and every stride but the last dimension's a multiple of 16 bytes.
// `written`: the kernel stores to `t` through TMA (the message says so).
std::string tma_unsupported_reason(const TensorView& t, const char* name, const TmaReader& reader = kForwardTmaReader,
                                   bool written = false);

/// Query rows per box of the forward's output map: one consumer warpgroup's rows.
inline constexpr int kForwardOutputRows = 64;

// Encodes the four maps for a forward call with `config`'s tiles (q, k, v and out as checked by
// check_forward_tensors: [B, H, S, D] views, last dimension contiguous; the kernel stores O through
// the last). Throws UsageError naming the tensor and the fix when a tensor cannot go through TMA,
// and DriverError when the driver lacks cuTensorMapEncodeTiled or rejects the map.
FlexjitFwdTma encode_forward_tma(const TensorView& q, const TensorView& k, const TensorView& v,
                                 const TensorView& out, const BlockConfig& config);

// Encodes the maps of the warp-specialised dK/dV kernel (q, k, v, dout as checked by the
// backward: [B, H, S, D] views, last dimension contiguous); throws as encode_forward_tma.
FlexjitBwdTma encode_backward_tma(const TensorView& q, const TensorView& k, const TensorView& v,
                                  const TensorView& dout, const BlockConfig& config);

// Encodes the map of the fast backward's fp32 dQ accumulator ([batch, heads, q_len, head_dim],
// contiguous, from the library's own scratch) with boxes of 64 x 64, for the warp-specialised
// dK/dV kernel's reductions above head dim 128; throws DriverError as encode_forward_tma.
FlexjitTensorMap encode_dq_accum_tma(float* data, int batch, int heads, int q_len, int head_dim);

// The rows of each TMA box the decode kernel copies from a paged pool: a page's rows inside a
// key tile, gcd(page_size, block_n) (a contiguous cache's boxes are block_n rows).
int paged_decode_box_rows(int page_size, int block_n);

// KernelSpec::decode_box_rows for a decode call through `config`: paged_decode_box_rows where a TMA
// config's boxes cut its tiles, else 0 (boxes of whole tiles, or no TMA). Throws UsageError when
// those rows are no multiple of 8 (the swizzle's atom), naming the fix.
int decode_box_rows(const BlockConfig& config, bool paged, int page_size);

// The rows of each box a decode kernel's K and V tiles are cut into: spec.decode_box_rows, or
// block_n where the boxes are whole tiles (decode_box_rows 0). The template's KV_BOX_ROWS.
int decode_tile_box_rows(const KernelSpec& spec);

// Encodes the maps the decode kernel of `spec` (a TMA config) reads K and V through: a paged pool
// [num_pages, page_size, Hkv, D] by slot, head and page, a contiguous cache [B, Hkv, S, D] by S,
// head and B, with boxes of spec.decode_box_rows (0: block_n) rows. A tensor as wide as the
// kernel's tile (a multiple of 64 columns) gets a 5-D map whose box holds every slab (one copy per
// box), a narrower one a 4-D map with a box per slab (see FlexjitDecodeTma), as the kernel issues
// them. Throws UsageError when a tensor cannot be read through TMA, naming the fix.
FlexjitDecodeTma encode_decode_tma(const TensorView& k, const TensorView& v, const KernelSpec& spec);

}  // namespace flexjit::codegen
