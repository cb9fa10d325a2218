// Parsing and typing: precedence, literals, types and promotion, the canonical form.
#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

std::string canonical_score(const std::string& text) { return score_mod(text).canonical(); }
std::string canonical_mask(const std::string& text) { return mask_mod(text).canonical(); }

TEST(Parse, FollowsCPrecedence) {
  EXPECT_EQ(canonical_score("score + q_idx * 2"), "score + q_idx * 2");
  EXPECT_EQ(canonical_score("(score + q_idx) * 2"), "(score + q_idx) * 2");
  EXPECT_EQ(canonical_score("score - (q_idx - kv_idx)"), "score - (q_idx - kv_idx)");
  EXPECT_EQ(canonical_score("(score - q_idx) - kv_idx"), "score - q_idx - kv_idx");
  EXPECT_EQ(canonical_score("score / (2.0 * cap)"), "score / (2.0 * cap)");
  EXPECT_EQ(canonical_score("-score * 2.0"), "-score * 2.0");
  EXPECT_EQ(canonical_score("-(score * 2.0)"), "-(score * 2.0)");
  EXPECT_EQ(canonical_score("q_idx % 7 * 3"), "q_idx % 7 * 3");
  EXPECT_EQ(canonical_mask("q_idx >= kv_idx && q_idx - kv_idx <= 1024"),
            "q_idx >= kv_idx && q_idx - kv_idx <= 1024");
  EXPECT_EQ(canonical_mask("(q_idx >= kv_idx) && ((q_idx - kv_idx) <= 1024)"),
            "q_idx >= kv_idx && q_idx - kv_idx <= 1024");
  EXPECT_EQ(canonical_mask("q_idx > 1 || q_idx < 0 && kv_idx > 2"),
            "q_idx > 1 || q_idx < 0 && kv_idx > 2");
  EXPECT_EQ(canonical_mask("(q_idx > 1 || q_idx < 0) && kv_idx > 2"), "(q_idx > 1 || q_idx < 0) && kv_idx > 2");
  // As in C, '&' binds more loosely than '=='.
  EXPECT_EQ(canonical_mask("(q_idx & 1) == 0"), "(q_idx & 1) == 0");
  EXPECT_EQ(canonical_mask("q_idx > 0 & kv_idx > 0 | b == 0 ^ h == 1"),
            "q_idx > 0 & kv_idx > 0 | b == 0 ^ h == 1");
  EXPECT_EQ(canonical_mask("!(q_idx > kv_idx)"), "!(q_idx > kv_idx)");
  EXPECT_EQ(canonical_mask("!!(q_idx > kv_idx)"), "!(!(q_idx > kv_idx))");
}

TEST(Parse, ConditionalIsRightAssociativeAndPrintsAsWhere) {
  EXPECT_EQ(canonical_score("q_idx > 0 ? score : kv_idx > 0 ? 1.0 : 2.0"),
            "where(q_idx > 0, score, where(kv_idx > 0, 1.0, 2.0))");
  EXPECT_EQ(canonical_score("(q_idx > 0 ? score : 1.0) * 2.0"), "where(q_idx > 0, score, 1.0) * 2.0");
  EXPECT_EQ(canonical_score("where(q_idx >= kv_idx, score, -inf)"), "where(q_idx >= kv_idx, score, -inf)");
  EXPECT_EQ(score_mod("q_idx >= kv_idx ? score : -inf").hash(),
            score_mod("where(q_idx >= kv_idx, score, -inf)").hash());
}

TEST(Parse, Literals) {
  EXPECT_EQ(canonical_score("score + 1.5"), "score + 1.5");
  EXPECT_EQ(canonical_score("score + 1."), "score + 1.0");
  EXPECT_EQ(canonical_score("score + .25"), "score + 0.25");
  EXPECT_EQ(canonical_score("score * 2e-3"), "score * 0.002");
  EXPECT_EQ(canonical_score("score * 1E3"), "score * 1000.0");
  EXPECT_EQ(canonical_score("score * 1e-7"), "score * 1e-07");
  EXPECT_EQ(canonical_score("score * 1e20"), "score * 1e+20");
  EXPECT_EQ(canonical_score("score * 0.1"), "score * 0.1");
  EXPECT_EQ(canonical_score("score + inf"), "score + inf");
  EXPECT_EQ(canonical_score("score + -inf"), "score + -inf");
  EXPECT_EQ(canonical_score("-inf"), "-inf");
  EXPECT_EQ(canonical_mask("true"), "true");
  EXPECT_EQ(canonical_mask("false || q_idx > 0"), "false || q_idx > 0");
  EXPECT_EQ(canonical_mask("q_idx > -2147483648"), "q_idx > -2147483648");
  EXPECT_EQ(canonical_mask("q_idx < 2147483647"), "q_idx < 2147483647");
  EXPECT_EQ(canonical_score("+score"), "score");
  EXPECT_EQ(canonical_score("score - -1"), "score - -1");
  EXPECT_EQ(canonical_score("-(-score)"), "-(-score)");
  EXPECT_EQ(canonical_score("- -score"), "-(-score)");
  EXPECT_EQ(canonical_score("3.4028235e38"), "3.4028235e+38");  // the largest float, as suggested
}

