// Warp GEMMs of the backward kernels (dQ and dK/dV) on both tensor-core paths, chosen by the
// kernel's MMA_PATH with `if constexpr`, like flexjit_warp_gemm.cuh for the forward: mma.sync
// m16n8k16 from ldmatrix fragments, or Hopper wgmma m64nNk16 (warpgroups of 4 warps, one m-tile per
// warp). On the wgmma path the last GEMM of a tile (dQ, or dV and dK) is left running into the
// next tile, so its A operands (dS, Pᵀ packed) and accumulators are carried across iterations and
// pinned at every hand-over; the kernel owns those arrays, the functions here are all that touch
// them on the path. On the mma.sync path they are unused and compiled away.
#pragma once
#include "flexjit_mma.cuh"
#include "flexjit_wgmma_ops.cuh"

namespace flexjit {

// ---- Building blocks ------------------------------------------------------------------------

// mma.sync: acc += A Bᵀ with A (rows of this warp) and B both K-major in swizzled shared memory,
// K columns. smem_a / smem_b: the tiles; a_lane_row / b_lane_row: this lane's ldmatrix row in them.
template <typename T, int M_TILES, int N, int K, typename ATile, typename BTile>
__device__ __forceinline__ void mma_gemm_nt(float (&acc)[M_TILES][N / 8][4], u32 smem_a, u32 a_lane_row, u32 smem_b,
                                            u32 b_lane_row, const LdmatrixColumns& cols_a,
                                            const LdmatrixColumns& cols_b) {
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    u32 a[M_TILES][4];
#pragma unroll
    for (int mt = 0; mt < M_TILES; ++mt) ldmatrix_x4(a[mt], smem_a + a_lane_row + mt * 16 * ATile::kRowBytes + cols_a(kk));
#pragma unroll
    for (int n2 = 0; n2 < N / 16; ++n2) {
      u32 b[4];
      ldmatrix_x4(b, smem_b + b_lane_row + n2 * 16 * BTile::kRowBytes + cols_b(kk));
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt) {
        mma_16816<T>(acc[mt][2 * n2], a[mt], b[0], b[1]);
        mma_16816<T>(acc[mt][2 * n2 + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// mma.sync: acc += P B with P the float accumulators of an earlier MMA (their fragment layout is
// the A layout), packed to 16 bits step by step, and B N-major in shared memory (read transposed).
template <typename T, int M_TILES, int N, int K, typename BTile>
__device__ __forceinline__ void mma_gemm_rn(float (&acc)[M_TILES][N / 8][4], const float (&p)[M_TILES][K / 8][4],
                                            u32 smem_b, u32 b_lane_row, const LdmatrixColumns& cols_b) {
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    u32 pa[M_TILES][4];
#pragma unroll
    for (int mt = 0; mt < M_TILES; ++mt) {
      pa[mt][0] = pack2<T>(p[mt][2 * kk][0], p[mt][2 * kk][1]);
      pa[mt][1] = pack2<T>(p[mt][2 * kk][2], p[mt][2 * kk][3]);
      pa[mt][2] = pack2<T>(p[mt][2 * kk + 1][0], p[mt][2 * kk + 1][1]);
      pa[mt][3] = pack2<T>(p[mt][2 * kk + 1][2], p[mt][2 * kk + 1][3]);
    }
#pragma unroll
    for (int d2 = 0; d2 < N / 16; ++d2) {
      u32 b[4];
      ldmatrix_x4_trans(b, smem_b + b_lane_row + kk * 16 * BTile::kRowBytes + cols_b(d2));
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt) {
        mma_16816<T>(acc[mt][2 * d2], pa[mt], b[0], b[1]);
        mma_16816<T>(acc[mt][2 * d2 + 1], pa[mt], b[2], b[3]);
      }
    }
  }
}

// wgmma: acc = A Bᵀ for the warpgroup's 64 rows (a_rows: their byte offset in A), A and B both
// K-major in shared memory, K columns. The first k-step ignores acc's input, unless ACCUMULATE
// (acc += A Bᵀ). Issue only: the caller fences, commits and waits.
template <int N, int K, typename ATile, typename BTile, bool ACCUMULATE = false>
__device__ __forceinline__ void wgmma_issue_nt(float (&acc)[N / 8][4], u32 smem_a, u32 a_rows, u32 smem_b) {
  const u64 a_desc = wgmma_desc_origin(smem_a + a_rows, 16, 1024);
  const u64 b_desc = wgmma_desc_origin(smem_b, 16, 1024);
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk)
    WgmmaSS<N, false>::run(acc, wgmma_desc_advance(a_desc, (kk / 4) * ATile::kSlabBytes + (kk % 4) * 32),
                           wgmma_desc_advance(b_desc, (kk / 4) * BTile::kSlabBytes + (kk % 4) * 32),
                           ACCUMULATE || kk > 0);
}

// One 8-column accumulator tile j (its four values p) packed to 16 bits into its place in the A
// operand of the next MMA: k-step j / 2, registers 0-1 for even j and 2-3 for odd.
template <typename T, int STEPS>
__device__ __forceinline__ void pack_a_column_tile(u32 (&a)[STEPS][4], int j, const float (&p)[4]) {
  a[j / 2][(j % 2) * 2] = pack2<T>(p[0], p[1]);
  a[j / 2][(j % 2) * 2 + 1] = pack2<T>(p[2], p[3]);
}
// wgmma: the accumulators of an earlier MMA packed to 16 bits as the A operand of the next one.
// All of it is packed before the first wgmma: registers written between wgmmas need fences.
template <typename T, int STEPS>
__device__ __forceinline__ void pack_a_operand(u32 (&a)[STEPS][4], const float (&p)[2 * STEPS][4]) {
#pragma unroll
  for (int j = 0; j < 2 * STEPS; ++j) pack_a_column_tile<T>(a, j, p[j]);
}

// wgmma: acc += A B with A from registers and B N-major in shared memory (its rows are the 16 keys
// of a step; slabs of 64 columns LBO apart; smem_b already offset to the first column). Issue only:
// k-steps FIRST .. LAST - 1 (all of them by default).
template <int N, int STEPS, typename BTile, int FIRST = 0, int LAST = STEPS>
__device__ __forceinline__ void wgmma_issue_rn(float (&acc)[N / 8][4], const u32 (&a)[STEPS][4], u32 smem_b) {
  static_assert(0 <= FIRST && FIRST <= LAST && LAST <= STEPS, "k-steps within the operand");
  const u64 b_desc = wgmma_desc_origin(smem_b, BTile::kSlabBytes, 1024);
#pragma unroll
  for (int kk = FIRST; kk < LAST; ++kk) WgmmaRS<N, true>::run(acc, a[kk], wgmma_desc_advance(b_desc, kk * 16 * 128), 1);
}

// wgmma: acc += A B with A K-major in shared memory (a tile staged from another warpgroup's
// fragments, one 64-column slab: k-steps 32 bytes apart) and B N-major as wgmma_issue_rn's, STEPS
// k-steps from smem_a and smem_b (both already at the first one). Issue only.
template <int N, int STEPS, typename BTile>
__device__ __forceinline__ void wgmma_issue_sn(float (&acc)[N / 8][4], u32 smem_a, u32 smem_b) {
  static_assert(STEPS <= 4, "A within one 64-column slab");
  const u64 a_desc = wgmma_desc_origin(smem_a, 16, 1024);
  const u64 b_desc = wgmma_desc_origin(smem_b, BTile::kSlabBytes, 1024);
#pragma unroll
  for (int kk = 0; kk < STEPS; ++kk)
    WgmmaSS<N, true>::run(acc, wgmma_desc_advance(a_desc, kk * 32), wgmma_desc_advance(b_desc, kk * 16 * 128), 1);
}

// wgmma: acc = A B with A from registers (fragments kept across tiles) and B K-major in shared
// memory, as wgmma_issue_nt's B. The first k-step ignores acc's input, unless ACCUMULATE. Issue
// only.
template <int N, int STEPS, typename BTile, bool ACCUMULATE = false>
__device__ __forceinline__ void wgmma_issue_rt(float (&acc)[N / 8][4], const u32 (&a)[STEPS][4], u32 smem_b) {
  const u64 b_desc = wgmma_desc_origin(smem_b, 16, 1024);
#pragma unroll
  for (int kk = 0; kk < STEPS; ++kk)
    WgmmaRS<N, false>::run(acc, a[kk], wgmma_desc_advance(b_desc, (kk / 4) * BTile::kSlabBytes + (kk % 4) * 32),
                           ACCUMULATE || kk > 0);
}

// Start of a streamed tile: its stage has landed and is visible to every thread (and, for wgmma,
// to the tensor cores' async proxy). The mma.sync path refills the stage the previous tile freed
// right away; the wgmma path only once its MMAs still in flight are done with it (see below).
template <MmaPath PATH, int STAGES, typename LoadNext>
__device__ __forceinline__ void bwd_tile_begin(int t, const LoadNext& load_next) {
  cp_async_wait<STAGES - 2>();
  if constexpr (PATH == MmaPath::wgmma) fence_proxy_async();  // the tensor cores read what cp.async wrote
  __syncthreads();
  if constexpr (PATH == MmaPath::mma_sync) load_next(t);
}

// dP (dQ kernel) or dPᵀ (dK/dV kernel) is needed: on the wgmma path it may still be running.
template <MmaPath PATH, int M_TILES, int N_TILES>
__device__ __forceinline__ void bwd_wait_dp(float (&acc_dp)[M_TILES][N_TILES][4]) {
  if constexpr (PATH == MmaPath::wgmma) {
    wgmma_wait<0>();
    wgmma_fence_operands(acc_dp[0]);
  }
}

// ---- dQ kernel: S = Q Kᵀ, dP = dO Vᵀ, dQ += dS K ------------------------------------------------

// mma.sync ldmatrix addressing of the dQ kernel, gathered from the kernel's own locals. (Computed
// in a constructor here instead, the same values come out of NVVM with reassociated address
// arithmetic and a different register allocation; as locals they give the code the kernels had
// before this header. The wgmma path leaves them unused and they are compiled away.) Q and dO are
// A operands (this warp's rows), K and V B operands (not transposed for S and dP, transposed (kt)
// for dQ).
struct DqLanes {
  const LdmatrixColumns& cols_hi16;
  const LdmatrixColumns& cols_hi8;
  u32 q_lane_row, do_lane_row, k_lane_row, v_lane_row, kt_lane_row;
};

// Before the tile loop: on the wgmma path dQ and its A operand `da` are carried across tiles.
// Their zeros are materialised here: left to the compiler, they sink into the loop's exit paths,
// where ptxas sees accumulators written while a wgmma may be in flight and serialises every wgmma.
template <MmaPath PATH, int M_TILES, int D_TILES, int STEPS>
__device__ __forceinline__ void bwd_dq_pin(float (&acc_dq)[M_TILES][D_TILES][4], u32 (&da)[STEPS][4]) {
  if constexpr (PATH == MmaPath::wgmma) {
    wgmma_fence_operands(acc_dq[0]);
    wgmma_fence_operands(da);
  }
}

// S = Q Kᵀ and dP = dO Vᵀ for this warp's rows. wgmma: the warpgroup's 64 rows, issued back to
// back as two groups so P is computed from S while the tensor cores still work on dP (waited for
// by bwd_wait_dp); the previous tile's dQ is done on return, and then the freed stage is refilled.
template <MmaPath PATH, typename T, int M_TILES, int BLOCK_N, int D, int DV, typename QTile, typename DOTile,
          typename KTile, typename VTile, int D_TILES, typename Lanes, typename LoadNext>
__device__ __forceinline__ void bwd_dq_gemm_s_dp(float (&acc_s)[M_TILES][BLOCK_N / 8][4],
                                                 float (&acc_dp)[M_TILES][BLOCK_N / 8][4],
                                                 float (&acc_dq)[M_TILES][D_TILES][4], u32 (&da)[BLOCK_N / 16][4],
                                                 u32 smem_q, u32 smem_do, u32 smem_k, u32 smem_v, int warp,
                                                 const Lanes& lanes, const LoadNext& load_next, int t) {
  if constexpr (PATH == MmaPath::wgmma) {
    const u32 rows = static_cast<u32>(warp / 4) * 64 * 128;
    wgmma_fence_operands(acc_s[0]);
    wgmma_fence_operands(acc_dp[0]);
    wgmma_fence();
    wgmma_issue_nt<BLOCK_N, D, QTile, KTile>(acc_s[0], smem_q, rows, smem_k);
    wgmma_commit();
    wgmma_issue_nt<BLOCK_N, DV, DOTile, VTile>(acc_dp[0], smem_do, rows, smem_v);
    wgmma_commit();
    wgmma_wait<1>();  // dQ of the previous tile and S are done; dP may still be running
    wgmma_fence_operands(acc_s[0]);
    wgmma_fence_operands(acc_dq[0]);
    wgmma_fence_operands(da);
    __syncthreads();  // every warpgroup's dQ is done with the stage the next load overwrites
    load_next(t);
  } else {
#pragma unroll
    for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
      for (int j = 0; j < BLOCK_N / 8; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc_s[mt][j][i] = acc_dp[mt][j][i] = 0.f;
    mma_gemm_nt<T, M_TILES, BLOCK_N, D, QTile, KTile>(acc_s, smem_q, lanes.q_lane_row, smem_k, lanes.k_lane_row,
                                                      lanes.cols_hi16, lanes.cols_hi8);
    mma_gemm_nt<T, M_TILES, BLOCK_N, DV, DOTile, VTile>(acc_dp, smem_do, lanes.do_lane_row,
                                                        smem_v, lanes.v_lane_row, lanes.cols_hi16, lanes.cols_hi8);
  }
}

// dQ += dS K: dS (in acc_s) packed to 16 bits is the A operand; K is N-major here (read
// transposed). wgmma: left running into the next tile (or bwd_dq_drain); `da` is its A operand.
template <MmaPath PATH, typename T, int M_TILES, int BLOCK_N, int D, typename KTile, typename Lanes>
__device__ __forceinline__ void bwd_dq_gemm_dq(float (&acc_dq)[M_TILES][D / 8][4], u32 (&da)[BLOCK_N / 16][4],
                                               const float (&acc_s)[M_TILES][BLOCK_N / 8][4], u32 smem_k,
                                               const Lanes& lanes) {
  if constexpr (PATH == MmaPath::wgmma) {
    pack_a_operand<T>(da, acc_s[0]);
    wgmma_fence_operands(acc_dq[0]);
    wgmma_fence();
    wgmma_issue_rn<D, BLOCK_N / 16, KTile>(acc_dq[0], da, smem_k);
    wgmma_commit();  // waited for in the next tile (or after the loop)
  } else {
    mma_gemm_rn<T, M_TILES, D, BLOCK_N, KTile>(acc_dq, acc_s, smem_k, lanes.kt_lane_row, lanes.cols_hi16);
  }
}

// After the tile loop: the last tile's dQ.
template <MmaPath PATH, int M_TILES, int D_TILES, int STEPS>
__device__ __forceinline__ void bwd_dq_drain(float (&acc_dq)[M_TILES][D_TILES][4], u32 (&da)[STEPS][4]) {
  if constexpr (PATH == MmaPath::wgmma) {
    wgmma_wait<0>();
    wgmma_fence_operands(acc_dq[0]);
    wgmma_fence_operands(da);
  }
}

// ---- dK/dV kernel: Sᵀ = K Qᵀ, dPᵀ = V dOᵀ, dV += Pᵀ dO, dK += dSᵀ Q --------------------------------

// Addressing of the dK/dV kernel, gathered from the kernel's locals like DqLanes. mma.sync: K and
// V are A operands (this warp's kv rows), Q and dO B operands (not transposed for Sᵀ and dPᵀ,
// transposed (qt, dot) for dK and dV, at this CTA's column slices cols_dk / cols_dv). wgmma: the
// warpgroup's kv rows in K and V (wg_rows).
struct DkdvLanes {
  const LdmatrixColumns& cols_hi16;
  const LdmatrixColumns& cols_hi8;
  u32 k_lane_row, v_lane_row, q_lane_row, do_lane_row, qt_lane_row, dot_lane_row;
  const LdmatrixColumns& cols_dk;
  const LdmatrixColumns& cols_dv;
  u32 wg_rows;
};

// Before the tile loop: on the wgmma path dK, dV and their A operands `pa` (Pᵀ) and `da` (dSᵀ)
// are carried across tiles; their zeros are materialised here (see bwd_dq_pin).
template <MmaPath PATH, int M_TILES, int D_TILES, int DV_TILES, int STEPS>
__device__ __forceinline__ void bwd_dkdv_pin(float (&acc_dk)[M_TILES][D_TILES][4],
                                             float (&acc_dv)[M_TILES][DV_TILES][4], u32 (&pa)[STEPS][4],
                                             u32 (&da)[STEPS][4]) {
  if constexpr (PATH == MmaPath::wgmma) {
    wgmma_fence_operands(acc_dk[0]);
    wgmma_fence_operands(acc_dv[0]);
    wgmma_fence_operands(pa);
    wgmma_fence_operands(da);
  }
}

// Sᵀ = K Qᵀ: rows are this warp's kv positions, columns the tile's queries. wgmma: Sᵀ and dPᵀ =
// V dOᵀ (both K-major) as two groups, so Pᵀ is computed while dPᵀ runs; the previous tile's dV
// and dK are done on return, and then the freed stage is refilled. mma.sync computes dPᵀ later,
// in bwd_dkdv_gemm_dv_dp.
template <MmaPath PATH, typename T, int M_TILES, int BLOCK_M, int D, int DV, typename KTile, typename VTile,
          typename QTile, typename DOTile, int D_TILES, int DV_TILES, typename Lanes, typename LoadNext>
__device__ __forceinline__ void bwd_dkdv_gemm_s(float (&acc_s)[M_TILES][BLOCK_M / 8][4],
                                                float (&acc_dp)[M_TILES][BLOCK_M / 8][4],
                                                float (&acc_dk)[M_TILES][D_TILES][4],
                                                float (&acc_dv)[M_TILES][DV_TILES][4], u32 (&pa)[BLOCK_M / 16][4],
                                                u32 (&da)[BLOCK_M / 16][4], u32 smem_k, u32 smem_v, u32 smem_q,
                                                u32 smem_do, const Lanes& lanes, const LoadNext& load_next, int t) {
  if constexpr (PATH == MmaPath::wgmma) {
    wgmma_fence_operands(acc_s[0]);
    wgmma_fence_operands(acc_dp[0]);
    wgmma_fence();
    wgmma_issue_nt<BLOCK_M, D, KTile, QTile>(acc_s[0], smem_k, lanes.wg_rows, smem_q);
    wgmma_commit();
    wgmma_issue_nt<BLOCK_M, DV, VTile, DOTile>(acc_dp[0], smem_v, lanes.wg_rows, smem_do);
    wgmma_commit();
    wgmma_wait<1>();  // dV and dK of the previous tile, and Sᵀ
    wgmma_fence_operands(acc_s[0]);
    wgmma_fence_operands(acc_dv[0]);
    wgmma_fence_operands(acc_dk[0]);
    wgmma_fence_operands(pa);
    wgmma_fence_operands(da);
    __syncthreads();  // every warpgroup's dK is done with the stage the next load overwrites
    load_next(t);
  } else {
#pragma unroll
    for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
      for (int j = 0; j < BLOCK_M / 8; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc_s[mt][j][i] = 0.f;
    mma_gemm_nt<T, M_TILES, BLOCK_M, D, KTile, QTile>(acc_s, smem_k, lanes.k_lane_row, smem_q, lanes.q_lane_row,
                                                      lanes.cols_hi16, lanes.cols_hi8);
  }
}

// dV += Pᵀ dO (Pᵀ in acc_s, dO N-major at this CTA's column slice), and dPᵀ is ready on return.
// wgmma: dV runs on while dSᵀ is computed, with `pa` as its A operand (packed from acc_s here, or
// with PACK false already by the caller); dPᵀ was issued with Sᵀ. mma.sync: dPᵀ = V dOᵀ is
// computed here.
template <MmaPath PATH, typename T, int M_TILES, int BLOCK_M, int DV, int DV_SLICE, typename VTile, typename DOTile,
          bool PACK = true, typename Lanes>
__device__ __forceinline__ void bwd_dkdv_gemm_dv_dp(float (&acc_dv)[M_TILES][DV_SLICE / 8][4],
                                                    float (&acc_dp)[M_TILES][BLOCK_M / 8][4],
                                                    u32 (&pa)[BLOCK_M / 16][4],
                                                    const float (&acc_s)[M_TILES][BLOCK_M / 8][4], u32 smem_v,
                                                    u32 smem_do, int split, const Lanes& lanes) {
  static_assert(PACK || PATH == MmaPath::wgmma, "mma.sync reads Pᵀ from acc_s");
  if constexpr (PATH == MmaPath::wgmma) {
    if constexpr (PACK) pack_a_operand<T>(pa, acc_s[0]);
    {
      const u32 dv_cols = static_cast<u32>(split * DV_SLICE / 64) * DOTile::kSlabBytes;
      wgmma_fence_operands(acc_dv[0]);
      wgmma_fence();
      wgmma_issue_rn<DV_SLICE, BLOCK_M / 16, DOTile>(acc_dv[0], pa, smem_do + dv_cols);
      wgmma_commit();
      wgmma_wait<1>();  // dPᵀ; dV may still be running
      wgmma_fence_operands(acc_dp[0]);
    }
  } else {
    mma_gemm_rn<T, M_TILES, DV_SLICE, BLOCK_M, DOTile>(acc_dv, acc_s, smem_do, lanes.dot_lane_row, lanes.cols_dv);
#pragma unroll
    for (int mt = 0; mt < M_TILES; ++mt)
#pragma unroll
      for (int j = 0; j < BLOCK_M / 8; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc_dp[mt][j][i] = 0.f;
    mma_gemm_nt<T, M_TILES, BLOCK_M, DV, VTile, DOTile>(acc_dp, smem_v, lanes.v_lane_row,
                                                        smem_do, lanes.do_lane_row, lanes.cols_hi16, lanes.cols_hi8);
  }
}

// dK += dSᵀ Q (dSᵀ in acc_dp, Q N-major at this CTA's column slice). wgmma: left running into the
// next tile (or bwd_dkdv_drain), with dV; `da` is its A operand.
template <MmaPath PATH, typename T, int M_TILES, int BLOCK_M, int DK_SLICE, typename QTile, typename Lanes>
__device__ __forceinline__ void bwd_dkdv_gemm_dk(float (&acc_dk)[M_TILES][DK_SLICE / 8][4], u32 (&da)[BLOCK_M / 16][4],
                                                 const float (&acc_dp)[M_TILES][BLOCK_M / 8][4], u32 smem_q,
                                                 int split, const Lanes& lanes) {
  if constexpr (PATH == MmaPath::wgmma) {
    pack_a_operand<T>(da, acc_dp[0]);
    const u32 dk_cols = static_cast<u32>(split * DK_SLICE / 64) * QTile::kSlabBytes;
    wgmma_fence_operands(acc_dk[0]);
    wgmma_fence();
    wgmma_issue_rn<DK_SLICE, BLOCK_M / 16, QTile>(acc_dk[0], da, smem_q + dk_cols);
    wgmma_commit();  // waited for in the next tile (or after the loop), with dV
  } else {
    mma_gemm_rn<T, M_TILES, DK_SLICE, BLOCK_M, QTile>(acc_dk, acc_dp, smem_q, lanes.qt_lane_row, lanes.cols_dk);
  }
}

// ---- The fast mode: dQ += dS K in the dK/dV kernel (wgmma only) --------------------------------

// One fp32 pair added to global memory (sm_90: vector reductions), no return value.
__device__ __forceinline__ void red_add_v2(float* address, float a, float b) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(address), "f"(a), "f"(b) : "memory");
}

// dK += dSᵀ Q and this warpgroup's dQ share += dS K (dSᵀ in acc_dp), the share added to the fp32
// accumulator of the tile's head (dq_head: its [Sq, D] rows). dSᵀ is packed into `da` and stored
// to shared memory at smem_ds (kv rows x queries, a WgmmaTile: M-major for dQ's A); once every
// warpgroup's rows are there, dQ is issued ahead of dK, so it is waited for alone while dK runs on
// into the next tile, and its vector reductions go out meanwhile. (Staging the share in shared
// memory for one bulk reduction per row measured 12 % slower on an H100.) The share: 64 queries
// (the warpgroup's block) by DQ_N columns over DQ_KV_ROWS kv rows (see DqPlan in bwd_dkdv.cpp).
// A template on DQ so that kernels without the fast mode (the mma.sync path among them) never
// instantiate it.
template <bool DQ, typename T, int BLOCK_M, int DK_SLICE, int D, int DQ_N, int DQ_KV_ROWS, int DQ_GROUPS,
          bool DQ_SPLIT_COLUMNS, typename QTile, typename KTile, typename DsTile, int M_TILES, int D_TILES, int STEPS,
          int N_TILES>
__device__ __forceinline__ void bwd_dkdv_gemm_dk_dq(float (&acc_dk)[M_TILES][D_TILES][4], u32 (&da)[STEPS][4],
                                                    const float (&acc_dp)[M_TILES][N_TILES][4], u32 smem_q, u32 smem_k,
                                                    u32 smem_ds, int warp, int lane, int split, float* dq_head,
                                                    int q_start, int q_len) {
  if constexpr (DQ) {
    static_assert(M_TILES == 1 && STEPS == BLOCK_M / 16 && D_TILES == DK_SLICE / 8, "wgmma tiles of the dK/dV kernel");
    const int g8 = lane / 4, t4 = lane % 4;
    const int wg = warp / 4;
    const int q_block = wg / DQ_GROUPS, part = wg % DQ_GROUPS;
    const int col0 = split * DK_SLICE + (DQ_SPLIT_COLUMNS ? part * DQ_N : 0);
    const int kv0 = DQ_SPLIT_COLUMNS ? 0 : part * DQ_KV_ROWS;
    const u32 dq_a = smem_ds + q_block * DsTile::kSlabBytes + kv0 * 128;
    const u32 dq_b = smem_k + (col0 / 64) * KTile::kSlabBytes + kv0 * 128;
    const int ds_row0 = warp * 16;  // this warp's kv rows
    pack_a_operand<T>(da, acc_dp[0]);
#pragma unroll
    for (int kk = 0; kk < BLOCK_M / 16; ++kk) {
      st_shared_b32(smem_ds + DsTile::offset(ds_row0 + g8, 2 * kk) + 4 * t4, da[kk][0]);
      st_shared_b32(smem_ds + DsTile::offset(ds_row0 + g8 + 8, 2 * kk) + 4 * t4, da[kk][1]);
      st_shared_b32(smem_ds + DsTile::offset(ds_row0 + g8, 2 * kk + 1) + 4 * t4, da[kk][2]);
      st_shared_b32(smem_ds + DsTile::offset(ds_row0 + g8 + 8, 2 * kk + 1) + 4 * t4, da[kk][3]);
    }
    fence_proxy_async();  // the tensor cores read what st.shared wrote
    __syncthreads();      // every warpgroup's dSᵀ rows are in place
    float acc_dq[DQ_N / 8][4];
    wgmma_fence_operands(acc_dq);
    wgmma_fence_operands(acc_dk[0]);
    wgmma_fence();
    // Descriptors rebuilt per wgmma here (not wgmma_desc_advance): two more held across the loop
    // cost the d128 fast kernel, at 255 registers, a spill.
#pragma unroll
    for (int kk = 0; kk < DQ_KV_ROWS / 16; ++kk)
      WgmmaSSTa<DQ_N, true>::run(acc_dq, wgmma_desc(dq_a + kk * 16 * 128, DsTile::kSlabBytes, 1024),
                                 wgmma_desc(dq_b + kk * 16 * 128, KTile::kSlabBytes, 1024), kk > 0);
    wgmma_commit();
    const u32 dk_cols = static_cast<u32>(split * DK_SLICE / 64) * QTile::kSlabBytes;
    wgmma_issue_rn<DK_SLICE, BLOCK_M / 16, QTile>(acc_dk[0], da, smem_q + dk_cols);
    wgmma_commit();   // waited for in the next tile (or after the loop), with dV
    wgmma_wait<1>();  // dQ (and dV)
    wgmma_fence_operands(acc_dq);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int q_idx = q_start + q_block * 64 + (warp % 4) * 16 + g8 + 8 * r;
      if (q_idx < q_len) {
        float* row = dq_head + static_cast<long long>(q_idx) * D;
#pragma unroll
        for (int j = 0; j < DQ_N / 8; ++j)
          red_add_v2(row + flexjit_dq_accum_column(q_idx, col0 + j * 8 + 2 * t4, D), acc_dq[j][2 * r],
                     acc_dq[j][2 * r + 1]);
      }
    }
  }
}

// After the tile loop: the last tile's dV and dK.
template <MmaPath PATH, int M_TILES, int D_TILES, int DV_TILES, int STEPS>
__device__ __forceinline__ void bwd_dkdv_drain(float (&acc_dk)[M_TILES][D_TILES][4],
                                               float (&acc_dv)[M_TILES][DV_TILES][4], u32 (&pa)[STEPS][4],
                                               u32 (&da)[STEPS][4]) {
  if constexpr (PATH == MmaPath::wgmma) {
    wgmma_wait<0>();
    wgmma_fence_operands(acc_dv[0]);
    wgmma_fence_operands(acc_dk[0]);
    wgmma_fence_operands(pa);
    wgmma_fence_operands(da);
  }
}

}  // namespace flexjit
