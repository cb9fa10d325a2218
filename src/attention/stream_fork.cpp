#include "attention/stream_fork.hpp"

#include <map>
#include <utility>

#include "jit/driver.hpp"

namespace flexjit::attention {

// One side stream and its two events per (context, caller's stream), kept for the life of the
// process: creating them per call would cost more than the overlap gains on small problems.
struct StreamFork::Lane {
  std::mutex mutex;
  CUstream side = nullptr;
  CUevent forked = nullptr;
  CUevent joined = nullptr;
};

StreamFork::Lane* StreamFork::lane_for(void* context, Stream stream) {
  static std::mutex mutex;
  static std::map<std::pair<void*, Stream>, std::unique_ptr<Lane>> lanes;
  std::lock_guard<std::mutex> lock(mutex);
  auto& lane = lanes[{context, stream}];
  if (!lane) {
    auto fresh = std::make_unique<Lane>();
    const jit::Driver& d = jit::driver();
    // Non-blocking: the legacy default stream must not serialise with it behind our back; the
    // events give the only ordering there is.
    FLEXJIT_CU(d.cuStreamCreate(&fresh->side, CU_STREAM_NON_BLOCKING));
    FLEXJIT_CU(d.cuEventCreate(&fresh->forked, CU_EVENT_DISABLE_TIMING));
    FLEXJIT_CU(d.cuEventCreate(&fresh->joined, CU_EVENT_DISABLE_TIMING));
    lane = std::move(fresh);
  }
  return lane.get();
}

StreamFork::StreamFork(Stream stream)
    : lane_(lane_for(jit::ensure_context(), stream)), stream_(stream), lock_(lane_->mutex) {
  const jit::Driver& d = jit::driver();
  FLEXJIT_CU(d.cuEventRecord(lane_->forked, stream_));
  FLEXJIT_CU(d.cuStreamWaitEvent(lane_->side, lane_->forked, 0));
}

StreamFork::~StreamFork() {
  if (joined_) return;
  const jit::Driver& d = jit::driver();
  // Best effort on the error path: the exception already in flight says what went wrong.
  if (d.cuEventRecord(lane_->joined, lane_->side) == CUDA_SUCCESS) d.cuStreamWaitEvent(stream_, lane_->joined, 0);
}

Stream StreamFork::side() const { return lane_->side; }

void StreamFork::join() {
  const jit::Driver& d = jit::driver();
  joined_ = true;  // whatever happens below, the destructor must not record again
  FLEXJIT_CU(d.cuEventRecord(lane_->joined, lane_->side));
  FLEXJIT_CU(d.cuStreamWaitEvent(stream_, lane_->joined, 0));
}

}  // namespace flexjit::attention
