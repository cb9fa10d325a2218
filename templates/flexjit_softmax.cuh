// Online softmax in base 2 over a warp's score accumulators, in the mma m16n8 fragment layout: a
// thread holds rows g and g + 8 of each 16-row tile (index r = 0, 1) and two adjacent columns of
// each 8-column tile, so a row's values are spread over the 4 threads of a quad.
#pragma once
#include "flexjit_mma.cuh"

namespace flexjit {

// A row's maximum over its quad (the 4 threads that hold its columns), from each one's own.
__device__ __forceinline__ float quad_row_max(float mx) {
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  return fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
}

// What a row's scores subtract (base 2) to become probabilities against its max `mx`: 0 for a row
// with no max yet (only -inf so far), which keeps exp2 from NaN.
__device__ __forceinline__ float exp_base(float mx, float exp_scale) { return (mx == neg_inf() ? 0.f : mx) * exp_scale; }

// Turns this thread's scores of row r (0: g, 1: g + 8) of a 16-row tile into probabilities against
// `base` in place; returns their sum.
template <int N_TILES>
__device__ __forceinline__ float exponentiate_row(float (&acc_s)[N_TILES][4], int r, float base, float exp_scale) {
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < N_TILES; ++j) {
    const float p0 = exp2_approx(fmaf(acc_s[j][2 * r], exp_scale, -base));
    const float p1 = exp2_approx(fmaf(acc_s[j][2 * r + 1], exp_scale, -base));
    acc_s[j][2 * r] = p0;
    acc_s[j][2 * r + 1] = p1;
    sum += p0 + p1;
  }
  return sum;
}

// Folds one tile of scores into the running max and sum and rescales the output accumulator.
// `exp_scale` multiplies scores (and maxima) into base-2 units. On return acc_s holds the tile's
// unnormalised probabilities P. A row may see a tile where every score is -inf before any finite
// score (partial blocks come first): subtracting 0 instead of -inf keeps exp2 from NaN.
template <int M_TILES, int N_TILES, int DV_TILES>
__device__ __forceinline__ void online_softmax_update(float (&acc_s)[M_TILES][N_TILES][4], float (&row_max)[M_TILES][2],
                                                      float (&row_sum)[M_TILES][2],
                                                      float (&acc_o)[M_TILES][DV_TILES][4], float exp_scale) {
#pragma unroll
  for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = row_max[mt][r];
#pragma unroll
      for (int j = 0; j < N_TILES; ++j) mx = fmaxf(mx, fmaxf(acc_s[mt][j][2 * r], acc_s[mt][j][2 * r + 1]));
      mx = quad_row_max(mx);
      const float base = exp_base(mx, exp_scale);
      const float alpha = exp2_approx(row_max[mt][r] * exp_scale - base);
      row_max[mt][r] = mx;
      row_sum[mt][r] = row_sum[mt][r] * alpha + exponentiate_row(acc_s[mt], r, base, exp_scale);
#pragma unroll
      for (int j = 0; j < DV_TILES; ++j) {
        acc_o[mt][j][2 * r] *= alpha;
        acc_o[mt][j][2 * r + 1] *= alpha;
      }
    }
}

// The largest of this thread's scores of row r (0: g, 1: g + 8) of a 16-row tile, as a tree
// (depth log2(N_TILES) + 1), not a chain through every column: nothing else can issue until it is
// known, and each step of a chain waits out the last one's latency (ncu, H200, notes/perf.md
// "(zzu)": the chain's 65 instructions took about 230 cycles of the warpgroup's 1,080-cycle
// softmax stretch; the tree measured 1.00-1.03x on most suite forwards, causal d64 0.99-1.00x).
template <int N_TILES>
__device__ __forceinline__ float thread_row_max(const float (&acc_s)[N_TILES][4], int r) {
  float pair_max[N_TILES];
#pragma unroll
  for (int j = 0; j < N_TILES; ++j) pair_max[j] = fmaxf(acc_s[j][2 * r], acc_s[j][2 * r + 1]);
#pragma unroll
  for (int stride = 1; stride < N_TILES; stride *= 2)
#pragma unroll
    for (int j = 0; j + stride < N_TILES; j += 2 * stride) pair_max[j] = fmaxf(pair_max[j], pair_max[j + stride]);
  return pair_max[0];
}

// The online softmax in two halves, for kernels that keep an O += P V in flight while they turn the
// next scores into probabilities: softmax_probabilities folds the tile into the running max and sum
// and leaves P in acc_s and each row's rescale factor in `alpha`; rescale_output applies alpha to O
// once the in-flight product has landed. Together they compute what online_softmax_update does.
template <int M_TILES, int N_TILES>
__device__ __forceinline__ void softmax_probabilities(float (&acc_s)[M_TILES][N_TILES][4], float (&row_max)[M_TILES][2],
                                                      float (&row_sum)[M_TILES][2], float (&alpha)[M_TILES][2],
                                                      float exp_scale) {
#pragma unroll
  for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float mx = quad_row_max(fmaxf(row_max[mt][r], thread_row_max(acc_s[mt], r)));
      const float base = exp_base(mx, exp_scale);
      alpha[mt][r] = exp2_approx(row_max[mt][r] * exp_scale - base);
      row_max[mt][r] = mx;
      row_sum[mt][r] = row_sum[mt][r] * alpha[mt][r] + exponentiate_row(acc_s[mt], r, base, exp_scale);
    }
}

