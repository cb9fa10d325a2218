// Issue 17 on the GPU: NaN scores propagate to NaN outputs, LSE and gradients instead of turning
// the row into a "fully masked" one (items 7), and a negative scale is honoured by the forward
// kernel's folded-scale path and the backward (item 6). Every result is compared with the float64
// CPU reference (NaN where the reference has NaN) on fresh random inputs, outputs poisoned first.
#include <gtest/gtest.h>

#include <cmath>

#include "flexjit/error.hpp"
#include "support/attention_harness.hpp"

namespace flexjit::test {
namespace {

FwdProblem nan_problem(const char* config) {
  FwdProblem p;
  p.B = 1;
  p.Hq = p.Hkv = 2;
  p.Sq = p.Skv = 200;  // a tail tile too
  p.D = p.Dv = 64;
  // Head 1: rows 3, 8, 13, ... have every score NaN; rows 1, 6, 11, ... only the score at kv 7.
  // Head 0 stays clean, so its K/V gradients must stay finite.
  p.score_mod =
      "where(h == 1 && q_idx % 5 == 3, sqrt(score - 1000.0), "
      "where(h == 1 && q_idx % 5 == 1 && kv_idx == 7, sqrt(score - 1000.0), score))";
  if (config) p.config = p.dq_config = p.dkdv_config = BlockConfig::parse(config);
  return p;
}

bool nan_row(int row, const FwdProblem& p) {
  const int h = (row / p.Sq) % p.Hq, q = row % p.Sq;
  return h == 1 && (q % 5 == 3 || q % 5 == 1);
}

class NanGpu : public ::testing::TestWithParam<const char*> {};

TEST_P(NanGpu, ForwardPropagatesNan) {
  FLEXJIT_REQUIRE_GPU();
  const FwdProblem p = nan_problem(GetParam());
  const FwdOutcome r = run_forward_check(p);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << "seed " << r.seed;  // NaN exactly where the reference has it
  EXPECT_LT(r.lse_error, tolerance(p.dtype)) << "seed " << r.seed;
  for (int row = 0; row < p.B * p.Hq * p.Sq; ++row) {
    const bool expect_nan = nan_row(row, p);
    ASSERT_EQ(std::isnan(r.ref_lse[row]), expect_nan) << "reference, row " << row;
    EXPECT_EQ(std::isnan(r.lse[row]), expect_nan) << "row " << row << " lse " << r.lse[row];
    for (int d = 0; d < p.Dv; ++d)
      ASSERT_EQ(std::isnan(r.out[size_t(row) * p.Dv + d]), expect_nan) << "row " << row << " d " << d;
  }
}

TEST_P(NanGpu, BackwardPropagatesNan) {
  FLEXJIT_REQUIRE_GPU();
  const FwdProblem p = nan_problem(GetParam());
  const BwdOutcome r = run_backward_check(p);
  EXPECT_LT(r.dq_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_LT(r.dk_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_LT(r.dv_error, tolerance(p.dtype)) << "seed " << r.seed;
  for (int row = 0; row < p.B * p.Hq * p.Sq; ++row)
    for (int d = 0; d < p.D; ++d)
      ASSERT_EQ(std::isnan(r.dq[size_t(row) * p.D + d]), nan_row(row, p)) << "dq row " << row << " d " << d;
  // Every key of head 1 meets the NaN rows; no key of head 0 does.
  for (size_t i = 0; i < r.dk.size(); ++i) {
    const bool head1 = (i / (size_t(p.Skv) * p.D)) % p.Hkv == 1;
    ASSERT_EQ(std::isnan(r.dk[i]), head1) << "dk " << i;
    ASSERT_EQ(std::isnan(r.dv[i]), head1) << "dv " << i;
  }
}

TEST_P(NanGpu, MaskedNanScoresDoNotLeak) {
  FLEXJIT_REQUIRE_GPU();
  FwdProblem p = nan_problem(GetParam());
  p.score_mod = "where(kv_idx == 7, sqrt(score - 1000.0), score)";
  p.mask_mod = "kv_idx != 7";
  const FwdOutcome r = run_forward_check(p);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << "seed " << r.seed;
  for (double x : r.out) ASSERT_TRUE(std::isfinite(x));
}

// Default (wgmma on Hopper) and the portable mma.sync configs.
INSTANTIATE_TEST_SUITE_P(Configs, NanGpu, ::testing::Values(nullptr, "m64n64w4s2"));

TEST(NegativeScaleGpu, HonouredForwardAndBackward) {
  FLEXJIT_REQUIRE_GPU();
  for (const char* score : {"score", "score + 0.01 * (kv_idx - q_idx)"}) {  // folded-scale and general paths
    for (const char* mask : {"", "q_idx >= kv_idx"}) {
      FwdProblem p;
      p.Sq = p.Skv = 300;
      p.D = p.Dv = 64;
      p.score_mod = score;
      p.mask_mod = mask;
      p.scale = -0.125f;
      const FwdOutcome f = run_forward_check(p);
      EXPECT_LT(f.out_error, tolerance(p.dtype)) << score << " | " << mask << ": seed " << f.seed;
      EXPECT_LT(f.lse_error, tolerance(p.dtype)) << score << " | " << mask << ": seed " << f.seed;
      const BwdOutcome b = run_backward_check(p);
      EXPECT_LT(b.dq_error, tolerance(p.dtype)) << score << " | " << mask << ": seed " << b.seed;
      EXPECT_LT(b.dk_error, tolerance(p.dtype)) << score << " | " << mask << ": seed " << b.seed;
      EXPECT_LT(b.dv_error, tolerance(p.dtype)) << score << " | " << mask << ": seed " << b.seed;
    }
  }
}

TEST(NegativeScaleGpu, ZeroNanAndInfinityAreRefused) {
  FLEXJIT_REQUIRE_GPU();
  for (float bad : {0.f, NAN, INFINITY}) {
    FwdProblem p;
    p.Sq = p.Skv = 64;
    p.D = p.Dv = 64;
    p.scale = bad;
    EXPECT_THROW(run_forward_check(p), UsageError) << bad;
  }
}

}  // namespace
}  // namespace flexjit::test
