// d(score_mod)/d(score): simplified symbolic forms, and agreement with central finite differences
// of the double-precision interpreter at many random points for every built-in function.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

TEST(Gradient, SimplifiedForms) {
  EXPECT_EQ(score_mod("score").gradient().canonical(), "1.0");
  EXPECT_EQ(score_mod("score + slope[h] * (kv_idx - q_idx)").gradient().canonical(), "1.0");
  EXPECT_EQ(score_mod("30.0 * tanh(score / 30.0)").gradient().canonical(),
            "1.0 - tanh(score / 30.0) * tanh(score / 30.0)");
  EXPECT_EQ(score_mod("where(q_idx >= kv_idx, score, -inf)").gradient().canonical(),
            "where(q_idx >= kv_idx, 1.0, 0.0)");
  EXPECT_EQ(score_mod("q_idx >= kv_idx ? score * cap : 0.0").gradient().canonical(),
            "where(q_idx >= kv_idx, cap, 0.0)");
  EXPECT_EQ(score_mod("score * 2.0 + 1.0").gradient().canonical(), "2.0");
  EXPECT_EQ(score_mod("-score").gradient().canonical(), "-1.0");
  EXPECT_EQ(score_mod("score * score").gradient().canonical(), "score + score");
  EXPECT_EQ(score_mod("pow(score, 3)").gradient().canonical(), "3.0 * pow(score, 2.0)");
  EXPECT_EQ(score_mod("exp(score)").gradient().canonical(), "exp(score)");
  EXPECT_EQ(score_mod("q_idx - kv_idx").gradient().canonical(), "0.0");
  EXPECT_EQ(score_mod("floor(score) + ceil(score) + int(score)").gradient().canonical(), "0.0");
  EXPECT_EQ(score_mod("abs(score)").gradient().canonical(), "where(score < 0.0, -1.0, 1.0)");
  EXPECT_EQ(score_mod("max(score, 0.0)").gradient().canonical(), "where(score >= 0.0, 1.0, 0.0)");
  EXPECT_EQ(score_mod("score / cap").gradient().canonical(), "1.0 / cap");
  EXPECT_EQ(score_mod("float(score)").gradient().canonical(), "1.0");
  EXPECT_EQ(score_mod("score + 0.0 * q_idx").gradient().canonical(), "1.0");
}

TEST(Gradient, IsAScoreModThatEmitsAndChecks) {
  const Expr gradient = score_mod("score * cap + bias[h][q_idx]").gradient();
  EXPECT_EQ(gradient.kind(), ModKind::score);
  EXPECT_EQ(gradient.type(), ScalarType::floating);
  EXPECT_EQ(gradient.canonical(), "cap");
  EXPECT_EQ(gradient.source(), "cap");
  EXPECT_EQ(gradient.params_read(), std::set<std::string>{"cap"});
  EXPECT_NE(gradient.emit_cuda("g").find("return args.p_cap;"), std::string::npos);
  EXPECT_EQ(Expr::parse(ModKind::score, gradient.canonical(), standard_declarations()).canonical(),
            gradient.canonical());
}

TEST(Gradient, OfAMaskIsAUsageError) {
  EXPECT_EQ(usage_error_of([] { mask_mod("q_idx >= kv_idx").gradient(); }),
            "gradient() needs a score_mod; a mask_mod has no derivative");
}

struct GradientCase {
  const char* source;
  double low, high;  // score range sampled
};

