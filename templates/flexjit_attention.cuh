// Building blocks shared by the attention kernel templates: tile loads through cp.async and the
// walk over the tiles a block-sparse table lists. Templates on the kernel's compile-time constants.
#pragma once
#include "flexjit_mma.cuh"
#include "flexjit_expr.cuh"    // FLEXJIT_ERROR_KV_OUT_OF_RANGE
#include "flexjit_params.cuh"  // FlexjitSeqLens

namespace flexjit {

// Runs a tile's elementwise pass `pass(masked, bounds)` with both flags known at compile time. A
// tile that crosses a sequence end (only in kernels for non-divisible lengths) gets the range test
// and clamped positions and evaluates mask_mod whether or not its block is full; every other tile
// runs the divisible kernel's code, with mask_mod on partial blocks only. `plain` says whether a
// full interior tile needs the pass at all.
template <bool HAS_MASK, bool IS_DIVISIBLE, typename Pass>
__device__ __forceinline__ void run_tile_pass(bool bounds_tile, bool masked_tile, bool plain, Pass&& pass) {
  if (!IS_DIVISIBLE && bounds_tile)
    pass(BoolConstant<HAS_MASK>(), BoolConstant<!IS_DIVISIBLE>());
  else if (masked_tile)
    pass(BoolConstant<true>(), BoolConstant<false>());
  else if (plain)
    pass(BoolConstant<false>(), BoolConstant<false>());
}

// Sequence b's query and key counts in a kernel built with SEQ_LENS: from the per-sequence arrays
// (a null array: the padded length). A length outside [0, padded] is clamped into that range, so
// nothing outside the tensors is read, and reported as FLEXJIT_ERROR_KV_OUT_OF_RANGE.
__device__ __forceinline__ void sequence_lengths(const FlexjitSeqLens& lens, int b, int q_padded, int kv_padded,
                                                 int& q_len, int& kv_len, unsigned& errors) {
  q_len = lens.q_lens != nullptr ? lens.q_lens[b] : q_padded;
  kv_len = lens.kv_lens != nullptr ? lens.kv_lens[b] : kv_padded;
  if (q_len < 0 || q_len > q_padded || kv_len < 0 || kv_len > kv_padded) {
    errors |= FLEXJIT_ERROR_KV_OUT_OF_RANGE;
    q_len = min(max(q_len, 0), q_padded);
    kv_len = min(max(kv_len, 0), kv_padded);
  }
}

// Copies ROWS x COLS elements (rows `row0 + r` of a tensor whose rows are `row_stride` elements
// apart) into a swizzled shared tile with the CTA's THREADS threads. With PREDICATE, rows at or
// past `rows_valid` are zero-filled and not read. The tensor's rows have IO_COLS elements (a
// multiple of 8): the tile's columns past them are zero-filled. Each thread keeps one column
// chunk for the whole tile and walks down the rows, so the loop needs one running pointer.
template <typename T, int THREADS, int ROWS, int COLS, bool PREDICATE, typename Tile = SwizzledTile<ROWS, COLS>,
          int IO_COLS = COLS>
__device__ __forceinline__ void load_tile(u32 dst, const T* base, long long row0, long long row_stride,
                                          int rows_valid) {
  constexpr int CHUNKS = Tile::kChunks;
  if constexpr (THREADS % CHUNKS == 0) {
    constexpr int ROWS_PER_PASS = THREADS / CHUNKS;
    const int c = static_cast<int>(threadIdx.x) % CHUNKS;
    const int r0 = static_cast<int>(threadIdx.x) / CHUNKS;
    const T* src = base + (row0 + r0) * row_stride + c * 8;
    const long long step = ROWS_PER_PASS * row_stride;
#pragma unroll
    for (int it = 0; it < (ROWS + ROWS_PER_PASS - 1) / ROWS_PER_PASS; ++it) {
      const int r = r0 + it * ROWS_PER_PASS;
      if (ROWS % ROWS_PER_PASS == 0 || r < ROWS) {
        const bool valid = (!PREDICATE || r < rows_valid) && (IO_COLS == COLS || c * 8 < IO_COLS);
        cp_async_16(dst + Tile::offset(r, c), valid ? src : base, valid);
      }
      src += step;
    }
  } else {
    // Rows of a width the CTA does not divide (e.g. 24 chunks for head dim 192): plain indexing.
    constexpr int TOTAL = ROWS * CHUNKS;
#pragma unroll
    for (int it = 0; it < (TOTAL + THREADS - 1) / THREADS; ++it) {
      const int idx = it * THREADS + static_cast<int>(threadIdx.x);
      if (TOTAL % THREADS == 0 || idx < TOTAL) {
        const int r = idx / CHUNKS, c = idx % CHUNKS;
        const bool valid = (!PREDICATE || r < rows_valid) && (IO_COLS == COLS || c * 8 < IO_COLS);
        cp_async_16(dst + Tile::offset(r, c), valid ? base + (row0 + r) * row_stride + c * 8 : base, valid);
      }
    }
  }
}

// Copies `count` fp32 values starting at element `first` of a row vector into shared memory (4
// bytes per cp.async); entries at or past `valid` get `fill` instead (written directly).
template <int THREADS, int COUNT>
__device__ __forceinline__ void load_row_stats(float* dst, const float* src, long long stride, int first,
                                               int valid, float fill) {
  for (int i = static_cast<int>(threadIdx.x); i < COUNT; i += THREADS) {
    if (i < valid) {
      const u32 d = smem_addr(dst + i);
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src + (first + i) * stride));
    } else {
      dst[i] = fill;
    }
  }
}

