// flexjit_expr.cuh: device helpers for the score_mod / mask_mod functions flexjit generates.
// Self-contained: includes no CUDA toolkit header, so NVRTC needs no include path.
//
// Accuracy of the float functions (emitted by src/expr/emitter.cpp; "ulp" = units in the last
// place of the float result, from the CUDA C Programming Guide and the PTX ISA):
//   exp      __expf             2 + floor(|1.173 x|) ulp   (ex2.approx of x*log2(e))
//   exp2     exp2f              2 ulp
//   log      __logf             abs. error 2^-21.41 on [0.5, 2], else 3 ulp
//   log2     __log2f            abs. error 2^-22 on [0.5, 2], else 2 ulp
//   sqrt     sqrtf              0 ulp (correctly rounded)
//   rsqrt    rsqrtf             2 ulp
//   tanh     tanh.approx.f32    relative error 2^-10.987 (sm_75+; tanhf, 2 ulp, before sm_75)
//   sigmoid  __frcp_rn(1 + __expf(-x))   about 3 ulp plus __expf's error
//   sin, cos sinf, cosf         2 ulp over the full range (positions reach 10^4: __sinf would not do)
//   pow      powf               2 ulp (__powf is NaN for negative bases, so it is not used)
//   x / c    __fdividef(x, c)   2 ulp, only for a literal divisor 2^-126 < |c| < 2^126;
//            other divisions use IEEE '/' (correctly rounded)
//   floor, ceil, abs, min, max, clamp, int(x), float(x): exact
#pragma once

/// 16-bit storage types (no cuda_fp16.h / cuda_bf16.h): converted to float on read.
struct flexjit_f16 { unsigned short bits; };
struct flexjit_bf16 { unsigned short bits; };

/// A buffer as passed in FlexjitModArgs: pointer, then extents and strides (in elements).
template <typename T, int RANK>
struct FlexjitBuffer {
  const T* data;
  long long extent[RANK];
  long long stride[RANK];
};

/// Error bits raised by generated code. A kernel whose mods read buffers takes a trailing
/// `unsigned* error_word` argument (the launch stage passes a word per stream and kernel) and
/// reports into it once, at its end; the host reads it in check_buffer_errors(stream).
/// Bit 0: a buffer was indexed out of bounds (the read yielded 0).
#define FLEXJIT_ERROR_BUFFER_OUT_OF_BOUNDS 1u
/// Bit 1: decoding met a page-table entry outside the page pool or a sequence length beyond the
/// cache (those keys were not read).
#define FLEXJIT_ERROR_KV_OUT_OF_RANGE 2u
/// Bit 2: the deterministic backward's dQ writer waited about ten seconds for its turn and added
/// out of order (dQ is right but may differ in its last bits from run to run).
#define FLEXJIT_ERROR_ORDER_LOST 4u
/// Bit 3: the fast backward's dQ writer waited about ten seconds for another writer's first store
/// of a query tile and added before it (that tile's dQ is wrong).
#define FLEXJIT_ERROR_FIRST_STORE_LOST 8u
/// Bit 4: the forward's bias form (a diagonal `score + V` in S's accumulators) met a row whose
/// largest score came from a finite V past 2^126 scale log2(e) in magnitude (-1e38 standing in for
/// -inf, say), held at 2^126 there: the row's LSE, and its output where those values differ, are
/// not exact.
#define FLEXJIT_ERROR_BIAS_STAND_IN 16u

__device__ __forceinline__ float flexjit_inf() { return __int_as_float(0x7f800000); }

// ---- loads: f16/bf16/f32 read as float, i32/u8 as int ----
// Plain loads (no inline asm, no side effects), so the compiler can share one read of doc[q_idx]
// between every element of a row that needs it.
__device__ __forceinline__ float flexjit_load(const float* p) { return *p; }
__device__ __forceinline__ int flexjit_load(const int* p) { return *p; }
__device__ __forceinline__ int flexjit_load(const unsigned char* p) { return static_cast<int>(*p); }
__device__ __forceinline__ float flexjit_load(const flexjit_bf16* p) {
  const unsigned short bits = p->bits;
  return __int_as_float(static_cast<int>(static_cast<unsigned int>(bits) << 16));
}
__device__ __forceinline__ float flexjit_load(const flexjit_f16* p) {
  const unsigned short bits = p->bits;
  float value;
  asm("{ cvt.f32.f16 %0, %1; }" : "=f"(value) : "h"(bits));
  return value;
}

// Zero bytes that an out-of-bounds read is pointed at, so the read stays a plain load.
__device__ const unsigned long long flexjit_zero_storage[2] = {0ull, 0ull};

/// Reads buf[i0][i1]...; every index is checked against its extent. Out of bounds: the read
/// yields 0 and FLEXJIT_ERROR_BUFFER_OUT_OF_BOUNDS is or-ed into `errors`, which the kernel
/// reports to its error word once, at its end (no side effect inside the hot loop).
template <typename T, int RANK, typename... Index>
__device__ __forceinline__ auto flexjit_read(const FlexjitBuffer<T, RANK>& buf, unsigned& errors, Index... index)
    -> decltype(flexjit_load(buf.data)) {
  static_assert(sizeof...(Index) == RANK, "buffer indexed with the wrong number of indices");
  const long long idx[RANK] = {static_cast<long long>(index)...};
  long long offset = 0;
  bool inside = true;
#pragma unroll
  for (int d = 0; d < RANK; ++d) {
    inside = inside && static_cast<unsigned long long>(idx[d]) < static_cast<unsigned long long>(buf.extent[d]);
    offset += idx[d] * buf.stride[d];
  }
  errors |= inside ? 0u : FLEXJIT_ERROR_BUFFER_OUT_OF_BOUNDS;
  return flexjit_load(inside ? buf.data + offset : reinterpret_cast<const T*>(flexjit_zero_storage));
}

