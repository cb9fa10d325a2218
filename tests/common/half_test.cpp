// Host 16-bit float conversions (src/common/half.hpp). f16 is checked against the compiler's
// _Float16 (IEEE binary16, correctly rounded) over every bit pattern and millions of random floats;
// bf16 against an independent round-to-nearest-even written with double arithmetic, plus the edge
// cases (ties, overflow to infinity, NaN quieting, subnormals, signed zero).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "common/half.hpp"

namespace flexjit {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", v);
  return text;
}

#if defined(__FLT16_MAX__)
uint16_t compiler_f16_bits(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

float compiler_f16_to_float(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

// One float -> f16 comparison; NaNs must stay NaNs of the same sign (payloads may differ).
::testing::AssertionResult same_f16(float f) {
  const uint16_t ours = float_to_f16_bits(f), want = compiler_f16_bits(f);
  if (std::isnan(f)) {
    const bool nan = (ours & 0x7c00u) == 0x7c00u && (ours & 0x3ffu) != 0;
    if (nan && (ours & 0x8000u) == (want & 0x8000u)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "NaN " << hex(bits_of(f)) << " became " << hex(ours);
  }
  if (ours == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "float " << hex(bits_of(f)) << " (" << f << "): ours " << hex(ours)
                                       << ", _Float16 " << hex(want);
}

TEST(HalfF16, EveryBitPatternWidensLikeTheCompiler) {
  int failures = 0;
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const float ours = f16_bits_to_float(static_cast<uint16_t>(bits));
    const float want = compiler_f16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(ours)) << hex(bits);
      EXPECT_EQ(std::signbit(ours), std::signbit(want)) << hex(bits);
    } else if (bits_of(ours) != bits_of(want)) {
      ADD_FAILURE() << "f16 " << hex(bits) << ": ours " << hex(bits_of(ours)) << ", _Float16 " << hex(bits_of(want));
      if (++failures > 10) return;
    }
  }
}

TEST(HalfF16, EveryBitPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    const float f = f16_bits_to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_f16_bits(f), h) << hex(bits);
  }
}

// Every midpoint between neighbouring f16 values (and one float either side of it): the cases
// where round-to-nearest-even is decided.
TEST(HalfF16, MidpointsRoundToNearestEven) {
  for (uint32_t bits = 0; bits < 0x7c00u; ++bits) {
    const float lo = f16_bits_to_float(static_cast<uint16_t>(bits));
    const float hi = f16_bits_to_float(static_cast<uint16_t>(bits + 1));  // 0x7c00 is +inf
    const double mid = (static_cast<double>(lo) + (std::isinf(hi) ? 65520.0 : static_cast<double>(hi))) / 2;
    const float m = static_cast<float>(mid);  // exact: f16 midpoints need at most 12 significant bits
    ASSERT_EQ(static_cast<double>(m), mid);
    for (float f : {m, std::nextafter(m, 0.f), std::nextafter(m, 1e30f)}) {
      ASSERT_TRUE(same_f16(f));
      ASSERT_TRUE(same_f16(-f));
    }
  }
}

TEST(HalfF16, MillionsOfRandomFloatsRoundLikeTheCompiler) {
  std::mt19937_64 rng(20240501);
  std::uniform_int_distribution<uint32_t> any_bits;
  std::uniform_real_distribution<float> in_range(-70000.f, 70000.f);
  std::uniform_real_distribution<float> exponent(-30.f, 17.f);
  int failures = 0;
  for (int i = 0; i < 3'000'000; ++i) {
    float f;
    switch (i % 3) {
      case 0: f = float_of(any_bits(rng)); break;          // every float class, NaNs included
      case 1: f = in_range(rng); break;                      // normal f16 range and overflow
      default: f = std::exp2(exponent(rng)) * (i & 1 ? -1.f : 1.f); break;  // subnormals too
    }
    const auto result = same_f16(f);
    if (!result) {
      ADD_FAILURE() << result.message();
      if (++failures > 10) return;
    }
  }
}
#else
TEST(HalfF16, EveryBitPatternWidensLikeTheCompiler) {
  GTEST_SKIP() << "this compiler has no _Float16 to compare with";
}
#endif

TEST(HalfF16, EdgeCases) {
  EXPECT_EQ(float_to_f16_bits(0.f), 0x0000);
  EXPECT_EQ(float_to_f16_bits(-0.f), 0x8000);
  EXPECT_EQ(float_to_f16_bits(1.f), 0x3c00);
  EXPECT_EQ(float_to_f16_bits(65504.f), 0x7bff);               // largest finite
  EXPECT_EQ(float_to_f16_bits(65519.99f), 0x7bff);             // below the midpoint to infinity
  EXPECT_EQ(float_to_f16_bits(65520.f), 0x7c00);               // the midpoint rounds to infinity
  EXPECT_EQ(float_to_f16_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.f, -25)), 0x0000);  // half of it: tie to even (0)
  EXPECT_EQ(float_to_f16_bits(std::ldexp(3.f, -25)), 0x0002);  // 1.5 subnormals: tie to even (2)
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.f, -14)), 0x0400);  // smallest normal
  const uint16_t nan = float_to_f16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(f16_bits_to_float(0x7e00)));
  EXPECT_EQ(f16_bits_to_float(0x0001), std::ldexp(1.f, -24));
  EXPECT_EQ(f16_bits_to_float(0xfbff), -65504.f);
}

