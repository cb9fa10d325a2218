#pragma once
// Scalar semantics shared by the interpreter and constant folding. Integer operations match the
// device bit for bit (flexjit_expr.cuh): two's-complement wrap on + - * and unary minus, C
// truncating / and %, x / 0 == 0, x % 0 == 0, INT_MIN / -1 == INT_MIN, INT_MIN % -1 == 0. Floats
// are computed in double precision (the reference the device's float32 math is compared with).
#include <cmath>
#include <cstdint>
#include <limits>

#include "expr/ast.hpp"

namespace flexjit::expr::semantics {

inline int32_t wrap(uint32_t value) noexcept {
  // Two's-complement reinterpretation without implementation-defined conversion.
  return value <= 0x7fffffffu ? static_cast<int32_t>(value)
                              : static_cast<int32_t>(value - 0x80000000u) + std::numeric_limits<int32_t>::min();
}
inline int32_t add(int32_t a, int32_t b) noexcept {
  return wrap(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t sub(int32_t a, int32_t b) noexcept {
  return wrap(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
inline int32_t mul(int32_t a, int32_t b) noexcept {
  return wrap(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}
inline int32_t neg(int32_t a) noexcept { return wrap(0u - static_cast<uint32_t>(a)); }
inline int32_t div(int32_t a, int32_t b) noexcept {
  if (b == 0) return 0;
  if (b == -1) return neg(a);
  return a / b;
}
inline int32_t mod(int32_t a, int32_t b) noexcept {
  if (b == 0 || b == -1) return 0;
  return a % b;
}
inline int32_t abs(int32_t a) noexcept { return a < 0 ? neg(a) : a; }
inline int32_t min(int32_t a, int32_t b) noexcept { return a < b ? a : b; }
inline int32_t max(int32_t a, int32_t b) noexcept { return a > b ? a : b; }
inline int32_t clamp(int32_t x, int32_t lo, int32_t hi) noexcept { return min(max(x, lo), hi); }

/// `int(x)`: truncation toward zero, saturating at the int range, NaN -> 0 (as __float2int_rz).
inline int32_t to_int(double x) noexcept {
  if (std::isnan(x)) return 0;
  if (x >= 2147483647.0) return std::numeric_limits<int32_t>::max();
  if (x <= -2147483648.0) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(std::trunc(x));
}

/// fminf/fmaxf semantics: a NaN operand yields the other operand.
inline double fmin(double a, double b) noexcept { return std::fmin(a, b); }
inline double fmax(double a, double b) noexcept { return std::fmax(a, b); }
inline double fclamp(double x, double lo, double hi) noexcept { return std::fmin(std::fmax(x, lo), hi); }

inline double sigmoid(double x) noexcept { return 1.0 / (1.0 + std::exp(-x)); }

/// Float functions of one argument (exp .. ceil, abs on floats).
inline double apply_unary(Function function, double x) noexcept {
  switch (function) {
    case Function::abs: return std::fabs(x);
    case Function::exp: return std::exp(x);
    case Function::exp2: return std::exp2(x);
    case Function::log: return std::log(x);
    case Function::log2: return std::log2(x);
    case Function::sqrt: return std::sqrt(x);
    case Function::rsqrt: return 1.0 / std::sqrt(x);
    case Function::tanh: return std::tanh(x);
    case Function::sigmoid: return sigmoid(x);
    case Function::sin: return std::sin(x);
    case Function::cos: return std::cos(x);
    case Function::floor: return std::floor(x);
    case Function::ceil: return std::ceil(x);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace flexjit::expr::semantics