/// flexjit_read where the host has checked that every buffer of the call is non-empty and that
/// all its in-bounds offsets fit 31 bits (KernelSpec::buffer_offsets_32; the variant header maps
/// the emitted reads here). Indices are the expressions' 32-bit ints, so an unsigned compare
/// against the extent (below 2^31) is the whole bounds test, and the offset and the address are
/// 32-bit arithmetic: a 64-bit address per read took about 12 instructions, and in the masked
/// passes of buffer-reading mods those reads were most of the work. Out of bounds: element 0 is
/// read (the buffer is not empty) and 0 returned, as flexjit_read does.
template <typename T, int RANK, typename... Index>
__device__ __forceinline__ auto flexjit_read_32(const FlexjitBuffer<T, RANK>& buf, unsigned& errors, Index... index)
    -> decltype(flexjit_load(buf.data)) {
  static_assert(sizeof...(Index) == RANK, "buffer indexed with the wrong number of indices");
  const unsigned idx[RANK] = {static_cast<unsigned>(static_cast<int>(index))...};
  unsigned offset = 0u;  // wraps (defined) out of bounds, where it is not used
  bool inside = true;
#pragma unroll
  for (int d = 0; d < RANK; ++d) {
    inside = inside & (idx[d] < static_cast<unsigned>(buf.extent[d]));
    offset += idx[d] * static_cast<unsigned>(buf.stride[d]);
  }
  errors |= inside ? 0u : FLEXJIT_ERROR_BUFFER_OUT_OF_BOUNDS;
  const auto value = flexjit_load(buf.data + (inside ? offset : 0u));
  return inside ? value : static_cast<decltype(value)>(0);
}

/// A mask's column value as a kernel computed it once per key (Expr::emit_cuda_columns): the
/// value, with the errors its reads reported then counted into `errors` here, where the mask reads
/// it.
template <typename T>
__device__ __forceinline__ T flexjit_column_value(T value, unsigned value_errors, unsigned& errors) {
  errors |= value_errors;
  return value;
}

/// Reports a thread's accumulated error bits to the call's error word (call once, at the end of
/// a kernel; `error_word` is the kernel's trailing argument).
// && and || with both sides evaluated (see the emitter): the right side's out-of-bounds reads
// count only when the left side leaves the result to it, as with a short-circuit.
template <typename Rhs>
__device__ __forceinline__ bool flexjit_land(bool lhs, Rhs rhs, unsigned& errors) {
  unsigned rhs_errors = 0u;
  const bool r = rhs(rhs_errors);
  errors |= lhs ? rhs_errors : 0u;
  return lhs & r;
}
template <typename Rhs>
__device__ __forceinline__ bool flexjit_lor(bool lhs, Rhs rhs, unsigned& errors) {
  unsigned rhs_errors = 0u;
  const bool r = rhs(rhs_errors);
  errors |= lhs ? 0u : rhs_errors;
  return lhs | r;
}

__device__ __forceinline__ void flexjit_report_errors(unsigned errors, unsigned* error_word) {
  if (errors != 0u) atomicOr(error_word, errors);
}

// ---- int arithmetic: two's-complement wrap (no signed-overflow UB), C truncating division,
// x / 0 == 0, x % 0 == 0, INT_MIN / -1 == INT_MIN, INT_MIN % -1 == 0 (as the host interpreter) ----
__device__ __forceinline__ int flexjit_iadd(int a, int b) {
  return static_cast<int>(static_cast<unsigned int>(a) + static_cast<unsigned int>(b));
}
__device__ __forceinline__ int flexjit_isub(int a, int b) {
  return static_cast<int>(static_cast<unsigned int>(a) - static_cast<unsigned int>(b));
}
__device__ __forceinline__ int flexjit_imul(int a, int b) {
  return static_cast<int>(static_cast<unsigned int>(a) * static_cast<unsigned int>(b));
}
__device__ __forceinline__ int flexjit_ineg(int a) {
  return static_cast<int>(0u - static_cast<unsigned int>(a));
}
__device__ __forceinline__ int flexjit_idiv(int a, int b) {
  return b == 0 ? 0 : (b == -1 ? flexjit_ineg(a) : a / b);
}
__device__ __forceinline__ int flexjit_imod(int a, int b) {
  return (b == 0 || b == -1) ? 0 : a % b;
}
__device__ __forceinline__ int flexjit_iabs(int a) { return a < 0 ? flexjit_ineg(a) : a; }
__device__ __forceinline__ int flexjit_imin(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ int flexjit_imax(int a, int b) { return a > b ? a : b; }
__device__ __forceinline__ int flexjit_iclamp(int x, int lo, int hi) {
  return flexjit_imin(flexjit_imax(x, lo), hi);
}

// ---- float functions ----
__device__ __forceinline__ float flexjit_fclamp(float x, float lo, float hi) {
  return fminf(fmaxf(x, lo), hi);
}
__device__ __forceinline__ float flexjit_tanh(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return tanhf(x);
#endif
}
__device__ __forceinline__ float flexjit_sigmoid(float x) { return __frcp_rn(1.0f + __expf(-x)); }
/// int(x): truncation toward zero, saturating, NaN -> 0.
__device__ __forceinline__ int flexjit_f2i(float x) { return __float2int_rz(x); }
