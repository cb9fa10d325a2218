// The fast backward's split of GQA groups over dK/dV CTAs (attention/bwd_head_splits.hpp), on the
// CPU: the choices for grids whose CTAs are few or long, and the knob's errors.
#include <gtest/gtest.h>

#include <string>

#include "attention/bwd_head_splits.hpp"
#include "flexjit/error.hpp"
#include "support/scoped.hpp"

namespace flexjit::attention {
namespace {

HeadSplitProblem problem(int kv_tiles, int64_t pairs, int group, int q_tiles, bool masked, int kv_len) {
  HeadSplitProblem p;
  p.kv_tiles = kv_tiles, p.pairs = pairs, p.group = group, p.q_tiles = q_tiles, p.masked = masked;
  p.sm_count = 132, p.kv_len = kv_len, p.head_dims = 256;
  p.launch_group_ctas = masked ? 128 : 0;  // the kernel's groups under causal-like masks
  return p;
}

TEST(BwdHeadSplits, WholeGroupsWithoutGqaOrWithManyCtas) {
  EXPECT_EQ(choose_bwd_head_splits(problem(64, 1, 1, 128, true, 8192)), 1);
  // B=4, 8 kv heads, 8192 keys: 2048 CTAs, more than eight waves of 132.
  EXPECT_EQ(choose_bwd_head_splits(problem(64, 32, 8, 128, true, 8192)), 1);
  // The suite's GQA 4:1 causal (B=2, 8 kv heads, 4096 keys): 512 CTAs whose walks the
  // heavy-first groups already spread; a split only adds partial sums.
  EXPECT_EQ(choose_bwd_head_splits(problem(32, 16, 4, 64, true, 4096)), 1);
}

TEST(BwdHeadSplits, FewKvHeadsSplitTheirGroups) {
  // A tensor-parallel shard: one kv head of 8 query heads, B=1, 8192 keys. 64 CTAs of up to 8 x 128
  // query tiles leave half the SMs idle; four splits make 256 CTAs of at most 2 x 128 tiles, two
  // waves whose causal walks end together, and eight add partial sums for no shorter end.
  EXPECT_EQ(choose_bwd_head_splits(problem(64, 1, 8, 128, true, 8192)), 4);
  // Without a mask every walk is 8 x 128 tiles: two splits fill the GPU in one wave (128 CTAs),
  // four make two waves of the same total length.
  EXPECT_EQ(choose_bwd_head_splits(problem(64, 1, 8, 128, false, 8192)), 2);
  // GQA 6:1, B=2, 8 kv heads, 3000 keys: 384 CTAs, but the last group of pairs starts its
  // heaviest walks (6 x 47 tiles) when the others are nearly done; three splits cut them to 2 x 47.
  EXPECT_EQ(choose_bwd_head_splits(problem(24, 16, 6, 47, true, 3000)), 3);
  // GQA 7:1 over 2 kv heads, B=3, 1500 keys: 72 CTAs. Three splits of 2, 2 and 3 heads make 216
  // CTAs of at most 3 x 24 query tiles (all seven made 504 CTAs, each paying its fixed cost for
  // one head, and seven partial sums).
  EXPECT_EQ(choose_bwd_head_splits(problem(12, 6, 7, 24, true, 1500)), 3);
  // One kv head of 8, 1024 keys: 8 CTAs; eight splits make 64 CTAs of one head each.
  EXPECT_EQ(choose_bwd_head_splits(problem(8, 1, 8, 16, true, 1024)), 8);
}

TEST(BwdHeadSplits, PartialSumsStayWithinOneGibibyte) {
  // 8 CTAs of one kv head of 8, 1024 keys: eight splits are the fastest (FewKvHeadsSplitTheirGroups'
  // last row, the same with four times the columns). With rows of 65536 columns (a made-up width:
  // the model scales work and traffic alike) a split's fp32 partials are 1024 x 65536 x 4 bytes =
  // 256 MiB: four splits fill the 1 GiB the scratch may take, eight would need 2 GiB.
  HeadSplitProblem p = problem(8, 1, 8, 16, true, 1024);
  EXPECT_EQ(choose_bwd_head_splits(p), 8);
  p.head_dims = 65536;
  EXPECT_EQ(choose_bwd_head_splits(p), 4);
}

TEST(BwdHeadSplits, EstimateCountsTheLongestWalkAndThePartialSums) {
  // One pair, one kv tile, one head: one CTA walks 10 query tiles plus its fixed 2.
  EXPECT_DOUBLE_EQ(estimate_bwd_head_split_time(problem(1, 1, 1, 10, false, 128), 1), 12.0);
  // Two splits of a group of 2 run side by side (1 + 2 each), then the sums: 128 keys x 256
  // columns x (8 x 2 + 2) bytes at 3 bytes a nanosecond plus a 3 us launch, over a step of
  // 2 x 64 x 128 x 2.5 x 256 flops at 3.4 flops a picosecond.
  const double sum_us = 128.0 * 256 * 18 / 3.0e6 + 3.0, step_us = 2.0 * 64 * 128 * 2.5 * 256 / 3.4e6;
  EXPECT_NEAR(estimate_bwd_head_split_time(problem(1, 1, 2, 10, false, 128), 2), 12.0 + sum_us / step_us, 1e-9);
  // Two splits of a group of 3: heads 0 and 1..2, so the longer CTA walks 2 x 10 tiles plus its 2.
  EXPECT_NEAR(estimate_bwd_head_split_time(problem(1, 1, 3, 10, false, 128), 2), 22.0 + sum_us / step_us, 1e-9);
}

TEST(BwdHeadSplits, EstimateFollowsTheKernelsLaunchOrder) {
  // Three kv tiles of two pairs on two SMs, causal walks of 6, 4 and 2 query tiles plus 2 each.
  HeadSplitProblem p = problem(3, 2, 1, 6, true, 384);
  p.sm_count = 2;
  // Plain order (pair 0's tiles, then pair 1's): 8 | 6, 4 after the 6, pair 1's 8 after the first
  // 8, its 6 at 10 on the other SM, and its 4 starts at 16.
  p.launch_group_ctas = 0;
  EXPECT_DOUBLE_EQ(estimate_bwd_head_split_time(p, 1), 20.0);
  // One group of both pairs, kv tile slowest: 8 | 8, 6 | 6, 4 | 4.
  p.launch_group_ctas = 128;
  EXPECT_DOUBLE_EQ(estimate_bwd_head_split_time(p, 1), 18.0);
}

TEST(BwdHeadSplits, TheKnobRunsFromOneToTheGroup) {
  {
    const test::ScopedEnv unset("FLEXJIT_BWD_HEAD_SPLITS", nullptr);
    EXPECT_EQ(forced_bwd_head_splits(8), 0);
  }
  {
    const test::ScopedEnv four("FLEXJIT_BWD_HEAD_SPLITS", "4");
    EXPECT_EQ(forced_bwd_head_splits(8), 4);
  }
  {
    // Counts that do not divide the group split it into parts one head apart.
    const test::ScopedEnv three("FLEXJIT_BWD_HEAD_SPLITS", "3");
    EXPECT_EQ(forced_bwd_head_splits(8), 3);
  }
  for (const char* bad : {"9", "0", "-2", "x", "2x"}) {
    const test::ScopedEnv knob("FLEXJIT_BWD_HEAD_SPLITS", bad);
    try {
      forced_bwd_head_splits(8);
      ADD_FAILURE() << bad << " was taken";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("FLEXJIT_BWD_HEAD_SPLITS='") + bad +
                                           "' must be a whole number from 1 to this call's GQA group of 8 query heads "
                                           "per kv head (1 keeps the group in one CTA); unset it to let flexjit choose");
    }
  }
  const test::ScopedEnv two("FLEXJIT_BWD_HEAD_SPLITS", "2");
  EXPECT_THROW(forced_bwd_head_splits(1), UsageError);
}

}  // namespace
}  // namespace flexjit::attention
