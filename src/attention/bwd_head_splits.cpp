#include "attention/bwd_head_splits.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "../../templates/flexjit_params.cuh"
#include "flexjit/error.hpp"

namespace flexjit::attention {
namespace {

// A CTA's fixed cost beside its walk (K and V loads, the first tile's latency, the epilogue), in
// query-tile steps.
constexpr double kCtaSteps = 2.0;
// Grids of this many waves or more at one CTA per group are left whole (their tails are short
// beside them), and no split makes more than kMaxWaves waves.
constexpr int64_t kWholeGroupWaves = 8, kMaxWaves = 64;
// A split must beat the whole group by this factor (the model is coarse).
constexpr double kMinGain = 1.05;
// The partial sums' scratch at the most (fp32 dK and dV of every split): splits that need more are
// not taken, so a long sequence on few heads does not ask for gigabytes.
constexpr double kMaxPartialBytes = 1024.0 * 1024 * 1024;

// The kernel's launch order: (kv tile, pair) of the i-th CTA started.
struct LaunchOrder {
  int64_t units, pairs, group_size;
  bool grouped;
  void at(int64_t linear, int64_t& n_tile, int64_t& pair) const {
    if (!grouped) {
      n_tile = linear % units, pair = linear / units;
      return;
    }
    const int64_t group = linear / (units * group_size);
    const int64_t in_group = std::min(group_size, pairs - group * group_size);
    const int64_t within = linear - group * units * group_size;
    n_tile = within / in_group, pair = group * group_size + within % in_group;
  }
};

}  // namespace

double estimate_bwd_head_split_time(const HeadSplitProblem& pr, int splits) {
  const int64_t units = std::max(pr.kv_tiles, 1), pairs = std::max<int64_t>(pr.pairs, 1) * splits;
  const int q_tiles = std::max(pr.q_tiles, 1);
  // Query tiles a kv tile walks per head: all of them, or under a mask causal's, from the kv
  // tile's diagonal on (the heaviest first), times its split's heads (as the kernel splits them:
  // counts that do not divide the group give splits one head apart).
  auto steps = [&](int64_t n_tile, int64_t pair) {
    const int64_t tiles = pr.masked ? std::max<int64_t>(1, q_tiles - n_tile * q_tiles / units) : q_tiles;
    const int split = static_cast<int>(pair % splits);
    const int span = flexjit_first_split_head(pr.group, splits, split + 1) - flexjit_first_split_head(pr.group, splits, split);
    return kCtaSteps + static_cast<double>(span * tiles);
  };
  const int64_t group_ctas = std::max(pr.launch_group_ctas, 0);
  LaunchOrder order{units, pairs, std::max<int64_t>(1, std::min(pairs, group_ctas / units)), group_ctas > 0};
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
  for (int i = 0; i < std::max(pr.sm_count, 1); ++i) free_at.push(0.0);
  double end = 0.0;
  for (int64_t linear = 0; linear < units * pairs; ++linear) {
    int64_t n_tile = 0, pair = 0;
    order.at(linear, n_tile, pair);
    const double start = free_at.top();
    free_at.pop();
    const double finish = start + steps(n_tile, pair);
    end = std::max(end, finish);
    free_at.push(finish);
  }
  if (splits > 1) {
    // The partial sums: written in fp32 (4 bytes a value where the whole group stores 2), read back
    // and written again as dK and dV by the sum kernel, at about 3 TB/s, plus its launch; one step
    // is a 64 x 128 tile of five GEMMs of about (D + Dv) / 2 columns on one SM at about 3.4
    // TFLOP/s (a 450 TFLOP/s backward over 132 SMs).
    const double values = static_cast<double>(pr.pairs) * pr.kv_len * pr.head_dims;
    const double bytes = values * (4.0 * splits * 2 + 2.0);
    const double sum_us = bytes / 3.0e6 + 3.0;
    const double step_us = 2.0 * 64 * 128 * 2.5 * pr.head_dims / 3.4e6;
    end += sum_us / step_us;
  }
  return end;
}

int choose_bwd_head_splits(const HeadSplitProblem& pr) {
  if (pr.group <= 1) return 1;
  const int64_t ctas = static_cast<int64_t>(std::max(pr.kv_tiles, 1)) * std::max<int64_t>(pr.pairs, 1);
  const int64_t sms = std::max(pr.sm_count, 1);
  if (ctas >= kWholeGroupWaves * sms) return 1;
  const double whole = estimate_bwd_head_split_time(pr, 1);
  int best = 1;
  double best_time = whole;
  for (int s = 2; s <= pr.group; ++s) {
    if (ctas * s > kMaxWaves * sms) continue;
    if (4.0 * static_cast<double>(pr.pairs) * pr.kv_len * pr.head_dims * s > kMaxPartialBytes) continue;
    const double t = estimate_bwd_head_split_time(pr, s);
    if (t < best_time) best = s, best_time = t;
  }
  return whole >= kMinGain * best_time ? best : 1;
}

int forced_bwd_head_splits(int group) {
  const char* text = std::getenv("FLEXJIT_BWD_HEAD_SPLITS");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1 || v > group)
    throw UsageError(std::string("FLEXJIT_BWD_HEAD_SPLITS='") + text + "' must be a whole number from 1 to this call's GQA group of " +
                     std::to_string(group) + " query head" + (group == 1 ? "" : "s") +
                     " per kv head (1 keeps the group in one CTA); unset it to let flexjit choose");
  return static_cast<int>(v);
}

}  // namespace flexjit::attention
