// flexjit/device.hpp on top of the dynamically loaded driver.
#include "flexjit/device.hpp"

#include <utility>

#include "flexjit/error.hpp"
#include "jit/driver.hpp"

namespace flexjit {
namespace {

using jit::driver;

int attribute(CUdevice_attribute attr, CUdevice device) {
  int value = 0;
  FLEXJIT_CU(driver().cuDeviceGetAttribute(&value, attr, device));
  return value;
}

// Runs `fn` with `context` current on this thread, restoring the previous one. Used by
// destructors, which may run on a thread that never touched CUDA.
template <class Fn>
void with_context(CUcontext context, Fn&& fn) noexcept {
  const auto& d = driver();
  CUcontext current = nullptr;
  if (d.cuCtxGetCurrent(&current) != CUDA_SUCCESS) return;
  if (current == context || !context) {
    fn();
    return;
  }
  unsigned version = 0;  // a context destroyed by its owner took its allocations with it
  if (d.cuCtxGetApiVersion(context, &version) != CUDA_SUCCESS) return;
  if (d.cuCtxPushCurrent(context) != CUDA_SUCCESS) return;
  fn();
  CUcontext popped = nullptr;
  d.cuCtxPopCurrent(&popped);
}

}  // namespace

std::string DeviceInfo::default_arch() const {
  std::string arch = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  if (cc_major >= 9) arch += "a";
  return arch;
}

DeviceInfo current_device() {
  const auto& d = driver();
  jit::ensure_initialized();
  CUcontext current = nullptr;
  FLEXJIT_CU(d.cuCtxGetCurrent(&current));
  CUdevice device = 0;
  DeviceInfo info;
  if (current) {
    FLEXJIT_CU(d.cuCtxGetDevice(&device));
    info.ordinal = static_cast<int>(device);
  } else {
    info.ordinal = jit::requested_device_ordinal();
    int count = 0;
    FLEXJIT_CU(d.cuDeviceGetCount(&count));
    if (info.ordinal >= count)
      throw UsageError("FLEXJIT_DEVICE=" + std::to_string(info.ordinal) +
                       ", but this machine has " + std::to_string(count) + " CUDA device" +
                       (count == 1 ? "" : "s"));
    FLEXJIT_CU(d.cuDeviceGet(&device, info.ordinal));
  }
  char name[256] = {};
  FLEXJIT_CU(d.cuDeviceGetName(name, static_cast<int>(sizeof name) - 1, device));
  info.name = name;
  info.cc_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  info.cc_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  info.sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  size_t total = 0;
  FLEXJIT_CU(d.cuDeviceTotalMem(&total, device));
  info.total_memory = total;
  info.max_smem_per_block_optin =
      static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device));
  info.l2_bytes = static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device));
  info.driver_version = d.version;
  return info;
}

bool gpu_available(std::string* reason) {
  if (!jit::driver_available(reason)) return false;
  try {
    jit::ensure_initialized();
    int count = 0;
    FLEXJIT_CU(driver().cuDeviceGetCount(&count));
    if (count == 0) {
      if (reason) *reason = "the CUDA driver is installed but reports no device";
      return false;
    }
    return true;
  } catch (const Error& e) {
    if (reason) *reason = e.what();
    return false;
  }
}

void synchronize(Stream stream) {
  jit::ensure_context();
  if (stream)
    FLEXJIT_CU(driver().cuStreamSynchronize(stream));
  else
    FLEXJIT_CU(driver().cuCtxSynchronize());
}

// ---- DeviceBuffer ----

DeviceBuffer DeviceBuffer::allocate(size_t bytes) {
  CUcontext context = jit::ensure_context();
  if (bytes == 0) return DeviceBuffer(nullptr, 0, context);
  CUdeviceptr ptr = 0;
  const CUresult rc = driver().cuMemAlloc(&ptr, bytes);
  if (rc != CUDA_SUCCESS)
    jit::throw_driver_error(rc, "cuMemAlloc of " + std::to_string(bytes) + " bytes", __FILE__,
                            __LINE__);
  return DeviceBuffer(reinterpret_cast<void*>(ptr), bytes, context);
}

DeviceBuffer DeviceBuffer::borrow(void* data, size_t bytes) noexcept {
  DeviceBuffer buffer(data, bytes, nullptr);
  buffer.owned_ = false;
  return buffer;
}

