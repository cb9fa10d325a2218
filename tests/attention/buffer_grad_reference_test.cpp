// The float64 reference gradient of learnable buffers: central finite differences of the CPU
// forward for every index pattern, and closed forms written by hand where they exist (a bias that
// is constant along a query row has zero gradient; an additive per-score bias's gradient sums to
// zero along each row).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "flexjit/error.hpp"
#include "flexjit/reference.hpp"

namespace flexjit {
namespace {

struct Buffer {
  std::string decl;  // NAME:DTYPE:DIMS
  bool learnable;
  std::vector<float> f32;
  std::vector<int32_t> i32;
};

struct Case {
  std::string score, mask;
  ReferenceShape shape;
  std::vector<Buffer> buffers;
  double scale = 0.5;
  std::vector<double> q, k, v, dout;
  Declarations decls;

  EvalInputs inputs() {
    EvalInputs in;
    for (size_t i = 0; i < buffers.size(); ++i) {
      const BufferDecl& d = decls.buffers[i];
      if (d.dtype == DType::f32) in.buffers[d.name] = HostBufferView{buffers[i].f32.data(), d.dtype, d.shape};
      else in.buffers[d.name] = HostBufferView{buffers[i].i32.data(), d.dtype, d.shape};
    }
    return in;
  }
  Expr score_mod() const { return Expr::parse(ModKind::score, score, decls); }
  Expr mask_mod() const { return Expr::parse(ModKind::mask, mask.empty() ? "true" : mask, decls); }
  double loss() {
    const auto r = reference_forward(score_mod(), mask_mod(), inputs(), shape, q, k, v, scale);
    double l = 0;
    for (size_t i = 0; i < dout.size(); ++i) l += r.out[i] * dout[i];
    return l;
  }
  std::map<std::string, std::vector<double>> gradients() {
    return reference_buffer_gradients(score_mod(), mask_mod(), inputs(), shape, q, k, v, dout, scale);
  }
};

Case make_case(std::string score, std::string mask, ReferenceShape s, std::vector<Buffer> buffers, uint64_t seed = 7) {
  Case c;
  c.score = std::move(score);
  c.mask = std::move(mask);
  c.shape = s;
  c.buffers = std::move(buffers);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  auto randn = [&](size_t n) {
    std::vector<double> x(n);
    for (auto& e : x) e = normal(rng);
    return x;
  };
  c.q = randn(size_t(s.batch) * s.q_heads * s.q_len * s.head_dim);
  c.k = randn(size_t(s.batch) * s.kv_heads * s.kv_len * s.head_dim);
  c.v = randn(size_t(s.batch) * s.kv_heads * s.kv_len * s.head_dim_v);
  c.dout = randn(size_t(s.batch) * s.q_heads * s.q_len * s.head_dim_v);
  for (auto& b : c.buffers) {
    BufferDecl d = BufferDecl::parse(b.decl);
    d.learnable = b.learnable;
    size_t n = 1;
    for (int64_t e : d.shape) n *= size_t(e);
    if (d.dtype == DType::f32 && b.f32.empty())
      for (size_t i = 0; i < n; ++i) b.f32.push_back(static_cast<float>(0.5 * normal(rng)));
    c.decls.buffers.push_back(d);
  }
  return c;
}

// Central differences of the loss for every element of every learnable buffer against the
// reference gradient. The step is taken on the f32 storage, so the divisor is the step actually
// stored.
void expect_matches_finite_differences(Case& c) {
  const auto grads = c.gradients();
  size_t checked = 0;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    if (!c.buffers[i].learnable) continue;
    const std::string& name = c.decls.buffers[i].name;
    ASSERT_TRUE(grads.count(name)) << name;
    const std::vector<double>& g = grads.at(name);
    std::vector<float>& x = c.buffers[i].f32;
    ASSERT_EQ(g.size(), x.size());
    for (size_t e = 0; e < x.size(); ++e) {
      const float saved = x[e];
      x[e] = static_cast<float>(saved + 1e-3);
      const double up = x[e], plus = c.loss();
      x[e] = static_cast<float>(saved - 1e-3);
      const double down = x[e], minus = c.loss();
      x[e] = saved;
      const double fd = (plus - minus) / (up - down);
      EXPECT_NEAR(g[e], fd, 2e-5 + 1e-4 * std::abs(fd)) << name << "[" << e << "] of " << c.score;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

TEST(ReferenceBufferGradient, RelativePositionTableWithCausalMaskGqaOddLengths) {
  // Sq = 5, Skv = 7: q_idx - kv_idx + 6 spans [0, 10].
  Case c = make_case("score + rel[h][q_idx - kv_idx + 6]", "q_idx + 2 >= kv_idx", {2, 4, 2, 5, 7, 8, 4},
                     {{"rel:f32:4x11", true, {}, {}}});
  expect_matches_finite_differences(c);
  // Diagonals no query can see (kv_idx > q_idx + 2, i.e. index < 4) get exactly nothing.
  const auto g = c.gradients().at("rel");
  for (int h = 0; h < 4; ++h)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(g[h * 11 + j], 0.0) << h << " " << j;
}

TEST(ReferenceBufferGradient, AlibiSlopesPerHead) {
  Case c = make_case("score + slope[h] * (kv_idx - q_idx)", "q_idx >= kv_idx", {2, 4, 1, 6, 6, 8, 8},
                     {{"slope:f32:4", true, {}, {}}});
  expect_matches_finite_differences(c);
}

TEST(ReferenceBufferGradient, ScalarGainReadingScore) {
  Case c = make_case("score * gain[0] + slope[h]", "", {1, 3, 3, 4, 5, 8, 8},
                     {{"gain:f32:1", true, {}, {}}, {"slope:f32:3", true, {}, {}}});
  expect_matches_finite_differences(c);
  // slope[h] shifts a whole row: softmax ignores it, so its gradient is zero (to rounding).
  const auto grads = c.gradients();
  for (double x : grads.at("slope")) EXPECT_NEAR(x, 0.0, 1e-14);
}

TEST(ReferenceBufferGradient, FullBiasPerScore) {
  Case c = make_case("score + bias[b][h][q_idx][kv_idx]", "kv_idx != 3 || q_idx == 0", {2, 2, 2, 3, 5, 8, 4},
                     {{"bias:f32:2x2x3x5", true, {}, {}}});
  expect_matches_finite_differences(c);
  // d(loss)/d(bias) = P * (dP - delta) for each score, whose sum along a row is zero.
  const auto g = c.gradients().at("bias");
  for (int row = 0; row < 2 * 2 * 3; ++row) {
    double sum = 0, norm = 0;
    for (int j = 0; j < 5; ++j) sum += g[row * 5 + j], norm += std::abs(g[row * 5 + j]);
    EXPECT_GT(norm, 0.0);
    EXPECT_NEAR(sum, 0.0, 1e-14);
    if (row % 3 != 0) {
      EXPECT_EQ(g[row * 5 + 3], 0.0);  // masked
    }
  }
}

TEST(ReferenceBufferGradient, BiasIndexedByADocumentIdOfTheKey) {
  Case c = make_case("score + dbias[doc[kv_idx]][h]", "q_idx >= kv_idx", {2, 2, 2, 7, 7, 8, 4},
                     {{"doc:i32:7", false, {}, {0, 0, 1, 1, 1, 2, 2}}, {"dbias:f32:3x2", true, {}, {}}});
  expect_matches_finite_differences(c);
}

TEST(ReferenceBufferGradient, BiasConstantAlongAQueryRowHasZeroGradient) {
  Case c = make_case("score + dbias[doc[q_idx]][h]", "q_idx >= kv_idx", {2, 2, 2, 7, 7, 8, 4},
                     {{"doc:i32:7", false, {}, {0, 0, 1, 1, 1, 2, 2}}, {"dbias:f32:3x2", true, {}, {}}});
  const auto grads = c.gradients();
  for (double x : grads.at("dbias")) EXPECT_NEAR(x, 0.0, 1e-14);
}

TEST(ReferenceBufferGradient, TwoBuffersThroughSoftcapAndFullyMaskedRows) {
  // Row 2 is fully masked: it contributes nothing.
  Case c = make_case("8.0 * tanh((score + rel[h][q_idx - kv_idx + 5]) / 8.0) + slope[h] * (kv_idx - q_idx)",
                     "q_idx != 2 && kv_idx <= q_idx + 1", {1, 2, 1, 6, 6, 8, 8},
                     {{"rel:f32:2x11", true, {}, {}}, {"slope:f32:2", true, {}, {}}});
  expect_matches_finite_differences(c);
}

TEST(ReferenceBufferGradient, TwoReadsOfOneBufferAddUp) {
  Case c = make_case("score + rel[h][q_idx - kv_idx + 5] * rel[h][kv_idx - q_idx + 5]", "", {1, 2, 2, 6, 6, 8, 8},
                     {{"rel:f32:2x11", true, {}, {}}});
  expect_matches_finite_differences(c);
}

TEST(ReferenceBufferGradient, NoLearnableBufferGivesNoGradients) {
  Case c = make_case("score + slope[h]", "", {1, 2, 2, 3, 3, 8, 8}, {{"slope:f32:2", false, {}, {}}});
  EXPECT_TRUE(c.gradients().empty());
}

}  // namespace
}  // namespace flexjit
