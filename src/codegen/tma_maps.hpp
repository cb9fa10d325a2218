#pragma once
// TMA tensor maps of the warp-specialised forward (sm_90a): Q, K and V described to the copy
// engine as 4-D (D, S, H, B) tensors with boxes of 64 columns by the kernel's tile rows and the
// 128-byte swizzle the wgmma shared-memory layout expects.
#include <string>

#include "flexjit/config.hpp"
#include "flexjit/tensor.hpp"
#include "../../templates/flexjit_params.cuh"

namespace flexjit::codegen {

// Why `t` (named `name`) cannot be read through TMA, or "" when it can: the first element must be
// 16-byte aligned and every stride but the last dimension's a multiple of 16 bytes.
std::string tma_unsupported_reason(const TensorView& t, const char* name);

// Encodes the three maps for a forward call with `config`'s tiles (q, k, v as checked by
// check_forward_tensors: [B, H, S, D] views, last dimension contiguous). Throws UsageError naming
// the tensor and the fix when a tensor cannot be read through TMA, and DriverError when the
// driver lacks cuTensorMapEncodeTiled or rejects the map.
FlexjitFwdTma encode_forward_tma(const TensorView& q, const TensorView& k, const TensorView& v,
                                 const BlockConfig& config);

}  // namespace flexjit::codegen
