#pragma once
// Runs independent tasks on a few threads (CPU reference attention, parallel NVRTC compiles).
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace flexjit {

// Calls fn(i) for every i in [0, n) on up to `workers` threads (0: one per hardware thread).
// Rethrows the first exception after all threads stop; later tasks are skipped after one fails.
template <class Fn>
void parallel_for(size_t n, size_t workers, Fn&& fn) {
  if (workers == 0) workers = std::max(1u, std::thread::hardware_concurrency());
  workers = std::max<size_t>(1, std::min(workers, n));
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace flexjit
