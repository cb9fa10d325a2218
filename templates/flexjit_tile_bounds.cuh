// flexjit_tile_bounds.cuh: interval arithmetic for a mask_mod over a whole tile of positions.
// src/expr/tile_bounds.cpp emits `flexjit_mask_mod_bounds` from these helpers: given the ranges of
// h, q_idx and kv_idx a tile covers, it answers "no position kept", "every position kept" or
// "cannot tell" with one evaluation per tile instead of one per position, so a decode CTA can
// classify its own key tiles without a separate kernel.
//
// Soundness is the contract: an int range always contains every value the expression can take on
// the tile (int arithmetic wraps in 32 bits, so a bound that leaves int32 widens the range to all
// of int32), and a truth value may only claim "always" or "never" when every position agrees.
// Anything the rules cannot bound becomes "cannot tell"; the kernel then evaluates mask_mod per
// position there, so a loose bound costs speed and never changes a result.
// Needs flexjit_expr.cuh (FlexjitBuffer, flexjit_load) first.
#pragma once

/// The ints a sub-expression can take on a tile: lo <= value <= hi (bounds kept in 64 bits).
struct FlexjitRange {
  long long lo, hi;
};
/// The values a bool sub-expression can take on a tile.
struct FlexjitTruth {
  bool can_true, can_false;
};

#define FLEXJIT_INT32_MIN (-2147483647ll - 1ll)
#define FLEXJIT_INT32_MAX 2147483647ll

__device__ __forceinline__ FlexjitRange flexjit_range(long long lo, long long hi) {
  // A bound beyond int32 means the 32-bit result wrapped somewhere on the tile: any int.
  if (lo < FLEXJIT_INT32_MIN || hi > FLEXJIT_INT32_MAX) return {FLEXJIT_INT32_MIN, FLEXJIT_INT32_MAX};
  return {lo, hi};
}
__device__ __forceinline__ FlexjitRange flexjit_range_of(int value) { return {value, value}; }
__device__ __forceinline__ FlexjitRange flexjit_range_any() { return {FLEXJIT_INT32_MIN, FLEXJIT_INT32_MAX}; }
__device__ __forceinline__ bool flexjit_range_exact(FlexjitRange a) { return a.lo == a.hi; }
__device__ __forceinline__ FlexjitTruth flexjit_truth_of(bool value) { return {value, !value}; }

