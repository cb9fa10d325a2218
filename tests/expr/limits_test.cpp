// Limits: source size, nesting depth (no stack overflow on hostile input), each with its message.
#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

std::string repeat(const std::string& text, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += text;
  return out;
}

const char* const kTooDeep = "expression is nested too deeply (the limit is 256 levels)";

TEST(Limits, SourceSize) {
  const std::string exactly_max = "score" + std::string(65536 - 5, ' ');
  EXPECT_NO_THROW(score_mod(exactly_max));
  EXPECT_EQ(score_error(exactly_max + " "),
            "score_mod:1:1: expression is too long (65537 bytes; the limit is 65536)\n"
            "  hint: a table of values belongs in a buffer, not in the expression");
  EXPECT_EQ(diagnostics_of(ModKind::score, std::string(10 << 20, '(')).at(0).message,
            "expression is too long (10485760 bytes; the limit is 65536)");
}

TEST(Limits, ParenthesesNesting) {
  EXPECT_EQ(score_mod(repeat("(", 200) + "score" + repeat(")", 200)).canonical(), "score");
  const auto diagnostics = diagnostics_of(ModKind::score, repeat("(", 300) + "score" + repeat(")", 300));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].message, kTooDeep);
  EXPECT_EQ(diagnostics[0].column, 257);
  EXPECT_EQ(diagnostics[0].hint, "simplify the expression; a table of values belongs in a buffer");
}

TEST(Limits, HostileDepthNeverOverflowsTheStack) {
  const size_t n = 30000;  // within 64 KiB
  for (const std::string& source :
       {repeat("(", n) + "score" + repeat(")", n), repeat("-", n) + "score", repeat("!", n) + "true",
        repeat("exp(", n / 4) + "score" + repeat(")", n / 4), repeat("doc[", n / 4) + "0" + repeat("]", n / 4),
        repeat("q_idx > 0 ? score : ", n / 20) + "score", "score" + repeat(" + score", n / 8),
        repeat("(", n) + repeat(")", n), repeat("where(true, ", n / 12) + "score" + repeat(", 0.0)", n / 12)}) {
    const auto diagnostics = diagnostics_of(ModKind::score, source);
    ASSERT_EQ(diagnostics.size(), 1u) << source.substr(0, 40);
    EXPECT_EQ(diagnostics[0].message, kTooDeep) << source.substr(0, 40);
  }
}

TEST(Limits, OperatorChainsCountAsNesting) {
  // A chain of n operands is a tree of height n: 256 is the deepest accepted.
  EXPECT_NO_THROW(score_mod("score" + repeat(" + score", 255)));
  EXPECT_EQ(diagnostics_of(ModKind::score, "score" + repeat(" + score", 256)).at(0).message, kTooDeep);
  EXPECT_NO_THROW(score_mod(repeat("-", 200) + "score"));
  EXPECT_NO_THROW(score_mod(repeat("exp(", 200) + "score" + repeat(")", 200)));
}

TEST(Limits, Rank) {
  EXPECT_NO_THROW(BufferDecl::parse("t:f32:1x2x3x4x5x6x7x8"));
  EXPECT_THROW(BufferDecl::parse("t:f32:1x2x3x4x5x6x7x8x9"), UsageError);
}

}  // namespace
}  // namespace flexjit::test
