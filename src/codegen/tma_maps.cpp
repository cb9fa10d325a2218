#include "codegen/tma_maps.hpp"

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "flexjit/error.hpp"
#include "jit/driver.hpp"

namespace flexjit::codegen {

namespace {

constexpr int kBoxColumns = 64;  // 128 bytes of 16-bit elements: one 128-byte-swizzle row

// The map of one [B, H, S, D] view with boxes of 64 x `rows`.
CUtensorMap encode(const TensorView& t, const char* name, int rows) {
  const std::string why = tma_unsupported_reason(t, name);
  if (!why.empty()) throw UsageError(why);
  const jit::Driver& d = jit::driver();
  if (d.cuTensorMapEncodeTiled == nullptr)
    throw DriverError("the CUDA driver has no cuTensorMapEncodeTiled (it predates CUDA 12); the "
                      "warp-specialised forward needs it — update the driver or use a config ending in 'g'",
                      -1);
  const uint64_t element = 2;
  // Innermost first: D, S, H, B.
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(t.shape[3]), static_cast<cuuint64_t>(t.shape[2]),
                              static_cast<cuuint64_t>(t.shape[1]), static_cast<cuuint64_t>(t.shape[0])};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(t.strides[2]) * element,
                                 static_cast<cuuint64_t>(t.strides[1]) * element,
                                 static_cast<cuuint64_t>(t.strides[0]) * element};
  const cuuint32_t box[4] = {kBoxColumns, static_cast<cuuint32_t>(rows), 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  const CUtensorMapDataType type =
      t.dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  FLEXJIT_CU(d.cuTensorMapEncodeTiled(&map, type, 4, t.data, dims, strides, box, element_strides,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

void copy_map(FlexjitTensorMap& dst, const CUtensorMap& src) {
  static_assert(sizeof(FlexjitTensorMap) == sizeof(CUtensorMap), "FlexjitTensorMap mirrors CUtensorMap");
  std::memcpy(&dst, &src, sizeof dst);
}

}  // namespace

std::string tma_unsupported_reason(const TensorView& t, const char* name) {
  const auto address = reinterpret_cast<std::uintptr_t>(t.data);
  if (address % 16 != 0)
    return std::string("the warp-specialised forward reads ") + name + " through TMA, which needs its first element "
           "16-byte aligned (it is at 0x" + [&] {
             char buf[32];
             std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(address));
             return std::string(buf);
           }() + ") — pass an aligned tensor or choose a config ending in 'g'";
  for (int dim = 0; dim < 3; ++dim) {
    const int64_t bytes = t.strides[dim] * 2;
    if (bytes % 16 != 0 || bytes <= 0 || bytes >= (int64_t{1} << 40))
      return std::string("the warp-specialised forward reads ") + name + " through TMA, which needs every stride "
             "but the last dimension's to be a positive multiple of 16 bytes below 2^40; " + name + " is " +
             t.describe() + " — make it contiguous or choose a config ending in 'g'";
  }
  return "";
}

FlexjitFwdTma encode_forward_tma(const TensorView& q, const TensorView& k, const TensorView& v,
                                 const BlockConfig& config) {
  FlexjitFwdTma maps;
  copy_map(maps.q, encode(q, "q", config.block_m));
  copy_map(maps.k, encode(k, "k", config.block_n));
  copy_map(maps.v, encode(v, "v", config.block_n));
  return maps;
}

}  // namespace flexjit::codegen