// Every built-in, alone and composed, over ranges where the function is defined.
const GradientCase kCases[] = {
    {"score", -10, 10},
    {"-score * cap + window", -10, 10},
    {"score * score * score - 2.0 * score", -3, 3},
    {"1.0 / score", 0.5, 4},
    {"(score + 1.0) / (score * score + 2.0)", -4, 4},
    {"abs(score)", -5, 5},
    {"abs(score * score - 2.0)", -3, 3},
    {"min(score, 1.0) + min(0.5, score * 2.0)", -3, 3},
    {"max(score, 1.0) + max(-score, 0.5)", -3, 3},
    {"clamp(score, -1.0, 2.0)", -4, 4},
    {"clamp(2.0, score, score + 1.0)", -4, 4},
    {"exp(score)", -5, 5},
    {"exp(-score * score)", -3, 3},
    {"exp2(score)", -5, 5},
    {"log(score)", 0.1, 10},
    {"log(score * score + 1.0)", -5, 5},
    {"log2(score)", 0.1, 10},
    {"sqrt(score)", 0.1, 10},
    {"sqrt(score * score + 1.0)", -5, 5},
    {"rsqrt(score)", 0.1, 10},
    {"rsqrt(score * score + 0.5)", -5, 5},
    {"tanh(score)", -4, 4},
    {"30.0 * tanh(score / 30.0)", -80, 80},
    {"cap * tanh(score / cap)", -8, 8},
    {"sigmoid(score)", -6, 6},
    {"sigmoid(2.0 * score) * score", -6, 6},
    {"sin(score)", -6, 6},
    {"cos(score)", -6, 6},
    {"sin(cos(score)) * cos(score * 3.0)", -3, 3},
    {"floor(score) + score", -4, 4},
    {"ceil(score) * 2.0 + score * score", -4, 4},
    {"pow(score, 3)", -3, 3},
    {"pow(score, 2.5)", 0.1, 3},
    {"pow(2.0, score)", -3, 3},
    {"pow(score, score)", 0.2, 3},
    {"pow(score * score + 1.0, sin(score))", -3, 3},
    {"where(score > 0.5, score * score, -score)", -3, 3},
    {"score > 0.5 ? exp(score) : sin(score)", -3, 3},
    {"where(q_idx >= kv_idx, score, -inf) + 0.0 * score", -3, 3},
    {"int(score) + float(int(score * 3.0)) + score", -4, 4},
    {"float(score) * 2.0", -4, 4},
    {"score + slope[h] * (kv_idx - q_idx) + bias[h][q_idx]", -4, 4},
    {"score * slope[h] + exp(score * slope[h])", -4, 4},
    {"score / cap + q_idx / 3.0", -4, 4},
    {"min(score, q_idx) + max(score, kv_idx) + abs(score - kv_idx)", -4, 4},
};

double evaluate(const expr::BoundEvaluator& f, EvalPoint p, double score) {
  p.score = score;
  return f(p);
}

