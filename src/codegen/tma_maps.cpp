#include "codegen/tma_maps.hpp"

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <utility>
#include <algorithm>

#include "flexjit/error.hpp"
#include "jit/driver.hpp"

namespace flexjit::codegen {

namespace {

constexpr int kBoxColumns = 64;  // 128 bytes of 16-bit elements: one 128-byte-swizzle row

// The map of one [B, H, S, D] view with boxes of 64 x `rows`. `promotion`: how much the L2 fetches
// from DRAM around a box row's 128 bytes (see encode_decode_tma). `whole_slabs` (D a multiple of
// 64): 5-D instead, (64 columns, S, slab, H, B) with boxes of every slab by `rows` rows, so that one
// copy lands the box's slabs one after another, each `rows` x 128 bytes (WgmmaTile's boxes).
CUtensorMap encode(const TensorView& t, const char* name, int rows, const TmaReader& reader = kForwardTmaReader,
                   bool written = false, CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                   bool whole_slabs = false) {
  const std::string why = tma_unsupported_reason(t, name, reader, written);
  if (!why.empty()) throw UsageError(why);
  const jit::Driver& d = jit::driver();
  if (d.cuTensorMapEncodeTiled == nullptr)
    throw DriverError(std::string("the CUDA driver has no cuTensorMapEncodeTiled (it predates CUDA 12); ") + reader.who +
                          " needs it — update the driver or " + reader.fix,
                      -1);
  const uint64_t element = 2;
  const auto extent = [&](int dim) { return static_cast<cuuint64_t>(t.shape[dim]); };
  const auto stride = [&](int dim) { return static_cast<cuuint64_t>(t.strides[dim]) * element; };
  const auto box_rows = static_cast<cuuint32_t>(rows);
  // Innermost first: D, S, H, B; or with whole slabs 64 columns, S, slab, H, B.
  const cuuint32_t rank = whole_slabs ? 5 : 4;
  const cuuint64_t slabs = extent(3) / kBoxColumns;
  const cuuint64_t dims4[4] = {extent(3), extent(2), extent(1), extent(0)};
  const cuuint64_t strides4[3] = {stride(2), stride(1), stride(0)};
  const cuuint32_t box4[4] = {kBoxColumns, box_rows, 1, 1};
  const cuuint64_t dims5[5] = {kBoxColumns, extent(2), slabs, extent(1), extent(0)};
  const cuuint64_t strides5[4] = {stride(2), kBoxColumns * element, stride(1), stride(0)};
  const cuuint32_t box5[5] = {kBoxColumns, box_rows, static_cast<cuuint32_t>(slabs), 1, 1};
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  const CUtensorMapDataType type =
      t.dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  FLEXJIT_CU(d.cuTensorMapEncodeTiled(&map, type, rank, t.data, whole_slabs ? dims5 : dims4,
                                      whole_slabs ? strides5 : strides4, whole_slabs ? box5 : box4, element_strides,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                      promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

void copy_map(FlexjitTensorMap& dst, const CUtensorMap& src) {
  static_assert(sizeof(FlexjitTensorMap) == sizeof(CUtensorMap), "FlexjitTensorMap mirrors CUtensorMap");
  std::memcpy(&dst, &src, sizeof dst);
}

}  // namespace

std::string tma_unsupported_reason(const TensorView& t, const char* name, const TmaReader& reader, bool written) {
  const char* const verb = written ? " writes " : " reads ";
  const auto address = reinterpret_cast<std::uintptr_t>(t.data);
  if (address % 16 != 0)
    return std::string(reader.who) + verb + name + " through TMA, which needs its first element "
           "16-byte aligned (it is at 0x" + [&] {
             char buf[32];
             std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(address));
             return std::string(buf);
           }() + ") — pass an aligned tensor or " + reader.fix;
  for (int dim = 0; dim < 3; ++dim) {
    const int64_t bytes = t.strides[dim] * 2;
    if (bytes % 16 != 0 || bytes <= 0 || bytes >= (int64_t{1} << 40))
      return std::string(reader.who) + verb + name + " through TMA, which needs every stride "
             "but the last dimension's to be a positive multiple of 16 bytes below 2^40; " + name + " is " +
             t.describe() + " — make it contiguous or " + reader.fix;
  }
  return "";
}

FlexjitFwdTma encode_forward_tma(const TensorView& q, const TensorView& k, const TensorView& v,
                                 const TensorView& out, const BlockConfig& config) {
  FlexjitFwdTma maps;
  copy_map(maps.q, encode(q, "q", config.block_m));
  copy_map(maps.k, encode(k, "k", config.block_n));
  copy_map(maps.v, encode(v, "v", config.block_n));
  copy_map(maps.o, encode(out, "out", kForwardOutputRows, kForwardTmaReader, /*written=*/true));
  return maps;
}

FlexjitBwdTma encode_backward_tma(const TensorView& q, const TensorView& k, const TensorView& v,
                                  const TensorView& dout, const BlockConfig& config) {
  FlexjitBwdTma maps;
  copy_map(maps.q, encode(q, "q", config.block_m, kBackwardTmaReader));
  copy_map(maps.k, encode(k, "k", config.block_n, kBackwardTmaReader));
  copy_map(maps.v, encode(v, "v", config.block_n, kBackwardTmaReader));
  copy_map(maps.dout, encode(dout, "dout", config.block_m, kBackwardTmaReader));
  return maps;
}

FlexjitTensorMap encode_dq_accum_tma(float* data, int batch, int heads, int q_len, int head_dim) {
  const jit::Driver& d = jit::driver();
  if (d.cuTensorMapEncodeTiled == nullptr)
    throw DriverError("the CUDA driver has no cuTensorMapEncodeTiled (it predates CUDA 12); the fast backward above "
                      "head dim 128 needs it — update the driver or run the deterministic mode",
                      -1);
  const cuuint64_t row = static_cast<cuuint64_t>(head_dim) * 4;
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(q_len),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[3] = {row, row * static_cast<cuuint64_t>(q_len),
                                 row * static_cast<cuuint64_t>(q_len) * static_cast<cuuint64_t>(heads)};
  const cuuint32_t box[4] = {64, 64, 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  FLEXJIT_CU(d.cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, data, dims, strides, box,
                                      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  FlexjitTensorMap out;
  copy_map(out, map);
  return out;
}

int paged_decode_box_rows(int page_size, int block_n) { return std::gcd(page_size, block_n); }

int decode_box_rows(const BlockConfig& config, bool paged, int page_size) {
  if (!config.tma || !paged) return 0;
  const int rows = paged_decode_box_rows(page_size, config.block_n);
  if (rows % 8 != 0)
    throw UsageError("decode config " + config.str() + " reads the pages through TMA in boxes of gcd(page size, " +
                     "block_n) = gcd(" + std::to_string(page_size) + ", " + std::to_string(config.block_n) + ") = " +
                     std::to_string(rows) + " rows, which must be a multiple of 8 (the 128-byte swizzle's 8-row " +
                     "atom) — use a page size that is a multiple of 8 or " + kDecodeTmaReader.fix);
  return rows == config.block_n ? 0 : rows;
}

int decode_tile_box_rows(const KernelSpec& spec) {
  return spec.decode_box_rows != 0 ? spec.decode_box_rows : spec.config.block_n;
}

FlexjitDecodeTma encode_decode_tma(const TensorView& k, const TensorView& v, const KernelSpec& spec) {
  const bool paged = spec.paged;
  // A paged pool [page, slot, head, D] seen as [page, head, slot, D]: the map's rows are a page's
  // slots. TMA takes the strides in any order.
  const auto rows_view = [paged](const TensorView& t) {
    if (!paged) return t;
    TensorView r = t;
    std::swap(r.shape[1], r.shape[2]);
    std::swap(r.strides[1], r.strides[2]);
    return r;
  };
  const int rows = decode_tile_box_rows(spec);
  const TensorView k_rows = rows_view(k), v_rows = rows_view(v);
  // A cache shorter than one box has no tile wholly before its end, so no box is ever copied; the
  // map still has to be valid.
  const int64_t extent = k_rows.shape[2];
  const int map_rows = extent < rows ? static_cast<int>(std::max<int64_t>(extent, 1)) : rows;
  // Decoding streams the whole cache once and is bound by DRAM and the L2: with the forward's
  // 256-byte promotion its TMA tiles ran at 84 % of DRAM bandwidth against 88 % for the same tiles
  // by cp.async (ncu), and 128-byte promotion (a box row's own line) made them 1.04-1.11x faster
  // (H200, notes/perf.md "(zzb)"; 64 bytes and none measured the same as 128).
  // One copy per box for every slab streams faster than one per box and slab: H200, head dim 128,
  // pages of 16 1.02-1.09x at B = 8-64, pages of 32 up to 1.09x (notes/perf.md "(zzf)").
  const auto map_of = [&](const TensorView& t, const char* name, int tile_columns) {
    return encode(t, name, map_rows, kDecodeTmaReader, false, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                  /*whole_slabs=*/t.shape[3] == tile_columns);
  };
  FlexjitDecodeTma maps;
  copy_map(maps.k, map_of(k_rows, paged ? "k_pages" : "k", spec.head_dim));
  copy_map(maps.v, map_of(v_rows, paged ? "v_pages" : "v", spec.head_dim_v));
  return maps;
}

}  // namespace flexjit::codegen
