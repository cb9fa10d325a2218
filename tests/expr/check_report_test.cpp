// What `flexjit check` prints (src/expr/check_report.cpp; the CLI only forwards its flags).
#include <gtest/gtest.h>

#include "expr/check_report.hpp"
#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CheckReport, DescribesBothModsAndTheGeneratedCode) {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("slope:f32:16"));
  const std::string report =
      expr::check_report(std::string("score + slope[h] * (kv_idx-q_idx)"), std::string("q_idx>=kv_idx"), d);
  EXPECT_TRUE(contains(report,
                       "score_mod: score + slope[h] * (kv_idx - q_idx)\n"
                       "  type:           float\n"
                       "  free variables: score, h, q_idx, kv_idx\n"
                       "  buffers read:   slope (f32 [16])\n"
                       "  params read:    none\n"))
      << report;
  EXPECT_TRUE(contains(report, "  identity:       no\n  d/d(score):     1.0\n")) << report;
  EXPECT_TRUE(contains(report,
                       "  affine in keys: yes, 1 * score + P with P growing by slope[h] per key, at lengths up to "
                       "1073741823 (the forward: two FFMAs per score up to head dim 128)\n"))
      << report;
  EXPECT_TRUE(contains(report,
                       "mask_mod: q_idx >= kv_idx\n"
                       "  type:           bool\n"
                       "  free variables: q_idx, kv_idx\n"
                       "  buffers read:   none\n"
                       "  params read:    none\n"
                       "  hash:           97ae9bbe0200dd4f\n"
                       "  constant:       no\n"
                       "  tile bounds:    yes (decode bounds its key tiles inside its kernel, on caches of up to 1024 "
                       "tiles)\n"))
      << report;
  EXPECT_TRUE(contains(report, "struct FlexjitModArgs {\n  FlexjitBuffer<float, 1> buf_slope;\n};\n")) << report;
  EXPECT_TRUE(contains(report, "bool flexjit_mask_mod(")) << report;
  EXPECT_TRUE(contains(report, "float flexjit_score_mod(")) << report;
  EXPECT_TRUE(contains(report, "float flexjit_score_mod_grad(")) << report;
  EXPECT_TRUE(contains(report, "#line 1 \"score_mod_grad\"\n  return 1.0f;\n")) << report;
}

TEST(CheckReport, OneModIsEnough) {
  const std::string report = expr::check_report(std::nullopt, std::string("true"), {});
  EXPECT_TRUE(contains(report, "  constant:       always true\n")) << report;
  EXPECT_FALSE(contains(report, "score_mod")) << report;
  const std::string score = expr::check_report(std::string("score * cap"), std::nullopt,
                                               Declarations{{}, {ParamDecl::parse("cap:float")}});
  EXPECT_TRUE(contains(score, "  params read:    cap (float)\n")) << score;
  EXPECT_TRUE(contains(score, "  d/d(score):     cap\n")) << score;
  EXPECT_TRUE(contains(score, "  affine in keys: no\n")) << score;
}

TEST(CheckReport, NamesWhatKeepsAMaskFromTileBounds) {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("doc:i32:?"));
  EXPECT_TRUE(contains(expr::check_report(std::nullopt, std::string("q_idx >= kv_idx && doc[kv_idx] == doc[q_idx]"), d),
                       "  tile bounds:    no, it indexes a buffer by kv_idx: doc[kv_idx] (decode classifies its tiles "
                       "with a separate kernel)\n"));
  EXPECT_TRUE(contains(expr::check_report(std::nullopt, std::string("kv_idx < 2.5 * q_idx || kv_idx < 3"), d),
                       "  tile bounds:    no, it computes in float: 2.5 * q_idx (decode classifies its tiles with a "
                       "separate kernel)\n"));
}

TEST(CheckReport, ReportsTheErrorsOfBothMods) {
  try {
    expr::check_report(std::string("scor * 2"), std::string("q_idx => kv_idx"), {});
    FAIL() << "no error";
  } catch (const ExprError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[0].mod, "score_mod");
    EXPECT_EQ(e.diagnostics()[1].mod, "mask_mod");
    EXPECT_STREQ(e.what(),
                 "score_mod:1:1: unknown variable 'scor' (did you mean 'score'?)\n"
                 "  scor * 2\n"
                 "  ^~~~\n"
                 "mask_mod:1:7: '=>' is not an operator; did you mean `q_idx >= kv_idx`?\n"
                 "  q_idx => kv_idx\n"
                 "        ^~");
  }
}

TEST(CheckReport, NeedsAnExpression) {
  EXPECT_EQ(usage_error_of([] { expr::check_report(std::nullopt, std::nullopt, {}); }),
            "give an expression to check: --score EXPR and/or --mask EXPR (e.g. --mask 'q_idx >= kv_idx')");
}

}  // namespace
}  // namespace flexjit::test