TEST(Gradient, MatchesCentralFiniteDifferencesForEveryBuiltin) {
  std::vector<float> slope(16), bias(16 * 64);
  for (size_t i = 0; i < slope.size(); ++i) slope[i] = 0.25f * static_cast<float>(i + 1);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i % 7) - 3.0f;
  Declarations declarations = standard_declarations();
  declarations.buffers[1] = BufferDecl::parse("bias:f32:16x64");
  EvalInputs inputs;
  inputs.buffers["slope"] = {slope.data(), DType::f32, {16}};
  inputs.buffers["bias"] = {bias.data(), DType::f32, {16, 64}};
  inputs.params["cap"] = 3.0;
  inputs.params["window"] = 5;

  std::mt19937 rng(1234);
  int checked_total = 0;
  for (const GradientCase& c : kCases) {
    const Expr f = Expr::parse(ModKind::score, c.source, declarations);
    const Expr df = f.gradient();
    const auto f_eval = f.bind(inputs);
    const auto df_eval = df.bind(inputs);
    std::uniform_real_distribution<double> score_dist(c.low, c.high);
    std::uniform_int_distribution<int> index(0, 15);
    int checked = 0, skipped = 0;
    for (int trial = 0; trial < 1000; ++trial) {
      EvalPoint p;
      p.h = index(rng);
      p.q_idx = index(rng);
      p.kv_idx = index(rng);
      p.q_len = p.kv_len = 64;
      const double x = score_dist(rng);
      const double step = 1e-5 * std::max(1.0, std::fabs(x));
      const double f0 = evaluate(f_eval, p, x);
      const double right = (evaluate(f_eval, p, x + step) - f0) / step;
      const double left = (f0 - evaluate(f_eval, p, x - step)) / step;
      const double central = (evaluate(f_eval, p, x + step) - evaluate(f_eval, p, x - step)) / (2 * step);
      if (!std::isfinite(f0) || !std::isfinite(central)) {
        ++skipped;
        continue;
      }
      // Within a step of a kink (abs at 0, a min/max tie, a where boundary, floor's jumps) the
      // one-sided slopes disagree: the derivative is not defined there.
      if (std::fabs(right - left) > 1e-3 * std::max(1.0, std::fabs(central))) {
        ++skipped;
        continue;
      }
      const double symbolic = evaluate(df_eval, p, x);
      EXPECT_NEAR(symbolic, central, 1e-5 * std::max(1.0, std::fabs(central)))
          << c.source << " at score=" << x << " q_idx=" << p.q_idx << " kv_idx=" << p.kv_idx
          << "\n  derivative: " << df.canonical();
      ++checked;
    }
    EXPECT_GT(checked, 400) << c.source << " (" << skipped << " points skipped)";
    checked_total += checked;
  }
  EXPECT_GT(checked_total, 40000);
}

TEST(Gradient, KinksTakeTheForwardBranch) {
  EvalPoint p;
  p.score = 0.0;
  EXPECT_EQ(score_mod("abs(score)").gradient().evaluate(p, {}), 1.0);
  EXPECT_EQ(score_mod("min(score, 0.0)").gradient().evaluate(p, {}), 1.0);
  EXPECT_EQ(score_mod("max(score, 0.0)").gradient().evaluate(p, {}), 1.0);
  EXPECT_EQ(score_mod("clamp(score, 0.0, 1.0)").gradient().evaluate(p, {}), 1.0);
}

TEST(Substitute, ReplacesAVariableAndSimplifies) {
  EXPECT_EQ(score_mod("score * 2.0 + q_idx").substitute("score", 1.5).canonical(), "3.0 + q_idx");
  EXPECT_EQ(mask_mod("q_idx >= kv_idx && b == 0").substitute("b", 0).canonical(), "q_idx >= kv_idx");
  EXPECT_TRUE(mask_mod("q_idx >= kv_idx || b == 1").substitute("b", 1).is_always_true());
  EXPECT_TRUE(mask_mod("b == 1 && q_idx >= kv_idx").substitute("b", 0).is_always_false());
  EXPECT_EQ(mask_mod("doc[q_idx] == doc[kv_idx]").substitute("h", 3).canonical(), "doc[q_idx] == doc[kv_idx]");
  EXPECT_EQ(usage_error_of([] { score_mod("score").substitute("qidx", 1); }),
            "substitute: unknown variable 'qidx' (expected one of score, b, h, q_idx, kv_idx, q_len, kv_len)");
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

TEST(Gradient, StaysSmallForDeepNesting) {
  // Each operand's derivative is used once, so nesting does not blow the derivative up.
  for (const char* f : {"abs(", "min(1.0, ", "max(0.5, ", "clamp(-2.0, ", "sigmoid(", "where(score > 0.0, 2.0 * "}) {
    std::string source = "score";
    std::string closing = std::string(f) == "clamp(-2.0, " ? ", 3.0)" : ")";
    if (std::string(f).rfind("where", 0) == 0) closing = ", score)";
    for (int i = 0; i < 120; ++i) source = f + source + closing;
    const Expr gradient = score_mod(source).gradient();
    EXPECT_LT(gradient.canonical().size(), 2000000u) << f;
  }
}

}  // namespace
}  // namespace flexjit::test
