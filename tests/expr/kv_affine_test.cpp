// Expr::kv_affine_form: which score_mods are `g * score + P` with P moving by a fixed slope per
// key, the slope's text, g and the longest length at which the form holds. Expectations are
// written out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

struct Affine {
  double score_factor;
  std::string slope;
  int max_len;
};

std::optional<Affine> affine(const std::string& text) {
  const auto form = score_mod(text).kv_affine_form();
  if (!form) return std::nullopt;
  return Affine{form->score_factor, form->kv_slope.canonical(), form->max_len};
}

TEST(KvAffine, AlibiAndItsDecodeFormAreAffine) {
  const auto alibi = affine("score + slope[h] * (kv_idx - q_idx)");
  ASSERT_TRUE(alibi);
  EXPECT_EQ(alibi->score_factor, 1.0);
  EXPECT_EQ(alibi->slope, "slope[h]");
  EXPECT_EQ(alibi->max_len, 1073741823);  // two positions: 2 * L <= 2^31 - 1
  // The decode suite's form: four positions.
  const auto decode = affine("score + slope[h] * (kv_idx - q_idx - kv_len + q_len)");
  ASSERT_TRUE(decode);
  EXPECT_EQ(decode->slope, "slope[h]");
  EXPECT_EQ(decode->max_len, 536870911);
  // Reversed sign, a literal in the sum (it lowers the bound), a float factor on the right.
  const auto reversed = affine("score - (q_idx - kv_idx + 7) * slope[h]");
  ASSERT_TRUE(reversed);
  EXPECT_EQ(reversed->slope, "slope[h]");
  EXPECT_EQ(reversed->max_len, 1073741820);  // (2^31 - 1 - 7) / 2
}

TEST(KvAffine, ScoreFactorsDivisorsAndRowDependentSlopes) {
  const auto scaled = affine("score * 0.5 + 0.25 * float(kv_idx)");
  ASSERT_TRUE(scaled);
  EXPECT_EQ(scaled->score_factor, 0.5);
  EXPECT_EQ(scaled->slope, "0.25");
  EXPECT_EQ(scaled->max_len, 2147483647);  // kv_idx alone never passes 2^31 - 1
  const auto negated = affine("-(score + kv_idx) / 8.0");
  ASSERT_TRUE(negated);
  EXPECT_EQ(negated->score_factor, -0.125);
  EXPECT_EQ(negated->slope, "-0.125");
  // A slope that depends on the row and on a buffer read by the head.
  const auto per_row = affine("score + float(q_idx) * 0.001 * float(kv_idx) + bias[h][q_idx]");
  ASSERT_TRUE(per_row);
  EXPECT_EQ(per_row->slope, "float(q_idx) * 0.001");
  // No position at all beside the key: the slope is a constant, the bound the largest length.
  const auto no_row = affine("score + kv_idx");
  ASSERT_TRUE(no_row);
  EXPECT_EQ(no_row->slope, "1.0");
}

