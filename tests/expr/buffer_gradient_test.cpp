// Learnable buffers: d(score_mod)/d(read) for each read, the index-pattern analysis, and the errors
// for buffers that cannot be learnable. Expected forms are written by hand.
#include <gtest/gtest.h>

#include "expr/check_report.hpp"
#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

Declarations learnable_declarations() {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("doc:i32:64"));
  d.buffers.push_back(BufferDecl::parse("rel:f32:4x127"));
  d.buffers.push_back(BufferDecl::parse("slope:f32:4"));
  d.buffers.push_back(BufferDecl::parse("bias:bf16:2x4x64x64"));
  d.buffers.push_back(BufferDecl::parse("dbias:f16:8x4"));
  d.buffers.push_back(BufferDecl::parse("fixed:f32:4"));
  d.params.push_back(ParamDecl::parse("cap:float"));
  for (auto& b : d.buffers)
    if (b.name != "doc" && b.name != "fixed") b.learnable = true;
  return d;
}

std::vector<BufferReadGradient> grads(const std::string& text) {
  return Expr::parse(ModKind::score, text, learnable_declarations()).buffer_gradients();
}

TEST(BufferGradient, RelativePositionTableIsADiagonalBand) {
  const auto g = grads("score + rel[h][q_idx - kv_idx + 63]");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].buffer, "rel");
  EXPECT_EQ(g[0].read, "rel[h][q_idx - kv_idx + 63]");
  EXPECT_EQ(g[0].derivative.canonical(), "1.0");
  ASSERT_EQ(g[0].indices.size(), 2u);
  EXPECT_EQ(g[0].indices[0].canonical(), "h");
  EXPECT_EQ(g[0].indices[1].canonical(), "q_idx - kv_idx + 63");
  EXPECT_EQ(g[0].pattern, IndexPattern::diagonal);
  EXPECT_EQ(g[0].diagonal_dim, 1);
  EXPECT_EQ(g[0].diagonal_coefficient, 1);
}

TEST(BufferGradient, MirroredBandHasCoefficientMinusOne) {
  const auto g = grads("score + rel[h][kv_idx - q_idx + 63]");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].pattern, IndexPattern::diagonal);
  EXPECT_EQ(g[0].diagonal_coefficient, -1);
  const auto scaled = grads("score + rel[0][2 * (q_idx - kv_idx) + h]");
  EXPECT_EQ(scaled[0].pattern, IndexPattern::diagonal);
  EXPECT_EQ(scaled[0].diagonal_coefficient, 2);
}

TEST(BufferGradient, AlibiSlopeIsPerHead) {
  const auto g = grads("score + slope[h] * (kv_idx - q_idx)");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].derivative.canonical(), "float(kv_idx - q_idx)");
  EXPECT_EQ(g[0].pattern, IndexPattern::per_head);
  EXPECT_EQ(grads("score * slope[0]")[0].pattern, IndexPattern::per_head);
  EXPECT_EQ(grads("score * slope[0]")[0].derivative.canonical(), "score");
}

TEST(BufferGradient, FullBiasIsPerScore) {
  const auto g = grads("score + bias[b][h][q_idx][kv_idx]");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].pattern, IndexPattern::per_score);
  EXPECT_EQ(g[0].derivative.canonical(), "1.0");
  // Without b the element is shared across the batch: not one score per element.
  EXPECT_EQ(grads("score + bias[0][h][q_idx][kv_idx]")[0].pattern, IndexPattern::arbitrary);
}

TEST(BufferGradient, IndexThroughABufferValueIsArbitrary) {
  EXPECT_EQ(grads("score + dbias[doc[kv_idx]][h]")[0].pattern, IndexPattern::arbitrary);
  EXPECT_EQ(grads("score + dbias[doc[q_idx]][h]")[0].pattern, IndexPattern::arbitrary);
  EXPECT_EQ(grads("score + rel[h][q_idx]")[0].pattern, IndexPattern::arbitrary);
  EXPECT_EQ(grads("score + rel[h][q_idx * kv_idx]")[0].pattern, IndexPattern::arbitrary);
  EXPECT_EQ(grads("score + rel[q_idx - kv_idx][q_idx - kv_idx]")[0].pattern, IndexPattern::arbitrary);
}

TEST(BufferGradient, ChainRuleAndOtherReadsHeldFixed) {
  const auto g = grads("cap * tanh((score + rel[h][q_idx - kv_idx + 63]) / cap) * slope[h]");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].buffer, "rel");  // first read in the tree's order
  EXPECT_EQ(g[0].derivative.canonical(),
            "cap * ((1.0 - tanh((score + rel[h][q_idx - kv_idx + 63]) / cap) * "
            "tanh((score + rel[h][q_idx - kv_idx + 63]) / cap)) * (1.0 / cap)) * slope[h]");
  EXPECT_EQ(g[1].buffer, "slope");
  EXPECT_EQ(g[1].derivative.canonical(), "cap * tanh((score + rel[h][q_idx - kv_idx + 63]) / cap)");
}