// The tiles of TILE rows that one row of a block-sparse table lists, in visiting order: partial
// blocks (mask_mod evaluated), then full blocks. Without a table (DENSE) every tile of `length`
// positions is visited, all of them "partial" when the kernel has a mask. RANGE (dense walks):
// `count` tiles from tile `first` on (init_dense_range; the kernel classes them itself). Only RANGE
// walks have `first_tile` (TileWalkFirst), so the others' objects and code stay as they were.
// TRIM (tiles smaller than the table's blocks): init_sparse_rows leaves out the tiles of the last
// block that start at or past the positions' end (at 257 queries, block 2's tile of rows
// 320..383), which would otherwise be computed on TMA's zeros for nothing.
template <bool RANGE>
struct TileWalkFirst {};
template <>
struct TileWalkFirst<true> {
  int first_tile;  // the first tile visited
};
template <int TILE, int SPARSE_BLOCK, bool DENSE, bool RANGE = false, bool TRIM = false>
struct TileWalk : TileWalkFirst<RANGE> {
  static constexpr int TILES_PER_BLOCK = DENSE ? 1 : SPARSE_BLOCK / TILE;
  const int* partial;
  const int* full;
  int num_partial_tiles;
  int num_tiles;

  // Visit the blocks listed in one table row (`full` may be null).
  __device__ __forceinline__ void init_sparse(const int* partial_list, int n_partial, const int* full_list, int n_full) {
    partial = partial_list;
    full = full_list;
    num_partial_tiles = n_partial * TILES_PER_BLOCK;
    num_tiles = (n_partial + n_full) * TILES_PER_BLOCK;
  }
  // As init_sparse, less the tiles that start at or past position `rows` (TRIM walks), where
  // they come last in the walk: tiles of the last block of the full list or, with no full blocks,
  // of the partial list (the lists ascend, and a table that covers `rows` positions starts its
  // blocks below `rows`). So the walk's other tiles keep their indices, start() and is_partial()
  // stay as they are, and a walk whose last block is elsewhere (a partial block beside full
  // ones, or tables of longer, padded lengths) is walked whole, as before. The last entry is read
  // only when the end falls in a block's first TILE..SPARSE_BLOCK - TILE rows: the one case with
  // tiles to leave out.
  __device__ __forceinline__ void init_sparse_rows(const int* partial_list, int n_partial, const int* full_list,
                                                   int n_full, int rows) {
    static_assert(TRIM && !DENSE && TILES_PER_BLOCK > 1, "trimming leaves out tiles of a table's blocks");
    init_sparse(partial_list, n_partial, full_list, n_full);
    const int end_rows = rows % SPARSE_BLOCK;  // rows of the block the end falls in
    if (end_rows == 0 || end_rows > SPARSE_BLOCK - TILE) return;
    const bool full_last = n_full > 0;
    const int last = full_last ? full_list[n_full - 1] : n_partial > 0 ? partial_list[n_partial - 1] : -1;
    if (last != rows / SPARSE_BLOCK) return;
    const int past_end = TILES_PER_BLOCK - (end_rows + TILE - 1) / TILE;
    num_tiles -= past_end;
    if (!full_last) num_partial_tiles -= past_end;
  }
  // Visit every tile of `length` positions.
  __device__ __forceinline__ void init_dense(int length, bool masked) {
    partial = full = nullptr;
    if constexpr (RANGE) this->first_tile = 0;
    num_tiles = (length + TILE - 1) / TILE;
    num_partial_tiles = masked ? num_tiles : 0;
  }
  // Visit `count` tiles from tile `first` on (RANGE walks only: the caller says which are partial).
  __device__ __forceinline__ void init_dense_range(int first, int count) {
    partial = full = nullptr;
    this->first_tile = first;
    num_tiles = count;
    num_partial_tiles = count;
  }
  // First position of the t-th tile visited.
  __device__ __forceinline__ int start(int t) const {
    if constexpr (RANGE) return (this->first_tile + t) * TILE;
    if (DENSE) return t * TILE;
    const int block = t / TILES_PER_BLOCK, sub = t % TILES_PER_BLOCK;
    const int index = t < num_partial_tiles ? partial[block] : full[block - num_partial_tiles / TILES_PER_BLOCK];
    return index * SPARSE_BLOCK + sub * TILE;
  }
  __device__ __forceinline__ bool is_partial(int t) const { return t < num_partial_tiles; }
};

}  // namespace flexjit
