// range() with bounds and steps near the ends of int64: the count and every element are computed
// without signed overflow (start + i * step used to overflow in i * step although every element
// fits), and the limit on the item count still holds.
#include <gtest/gtest.h>

#include <string>

#include "test_util.hpp"

namespace flexjit::tmpl {
namespace {

using test::error_of;
using test::render;

// The extremes, written as template expressions (the literal 9223372036854775808 is not an int).
const std::string kMin = "(-9223372036854775807 - 1)";
const std::string kMax = "9223372036854775807";

TEST(RenderRange, HugeBoundsAndLargeSteps) {
  // -2^62, -2^62 + 2^61, ... below 2^62.
  EXPECT_EQ(render("{{ range(-4611686018427387904, 4611686018427387904, 2305843009213693952) }}"),
            "[-4611686018427387904, -2305843009213693952, 0, 2305843009213693952]");
  // The whole int64 range in steps of 2^62: 2 * 2^62 = 2^63 overflowed before.
  EXPECT_EQ(render("{% for i in range(" + kMin + ", " + kMax + ", 4611686018427387904) %}{{ i }} {% endfor %}"),
            "-9223372036854775808 -4611686018427387904 0 4611686018427387904 ");
  // Downwards from INT64_MAX in steps of -2^62.
  EXPECT_EQ(render("{{ range(" + kMax + ", " + kMin + ", -4611686018427387904) }}"),
            "[9223372036854775807, 4611686018427387903, -1, -4611686018427387905]");
}

TEST(RenderRange, ExtremeSteps) {
  // step = INT64_MAX: (2^64 - 1) / (2^63 - 1) is just over 2, so three items.
  EXPECT_EQ(render("{{ range(" + kMin + ", " + kMax + ", " + kMax + ") }}"),
            "[-9223372036854775808, -1, 9223372036854775806]");
  // step = INT64_MIN, whose magnitude 2^63 does not fit in int64.
  EXPECT_EQ(render("{{ range(" + kMax + ", " + kMin + ", " + kMin + ") }}"), "[9223372036854775807, -1]");
  EXPECT_EQ(render("{{ range(0, " + kMin + ", " + kMin + ") }}"), "[0]");
  EXPECT_EQ(render("{{ range(" + kMin + ", " + kMax + ", " + kMin + ") }}"), "[]");
  EXPECT_EQ(render("{{ range(" + kMax + ", " + kMin + ", " + kMax + ") }}"), "[]");
}

TEST(RenderRange, ItemsAtTheEndsOfInt64) {
  EXPECT_EQ(render("{{ range(" + kMax + " - 2, " + kMax + ") }}"), "[9223372036854775805, 9223372036854775806]");
  EXPECT_EQ(render("{{ range(" + kMin + ", " + kMin + " + 2) }}"), "[-9223372036854775808, -9223372036854775807]");
  EXPECT_EQ(render("{{ range(" + kMin + " + 1, " + kMin + ", -1) }}"), "[-9223372036854775807]");
  EXPECT_EQ(render("{{ range(" + kMax + ", " + kMax + " - 3, -2) }}"), "[9223372036854775807, 9223372036854775805]");
}

TEST(RenderRange, TheItemLimitHoldsForHugeSpans) {
  const std::string limit = "t.j2:1:4: range() would produce more than 1000000 items";
  EXPECT_EQ(error_of("{{ range(" + kMin + ", " + kMax + ") }}"), limit);
  EXPECT_EQ(error_of("{{ range(" + kMax + ", " + kMin + ", -1) }}"), limit);
  // 2^64 - 1 over a step of 2^44: 1048576 items, just over the limit; 2^45 gives 524288.
  EXPECT_EQ(error_of("{{ range(" + kMin + ", " + kMax + ", 17592186044416) }}"), limit);
  EXPECT_EQ(render("{{ range(" + kMin + ", " + kMax + ", 35184372088832) | length }}"), "524288");
  // Exactly the limit is allowed.
  EXPECT_EQ(render("{{ range(" + kMax + ", " + kMax + " - 1000000, -1) | length }}"), "1000000");
}

}  // namespace
}  // namespace flexjit::tmpl
