// Gradients of learnable buffers, accumulated inside the dQ kernel without float atomics: every
// sum runs in an order fixed by the tile walk and the thread layout, so the bits are the same on
// every run. The dQ kernel calls buffer_grad_tile once per kv tile (after dP, with P still in its
// accumulators) and buffer_grad_finish once at its end; buffer_grad_reduce.cu.j2 then sums the
// per-CTA partials into the gradient, again in a fixed order. Needs the variant header's
// FlexjitBgRead<r> traits (expr/buffer_grad_emit.cpp). One scheme per read, from the analysis of
// its indices:
//   per_head   (`slope[h]`): a register sum per thread, reduced over the CTA at the end into one
//              value per CTA.
//   diagonal   (`rel[h][q_idx - kv_idx + c]`): each thread first folds its two rows g and g + 8
//              in registers ((g + 8, col + 8) lies on the diagonal of (g, col)), so a warp stages
//              8 x (BLOCK_N + 8) values with 64-bit conflict-free stores and sums each diagonal
//              over 8 rows into the warp's band; after one barrier the CTA adds the warps' bands in
//              warp order to its slots in global scratch (one slot per q - kv), read-add-write with
//              the old value loaded at the top of the tile (buffer_grad_prefetch), so the load's
//              latency hides behind the tile's MMAs.
//   per_score  (`bias[b][h][q_idx][kv_idx]`): each element belongs to one score: stored directly.
//   arbitrary: each warp stages (offset, value) pairs of a chunk; lane l adds, in chunk order, the
//              pairs whose offset is l mod 32 into the warp's own copy of the buffer in scratch.
#pragma once
#include "flexjit_buffer_grad_params.cuh"
#include "flexjit_mma.cuh"  // smem_addr

namespace flexjit {

enum : int { kBufferGradPerHead = 0, kBufferGradDiagonal = 1, kBufferGradPerScore = 2, kBufferGradArbitrary = 3 };

template <int V> struct IntConstant { static constexpr int value = V; };

template <int R, int END, typename Fn>
__device__ __forceinline__ void for_each_buffer_read(Fn&& fn) {
  if constexpr (R < END) {
    fn(IntConstant<R>());
    for_each_buffer_read<R + 1, END>(fn);
  }
}

// Per-warp shared memory of the staged schemes: the values of a chunk (arbitrary: 16 rows x 32
// columns, odd pitch; diagonal: the folded 8 rows x (up to 64 + 8) columns, pitch = 8 mod 32 so a
// quad's 64-bit stores hit distinct banks), the offsets of an arbitrary chunk, and the warp's band
// of diagonals for the current kv tile. Kept small: at d128 the dQ kernel fits two CTAs per SM
// only with a few KiB to spare. Every region is an even number of floats (64-bit stores).
template <int M_TILES, int BLOCK_N, bool OFFSETS>
struct BufferGradLayout {
  static constexpr int kChunkCols = BLOCK_N < 32 ? BLOCK_N : 32;
  static constexpr int kChunks = BLOCK_N / kChunkCols;
  static constexpr int kPitch = kChunkCols + 1;  // odd: a column walk hits every bank once
  static constexpr int kChunk = 16 * kPitch;
  // kv columns of one folded chunk: the tile, or past 64 columns the largest of 64/32/16/8 dividing it.
  static constexpr int kFoldCols = BLOCK_N <= 64       ? BLOCK_N
                                   : BLOCK_N % 64 == 0 ? 64
                                   : BLOCK_N % 32 == 0 ? 32
                                   : BLOCK_N % 16 == 0 ? 16
                                                       : 8;
  static constexpr int kFoldChunks = BLOCK_N / kFoldCols;
  static constexpr int kFoldPitch = kFoldCols + 8;  // columns -8 .. kFoldCols - 1
  static constexpr int kFold = 8 * kFoldPitch;
  static constexpr int kValues = kChunk > kFold ? kChunk : kFold;
  static constexpr int kBand = BLOCK_N + 16 * M_TILES - 1;  // diagonals of a warp's rows x BLOCK_N
  static constexpr int kBandOffset = kValues + (OFFSETS ? kChunk : 0);
  static constexpr int kWarpFloats = kBandOffset + kBand + 1;
  static_assert(BLOCK_N % 8 == 0, "buffer gradients: BLOCK_N must be a multiple of 8");
  static_assert(kWarpFloats % 2 == 0 && kValues % 2 == 0 && kFoldPitch % 2 == 0, "64-bit staging needs even regions");
};

template <int M_TILES, int BLOCK_N, int NUM_WARPS, bool STAGED, bool OFFSETS>
constexpr int buffer_grad_smem_bytes() {
  return NUM_WARPS * 4 * (STAGED ? BufferGradLayout<M_TILES, BLOCK_N, OFFSETS>::kWarpFloats : 1);
}

// Where a dQ CTA's gradient work happens.
struct BufferGradSite {
  int b, h, q_start, warp_row0, kv_start, q_len, kv_len;
  long long cta;  // (b * Hq + h) * num_q_tiles + query tile
  int warp, lane;
};

// CTA band slots of one kv tile (BLOCK_M + BLOCK_N - 1 diagonals) each thread owns.
template <int BLOCK_M, int BLOCK_N, int THREADS>
struct BufferGradSlots {
  static constexpr int kPerThread = (BLOCK_M + BLOCK_N - 1 + THREADS - 1) / THREADS;
};

// One 64-bit shared store (`at` 8-byte aligned).
__device__ __forceinline__ void st_shared_f32x2(float* at, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(smem_addr(at)), "f"(a), "f"(b) : "memory");
}