// Round to nearest even by comparing distances in double: independent of the bit trick under test.
uint16_t reference_bf16(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t down = u & 0xffff0000u;
  const uint32_t up = down + 0x10000u;  // may step into infinity: that is the right neighbour
  // IEEE rounds overflow as if the exponent were unbounded: the neighbour above the largest
  // finite value is 2^128 (and the result is then infinity).
  const bool up_is_inf = (up & 0x7fffffffu) == 0x7f800000u;
  const double x = f, a = float_of(down), b = up_is_inf ? std::copysign(std::ldexp(1.0, 128), x) : float_of(up);
  const double da = std::fabs(x - a), db = std::fabs(x - b);
  if (da < db) return static_cast<uint16_t>(down >> 16);
  if (db < da) return static_cast<uint16_t>(up >> 16);
  return static_cast<uint16_t>(((down >> 16) & 1u) ? up >> 16 : down >> 16);
}

TEST(HalfBf16, EdgeCases) {
  EXPECT_EQ(float_to_bf16_bits(1.f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(float_of(0x3f808000u)), 0x3f80);  // tie, even below: stays
  EXPECT_EQ(float_to_bf16_bits(float_of(0x3f818000u)), 0x3f82);  // tie, odd below: rounds up
  EXPECT_EQ(float_to_bf16_bits(float_of(0x3f808001u)), 0x3f81);  // just above the tie
  EXPECT_EQ(float_to_bf16_bits(float_of(0x3f807fffu)), 0x3f80);  // just below the tie
  EXPECT_EQ(float_to_bf16_bits(float_of(0xbf818000u)), 0xbf82);  // negative ties alike
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds to infinity
  EXPECT_EQ(float_to_bf16_bits(float_of(0x7f7f7fffu)), 0x7f7f);  // largest that stays finite
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(float_to_bf16_bits(-0.f), 0x8000);
  EXPECT_EQ(float_to_bf16_bits(float_of(0x00008000u)), 0x0000);  // subnormal tie to even
  EXPECT_EQ(float_to_bf16_bits(float_of(0x00018000u)), 0x0002);
  EXPECT_EQ(float_to_bf16_bits(float_of(0x00000001u)), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(float_of(0x7fc00000u)), 0x7fc0);  // quiet NaN
  EXPECT_EQ(float_to_bf16_bits(float_of(0x7f800001u)), 0x7fc0);  // signalling NaN with low payload
  EXPECT_EQ(float_to_bf16_bits(float_of(0x7fffffffu)), 0x7fff);  // must not carry into the sign
  EXPECT_EQ(float_to_bf16_bits(float_of(0xff800001u)), 0xffc0);  // negative NaN keeps its sign
  EXPECT_EQ(bf16_bits_to_float(0x3f80), 1.f);
  EXPECT_EQ(bits_of(bf16_bits_to_float(0x8000)), 0x80000000u);
}

TEST(HalfBf16, EveryBitPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const float f = bf16_bits_to_float(static_cast<uint16_t>(bits));
    ASSERT_EQ(bits_of(f), bits << 16);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f)))) << hex(bits);
    } else {
      ASSERT_EQ(float_to_bf16_bits(f), bits) << hex(bits);
    }
  }
}

TEST(HalfBf16, MillionsOfRandomFloatsRoundToNearestEven) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint32_t> any_bits;
  int failures = 0;
  for (int i = 0; i < 4'000'000; ++i) {
    uint32_t u = any_bits(rng);
    if (i % 4 == 1) u = (u & 0xffff0000u) | 0x8000u;  // exact ties
    const float f = float_of(u);
    if (std::isnan(f)) {
      const uint16_t b = float_to_bf16_bits(f);
      ASSERT_TRUE(std::isnan(bf16_bits_to_float(b))) << hex(u);
      ASSERT_EQ(b & 0x8000u, (u >> 16) & 0x8000u) << hex(u);
      continue;
    }
    const uint16_t ours = float_to_bf16_bits(f), want = reference_bf16(f);
    if (ours != want) {
      ADD_FAILURE() << "float " << hex(u) << ": ours " << hex(ours) << ", reference " << hex(want);
      if (++failures > 10) return;
    }
  }
}

}  // namespace
}  // namespace flexjit