TEST(Parse, WhitespaceAndNewlinesAreFree) {
  const Expr a = mask_mod("doc[q_idx]==doc[kv_idx]&&q_idx>=kv_idx");
  const Expr b = mask_mod("  doc[ q_idx ] == doc[kv_idx]\n\t&& (q_idx >= kv_idx)\r\n");
  EXPECT_EQ(a.canonical(), "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx");
  EXPECT_EQ(a.canonical(), b.canonical());
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(b.source(), "  doc[ q_idx ] == doc[kv_idx]\n\t&& (q_idx >= kv_idx)\r\n");
}

TEST(Parse, CanonicalFormReparsesToItself) {
  const char* sources[] = {
      "score + slope[h] * (kv_idx - q_idx)",
      "30.0 * tanh(score / 30.0)",
      "where(q_idx >= kv_idx, score, -inf)",
      "score - -1 - (-(-score)) * -0.5",
      "-(q_idx - kv_idx) * 2 + abs(-q_idx) % 3",
      "pow(score, 2) / (1.0 + exp(-score)) + sigmoid(score) - rsqrt(score * score + 1.0)",
      "clamp(score, -cap, cap) + min(q_idx, kv_idx) + max(0.5, float(window))",
      "int(floor(score)) + int(ceil(score)) + int(q_idx > 0)",
      "score + bias[h][q_idx - kv_idx + 4095] + table[kv_idx] + halfs[h % 8] + flags[q_idx]",
      "q_idx > 0 ? (kv_idx > 0 ? score : 1.0) : 2.0",
      "sin(score) * cos(score) + exp2(score) + log2(score) + log(score) + sqrt(score)",
      "1e-07 * score + 1e+20 + 123456.789",
  };
  for (const char* source : sources) {
    const Expr first = score_mod(source);
    const Expr second = score_mod(first.canonical());
    EXPECT_EQ(first.canonical(), second.canonical()) << source;
    EXPECT_EQ(first.hash(), second.hash()) << source;
  }
  for (const auto& mod : suite_mods()) {
    const Expr first = Expr::parse(mod.kind, mod.text, suite_declarations());
    EXPECT_EQ(Expr::parse(mod.kind, first.canonical(), suite_declarations()).canonical(), first.canonical());
  }
}

TEST(Types, ResultTypes) {
  EXPECT_EQ(score_mod("score").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("q_idx - kv_idx").type(), ScalarType::integer);  // a score_mod may yield an int
  EXPECT_EQ(score_mod("score + 1").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("q_idx / 2").type(), ScalarType::integer);
  EXPECT_EQ(score_mod("q_idx / 2.0").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("abs(q_idx)").type(), ScalarType::integer);
  EXPECT_EQ(score_mod("min(q_idx, kv_idx)").type(), ScalarType::integer);
  EXPECT_EQ(score_mod("max(q_idx, 1.5)").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("clamp(q_idx, 0, window)").type(), ScalarType::integer);
  EXPECT_EQ(score_mod("clamp(q_idx, 0, cap)").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("exp(q_idx)").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("floor(q_idx)").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("where(q_idx > 0, 1, 2)").type(), ScalarType::integer);
  EXPECT_EQ(score_mod("where(q_idx > 0, 1, 2.0)").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("int(score)").type(), ScalarType::integer);
  EXPECT_EQ(score_mod("float(q_idx)").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("doc[q_idx] + flags[kv_idx]").type(), ScalarType::integer);
  EXPECT_EQ(score_mod("table[q_idx] + halfs[0]").type(), ScalarType::floating);
  EXPECT_EQ(score_mod("window * 2").type(), ScalarType::integer);
  EXPECT_EQ(score_mod("cap * 2").type(), ScalarType::floating);
  EXPECT_EQ(mask_mod("q_idx >= kv_idx").type(), ScalarType::boolean);
  EXPECT_EQ(mask_mod("q_idx > 0 ? true : false").type(), ScalarType::boolean);
  EXPECT_EQ(mask_mod("(q_idx > 0) ^ (kv_idx > 0)").type(), ScalarType::boolean);
  EXPECT_EQ(mask_mod("(q_idx ^ kv_idx) > 0").type(), ScalarType::boolean);
  EXPECT_EQ(mask_mod("q_idx < 1.5").type(), ScalarType::boolean);  // int/float comparison promotes
  EXPECT_EQ(mask_mod("(q_idx > 0) == (kv_idx > 0)").type(), ScalarType::boolean);
}

TEST(Types, EveryVariableIsKnownInItsMod) {
  EXPECT_NO_THROW(score_mod("score + b + h + q_idx + kv_idx + q_len + kv_len"));
  EXPECT_NO_THROW(mask_mod("b + h + q_idx + kv_idx + q_len + kv_len >= 0"));
  EXPECT_THROW(mask_mod("score > 0"), ExprError);
}