void DeviceBuffer::release() noexcept {
  if (!data_) return;
  void* data = std::exchange(data_, nullptr);
  bytes_ = 0;
  if (!std::exchange(owned_, true)) return;  // borrowed: its owner frees it
  if (!jit::driver_available()) return;
  // Failures here (driver shut down at exit, context destroyed by its owner) leave nothing to
  // free, and a destructor must not throw.
  with_context(context_, [&] { driver().cuMemFree(reinterpret_cast<CUdeviceptr>(data)); });
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      context_(std::exchange(other.context_, nullptr)),
      owned_(std::exchange(other.owned_, true)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    context_ = std::exchange(other.context_, nullptr);
    owned_ = std::exchange(other.owned_, true);
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, size_t bytes) {
  if (bytes > bytes_)
    throw UsageError("DeviceBuffer::upload of " + std::to_string(bytes) +
                     " bytes into a buffer of " + std::to_string(bytes_) + " bytes");
  if (bytes == 0) return;
  jit::ensure_context();
  FLEXJIT_CU(driver().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(data_), host, bytes));
}

void DeviceBuffer::download(void* host, size_t bytes) const {
  if (bytes > bytes_)
    throw UsageError("DeviceBuffer::download of " + std::to_string(bytes) +
                     " bytes from a buffer of " + std::to_string(bytes_) + " bytes");
  if (bytes == 0) return;
  jit::ensure_context();
  FLEXJIT_CU(driver().cuMemcpyDtoH(host, reinterpret_cast<CUdeviceptr>(data_), bytes));
}

void DeviceBuffer::fill_bytes(unsigned char value) {
  if (bytes_ == 0) return;
  jit::ensure_context();
  FLEXJIT_CU(driver().cuMemsetD8(reinterpret_cast<CUdeviceptr>(data_), value, bytes_));
  // cuMemsetD8 may return before the memory is set; callers poison and then launch on any
  // stream, so make the fill visible to all of them.
  FLEXJIT_CU(driver().cuCtxSynchronize());
}

// ---- EventTimer ----

void EventTimer::release() noexcept {
  if (!start_ && !stop_) return;
  if (jit::driver_available()) {
    if (start_) driver().cuEventDestroy(start_);
    if (stop_) driver().cuEventDestroy(stop_);
  }
  start_ = stop_ = nullptr;
  started_ = stopped_ = false;
}

EventTimer::~EventTimer() { release(); }

EventTimer::EventTimer(EventTimer&& other) noexcept
    : start_(std::exchange(other.start_, nullptr)),
      stop_(std::exchange(other.stop_, nullptr)),
      started_(std::exchange(other.started_, false)),
      stopped_(std::exchange(other.stopped_, false)) {}

EventTimer& EventTimer::operator=(EventTimer&& other) noexcept {
  if (this != &other) {
    release();
    start_ = std::exchange(other.start_, nullptr);
    stop_ = std::exchange(other.stop_, nullptr);
    started_ = std::exchange(other.started_, false);
    stopped_ = std::exchange(other.stopped_, false);
  }
  return *this;
}

void EventTimer::start(Stream stream) {
  jit::ensure_context();
  if (!start_) FLEXJIT_CU(driver().cuEventCreate(&start_, CU_EVENT_DEFAULT));
  if (!stop_) FLEXJIT_CU(driver().cuEventCreate(&stop_, CU_EVENT_DEFAULT));
  FLEXJIT_CU(driver().cuEventRecord(start_, stream));
  started_ = true;
  stopped_ = false;
}

void EventTimer::stop(Stream stream) {
  if (!started_) throw UsageError("EventTimer::stop() called before start()");
  jit::ensure_context();
  FLEXJIT_CU(driver().cuEventRecord(stop_, stream));
  stopped_ = true;
}

float EventTimer::milliseconds() const {
  if (!started_ || !stopped_)
    throw UsageError("EventTimer::milliseconds() called before start() and stop()");
  jit::ensure_context();
  FLEXJIT_CU(driver().cuEventSynchronize(stop_));
  float ms = 0;
  FLEXJIT_CU(driver().cuEventElapsedTime(&ms, start_, stop_));
  return ms;
}

}  // namespace flexjit