// Top of a kv tile, right after the dQ loop's barrier (which makes the previous tile's slot stores
// visible): the current values of the slots this thread will update at the end of the tile, so
// the read-add-write there does not wait on global memory.
template <int NUM_WARPS, int BLOCK_M, int BLOCK_N>
__device__ __forceinline__ void buffer_grad_prefetch(
    float (&prev)[FLEXJIT_BG_READS][BufferGradSlots<BLOCK_M, BLOCK_N, NUM_WARPS * 32>::kPerThread],
    const FlexjitBufferGradParams& bgp, const BufferGradSite& s) {
  constexpr int THREADS = NUM_WARPS * 32;
  for_each_buffer_read<0, FLEXJIT_BG_READS>([&](auto read_number) {
    constexpr int R = decltype(read_number)::value;
    if constexpr (FlexjitBgRead<R>::kScheme == kBufferGradDiagonal) {
      const float* cta_band = bgp.read[R].scratch + s.cta * bgp.band_len;
#pragma unroll
      for (int k = 0; k < BufferGradSlots<BLOCK_M, BLOCK_N, THREADS>::kPerThread; ++k) {
        const int x = s.warp * 32 + s.lane + k * THREADS;
        const int slot = x - (BLOCK_N - 1) - s.kv_start + s.kv_len - 1;
        prev[R][k] = x < BLOCK_M + BLOCK_N - 1 && slot >= 0 ? cta_band[slot] : 0.f;
      }
    }
  });
}

