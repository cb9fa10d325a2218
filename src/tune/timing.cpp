#include "tune/timing.hpp"

#include <algorithm>
#include <cmath>

#include "jit/driver.hpp"

namespace flexjit::tune {

namespace {

// The L2 flush buffer: large enough to evict any current GPU's L2 (50-60 MB on H100/H200).
DeviceBuffer& flush_buffer() {
  static DeviceBuffer buffer = DeviceBuffer::allocate(size_t(256) << 20);
  return buffer;
}

void flush_l2(Stream stream) {
  DeviceBuffer& b = flush_buffer();
  FLEXJIT_CU(jit::driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(b.data()), 0, b.bytes(), stream));
}

}  // namespace

Timing time_on_gpu(const std::function<void(Stream)>& run, Stream stream, const TimingOptions& options) {
  // Estimate one run's time to size the warm-up and repeat counts.
  run(stream);
  synchronize(stream);
  EventTimer estimate;
  estimate.start(stream);
  for (int i = 0; i < 5; ++i) {
    if (options.flush_l2) flush_l2(stream);
    run(stream);
  }
  estimate.stop(stream);
  const double per_run = std::max(1e-3, estimate.milliseconds() / 5.0);
  const int warmup = std::max(1, static_cast<int>(options.warmup_ms / per_run));
  const int repeats = std::clamp(static_cast<int>(options.repeat_ms / per_run), options.min_repeats, options.max_repeats);
  for (int i = 0; i < warmup; ++i) run(stream);
  std::vector<EventTimer> timers(repeats);
  for (int i = 0; i < repeats; ++i) {
    if (options.flush_l2) flush_l2(stream);
    timers[i].start(stream);
    run(stream);
    timers[i].stop(stream);
  }
  std::vector<double> times;
  times.reserve(repeats);
  for (auto& t : timers) times.push_back(t.milliseconds());
  std::sort(times.begin(), times.end());
  Timing out;
  out.repeats = repeats;
  out.min_ms = times.front();
  out.median_ms = repeats % 2 ? times[repeats / 2] : 0.5 * (times[repeats / 2 - 1] + times[repeats / 2]);
  return out;
}

}  // namespace flexjit::tune