TEST(KvAffine, FormsThatAreNotAffine) {
  // Not in the key: a product of keys, a function of the key, a buffer indexed by the key, an int
  // quotient (it floors), a key-dependent divisor, a select.
  EXPECT_FALSE(affine("score + float(kv_idx) * float(kv_idx)"));
  EXPECT_FALSE(affine("score - slope[h] * abs(q_idx - kv_idx)"));
  EXPECT_FALSE(affine("score + bias[h][kv_idx]"));
  EXPECT_FALSE(affine("score + (kv_idx - q_idx) / 2"));
  EXPECT_FALSE(affine("score + 1.0 / float(kv_idx + 1)"));
  EXPECT_FALSE(affine("where(q_idx >= kv_idx, score, score + 1.0)"));
  // Int sums with anything but positions and literals: their size is not bounded by the lengths.
  EXPECT_FALSE(affine("score + slope[h] * (kv_idx - doc[q_idx])"));
  EXPECT_FALSE(affine("score + slope[h] * (kv_idx * 2 - q_idx)"));
  EXPECT_FALSE(affine("score + slope[h] * (kv_idx - h)"));
  // Not linear in the score, or with a derivative that is not a constant: soft-capping, a
  // product of the score and the key.
  EXPECT_FALSE(affine("30.0 * tanh(score / 30.0) + float(kv_idx)"));
  EXPECT_FALSE(affine("score * float(kv_idx)"));
  EXPECT_FALSE(affine("where(score > 0.0, score, 2.0 * score) + float(kv_idx)"));
  // No key, or no score: nothing to gain, or nothing to multiply.
  EXPECT_FALSE(affine("score + slope[h]"));
  EXPECT_FALSE(affine("score"));
  EXPECT_FALSE(affine("slope[h] * float(kv_idx - q_idx)"));
  // A score_mod whose score factor is zero, or not a literal (a parameter's value).
  EXPECT_FALSE(affine("score * 0.0 + float(kv_idx)"));
  EXPECT_FALSE(affine("cap * score + float(kv_idx)"));
  // A mask_mod has no such form.
  EXPECT_FALSE(mask_mod("q_idx >= kv_idx").kv_affine_form());
}

// The form against the interpreter (float64): at random points, score_mod(s, q, kv) equals
// g * s + score_mod(0, q, kv0) + slope(q) * (kv - kv0) for keys kv0 <= kv in one row, as the
// kernel computes it (P at a row's first key, the slope times the column offset).
TEST(KvAffine, TheFormAgreesWithTheInterpreter) {
  std::vector<float> slope(16), bias(16 * 8191);
  std::vector<int32_t> doc(4096);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> unit(-1.f, 1.f);
  for (float& v : slope) v = unit(rng);
  for (float& v : bias) v = unit(rng);
  for (size_t i = 0; i < doc.size(); ++i) doc[i] = static_cast<int32_t>(i / 300);
  EvalInputs inputs;
  inputs.buffers["slope"] = {slope.data(), DType::f32, {16}};
  inputs.buffers["bias"] = {bias.data(), DType::f32, {16, 8191}};
  inputs.buffers["doc"] = {doc.data(), DType::i32, {4096}};
  inputs.params["cap"] = 2.5;
  const char* mods[] = {
      "score + slope[h] * (kv_idx - q_idx)",
      "score + slope[h] * (kv_idx - q_idx - kv_len + q_len)",
      "score * 0.5 - (q_idx - kv_idx + 7) * slope[h]",
      "-(score + kv_idx) / 8.0",
      "score + float(q_idx) * 0.001 * float(kv_idx) + bias[h][q_idx]",
      "2.0 * score + float(doc[q_idx]) * (float(kv_idx) - 3.5) / cap",
      "score / 4.0 - 0.01 * (kv_len - kv_idx) + slope[h] * float(q_idx)",
  };
  std::uniform_int_distribution<int> head(0, 15), pos(0, 4000), offset(0, 127);
  for (const char* text : mods) {
    const Expr mod = score_mod(text);
    const auto form = mod.kv_affine_form();
    ASSERT_TRUE(form) << text;
    for (int trial = 0; trial < 200; ++trial) {
      EvalPoint at;
      at.b = 0;
      at.h = head(rng);
      at.q_len = 4096;
      at.kv_len = 4096;
      at.q_idx = pos(rng);
      at.kv_idx = pos(rng) / 2;  // kv0, the row's first key
      at.score = 0.0;
      const double part = mod.evaluate(at, inputs);
      const double slope_here = form->kv_slope.evaluate(at, inputs);
      const int k = offset(rng);
      at.kv_idx += k;
      at.score = 4.0 * unit(rng);
      const double want = mod.evaluate(at, inputs);
      const double got = form->score_factor * at.score + part + slope_here * k;
      EXPECT_NEAR(got, want, 1e-9 * (1.0 + std::fabs(want))) << text << " at h " << at.h << " q " << at.q_idx
                                                              << " kv " << at.kv_idx;
    }
  }
}

}  // namespace
}  // namespace flexjit::test