// ---- int arithmetic (the rules of flexjit_iadd ... flexjit_imod, over ranges) ----
__device__ __forceinline__ FlexjitRange flexjit_radd(FlexjitRange a, FlexjitRange b) {
  return flexjit_range(a.lo + b.lo, a.hi + b.hi);
}
__device__ __forceinline__ FlexjitRange flexjit_rsub(FlexjitRange a, FlexjitRange b) {
  return flexjit_range(a.lo - b.hi, a.hi - b.lo);
}
__device__ __forceinline__ FlexjitRange flexjit_rmul(FlexjitRange a, FlexjitRange b) {
  // |bound| <= 2^31, so every product fits in 64 bits.
  const long long p0 = a.lo * b.lo, p1 = a.lo * b.hi, p2 = a.hi * b.lo, p3 = a.hi * b.hi;
  const long long lo = p0 < p1 ? p0 : p1, lo2 = p2 < p3 ? p2 : p3;
  const long long hi = p0 > p1 ? p0 : p1, hi2 = p2 > p3 ? p2 : p3;
  return flexjit_range(lo < lo2 ? lo : lo2, hi > hi2 ? hi : hi2);
}
__device__ __forceinline__ FlexjitRange flexjit_rneg(FlexjitRange a) { return flexjit_range(-a.hi, -a.lo); }
__device__ __forceinline__ FlexjitRange flexjit_rdiv(FlexjitRange a, FlexjitRange b) {
  // Only an exact divisor is bounded: truncating division by c > 0 keeps order, by c < -1 reverses
  // it; x / 0 == 0 and x / -1 == -x (wrapping) as in flexjit_idiv.
  if (!flexjit_range_exact(b)) return flexjit_range_any();
  const long long c = b.lo;
  if (c == 0) return {0, 0};
  if (c == -1) return flexjit_rneg(a);
  return c > 0 ? FlexjitRange{a.lo / c, a.hi / c} : FlexjitRange{a.hi / c, a.lo / c};
}
__device__ __forceinline__ FlexjitRange flexjit_rmod(FlexjitRange a, FlexjitRange b) {
  if (!flexjit_range_exact(b)) return flexjit_range_any();
  const long long c = b.lo;
  if (c == 0 || c == -1) return {0, 0};
  const long long m = c < 0 ? -c : c;  // C's % takes the dividend's sign and ignores the divisor's
  if (a.lo >= 0 && a.hi - a.lo < m && a.lo % m <= a.hi % m) return {a.lo % m, a.hi % m};
  if (a.hi <= 0 && a.hi - a.lo < m && a.lo % m <= a.hi % m) return {a.lo % m, a.hi % m};
  const long long lo = a.lo >= 0 ? 0 : (a.lo > -(m - 1) ? a.lo : -(m - 1));
  const long long hi = a.hi <= 0 ? 0 : (a.hi < m - 1 ? a.hi : m - 1);
  return {lo, hi};
}
__device__ __forceinline__ FlexjitRange flexjit_rabs(FlexjitRange a) {
  if (a.lo >= 0) return a;
  if (a.hi <= 0) return flexjit_range(-a.hi, -a.lo);
  return flexjit_range(0, -a.lo > a.hi ? -a.lo : a.hi);
}
__device__ __forceinline__ FlexjitRange flexjit_rmin(FlexjitRange a, FlexjitRange b) {
  return {a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi};
}
__device__ __forceinline__ FlexjitRange flexjit_rmax(FlexjitRange a, FlexjitRange b) {
  return {a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
}
__device__ __forceinline__ FlexjitRange flexjit_rclamp(FlexjitRange x, FlexjitRange lo, FlexjitRange hi) {
  return flexjit_rmin(flexjit_rmax(x, lo), hi);
}
// & | ^ of ints: bounded only when both sides are exact.
__device__ __forceinline__ FlexjitRange flexjit_rand(FlexjitRange a, FlexjitRange b) {
  if (!flexjit_range_exact(a) || !flexjit_range_exact(b)) return flexjit_range_any();
  return flexjit_range_of(static_cast<int>(a.lo) & static_cast<int>(b.lo));
}
__device__ __forceinline__ FlexjitRange flexjit_ror(FlexjitRange a, FlexjitRange b) {
  if (!flexjit_range_exact(a) || !flexjit_range_exact(b)) return flexjit_range_any();
  return flexjit_range_of(static_cast<int>(a.lo) | static_cast<int>(b.lo));
}
__device__ __forceinline__ FlexjitRange flexjit_rxor(FlexjitRange a, FlexjitRange b) {
  if (!flexjit_range_exact(a) || !flexjit_range_exact(b)) return flexjit_range_any();
  return flexjit_range_of(static_cast<int>(a.lo) ^ static_cast<int>(b.lo));
}
__device__ __forceinline__ FlexjitRange flexjit_rselect(FlexjitTruth c, FlexjitRange a, FlexjitRange b) {
  if (!c.can_false) return a;
  if (!c.can_true) return b;
  return {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
}
/// int(c) of a bool: 0 and/or 1.
__device__ __forceinline__ FlexjitRange flexjit_rint(FlexjitTruth c) { return {c.can_false ? 0 : 1, c.can_true ? 1 : 0}; }

// ---- comparisons of ints ----
__device__ __forceinline__ FlexjitTruth flexjit_rlt(FlexjitRange a, FlexjitRange b) {
  return {a.lo < b.hi, a.hi >= b.lo};
}
__device__ __forceinline__ FlexjitTruth flexjit_rle(FlexjitRange a, FlexjitRange b) {
  return {a.lo <= b.hi, a.hi > b.lo};
}
__device__ __forceinline__ FlexjitTruth flexjit_rgt(FlexjitRange a, FlexjitRange b) { return flexjit_rlt(b, a); }
__device__ __forceinline__ FlexjitTruth flexjit_rge(FlexjitRange a, FlexjitRange b) { return flexjit_rle(b, a); }
__device__ __forceinline__ FlexjitTruth flexjit_req(FlexjitRange a, FlexjitRange b) {
  const bool overlap = a.lo <= b.hi && b.lo <= a.hi;
  const bool same_point = flexjit_range_exact(a) && flexjit_range_exact(b) && a.lo == b.lo;
  return {overlap, !same_point};
}
__device__ __forceinline__ FlexjitTruth flexjit_rne(FlexjitRange a, FlexjitRange b) {
  const FlexjitTruth eq = flexjit_req(a, b);
  return {eq.can_false, eq.can_true};
}

// ---- bools ----
__device__ __forceinline__ FlexjitTruth flexjit_tand(FlexjitTruth a, FlexjitTruth b) {
  return {a.can_true && b.can_true, a.can_false || b.can_false};
}
__device__ __forceinline__ FlexjitTruth flexjit_tor(FlexjitTruth a, FlexjitTruth b) {
  return {a.can_true || b.can_true, a.can_false && b.can_false};
}
__device__ __forceinline__ FlexjitTruth flexjit_tnot(FlexjitTruth a) { return {a.can_false, a.can_true}; }
__device__ __forceinline__ FlexjitTruth flexjit_txor(FlexjitTruth a, FlexjitTruth b) {
  return {(a.can_true && b.can_false) || (a.can_false && b.can_true),
          (a.can_true && b.can_true) || (a.can_false && b.can_false)};
}
__device__ __forceinline__ FlexjitTruth flexjit_teq(FlexjitTruth a, FlexjitTruth b) {
  return flexjit_tnot(flexjit_txor(a, b));
}
__device__ __forceinline__ FlexjitTruth flexjit_tselect(FlexjitTruth c, FlexjitTruth a, FlexjitTruth b) {
  if (!c.can_false) return a;
  if (!c.can_true) return b;
  return {a.can_true || b.can_true, a.can_false || b.can_false};
}

// ---- buffer reads ----
/// An int buffer read at index ranges: the element when every index is exact and inside the
/// buffer, else every value the dtype holds. An exact index outside the buffer sets `unsure` (the
/// tile is then "cannot tell", so the per-position evaluation reads it and reports the error).
template <typename T, int RANK, typename... Index>
__device__ __forceinline__ FlexjitRange flexjit_read_range(const FlexjitBuffer<T, RANK>& buf, bool& unsure,
                                                           Index... index) {
  static_assert(sizeof...(Index) == RANK, "buffer indexed with the wrong number of indices");
  const FlexjitRange idx[RANK] = {index...};
  const FlexjitRange dtype_range = sizeof(T) == 1 ? FlexjitRange{0, 255} : flexjit_range_any();
  long long offset = 0;
  bool inside = true;
#pragma unroll
  for (int d = 0; d < RANK; ++d) {
    if (!flexjit_range_exact(idx[d])) return dtype_range;
    inside = inside && static_cast<unsigned long long>(idx[d].lo) < static_cast<unsigned long long>(buf.extent[d]);
    offset += idx[d].lo * buf.stride[d];
  }
  if (!inside) {
    unsure = true;
    return dtype_range;
  }
  return flexjit_range_of(flexjit_load(buf.data + offset));
}

/// What a tile's positions make of the mask: 0 none kept, 1 some (or cannot tell), 2 all kept.
__device__ __forceinline__ int flexjit_tile_class(FlexjitTruth t, bool unsure) {
  if (unsure) return 1;
  return t.can_true ? (t.can_false ? 1 : 2) : 0;
}
