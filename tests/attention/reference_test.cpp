// The float64 CPU reference: forward against hand-checkable cases, backward against central finite
// differences of the forward on tiny problems (every kind of mod, GQA, masked rows).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "flexjit/error.hpp"
#include "flexjit/reference.hpp"

namespace flexjit {
namespace {

std::vector<double> randn(size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

TEST(ReferenceForward, ZeroQueriesAverageTheValues) {
  ReferenceShape s{1, 1, 1, 3, 4, 2, 2};
  std::vector<double> q(6, 0.0), k(8, 0.0), v = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int i = 0; i < 8; ++i) k[i] = i;
  const auto r = reference_forward(Expr::identity_score(), Expr::no_mask(), {}, s, q, k, v, 0.5);
  EXPECT_DOUBLE_EQ(r.out[0], 4.0);  // mean of 1, 3, 5, 7
  EXPECT_DOUBLE_EQ(r.out[1], 5.0);
  EXPECT_NEAR(r.lse[0], std::log(4.0), 1e-12);
}

TEST(ReferenceForward, FullyMaskedRowsAreZeroWithMinusInfinityLse) {
  std::mt19937_64 rng(1);
  ReferenceShape s{1, 2, 2, 5, 5, 4, 3};
  const auto q = randn(40, rng), k = randn(40, rng), v = randn(30, rng);
  const Expr mask = Expr::parse(ModKind::mask, "q_idx != 2 && kv_idx <= q_idx");
  const auto r = reference_forward(Expr::identity_score(), mask, {}, s, q, k, v, 0.5);
  for (int h = 0; h < 2; ++h) {
    EXPECT_EQ(r.lse[h * 5 + 2], -INFINITY);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(r.out[(h * 5 + 2) * 3 + d], 0.0);
    EXPECT_TRUE(std::isfinite(r.lse[h * 5 + 1]));
  }
  // Row 0 sees only position 0: the output is v[0].
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(r.out[d], v[d], 1e-12);
}

// Issue 17 item 7: a NaN score makes its row NaN (out and LSE), never a "fully masked" row of
// zeros with LSE -inf (std::max(-inf, NaN) is -inf, which is how that happened).
TEST(ReferenceForward, NanScoresPropagateToTheirRows) {
  ReferenceShape s{1, 1, 1, 3, 4, 2, 2};
  std::vector<double> q = {1, 0, NAN, 0, 0, 1}, k(8), v = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int i = 0; i < 8; ++i) k[i] = 0.25 * i;
  const auto r = reference_forward(Expr::identity_score(), Expr::no_mask(), {}, s, q, k, v, 0.5);
  EXPECT_TRUE(std::isnan(r.lse[1]));
  EXPECT_TRUE(std::isnan(r.out[2]) && std::isnan(r.out[3]));
  for (int row : {0, 2}) {
    EXPECT_TRUE(std::isfinite(r.lse[row])) << row;
    EXPECT_TRUE(std::isfinite(r.out[row * 2])) << row;
  }
  // Every score NaN, as `sqrt(score - 1000.0)` makes them: everything NaN, nothing zero.
  const Expr all_nan = Expr::parse(ModKind::score, "sqrt(score - 1000.0)");
  const auto n = reference_forward(all_nan, Expr::no_mask(), {}, s, {1, 0, 1, 0, 1, 0}, k, v, 0.5);
  for (double x : n.out) EXPECT_TRUE(std::isnan(x));
  for (double x : n.lse) EXPECT_TRUE(std::isnan(x));
  // A NaN score at a masked position is never computed: the row stays finite.
  const Expr one_nan = Expr::parse(ModKind::score, "where(kv_idx == 3, sqrt(score - 1000.0), score)");
  const auto m = reference_forward(one_nan, Expr::parse(ModKind::mask, "kv_idx != 3"), {}, s, {1, 0, 1, 0, 1, 0}, k,
                                   v, 0.5);
  for (double x : m.out) EXPECT_TRUE(std::isfinite(x));
  const auto u = reference_forward(one_nan, Expr::no_mask(), {}, s, {1, 0, 1, 0, 1, 0}, k, v, 0.5);
  for (double x : u.out) EXPECT_TRUE(std::isnan(x));
}

TEST(ReferenceBackward, NanRowsGiveNanGradients) {
  ReferenceShape s{1, 1, 1, 3, 4, 2, 2};
  std::vector<double> q = {1, 0, NAN, 0, 0, 1}, k(8), v = {1, 2, 3, 4, 5, 6, 7, 8}, dout = {1, -1, 0.5, 2, -0.5, 1};
  for (int i = 0; i < 8; ++i) k[i] = 0.25 * i;
  const auto g = reference_backward(Expr::identity_score(), Expr::no_mask(), {}, s, q, k, v, dout, 0.5);
  EXPECT_TRUE(std::isnan(g.dq[2]) && std::isnan(g.dq[3]));
  EXPECT_TRUE(std::isfinite(g.dq[0]) && std::isfinite(g.dq[5]));
  for (double x : g.dk) EXPECT_TRUE(std::isnan(x));  // every key meets the NaN row
  for (double x : g.dv) EXPECT_TRUE(std::isnan(x));
}

// Issue 17 item 6: a negative scale is legal and used as given. Scores 0, -1, -2, -3 (q.k = 0,
// 1, 2, 3 times -1): softmax weights e^-j / sum.
TEST(ReferenceForward, NegativeScaleIsUsedAsGiven) {
  ReferenceShape s{1, 1, 1, 1, 4, 1, 1};
  const std::vector<double> q = {1}, k = {0, 1, 2, 3}, v = {10, 20, 30, 40};
  const auto r = reference_forward(Expr::identity_score(), Expr::no_mask(), {}, s, q, k, v, -1.0);
  const double z = 1 + std::exp(-1.0) + std::exp(-2.0) + std::exp(-3.0);
  EXPECT_NEAR(r.out[0], (10 + 20 * std::exp(-1.0) + 30 * std::exp(-2.0) + 40 * std::exp(-3.0)) / z, 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(z), 1e-12);
}

TEST(ReferenceCompare, NanMatchesNanOnly) {
  EXPECT_EQ(relative_error({1.0, NAN}, {1.0, NAN}), 0.0);
  EXPECT_TRUE(std::isinf(relative_error({1.0, 0.0}, {1.0, NAN})));
  EXPECT_TRUE(std::isinf(relative_error({1.0, NAN}, {1.0, 0.0})));
}

TEST(ReferenceForward, RejectsInconsistentSizes) {
  ReferenceShape s{1, 3, 2, 4, 4, 2, 2};
  EXPECT_THROW(reference_forward(Expr::identity_score(), Expr::no_mask(), {}, s, {}, {}, {}, 1.0), UsageError);
}

double loss(const Expr& score, const Expr& mask, const EvalInputs& in, const ReferenceShape& s,
            const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
            const std::vector<double>& dout, double scale) {
  const auto r = reference_forward(score, mask, in, s, q, k, v, scale);
  double l = 0;
  for (size_t i = 0; i < dout.size(); ++i) l += r.out[i] * dout[i];
  return l;
}

void check_gradients(const std::string& score_text, const std::string& mask_text, const ReferenceShape& s,
                     const Declarations& decls = {}, const EvalInputs& in = {}) {
  std::mt19937_64 rng(7);
  const Expr score = score_text.empty() ? Expr::identity_score() : Expr::parse(ModKind::score, score_text, decls);
  const Expr mask = mask_text.empty() ? Expr::no_mask() : Expr::parse(ModKind::mask, mask_text, decls);
  auto q = randn(size_t(s.batch) * s.q_heads * s.q_len * s.head_dim, rng);
  auto k = randn(size_t(s.batch) * s.kv_heads * s.kv_len * s.head_dim, rng);
  auto v = randn(size_t(s.batch) * s.kv_heads * s.kv_len * s.head_dim_v, rng);
  const auto dout = randn(size_t(s.batch) * s.q_heads * s.q_len * s.head_dim_v, rng);
  const double scale = 0.7;
  const auto g = reference_backward(score, mask, in, s, q, k, v, dout, scale);
  const double h = 1e-5;
  auto numeric = [&](std::vector<double>& x, size_t i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = loss(score, mask, in, s, q, k, v, dout, scale);
    x[i] = keep - h;
    const double down = loss(score, mask, in, s, q, k, v, dout, scale);
    x[i] = keep;
    return (up - down) / (2 * h);
  };
  for (size_t i = 0; i < q.size(); ++i) ASSERT_NEAR(g.dq[i], numeric(q, i), 1e-6) << score_text << " dq[" << i << "]";
  for (size_t i = 0; i < k.size(); ++i) ASSERT_NEAR(g.dk[i], numeric(k, i), 1e-6) << score_text << " dk[" << i << "]";
  for (size_t i = 0; i < v.size(); ++i) ASSERT_NEAR(g.dv[i], numeric(v, i), 1e-6) << score_text << " dv[" << i << "]";
}

TEST(ReferenceBackward, MatchesFiniteDifferences) {
  ReferenceShape s{1, 2, 2, 4, 5, 3, 2};
  check_gradients("", "", s);
  check_gradients("", "kv_idx <= q_idx + 1", s);
  check_gradients("3.0 * tanh(score / 3.0)", "", s);
  check_gradients("score * score / 4.0 + sin(score)", "", s);
  check_gradients("where(q_idx >= kv_idx, score, -inf)", "", s);
  check_gradients("sigmoid(score) * 2.0 + exp(score / 5.0)", "(q_idx + kv_idx) % 3 != 1", s);
}

TEST(ReferenceBackward, GqaBuffersAndMaskedRows) {
  ReferenceShape s{2, 4, 2, 4, 4, 3, 3};
  Declarations decls;
  decls.buffers.push_back(BufferDecl{"slope", DType::f32, {4}});
  std::vector<float> slope = {0.5f, 0.25f, 0.125f, 0.0625f};
  EvalInputs in;
  in.buffers["slope"] = HostBufferView{slope.data(), DType::f32, {4}};
  check_gradients("score + slope[h] * (kv_idx - q_idx)", "q_idx != 1 && kv_idx <= q_idx", s, decls, in);
}

TEST(RelativeError, NaNAndMismatchedInfinitiesFail) {
  EXPECT_EQ(relative_error({1, 2}, {1, 2}), 0.0);
  EXPECT_NEAR(relative_error({1.1, 2}, {1, 2}), 0.1 / std::sqrt(5.0), 1e-12);
  EXPECT_EQ(relative_error({NAN, 2}, {1, 2}), INFINITY);
  EXPECT_EQ(relative_error({-INFINITY, 2}, {-INFINITY, 2}), 0.0);
  EXPECT_EQ(relative_error({-INFINITY, 2}, {1, 2}), INFINITY);
  EXPECT_EQ(relative_error({1}, {1, 2}), INFINITY);
}

}  // namespace
}  // namespace flexjit
