// Epilogues: normalise a warp's output accumulators, hand each row's statistic to the kernel, and
// stage the tile through shared memory so the global stores are 16-byte and coalesced.
#pragma once
#include "flexjit_softmax.cuh"

namespace flexjit {

// Normalises the output accumulators by their row sums and writes them, packed to T, into the
// swizzled shared tile OTile at `smem_o` (rows `warp_row0 + 16 mt + g + 8 r`). For each row,
// `row_done(row, row_index_mt, r, sum, empty)` runs once per thread first (the forward writes LSE
// there). A row whose sum is exactly 0 is empty (fully masked): its output is 0, unless
// ROWS_GUARANTEED_SAFE says no row can be.
template <typename T, typename OTile, int M_TILES, int DV_TILES, bool ROWS_GUARANTEED_SAFE, typename RowDone>
__device__ __forceinline__ void stage_normalised_rows(const float (&acc_o)[M_TILES][DV_TILES][4],
                                                      const float (&row_sum)[M_TILES][2], u32 smem_o, int warp_row0,
                                                      int g, int t4, RowDone&& row_done) {
#pragma unroll
  for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float l = quad_sum(row_sum[mt][r]);
      // Only a sum of exactly 0 is a fully masked row: a NaN sum (a NaN score) stays NaN.
      const bool empty = !ROWS_GUARANTEED_SAFE && l == 0.f;
      const float inv = empty ? 0.f : 1.f / l;
      const int row = warp_row0 + mt * 16 + g + 8 * r;
      row_done(row, mt, r, l, empty);
#pragma unroll
      for (int j = 0; j < DV_TILES; ++j) {
        const u32 packed = pack2<T>(acc_o[mt][j][2 * r] * inv, acc_o[mt][j][2 * r + 1] * inv);
        const u32 addr = smem_o + OTile::offset(row, j) + t4 * 4;
        st_shared_b32(addr, packed);
      }
    }
}

// Copies ROWS x COLS elements, rows `tile_row0 + r` of the swizzled shared tile at `smem`, to rows
// `row0 + tile_row0 + r` of a tensor (rows `row_stride` elements apart), 16 bytes per thread and
// step, by THREADS threads of which this is thread `tid`; with PREDICATE, tensor rows at or past
// `row_end` are not written. The tensor's rows have IO_COLS elements (a multiple of 8): the tile's
// columns past them are not written.
template <typename T, int THREADS, int ROWS, int COLS, bool PREDICATE, typename Tile, int IO_COLS = COLS>
__device__ __forceinline__ void store_staged_rows(u32 smem, T* base, int row0, long long row_stride, int row_end,
                                                  int tid, int tile_row0) {
  constexpr int CHUNKS = COLS / 8;
  constexpr int TOTAL = ROWS * CHUNKS;
#pragma unroll
  for (int it = 0; it < (TOTAL + THREADS - 1) / THREADS; ++it) {
    const int idx = it * THREADS + tid;
    if (TOTAL % THREADS == 0 || idx < TOTAL) {
      const int r = tile_row0 + idx / CHUNKS, c = idx % CHUNKS;
      if ((!PREDICATE || row0 + r < row_end) && (IO_COLS == COLS || c * 8 < IO_COLS)) {
        u32 chunk[4];
        ld_shared_v4(chunk, smem + Tile::offset(r, c));
        st_global_v4(base + static_cast<long long>(row0 + r) * row_stride + c * 8, chunk);
      }
    }
  }
}

// The whole tile, by the whole CTA of THREADS threads.
template <typename T, int THREADS, int ROWS, int COLS, bool PREDICATE, typename Tile, int IO_COLS = COLS>
__device__ __forceinline__ void store_staged_rows(u32 smem, T* base, int row0, long long row_stride, int row_end) {
  store_staged_rows<T, THREADS, ROWS, COLS, PREDICATE, Tile, IO_COLS>(smem, base, row0, row_stride, row_end,
                                                                      static_cast<int>(threadIdx.x), 0);
}

}  // namespace flexjit