TEST(BufferGradient, RepeatedReadIsOneVariableDistinctReadsAreTwo) {
  const auto same = grads("score + rel[h][q_idx - kv_idx + 63] * rel[h][q_idx - kv_idx + 63]");
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].derivative.canonical(), "rel[h][q_idx - kv_idx + 63] + rel[h][q_idx - kv_idx + 63]");
  const auto two = grads("score + rel[h][q_idx - kv_idx + 63] - rel[h][kv_idx - q_idx + 63]");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].derivative.canonical(), "1.0");
  EXPECT_EQ(two[1].derivative.canonical(), "-1.0");
}

TEST(BufferGradient, NonLearnableAndUnderIntAreNotDifferentiated) {
  EXPECT_TRUE(grads("score + fixed[h]").empty());
  const auto g = grads("score + rel[h][int(slope[h])] + slope[h]");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].buffer, "rel");
  EXPECT_EQ(g[1].buffer, "slope");
  EXPECT_EQ(g[1].derivative.canonical(), "1.0");  // the read inside int() adds nothing
  EXPECT_EQ(g[0].pattern, IndexPattern::per_head);
}

TEST(BufferGradient, MaskedBranchesKeepTheirCondition) {
  const auto g = grads("where(q_idx >= kv_idx, score + rel[h][q_idx - kv_idx + 63], -inf)");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].derivative.canonical(), "where(q_idx >= kv_idx, 1.0, 0.0)");
}

TEST(BufferGradient, IntBufferCannotBeLearnable) {
  Declarations d = learnable_declarations();
  d.buffers[0].learnable = true;  // doc:i32
  EXPECT_EQ(usage_error_of([&] { Expr::parse(ModKind::score, "score", d); }),
            "buffer 'doc' has dtype i32 and cannot be learnable; only f32, f16 and bf16 buffers have "
            "gradients (drop `--grad doc`, or declare it as a float buffer)");
}

TEST(BufferGradient, BufferReadOnlyByTheMaskIsALocatedError) {
  const Declarations d = learnable_declarations();
  const Expr score = Expr::parse(ModKind::score, "score + rel[h][q_idx - kv_idx + 63] + slope[h] + bias[b][h][q_idx][kv_idx]", d);
  const Expr mask = Expr::parse(ModKind::mask, "q_idx >= kv_idx && dbias[0][h] > 0.0", d);
  try {
    check_learnable_buffers(score, mask);
    FAIL() << "expected an ExprError";
  } catch (const ExprError& e) {
    EXPECT_EQ(std::string(e.what()),
              "mask_mod:1:20: buffer 'dbias' is learnable but only mask_mod reads it; a mask has no gradient\n"
              "  q_idx >= kv_idx && dbias[0][h] > 0.0\n"
              "                     ^~~~~~~~~~~\n"
              "  hint: read it in score_mod (e.g. `where(..., score + dbias[...], -inf)`), or do not mark it "
              "learnable (drop `--grad dbias`)");
  }
}

TEST(BufferGradient, LearnableBufferReadByNeitherModIsAUsageError) {
  const Declarations d = learnable_declarations();
  EXPECT_EQ(usage_error_of([&] {
              check_learnable_buffers(Expr::parse(ModKind::score, "score + slope[h]", d),
                                      Expr::parse(ModKind::mask, "true", d));
            }),
            "buffer 'rel' is learnable but score_mod does not read it, so it has no gradient; read it in "
            "score_mod or do not mark it learnable (drop `--grad rel`)");
}

TEST(BufferGradient, CheckReportPrintsEachReadsDerivative) {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("rel:f32:16x8191"));
  d.buffers.push_back(BufferDecl::parse("slope:f32:16"));
  d.buffers[0].learnable = d.buffers[1].learnable = true;
  const std::string report =
      expr::check_report(std::string("score + rel[h][q_idx - kv_idx + 4095] + slope[h] * (kv_idx - q_idx)"),
                         std::string("q_idx >= kv_idx"), d);
  EXPECT_NE(report.find("  d/d(rel[h][q_idx - kv_idx + 4095]): 1.0\n"
                        "    indices: [h][q_idx - kv_idx + 4095]  pattern: diagonal (index 2 = 1 * (q_idx - kv_idx) + ...)\n"
                        "  d/d(slope[h]): float(kv_idx - q_idx)\n"
                        "    indices: [h]  pattern: per_head\n"),
            std::string::npos)
      << report;
}

}  // namespace
}  // namespace flexjit::test