// One kv tile. `prob` is P (0 where masked or past a sequence end), `dp` is dO V^T, `score` the
// scores before score_mod (read only when a derivative needs them).
template <int M_TILES, int N_TILES, int NUM_WARPS, int BLOCK_M, int BLOCK_N>
__device__ __forceinline__ void buffer_grad_tile(float (&head_sum)[FLEXJIT_BG_READS],
                                                 const float (&prob)[M_TILES][N_TILES][4],
                                                 const float (&dp)[M_TILES][N_TILES][4],
                                                 const float (&delta)[M_TILES][2],
                                                 const float (&score)[M_TILES][N_TILES][4],
                                                 const FlexjitBufferGradParams& bgp, const FlexjitModArgs& mod,
                                                 unsigned& errors, float* smem, const BufferGradSite& s,
                                                 const float (&prev)[FLEXJIT_BG_READS][BufferGradSlots<BLOCK_M, BLOCK_N, NUM_WARPS * 32>::kPerThread]) {
  using L = BufferGradLayout<M_TILES, BLOCK_N, FLEXJIT_BG_OFFSETS != 0>;
  constexpr int THREADS = NUM_WARPS * 32;
  const int g = s.lane / 4, t4 = s.lane % 4;
  for_each_buffer_read<0, FLEXJIT_BG_READS>([&](auto read_number) {
    constexpr int R = decltype(read_number)::value;
    using Read = FlexjitBgRead<R>;
    // The contribution of one score to this read's element; 0 (and no mod evaluated) where P is 0,
    // which covers every position past a sequence end.
    auto value = [&](int mt, int j, int i, int& q_idx, int& kv_idx) -> float {
      q_idx = s.q_start + s.warp_row0 + mt * 16 + g + 8 * (i / 2);
      kv_idx = s.kv_start + j * 8 + 2 * t4 + (i & 1);
      const float p = prob[mt][j][i];
      if (p == 0.f) return 0.f;
      const float d = p * (dp[mt][j][i] - delta[mt][i / 2]);  // d(loss)/d(score_mod)
      const float sc = FLEXJIT_BG_READS_SCORE ? score[mt][j][i] : 0.f;
      return d * Read::derivative(sc, s.b, s.h, q_idx, kv_idx, s.q_len, s.kv_len, mod, errors);
    };
    if constexpr (Read::kScheme == kBufferGradPerHead) {
      float sum = 0.f;
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
        for (int j = 0; j < N_TILES; ++j)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            int q_idx, kv_idx;
            sum += value(mt, j, i, q_idx, kv_idx);
          }
      head_sum[R] += sum;
    } else if constexpr (Read::kScheme == kBufferGradPerScore) {
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
        for (int j = 0; j < N_TILES; ++j)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            int q_idx, kv_idx;
            const float v = value(mt, j, i, q_idx, kv_idx);
            if (v != 0.f) {
              const long long off = Read::offset(s.b, s.h, q_idx, kv_idx, s.q_len, s.kv_len, mod, errors);
              if (off >= 0) bgp.read[R].grad[off] = v;
            }
          }
    } else if constexpr (Read::kScheme == kBufferGradArbitrary) {
      float* vals = smem + s.warp * L::kWarpFloats;
      int* offs = reinterpret_cast<int*>(vals + L::kValues);
      float* mine = bgp.read[R].scratch + (s.cta * NUM_WARPS + s.warp) * bgp.numel[R];
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
        for (int c = 0; c < L::kChunks; ++c) {
          __syncwarp();
#pragma unroll
          for (int jj = 0; jj < L::kChunkCols / 8; ++jj)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              int q_idx, kv_idx;
              const float v = value(mt, c * (L::kChunkCols / 8) + jj, i, q_idx, kv_idx);
              const int at = (g + 8 * (i / 2)) * L::kPitch + jj * 8 + 2 * t4 + (i & 1);
              vals[at] = v;
              offs[at] = v == 0.f ? -1 : static_cast<int>(Read::offset(s.b, s.h, q_idx, kv_idx, s.q_len, s.kv_len, mod, errors));
            }
          __syncwarp();
          for (int e = 0; e < 16 * L::kChunkCols; ++e) {
            const int at = (e / L::kChunkCols) * L::kPitch + e % L::kChunkCols;
            const int off = offs[at];
            if (off >= 0 && (off & 31) == s.lane) mine[off] += vals[at];
          }
        }
    } else {  // diagonal
      float* fold = smem + s.warp * L::kWarpFloats;
      float* band = fold + L::kBandOffset;
      constexpr int kFoldJ = L::kFoldCols / 8;
      constexpr int kDiagonals = L::kFoldCols + 15;  // per folded chunk: row - column in [-(cols-1), 15]
      // One row tile and one chunk cover the warp's whole band once: plain stores. Otherwise the
      // pieces overlap in the band and are added into a zeroed one.
      constexpr bool kPlain = M_TILES == 1 && L::kFoldChunks == 1;
      static_assert(!kPlain || kDiagonals == L::kBand, "a single folded chunk covers the band");
      if constexpr (!kPlain)
        for (int x = s.lane; x < L::kBand; x += 32) band[x] = 0.f;
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
        for (int c = 0; c < L::kFoldChunks; ++c) {
          __syncwarp();
          // Folded column f = col + 8 of row g holds (g, col) + (g + 8, col + 8), col in [-8, cols).
#pragma unroll
          for (int jj = -1; jj < kFoldJ; ++jj) {
            float u[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              int q_idx, kv_idx;
              u[e] = jj >= 0 ? value(mt, c * kFoldJ + jj, e, q_idx, kv_idx) : 0.f;
              if (jj + 1 < kFoldJ) u[e] += value(mt, c * kFoldJ + jj + 1, 2 + e, q_idx, kv_idx);
            }
            st_shared_f32x2(fold + g * L::kFoldPitch + (jj + 1) * 8 + 2 * t4, u[0], u[1]);
          }
          __syncwarp();
          // Diagonal D = x - (cols - 1) of the chunk, summed over the 8 folded rows; consecutive
          // lanes read consecutive addresses. The band is indexed by warp row - tile column + BLOCK_N - 1.
#pragma unroll
          for (int k = 0; k < (kDiagonals + 31) / 32; ++k) {
            const int x = s.lane + 32 * k;
            if (x < kDiagonals) {
              const int diag = x - (L::kFoldCols - 1);
              float sum = 0.f;
#pragma unroll
              for (int r = 0; r < 8; ++r) {
                const int f = r - diag + 8;
                if (f >= 0 && f < L::kFoldPitch) sum += fold[r * L::kFoldPitch + f];
              }
              const int y = mt * 16 - c * L::kFoldCols + diag + BLOCK_N - 1;
              if constexpr (kPlain) band[y] = sum;
              else band[y] += sum;
            }
          }
        }
      // The warps' bands, added in warp order to the CTA's slots (slot = q - kv - (q_start -
      // kv_len + 1)); each slot of this tile is owned by one thread, whose old value `prev` was
      // loaded at the top of the tile. The dQ loop's next barrier orders these stores before the
      // next tile's loads and before any warp rewrites its band.
      __syncthreads();
      float* cta_band = bgp.read[R].scratch + s.cta * bgp.band_len;
#pragma unroll
      for (int k = 0; k < BufferGradSlots<BLOCK_M, BLOCK_N, THREADS>::kPerThread; ++k) {
        const int x = s.warp * 32 + s.lane + k * THREADS;
        const int diag = x - (BLOCK_N - 1);  // CTA row - tile column
        const int slot = diag - s.kv_start + s.kv_len - 1;
        if (x < BLOCK_M + BLOCK_N - 1 && slot >= 0) {
          float sum = 0.f;
#pragma unroll
          for (int w = 0; w < NUM_WARPS; ++w) {
            const int y = diag - w * (BLOCK_M / NUM_WARPS) + BLOCK_N - 1;
            if (y >= 0 && y < L::kBand) sum += smem[w * L::kWarpFloats + L::kBandOffset + y];
          }
          cta_band[slot] = prev[R][k] + sum;
        }
      }
      // A later diagonal read rewrites the bands the other warps may still be reading.
      if constexpr (R + 1 < FLEXJIT_BG_READS) __syncthreads();
    }
  });
}

// End of the dQ kernel: each per_head read's CTA sum, in a fixed order (butterfly within a warp,
// then warps in order), into scratch[cta].
template <int NUM_WARPS>
__device__ __forceinline__ void buffer_grad_finish(float (&head_sum)[FLEXJIT_BG_READS],
                                                   const FlexjitBufferGradParams& bgp, float* smem,
                                                   const BufferGradSite& s) {
  for_each_buffer_read<0, FLEXJIT_BG_READS>([&](auto read_number) {
    constexpr int R = decltype(read_number)::value;
    if constexpr (FlexjitBgRead<R>::kScheme == kBufferGradPerHead) {
      float sum = head_sum[R];
#pragma unroll
      for (int o = 16; o >= 1; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      __syncthreads();
      if (s.lane == 0) smem[s.warp] = sum;
      __syncthreads();
      if (s.warp == 0 && s.lane == 0) {
        float total = 0.f;
#pragma unroll
        for (int w = 0; w < NUM_WARPS; ++w) total += smem[w];
        bgp.read[R].scratch[s.cta] = total;
      }
    }
  });
}

}  // namespace flexjit
