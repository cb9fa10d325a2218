// Warp-level GEMMs of the attention kernels on both tensor-core paths, chosen by the kernel's
// MMA_PATH with `if constexpr`: mma.sync m16n8k16 from ldmatrix fragments (each warp owns 16 *
// M_TILES rows), or Hopper wgmma m64nNk16 straight from shared memory (each warpgroup owns 64 rows,
// one m-tile per warp). Accumulators use the m16n8 fragment layout on both paths.
#pragma once
#include "flexjit_mma.cuh"
#include "flexjit_wgmma_ops.cuh"

namespace flexjit {

// Per-lane ldmatrix addressing of the mma.sync path for a Q tile (rows per lane) and K / V tiles:
// Q and V lanes pick chunk 2k + lane/16, K lanes chunk 2k + (lane/8)%2 (see LdmatrixColumns).
// The wgmma path addresses whole warpgroup tiles by descriptor and needs none of it.
template <MmaPath PATH, typename QTile, typename KTile, typename VTile>
struct LaneFragments {
  LdmatrixColumns cols_hi16;
  LdmatrixColumns cols_hi8;
  u32 q_lane_row, k_lane_row, v_lane_row;
  __device__ __forceinline__ LaneFragments(int lane, int warp_row0)
      : cols_hi16(lane, lane / 16),
        cols_hi8(lane, (lane / 8) % 2),
        q_lane_row((warp_row0 + (lane % 16)) * QTile::kRowBytes),
        k_lane_row(((lane % 8) + 8 * (lane / 16)) * KTile::kRowBytes),
        v_lane_row(((lane % 8) + 8 * ((lane / 8) % 2)) * VTile::kRowBytes) {}
};
template <typename QTile, typename KTile, typename VTile>
struct LaneFragments<MmaPath::wgmma, QTile, KTile, VTile> {
  __device__ __forceinline__ LaneFragments(int, int) {}
};

// S = Q K^T for the warp's rows and one tile of BLOCK_N keys (acc_s zeroed by the caller). Q and
// K are K-major (row-major) in shared memory.
template <MmaPath PATH, typename T, int M_TILES, int BLOCK_N, int D, typename QTile, typename KTile, typename Lanes>
__device__ __forceinline__ void warp_gemm_qk(float (&acc_s)[M_TILES][BLOCK_N / 8][4], u32 smem_q, u32 smem_k, int warp,
                                             const Lanes& lanes) {
  if constexpr (PATH == MmaPath::wgmma) {
    // The warpgroup's 64 query rows times the tile's keys: one wgmma per 16 columns of D,
    // A (Q) and B (K) both K-major in shared memory.
    const u32 q_rows = static_cast<u32>(warp / 4) * 64 * 128;
    wgmma_fence_operands(acc_s[0]);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const u32 a = smem_q + (kk / 4) * QTile::kSlabBytes + q_rows + (kk % 4) * 32;
      const u32 bk = smem_k + (kk / 4) * KTile::kSlabBytes + (kk % 4) * 32;
      WgmmaSS<BLOCK_N, false>::run(acc_s[0], wgmma_desc(a, 16, 1024), wgmma_desc(bk, 16, 1024), kk > 0 ? 1 : 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operands(acc_s[0]);
  } else {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      u32 a[M_TILES][4];
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt)
        ldmatrix_x4(a[mt], smem_q + lanes.q_lane_row + mt * 16 * QTile::kRowBytes + lanes.cols_hi16(kk));
#pragma unroll
      for (int n2 = 0; n2 < BLOCK_N / 16; ++n2) {
        u32 kb[4];
        ldmatrix_x4(kb, smem_k + lanes.k_lane_row + n2 * 16 * KTile::kRowBytes + lanes.cols_hi8(kk));
#pragma unroll
        for (int mt = 0; mt < M_TILES; ++mt) {
          mma_16816<T>(acc_s[mt][2 * n2], a[mt], kb[0], kb[1]);
          mma_16816<T>(acc_s[mt][2 * n2 + 1], a[mt], kb[2], kb[3]);
        }
      }
    }
  }
}

