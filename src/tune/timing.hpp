#pragma once
// GPU timing the way the peer benchmark does it (triton.testing.do_bench): warm up, then time each
// run with device events, flushing the L2 cache before every run so repeated runs over the same
// inputs do not measure the cache; report the median.
#include <functional>
#include <vector>

#include "flexjit/device.hpp"

namespace flexjit::tune {

struct TimingOptions {
  double warmup_ms = 25;   // time spent in untimed warm-up runs
  double repeat_ms = 100;  // time spent in timed runs
  int min_repeats = 5;
  int max_repeats = 1000;
  bool flush_l2 = true;    // write a 256 MiB scratch buffer before each timed run
};

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  int repeats = 0;
};

// Times `run` (which enqueues work on `stream`). Throws whatever `run` throws.
Timing time_on_gpu(const std::function<void(Stream)>& run, Stream stream = nullptr,
                   const TimingOptions& options = {});

}  // namespace flexjit::tune
