// Online softmax in base 2 over a warp's score accumulators, in the mma m16n8 fragment layout: a
// thread holds rows g and g + 8 of each 16-row tile (index r = 0, 1) and two adjacent columns of
// each 8-column tile, so a row's values are spread over the 4 threads of a quad.
#pragma once
#include "flexjit_mma.cuh"

namespace flexjit {

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
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float base = (mx == neg_inf() ? 0.f : mx) * exp_scale;
      const float alpha = exp2_approx(row_max[mt][r] * exp_scale - base);
      row_max[mt][r] = mx;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < N_TILES; ++j) {
        const float p0 = exp2_approx(fmaf(acc_s[mt][j][2 * r], exp_scale, -base));
        const float p1 = exp2_approx(fmaf(acc_s[mt][j][2 * r + 1], exp_scale, -base));
        acc_s[mt][j][2 * r] = p0;
        acc_s[mt][j][2 * r + 1] = p1;
        sum += p0 + p1;
      }
      row_sum[mt][r] = row_sum[mt][r] * alpha + sum;
#pragma unroll
      for (int j = 0; j < DV_TILES; ++j) {
        acc_o[mt][j][2 * r] *= alpha;
        acc_o[mt][j][2 * r + 1] *= alpha;
      }
    }
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
      // The row's maximum as a tree (depth log2(N_TILES) + 1), not a chain through every column:
      // nothing else can issue until it is known, and each step of a chain waits out the last
      // one's latency (ncu, H200, notes/perf.md "(zzu)": the chain's 65 instructions took about
      // 230 cycles of the warpgroup's 1,080-cycle softmax stretch; the tree measured 1.00-1.03x on
      // most suite forwards in two A/B runs, causal d64 0.99-1.00x).
      float pair_max[N_TILES];
#pragma unroll
      for (int j = 0; j < N_TILES; ++j) pair_max[j] = fmaxf(acc_s[mt][j][2 * r], acc_s[mt][j][2 * r + 1]);
#pragma unroll
      for (int stride = 1; stride < N_TILES; stride *= 2)
#pragma unroll
        for (int j = 0; j + stride < N_TILES; j += 2 * stride) pair_max[j] = fmaxf(pair_max[j], pair_max[j + stride]);
      float mx = fmaxf(row_max[mt][r], pair_max[0]);
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float base = (mx == neg_inf() ? 0.f : mx) * exp_scale;
      alpha[mt][r] = exp2_approx(row_max[mt][r] * exp_scale - base);
      row_max[mt][r] = mx;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < N_TILES; ++j) {
        const float p0 = exp2_approx(fmaf(acc_s[mt][j][2 * r], exp_scale, -base));
        const float p1 = exp2_approx(fmaf(acc_s[mt][j][2 * r + 1], exp_scale, -base));
        acc_s[mt][j][2 * r] = p0;
        acc_s[mt][j][2 * r + 1] = p1;
        sum += p0 + p1;
      }
      row_sum[mt][r] = row_sum[mt][r] * alpha[mt][r] + sum;
    }
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

// A row's complete sum from the partial sums of its quad.
__device__ __forceinline__ float quad_sum(float partial) {
  partial += __shfl_xor_sync(0xffffffffu, partial, 1);
  partial += __shfl_xor_sync(0xffffffffu, partial, 2);
  return partial;
}

}  // namespace flexjit