// O += P V: the probabilities in acc_s, packed to 16 bits, are the A operand as they stand (their
// fragment layout is the A layout of the next MMA); V is N-major in shared memory.
template <MmaPath PATH, typename T, int M_TILES, int BLOCK_N, int DV, typename VTile, typename Lanes>
__device__ __forceinline__ void warp_gemm_pv(float (&acc_o)[M_TILES][DV / 8][4], const float (&acc_s)[M_TILES][BLOCK_N / 8][4],
                                             u32 smem_v, const Lanes& lanes) {
  if constexpr (PATH == MmaPath::wgmma) {
    {
      // Pack all of P first: registers written between wgmmas would each need a fence.
      u32 pa[BLOCK_N / 16][4];
#pragma unroll
      for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
        pa[kk][0] = pack2<T>(acc_s[0][2 * kk][0], acc_s[0][2 * kk][1]);
        pa[kk][1] = pack2<T>(acc_s[0][2 * kk][2], acc_s[0][2 * kk][3]);
        pa[kk][2] = pack2<T>(acc_s[0][2 * kk + 1][0], acc_s[0][2 * kk + 1][1]);
        pa[kk][3] = pack2<T>(acc_s[0][2 * kk + 1][2], acc_s[0][2 * kk + 1][3]);
      }
      wgmma_fence_operands(acc_o[0]);
      wgmma_fence();
      // V is N-major (its rows are the 16 keys of a step): transposed B, its slabs LBO apart.
#pragma unroll
      for (int kk = 0; kk < BLOCK_N / 16; ++kk)
        WgmmaRS<DV, true>::run(acc_o[0], pa[kk], wgmma_desc(smem_v + kk * 16 * 128, VTile::kSlabBytes, 1024), 1);
    }
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operands(acc_o[0]);
  } else {
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
      u32 pa[M_TILES][4];
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt) {
        pa[mt][0] = pack2<T>(acc_s[mt][2 * kk][0], acc_s[mt][2 * kk][1]);
        pa[mt][1] = pack2<T>(acc_s[mt][2 * kk][2], acc_s[mt][2 * kk][3]);
        pa[mt][2] = pack2<T>(acc_s[mt][2 * kk + 1][0], acc_s[mt][2 * kk + 1][1]);
        pa[mt][3] = pack2<T>(acc_s[mt][2 * kk + 1][2], acc_s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int d2 = 0; d2 < DV / 16; ++d2) {
        u32 vb[4];
        ldmatrix_x4_trans(vb, smem_v + lanes.v_lane_row + kk * 16 * VTile::kRowBytes + lanes.cols_hi16(d2));
#pragma unroll
        for (int mt = 0; mt < M_TILES; ++mt) {
          mma_16816<T>(acc_o[mt][2 * d2], pa[mt], vb[0], vb[1]);
          mma_16816<T>(acc_o[mt][2 * d2 + 1], pa[mt], vb[2], vb[3]);
        }
      }
    }
  }
}

// Issue-only halves of the two wgmma GEMMs, for kernels that overlap them with other work: each
// issues its wgmmas and commits them as one group, and the caller waits (wgmma_wait<N>) and pins
// the registers (wgmma_fence_operands) when it needs the results. The accumulators and the A
// registers must not be touched until then.
template <int BLOCK_N, int D, typename QTile, typename KTile>
__device__ __forceinline__ void wgmma_issue_qk(float (&acc_s)[BLOCK_N / 8][4], u32 smem_q, u32 smem_k, int warpgroup,
                                               int accumulate = 0) {
  const u32 q_rows = static_cast<u32>(warpgroup) * 64 * 128;
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const u32 a = smem_q + (kk / 4) * QTile::kSlabBytes + q_rows + (kk % 4) * 32;
    const u32 bk = smem_k + (kk / 4) * KTile::kSlabBytes + (kk % 4) * 32;
    WgmmaSS<BLOCK_N, false>::run(acc_s, wgmma_desc(a, 16, 1024), wgmma_desc(bk, 16, 1024), kk > 0 ? 1 : accumulate);
  }
  wgmma_commit();
}

// wgmma: S = Q K^T, with Q from shared memory (wgmma_issue_qk) or, with Q_FRAGMENTS, from
// registers (q_fragments, the A-operand layout of m64nNk16, read once per work tile by
// load_a_fragments) so that each k-step reads only K's 16 columns from shared memory. A template,
// so that the form not taken is never instantiated (its wgmma shape is not generated). Issue and
// commit only. `accumulate` 1: S adds to what acc_s holds (a bias there), 0: S alone.
template <bool Q_FRAGMENTS, int BLOCK_N, int D, typename QTile, typename KTile, int STEPS>
__device__ __forceinline__ void wgmma_issue_scores(float (&acc_s)[BLOCK_N / 8][4], const u32 (&q_fragments)[STEPS][4],
                                                   u32 smem_q, u32 smem_k, int warpgroup, int accumulate = 0) {
  if constexpr (Q_FRAGMENTS) {
    static_assert(STEPS * 16 >= D, "an A fragment for each k-step of Q");
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const u32 bk = smem_k + (kk / 4) * KTile::kSlabBytes + (kk % 4) * 32;
      WgmmaRS<BLOCK_N, false>::run(acc_s, q_fragments[kk], wgmma_desc(bk, 16, 1024), kk > 0 ? 1 : accumulate);
    }
    wgmma_commit();
  } else {
    wgmma_issue_qk<BLOCK_N, D, QTile, KTile>(acc_s, smem_q, smem_k, warpgroup, accumulate);
  }
}

// P (acc_s of a finished softmax) packed to 16 bits in the A-operand layout of m64nNk16.
template <typename T, int BLOCK_N>
__device__ __forceinline__ void pack_probabilities(u32 (&pa)[BLOCK_N / 16][4], const float (&acc_s)[BLOCK_N / 8][4]) {
#pragma unroll
  for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
    pa[kk][0] = pack2<T>(acc_s[2 * kk][0], acc_s[2 * kk][1]);
    pa[kk][1] = pack2<T>(acc_s[2 * kk][2], acc_s[2 * kk][3]);
    pa[kk][2] = pack2<T>(acc_s[2 * kk + 1][0], acc_s[2 * kk + 1][1]);
    pa[kk][3] = pack2<T>(acc_s[2 * kk + 1][2], acc_s[2 * kk + 1][3]);
  }
}

template <int BLOCK_N, int DV, typename VTile>
__device__ __forceinline__ void wgmma_issue_pv(float (&acc_o)[DV / 8][4], const u32 (&pa)[BLOCK_N / 16][4], u32 smem_v) {
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BLOCK_N / 16; ++kk)
    WgmmaRS<DV, true>::run(acc_o, pa[kk], wgmma_desc(smem_v + kk * 16 * 128, VTile::kSlabBytes, 1024), 1);
  wgmma_commit();
}

}  // namespace flexjit
