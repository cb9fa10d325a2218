#pragma once
// Runs work on a second stream concurrently with the caller's, ordered by events: the backward's
// dQ and dK/dV kernels both wait for the preprocess and nothing else, so they run side by side as
// FlexAttention's single grid does (the one's tail fills with the other's blocks), and the
// caller's stream waits for both before anything queued after the backward.
#include <memory>
#include <mutex>

#include "flexjit/device.hpp"

namespace flexjit::attention {

class StreamFork {
 public:
  // Records the fork on `stream` and makes the side stream wait for it. The side stream belongs to
  // the current context and `stream`; one caller at a time uses it (the lock is held until join).
  explicit StreamFork(Stream stream);
  // Joins if join() was not reached (an exception between fork and join), so the caller's stream
  // still waits for whatever the side stream was given.
  ~StreamFork();
  StreamFork(const StreamFork&) = delete;
  StreamFork& operator=(const StreamFork&) = delete;

  Stream side() const;
  // Makes the caller's stream wait for everything queued on the side stream since the fork.
  void join();

 private:
  struct Lane;
  static Lane* lane_for(void* context, Stream stream);
  Lane* lane_;
  Stream stream_;
  std::unique_lock<std::mutex> lock_;
  bool joined_ = false;
};

}  // namespace flexjit::attention
