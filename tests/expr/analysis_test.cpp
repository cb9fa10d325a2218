// Analysis on the typed tree: free variables, buffers and parameters read, identity / constant
// detection, canonical text and its stable hash.
#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

using Names = std::set<std::string>;

TEST(Analysis, FreeVariables) {
  EXPECT_EQ(mask_mod("q_idx >= kv_idx").free_variables(), (Names{"kv_idx", "q_idx"}));
  EXPECT_EQ(score_mod("score + slope[h] * (kv_idx - q_idx)").free_variables(), (Names{"h", "kv_idx", "q_idx", "score"}));
  EXPECT_EQ(mask_mod("b == 0 || q_len > kv_len").free_variables(), (Names{"b", "kv_len", "q_len"}));
  EXPECT_EQ(mask_mod("true").free_variables(), Names{});
  const Expr document = mask_mod("doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx");
  EXPECT_FALSE(document.uses("b"));
  EXPECT_FALSE(document.uses("h"));
  EXPECT_TRUE(document.uses("q_idx"));
  EXPECT_FALSE(document.uses("nonsense"));
  EXPECT_TRUE(mask_mod("bias[h][q_idx] > 0.0").uses("h"));
  EXPECT_TRUE(score_mod("where(b > 0, score, 0.0)").uses("b"));
}

TEST(Analysis, BuffersAndParamsRead) {
  const Expr e = score_mod("score * cap + bias[h][doc[q_idx]] + slope[h] + slope[0]");
  EXPECT_EQ(e.buffers_read(), (Names{"bias", "doc", "slope"}));
  EXPECT_EQ(e.params_read(), Names{"cap"});
  EXPECT_EQ(mask_mod("q_idx >= kv_idx").buffers_read(), Names{});
  EXPECT_EQ(mask_mod("q_idx - kv_idx <= window").params_read(), Names{"window"});
  EXPECT_EQ(e.declarations().buffers.size(), standard_declarations().buffers.size());
}

TEST(Analysis, BuffersReadByPosition) {
  for (const char* table : {"score + bias[h][q_idx]", "score + bias[h][kv_idx - q_idx + 4095]",
                            "score + bias[h][doc[kv_idx]]", "score + slope[h] + table[q_idx * 2]"})
    EXPECT_TRUE(score_mod(table).reads_buffers_by_position()) << table;
  EXPECT_TRUE(mask_mod("doc[q_idx] == doc[kv_idx]").reads_buffers_by_position());
  for (const char* per_head : {"score + slope[h] * (kv_idx - q_idx)", "score * slope[b] + q_idx", "score + slope[0]",
                               "score * cap", "score"})
    EXPECT_FALSE(score_mod(per_head).reads_buffers_by_position()) << per_head;
  EXPECT_FALSE(mask_mod("q_idx >= kv_idx").reads_buffers_by_position());
}

TEST(Analysis, BuffersReadAtQueryPositions) {
  for (const char* mask : {"doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", "table[kv_idx - q_idx + 4095] > 0.0",
                           "q_idx - kv_idx <= table[doc[q_idx]]", "bias[h][q_idx] > 0.0"})
    EXPECT_TRUE(mask_mod(mask).reads_buffers_at_query_positions()) << mask;
  for (const char* mask : {"doc[kv_idx] == 0 && q_idx >= kv_idx", "kv_idx < table[b] || q_idx >= kv_idx",
                           "q_idx >= kv_idx", "bias[h][kv_idx] > 0.0"})
    EXPECT_FALSE(mask_mod(mask).reads_buffers_at_query_positions()) << mask;
}

TEST(Analysis, IdentityScoreMods) {
  for (const char* identity : {"score", "(score)", "score + 0", "score * 1", "1.0 * score - 0.0", "+score",
                               "-(-score)", "where(true, score, 0.0)", "where(q_idx > 0, score, score)",
                               "score + 0.0 * q_idx", "score / 1", "float(score)"})
    EXPECT_TRUE(score_mod(identity).is_identity()) << identity;
  for (const char* other : {"score * 2.0", "score + 1", "-score", "where(q_idx > 0, score, -inf)", "score + q_idx",
                            "tanh(score)", "score * cap"})
    EXPECT_FALSE(score_mod(other).is_identity()) << other;
  EXPECT_FALSE(mask_mod("true").is_identity());
}

TEST(Analysis, ConstantMasks) {
  for (const char* always : {"true", "true || q_idx > 0", "1 < 2", "!false", "q_idx > 0 || true",
                             "where(false, q_idx > 0, true)", "2 * 3 == 6 && true"})
    EXPECT_TRUE(mask_mod(always).is_always_true()) << always;
  for (const char* never : {"false", "false && q_idx > 0", "1 > 2", "!true", "q_idx >= 0 && false"})
    EXPECT_TRUE(mask_mod(never).is_always_false()) << never;
  EXPECT_FALSE(mask_mod("q_idx >= kv_idx").is_always_true());
  EXPECT_FALSE(mask_mod("q_idx >= kv_idx").is_always_false());
  EXPECT_FALSE(score_mod("score").is_always_true());
}

TEST(Analysis, HashIgnoresWhitespaceAndRedundantParentheses) {
  const uint64_t reference = mask_mod("q_idx >= kv_idx && q_idx - kv_idx <= 1024").hash();
  for (const char* same : {"q_idx>=kv_idx&&q_idx-kv_idx<=1024", "(q_idx >= kv_idx) && ((q_idx - kv_idx) <= 1024)",
                           "  q_idx >= kv_idx\n&& (q_idx - kv_idx <= 1024)  ", "((q_idx >= kv_idx && q_idx - kv_idx <= 1024))"})
    EXPECT_EQ(mask_mod(same).hash(), reference) << same;
  for (const char* different : {"q_idx >= kv_idx && q_idx - kv_idx <= 1023", "q_idx > kv_idx && q_idx - kv_idx <= 1024",
                                "q_idx - kv_idx <= 1024 && q_idx >= kv_idx", "q_idx >= kv_idx"})
    EXPECT_NE(mask_mod(different).hash(), reference) << different;
  // The hash is XXH3-64 of the canonical text, identical on every platform and in every process.
  EXPECT_EQ(mask_mod("q_idx >= kv_idx").hash(), 0x97ae9bbe0200dd4full);
  EXPECT_EQ(score_mod("score").hash(), Expr::identity_score().hash());
}

TEST(Analysis, ExprIsCheapToCopy) {
  const Expr a = score_mod("score * 2.0");
  const Expr b = a;  // NOLINT: shares the tree
  EXPECT_EQ(a.root().get(), b.root().get());
  EXPECT_EQ(&a.declarations(), &b.declarations());
}

}  // namespace
}  // namespace flexjit::test