// The lazy rescale (FA4's): while no score of a tile passes its row's running max by more than
// 2^LAZY_RESCALE_LOG2 in base 2, the max stays, O keeps its scale and the sum just adds; the
// tile's probabilities are taken against the max as it stands. Probabilities up to 2^8 and sums up
// to 2^8 times the key count fit fp32 and the 16-bit P alike, and LSE (running max + log2 of the
// sum) is the same value. The test needs each thread's own maximum and one warp vote; the quad's
// shuffles, the rescale factors' exp2 and O's multiplies run only where some row of the warp
// passes the bound (then every row of the warp moves its max, as softmax_probabilities does). A row
// with no max yet (only -inf scores so far) counts as passing once its tile holds a finite score.
constexpr float LAZY_RESCALE_LOG2 = 8.f;

// Whether a row's tile maximum stays within the lazy bound of its running max (a row with no max
// yet: only while the tile holds no finite score either). A NaN tile maximum fails both tests.
__device__ __forceinline__ bool stays_within_lazy_bound(float tile_max, float row_max, float exp_scale) {
  return row_max == neg_inf() ? tile_max == neg_inf()
                              : fmaf(tile_max, exp_scale, -row_max * exp_scale) <= LAZY_RESCALE_LOG2;
}

// The lazy forms' move of a row's running max once some row of the warp passed the bound: the
// quad's max of the running max and this thread's tile max; the sum takes the factor, which is
// returned for O.
__device__ __forceinline__ float move_running_max(float& row_max, float& row_sum, float tile_max, float exp_scale) {
  const float mx = quad_row_max(fmaxf(row_max, tile_max));
  const float alpha = exp2_approx(row_max * exp_scale - exp_base(mx, exp_scale));
  row_max = mx;
  row_sum *= alpha;
  return alpha;
}

// What softmax_probabilities computes, with the lazy rescale: returns whether the warp's rows
// moved their max, and only then are `alpha` set and row_sum scaled (O still takes alpha).
template <int BLOCK_N>
__device__ __forceinline__ bool softmax_probabilities_lazy(float (&acc_s)[BLOCK_N / 8][4], float (&row_max)[2],
                                                           float (&row_sum)[2], float (&alpha)[2], float exp_scale) {
  float tile_max[2];
  bool within = true;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = thread_row_max(acc_s, r);
    within = within & stays_within_lazy_bound(tile_max[r], row_max[r], exp_scale);
  }
  const bool moved = !__all_sync(0xffffffffu, within);
  if (moved) {
#pragma unroll
    for (int r = 0; r < 2; ++r) alpha[r] = move_running_max(row_max[r], row_sum[r], tile_max[r], exp_scale);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) row_sum[r] += exponentiate_row(acc_s, r, exp_base(row_max[r], exp_scale), exp_scale);
  return moved;
}

template <int M_TILES, int DV_TILES>
__device__ __forceinline__ void rescale_output(float (&acc_o)[M_TILES][DV_TILES][4], const float (&alpha)[M_TILES][2]) {
#pragma unroll
  for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
    for (int j = 0; j < DV_TILES; ++j) {
      acc_o[mt][j][0] *= alpha[mt][0];
      acc_o[mt][j][1] *= alpha[mt][0];
      acc_o[mt][j][2] *= alpha[mt][1];
      acc_o[mt][j][3] *= alpha[mt][1];
    }
}

// online_softmax_update with the lazy rescale, for the synchronous kernels (one warp votes over
// all of its M_TILES row tiles): the max moves and O and the sums take the factors only where some
// row of the warp passes the bound. H200, mma.sync m128n64w4s2 against the eager form
// (notes/perf.md "(zzz)"): noop d128 1.13x, ALiBi causal 1.10x, causal d128 1.08x, soft-capping
// 1.06x, d64 1.02-1.03x, documents 1.02x.
template <int M_TILES, int N_TILES, int DV_TILES>
__device__ __forceinline__ void online_softmax_update_lazy(float (&acc_s)[M_TILES][N_TILES][4],
                                                           float (&row_max)[M_TILES][2], float (&row_sum)[M_TILES][2],
                                                           float (&acc_o)[M_TILES][DV_TILES][4], float exp_scale) {
  float tile_max[M_TILES][2];
  bool within = true;
#pragma unroll
  for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      tile_max[mt][r] = thread_row_max(acc_s[mt], r);
      within = within & stays_within_lazy_bound(tile_max[mt][r], row_max[mt][r], exp_scale);
    }
  if (!__all_sync(0xffffffffu, within)) {
    float alpha[M_TILES][2];
#pragma unroll
    for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r)
        alpha[mt][r] = move_running_max(row_max[mt][r], row_sum[mt][r], tile_max[mt][r], exp_scale);
    rescale_output(acc_o, alpha);
  }
#pragma unroll
  for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r)
      row_sum[mt][r] += exponentiate_row(acc_s[mt], r, exp_base(row_max[mt][r], exp_scale), exp_scale);
}

// A row's complete sum from the partial sums of its quad.
__device__ __forceinline__ float quad_sum(float partial) {
  partial += __shfl_xor_sync(0xffffffffu, partial, 1);
  partial += __shfl_xor_sync(0xffffffffu, partial, 2);
  return partial;
}

}  // namespace flexjit