TEST(Types, EveryFunctionChecks) {
  for (const char* source :
       {"abs(score)", "min(score, 1.0)", "max(score, 1.0)", "clamp(score, -1.0, 1.0)", "exp(score)",
        "exp2(score)", "log(score)", "log2(score)", "sqrt(score)", "rsqrt(score)", "tanh(score)",
        "sigmoid(score)", "sin(score)", "cos(score)", "floor(score)", "ceil(score)", "pow(score, 2.0)",
        "where(score > 0.0, score, 0.0)", "float(int(score))"}) {
    EXPECT_NO_THROW(score_mod(source)) << source;
  }
}

TEST(Types, IdentityAndNoMaskDefaults) {
  EXPECT_EQ(Expr::identity_score().canonical(), "score");
  EXPECT_EQ(Expr::identity_score().kind(), ModKind::score);
  EXPECT_TRUE(Expr::identity_score().is_identity());
  EXPECT_EQ(Expr::no_mask().canonical(), "true");
  EXPECT_TRUE(Expr::no_mask().is_always_true());
  EXPECT_EQ(mod_name(ModKind::score), "score_mod");
  EXPECT_EQ(mod_name(ModKind::mask), "mask_mod");
  EXPECT_EQ(scalar_type_name(ScalarType::boolean), "bool");
  EXPECT_EQ(scalar_type_name(ScalarType::integer), "int");
  EXPECT_EQ(scalar_type_name(ScalarType::floating), "float");
}

TEST(Diagnostics, CarryPositionsAndSourceLines) {
  const auto diagnostics = diagnostics_of(ModKind::mask, "q_idx >= kv_idx &&\n  qidx < 5");
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].mod, "mask_mod");
  EXPECT_EQ(diagnostics[0].line, 2);
  EXPECT_EQ(diagnostics[0].column, 3);
  EXPECT_EQ(diagnostics[0].length, 4);
  EXPECT_EQ(diagnostics[0].source_line, "  qidx < 5");
  EXPECT_EQ(diagnostics[0].message, "unknown variable 'qidx' (did you mean 'q_idx'?)");
  EXPECT_EQ(diagnostics[0].hint, "");
}

TEST(Diagnostics, TabsKeepTheCaretAligned) {
  EXPECT_EQ(score_error("score\t+ kv_id"),
            "score_mod:1:9: unknown variable 'kv_id' (did you mean 'kv_idx'?)\n"
            "  score\t+ kv_id\n"
            "       \t  ^~~~~");
}

TEST(Diagnostics, ControlCharactersAreNamedAndNeverEchoed) {
  EXPECT_EQ(mask_error(std::string("q_idx\x1b >= kv_idx")),
            "mask_mod:1:6: unexpected control character 0x1B\n"
            "  q_idx? >= kv_idx\n"
            "       ^");
  EXPECT_EQ(mask_error(std::string("q_idx >= kv_idx\0", 16)),
            "mask_mod:1:16: unexpected control character 0x00\n"
            "  q_idx >= kv_idx?\n"
            "                 ^");
}

TEST(Diagnostics, AllIndependentErrorsAreReportedInSourceOrder) {
  const auto diagnostics =
      diagnostics_of(ModKind::score, "exp(scor) + min(q_idx) + bias[h] + nope(1) + score / 0");
  ASSERT_EQ(diagnostics.size(), 5u);
  EXPECT_EQ(diagnostics[0].message, "unknown variable 'scor' (did you mean 'score'?)");
  EXPECT_EQ(diagnostics[1].message, "'min' takes 2 arguments (a, b), but was given 1");
  EXPECT_EQ(diagnostics[2].message, "buffer 'bias' has rank 2 but is indexed with 1 index");
  EXPECT_EQ(diagnostics[3].message, "unknown function 'nope'");
  EXPECT_EQ(diagnostics[4].message, "division by zero");
  for (size_t i = 1; i < diagnostics.size(); ++i) EXPECT_LT(diagnostics[i - 1].column, diagnostics[i].column);
}

TEST(Diagnostics, OneMistakeGivesOneMessage) {
  // An unknown name inside a larger expression does not also make its parents fail.
  EXPECT_EQ(diagnostics_of(ModKind::mask, "(doc[q_id] == doc[kv_idx]) && !(q_idx < kv_idx)").size(), 1u);
  EXPECT_EQ(diagnostics_of(ModKind::score, "where(q_idx > 0, tanh(scor) * 2.0, -inf) + 1.0").size(), 1u);
  EXPECT_EQ(diagnostics_of(ModKind::mask, "q_idx = kv_idx && q_idx - kv_idx <= 1024").size(), 1u);
}

TEST(Diagnostics, GarbageIsCappedAtTwentyMessages) {
  const auto diagnostics = diagnostics_of(ModKind::score, "score $ 1 @ 2 # 3 ` 4 $ 5 @ 6 # 7 ` 8 $ 9 @ 10 # 11 ` "
                                                          "12 $ 13 @ 14 # 15 ` 16 $ 17 @ 18 # 19 ` 20 $ 21 @ 22");
  ASSERT_EQ(diagnostics.size(), 21u);
  EXPECT_EQ(diagnostics.back().message, "2 more errors not shown");
}

}  // namespace
}  // namespace flexjit::test
