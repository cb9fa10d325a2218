// flexjit device primitives both tensor-core paths build on (mma.sync on sm_80 and newer, wgmma on
// sm_90a): 16-bit element types, mma.sync, ldmatrix, cp.async and fast math. Self-contained: no CUDA toolkit header is
// included, so NVRTC needs no include path and parses less.
#pragma once

namespace flexjit {

typedef unsigned int u32;
typedef unsigned long long u64;

/// The tensor-core path a kernel is built for (the config's path, a compile-time constant
/// MMA_PATH of every tiled kernel; the headers branch on it with `if constexpr`). A
/// warp-specialised TMA path would be a third value.
enum class MmaPath { mma_sync, wgmma };

// A compile-time bool as a type, to pick a branch-free variant of a generic lambda.
template <bool B> struct BoolConstant { static constexpr bool value = B; };

// Compile-time type choice (NVRTC runs without the standard library's <type_traits>).
template <bool C, typename A, typename B> struct Select { using type = A; };
template <typename A, typename B> struct Select<false, A, B> { using type = B; };

// ---- 16-bit element types: storage only; arithmetic happens in fp32 ------------------------------

struct bf16 { unsigned short bits; };
struct f16 { unsigned short bits; };

// Packs two fp32 values into one register of two 16-bit values, `lo` in the low half (the element
// with the smaller column index in mma fragments).
template <typename T> __device__ __forceinline__ u32 pack2(float lo, float hi);
template <> __device__ __forceinline__ u32 pack2<bf16>(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
template <> __device__ __forceinline__ u32 pack2<f16>(float lo, float hi) {
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Two 16-bit values of one register to fp32.
template <typename T> __device__ __forceinline__ void unpack2(u32 v, float& lo, float& hi);
template <> __device__ __forceinline__ void unpack2<bf16>(u32 v, float& lo, float& hi) {
  lo = __uint_as_float(v << 16);
  hi = __uint_as_float(v & 0xffff0000u);
}
template <> __device__ __forceinline__ void unpack2<f16>(u32 v, float& lo, float& hi) {
  unsigned short l = static_cast<unsigned short>(v & 0xffffu), h = static_cast<unsigned short>(v >> 16);
  asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"(l));
  asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"(h));
}

// ---- fast math ---------------------------------------------------------------------------------

__device__ __forceinline__ float exp2_approx(float x) {  // 2^x, -inf -> 0, ~2 ulp
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float log2_approx(float x) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// ---- programmatic dependent launch (sm_90+; nothing on older targets) ------------------------

// A kernel the host launches as a programmatic dependent (LaunchGeometry::programmatic) calls this
// before its first global load or store: it returns once the stream's previous kernel has finished
// and its writes are visible (at once when that kernel was not launched as its prerequisite).
__device__ __forceinline__ void wait_for_previous_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// Lets the stream's next kernel, if launched as a programmatic dependent, start its CTAs (which
// then wait in wait_for_previous_grid): its launch overlaps this kernel instead of following it.
__device__ __forceinline__ void let_next_grid_start() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// A load that acquires at GPU scope: what another CTA (or grid) wrote before its release of this
// word is visible after it. The ordered dQ sums' turns and the early conversion's landed counts.
__device__ __forceinline__ int ld_acquire_gpu(const int* address) {
  int value;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }
__device__ __forceinline__ float pos_inf() { return __int_as_float(0x7f800000); }
// The larger of a and b, NaN when either is: fmaxf drops a NaN, so a row whose every score is NaN
// would keep a -inf maximum and read as "no key seen" (out 0, LSE -inf) instead of NaN.
__device__ __forceinline__ float max_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

// ---- tensor cores: D = A * B + C, m16n8k16, fp32 accumulate ----------------------------------
// Fragment layout (g = lane / 4, t = lane % 4):
//   A (16x16, row major): a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B (16x8, k major):    b0 (k 2t..2t+1, n g), b1 (k 2t+8.., n g)
//   C (16x8):             c0,c1 (g, 2t..2t+1), c2,c3 (g+8, 2t..2t+1)

template <typename T>
__device__ __forceinline__ void mma_16816(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1);
template <>
__device__ __forceinline__ void mma_16816<bf16>(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma_16816<f16>(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- shared memory -------------------------------------------------------------------------------

__device__ __forceinline__ u32 smem_addr(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(u32 (&r)[4], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void ld_shared_v4(u32 (&r)[4], u32 addr) {
  asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
__device__ __forceinline__ u32 ld_shared_b32(u32 addr) {
  u32 v;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_b32(u32 addr, u32 v) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void ld_shared_v2_f32(float& a, float& b, u32 addr) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(a), "=f"(b) : "r"(addr) : "memory");
}
__device__ __forceinline__ void st_shared_v2_f32(u32 addr, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ void ld_global_nc_v4(u32 (&r)[4], const void* p) {
  asm volatile("ld.global.nc.v4.b32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "l"(p));
}
__device__ __forceinline__ void st_global_v4(void* p, const u32 (&r)[4]) {
  asm volatile("st.global.v4.b32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(r[0]), "r"(r[1]), "r"(r[2]),
               "r"(r[3])
               : "memory");
}

// 16-byte asynchronous copy global -> shared. `valid` false zero-fills the destination and reads
// nothing (the source must still be a mapped address, so callers pass a safe one).
__device__ __forceinline__ void cp_async_16(u32 dst, const void* src, bool valid) {
  int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N));
}

// A tile of ROWS x COLS 16-bit elements in shared memory, row major, with the 16-byte chunks of
// each row XOR-swizzled by (row % 8) so that the 8 row addresses of an ldmatrix (and the 16-byte
// cp.async writes of a warp) fall into distinct bank groups. COLS is a multiple of 64, so a row
// holds whole groups of 8 chunks and the swizzle never leaves its group.
template <int ROWS, int COLS>
struct SwizzledTile {
  static_assert(COLS % 64 == 0, "swizzled tiles need a multiple of 64 columns");
  static constexpr int kRows = ROWS;
  static constexpr int kCols = COLS;
  static constexpr int kChunks = COLS / 8;         // 16-byte chunks per row
  static constexpr int kRowBytes = COLS * 2;
  static constexpr int kBytes = ROWS * COLS * 2;
  // Byte offset of chunk `chunk` of row `row`.
  static __device__ __forceinline__ u32 offset(int row, int chunk) {
    return static_cast<u32>(row * kRowBytes + (chunk ^ (row & 7)) * 16);
  }
};

// A tile in the canonical K-major / MN-major layout of Hopper's warpgroup MMA with the 128-byte
// swizzle: the columns are cut into slabs of 64 (128 bytes), each slab stores its rows 128 bytes
// apart (8-row atoms of 1024 bytes), and the 16-byte chunks of a row are XOR-swizzled by
// (row % 8) — the address bits the hardware swizzle reads, so slabs must be 1024-byte aligned.
// BOX_ROWS < ROWS cuts the rows into boxes of BOX_ROWS (a multiple of 8), each holding its own
// slabs one after another: the layout one TMA box of (64 columns, BOX_ROWS rows, every slab)
// writes, so a tile of pages takes one copy per page rather than one per page and slab.
template <int ROWS, int COLS, int BOX_ROWS = ROWS>
struct WgmmaTile {
  static_assert(COLS % 64 == 0 && ROWS % 8 == 0, "wgmma tiles are whole 8-row x 64-column atoms");
  static_assert(BOX_ROWS % 8 == 0 && ROWS % BOX_ROWS == 0, "boxes are whole 8-row atoms that divide the tile");
  static constexpr int kRows = ROWS;
  static constexpr int kCols = COLS;
  static constexpr int kChunks = COLS / 8;
  static constexpr int kSlabBytes = BOX_ROWS * 128;  // from one slab of a box to the next
  static constexpr int kBoxBytes = BOX_ROWS * COLS * 2;
  static constexpr int kBytes = ROWS * COLS * 2;
  // Byte offset of the start of row `row` in its box's first slab (one box: the row's own 128
  // bytes, as before boxes, for the tiles of any height the other kernels use).
  static __device__ __forceinline__ u32 row_offset(int row) {
    if constexpr (BOX_ROWS == ROWS) {
      return static_cast<u32>(row * 128);
    } else {
      const unsigned r = static_cast<unsigned>(row);
      return static_cast<u32>((r / BOX_ROWS) * kBoxBytes + (r % BOX_ROWS) * 128);
    }
  }
  static __device__ __forceinline__ u32 offset(int row, int chunk) {
    return row_offset(row) + static_cast<u32>((chunk / 8) * kSlabBytes + ((chunk % 8) ^ (row & 7)) * 16);
  }
};

// ldmatrix addressing without per-step address registers: a lane always reads rows whose
// (row % 8) is its own (lane % 8), and the chunk it reads for step k is base + 2k + hi (hi = 0/1,
// fixed per lane; base even). Its swizzled offset depends on k only through k % 4 and k / 4 (a
// whole group of 8 chunks, 128 bytes): four per-lane offsets plus compile-time immediates cover
// every k, also when `base` is only known at run time.
struct LdmatrixColumns {
  u32 xor_offset[4];
  __device__ __forceinline__ LdmatrixColumns(int lane, int hi, int base = 0) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int c = base + 2 * j + hi;
      xor_offset[j] = static_cast<u32>((c / 8) * 128 + ((c % 8) ^ (lane & 7)) * 16);
    }
  }
  // Byte offset inside a row of the 16-byte chunk pair k (columns base*8 + 16k ...) for this lane.
  __device__ __forceinline__ u32 operator()(int k) const { return xor_offset[k % 4] + (k / 4) * 128; }
};

}  // namespace flexjit
