// Hopper warpgroup MMA (sm_90a): the static part — shared-memory matrix descriptors, fences,
// commit / wait and operand pins. The wrapper structs WgmmaSS / WgmmaRS, whose asm operand lists
// depend on N, are generated per kernel into flexjit_wgmma.cuh, which includes this header.
// Kernels of the mma.sync path include it too (the warp GEMMs name both paths); functions they
// never call are not emitted.
#pragma once
#include "flexjit_mma.cuh"

namespace flexjit {

// Shared-memory matrix descriptor: start address, leading / stride byte offsets (16-byte units),
// 128-byte swizzle (mode 1 in bits 62-63). For a K-major operand the stride offset steps between
// 8-row atoms (1024 bytes) and the leading offset is unused; for an N-major operand the leading
// offset steps between 64-column slabs and the stride offset between 8-row atoms along K.
__device__ __forceinline__ u64 wgmma_desc(u32 smem_address, u32 leading_bytes, u32 stride_bytes) {
  return static_cast<u64>((smem_address & 0x3FFFF) >> 4) | (static_cast<u64>((leading_bytes >> 4) & 0x3FFF) << 16) |
         (static_cast<u64>((stride_bytes >> 4) & 0x3FFF) << 32) | (1ull << 62);
}
// Descriptors built once per GEMM and moved along by one add per wgmma: rebuilt from the address
// for every wgmma, the masks and shifts became a chain of uniform-datapath instructions between
// the backward's wgmmas. wgmma_desc_origin is wgmma_desc with its make-up hidden from the
// compiler, which otherwise folds the adds back into the masks and shifts; wgmma_desc_advance
// moves only the address field (the low 14 bits, in 16-byte units; shared addresses stay below
// 256 KiB, so it never carries into the next field). (The forward measured no faster with them,
// and its d64 kernels slower: notes/perf.md, "(m)".)
__device__ __forceinline__ u64 wgmma_desc_origin(u32 smem_address, u32 leading_bytes, u32 stride_bytes) {
  u64 desc = wgmma_desc(smem_address, leading_bytes, stride_bytes);
  asm("mov.b64 %0, %0;" : "+l"(desc));
  return desc;
}
__device__ __forceinline__ u64 wgmma_desc_advance(u64 desc, u32 bytes) {
  return (desc & 0xffffffff00000000ull) | static_cast<u32>(static_cast<u32>(desc) + (bytes >> 4));
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Shared memory written through the generic proxy (cp.async, st.shared) becomes visible to the
// tensor cores' async proxy only after this fence in each writing thread (then a barrier).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// The thread's index in its CTA, read afresh where it is called: values derived from it are
// computed there instead of being hoisted out of a loop into registers the loop needs.
__device__ __forceinline__ int thread_index_here() {
  int tid;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
  return tid;
}
// Stores four 8 x 8 matrices of 16-bit values to shared memory: lane l gives the 16-byte row
// address of matrix l / 8, row l % 8, and holds in r[i] matrix i's elements (row l / 4, columns
// 2 (l % 4) and 2 (l % 4) + 1) — the layout of an mma / wgmma accumulator fragment.
__device__ __forceinline__ void stmatrix_x4(u32 address, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(address), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}
// Pins accumulator registers in place: reads after a wgmma_wait cannot move above it, and
// writes before a wgmma cannot move below it.
template <int ROWS>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[ROWS][4]) {
#pragma unroll
  for (int j = 0; j < ROWS; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) asm volatile("" : "+f"(d[j][i])::"memory");
}
// Pins A-operand registers of a wgmma still in flight: the compiler must not reuse them for other
// values until the wgmma_wait after which this is placed.
template <int STEPS>
__device__ __forceinline__ void wgmma_fence_operands(u32 (&a)[STEPS][4]) {
#pragma unroll
  for (int j = 0; j < STEPS; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(a[j][i])::"memory");
}

// Wrappers for one wgmma shape (N of m64nNk16, B transposed or not): A and B from shared memory
// (SS; SSTa with A transposed) or A from registers (RS). Specialised per kernel in the generated flexjit_wgmma.cuh.
template <int N, bool TRANS_B> struct WgmmaSS;
template <int N, bool TRANS_B> struct WgmmaSSTa;  // A stored M-major (M contiguous)
template <int N, bool TRANS_B> struct WgmmaRS;

// A tile's rows as wgmma A fragments of m64nNk16, STEPS of 16 columns (a warp's 16 rows from
// row0; the layout pack_a_operand produces), read back from the swizzled tile: operands that stay
// in registers across a loop (the backward's K and V rows at d64, the forward's Q at d64).
template <typename Tile, int STEPS>
__device__ __forceinline__ void load_a_fragments(u32 (&a)[STEPS][4], u32 smem_tile, int row0, int g8, int t4) {
#pragma unroll
  for (int kk = 0; kk < STEPS; ++kk) {
    a[kk][0] = ld_shared_b32(smem_tile + Tile::offset(row0 + g8, 2 * kk) + 4 * t4);
    a[kk][1] = ld_shared_b32(smem_tile + Tile::offset(row0 + g8 + 8, 2 * kk) + 4 * t4);
    a[kk][2] = ld_shared_b32(smem_tile + Tile::offset(row0 + g8, 2 * kk + 1) + 4 * t4);
    a[kk][3] = ld_shared_b32(smem_tile + Tile::offset(row0 + g8 + 8, 2 * kk + 1) + 4 * t4);
  }
}

// The inverse of load_a_fragments: A fragments (pack_a_operand's layout) into a swizzled tile, as
// k-steps step0 .. of the tile's columns, where another warpgroup's wgmmas read them.
// Whole 64-query tiles (four steps) take one stmatrix.x4 per k-step, not four 4-byte stores: a
// fragment's four registers are the four 8 x 8 matrices of its 16 x 16 step (rows 0-7 and 8-15 of
// columns 0-7, then of columns 8-15), in stmatrix's order, and lane l names the 16-byte row
// (l % 8) of matrix l / 8 (the swizzle keeps 16-byte chunks whole). A lane's chunk of step kk is
// c + hi with c = 2 (step0 + kk) even, so its swizzled place (c % 8 + hi) ^ (row % 8) is
// (hi ^ row % 8) ^ c % 8: the address is one base (chunk hi), plus c's slab, XOR (c % 8) * 16,
// immediates where step0 is known at compile time (the tile's 0): one address register, not one
// per step (an address per step had ptxas spill 56-60 bytes at d96 and under documents). The
// score halves' two steps (32 queries, head dims above 128) keep the 4-byte stores: by stmatrix
// ptxas spilled 12 bytes there (d256, GQA 4:1, causal).
template <typename Tile, int STEPS>
__device__ __forceinline__ void store_a_fragments(u32 smem_tile, const u32 (&a)[STEPS][4], int row0, int step0, int g8,
                                                  int t4) {
  if constexpr (STEPS == 4) {
    const int lane = 4 * g8 + t4;
    const int row = row0 + (lane & 7) + ((lane >> 3) & 1) * 8, hi = lane >> 4;
    const u32 base = smem_tile + Tile::offset(row, hi);
#pragma unroll
    for (int kk = 0; kk < STEPS; ++kk) {
      const int c = 2 * (step0 + kk);
      const u32 address = (base + static_cast<u32>(c / 8) * Tile::kSlabBytes) ^ static_cast<u32>((c % 8) << 4);
      asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(address), "r"(a[kk][0]),
                   "r"(a[kk][1]), "r"(a[kk][2]), "r"(a[kk][3])
                   : "memory");
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < STEPS; ++kk) {
      st_shared_b32(smem_tile + Tile::offset(row0 + g8, 2 * (step0 + kk)) + 4 * t4, a[kk][0]);
      st_shared_b32(smem_tile + Tile::offset(row0 + g8 + 8, 2 * (step0 + kk)) + 4 * t4, a[kk][1]);
      st_shared_b32(smem_tile + Tile::offset(row0 + g8, 2 * (step0 + kk) + 1) + 4 * t4, a[kk][2]);
      st_shared_b32(smem_tile + Tile::offset(row0 + g8 + 8, 2 * (step0 + kk) + 1) + 4 * t4, a[kk][3]);
    }
  }
}

}  // namespace flexjit
