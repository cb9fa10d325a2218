#pragma once
/// \file
/// The GPU as flexjit sees it: which device runs the kernels, device memory, synchronisation and
/// event timing. flexjit talks to the CUDA driver (loaded at run time, never linked), in the
/// caller's current CUDA context when there is one, else in the primary context of device
/// `$FLEXJIT_DEVICE` (default 0). Everything here needs a GPU and throws DriverError without one;
/// gpu_available() tells beforehand.

#include <cstddef>
#include <string>
#include <vector>

// Opaque driver handles, declared exactly as <cuda.h> declares them so that a CUstream or
// cudaStream_t converts to flexjit::Stream without a cast.
struct CUstream_st;
struct CUctx_st;
struct CUevent_st;

namespace flexjit {

/// A CUDA stream (`CUstream` / `cudaStream_t`); nullptr is the legacy default stream.
using Stream = CUstream_st*;

/// What flexjit needs to know about a GPU.
struct DeviceInfo {
  int ordinal = 0;                      ///< CUDA device ordinal
  std::string name;                     ///< e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0;                     ///< compute capability, major
  int cc_minor = 0;                     ///< compute capability, minor
  int sm_count = 0;                     ///< streaming multiprocessors
  size_t total_memory = 0;              ///< bytes of device memory
  size_t max_smem_per_block_optin = 0;  ///< bytes of shared memory a block may opt in to
  size_t l2_bytes = 0;                  ///< bytes of L2 cache
  int driver_version = 0;               ///< CUDA version of the driver, e.g. 13000 for 13.0
  /// The NVRTC target for this device: "sm_<major><minor>", with the "a" suffix from compute
  /// capability 9.0 on (arch-specific features such as wgmma): "sm_80", "sm_86", "sm_90a",
  /// "sm_100a", "sm_120a".
  std::string default_arch() const;
};

/// The device flexjit runs on from this thread (the current context's device, else
/// `$FLEXJIT_DEVICE`). Does not create a context. Throws DriverError without a GPU.
DeviceInfo current_device();

/// True when the CUDA driver loads and reports at least one device. Otherwise false, with the
/// reason in `reason` (when non-null), e.g. "no CUDA driver found (libcuda.so.1): ...".
bool gpu_available(std::string* reason = nullptr);

/// Blocks until `stream` is idle; with nullptr, until all work in flexjit's context is done.
void synchronize(Stream stream = nullptr);

/// Device memory owned by the object (cuMemAlloc / cuMemFree). Movable, not copyable. Copies are
/// synchronous; they fail with UsageError when they would run past the end of the buffer.
class DeviceBuffer {
 public:
  /// An empty buffer (data() == nullptr, bytes() == 0).
  DeviceBuffer() noexcept = default;
  /// Allocates `bytes` bytes of uninitialised device memory (0 bytes gives an empty buffer).
  static DeviceBuffer allocate(size_t bytes);
  /// A buffer over `bytes` bytes of device memory at `data` that someone else owns: it is never
  /// freed here, so the owner keeps it alive as long as this buffer (or what it was given to) is used.
  static DeviceBuffer borrow(void* data, size_t bytes) noexcept;
  /// A buffer holding a copy of `values`.
  template <class T>
  static DeviceBuffer from_host(const std::vector<T>& values) {
    DeviceBuffer buffer = allocate(values.size() * sizeof(T));
    buffer.upload(values.data(), values.size() * sizeof(T));
    return buffer;
  }
  /// Frees the memory unless it is borrowed (errors at process teardown are ignored).
  ~DeviceBuffer();
  /// Takes over `other`'s memory; `other` becomes empty.
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  /// Frees this buffer's memory and takes over `other`'s.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  /// Not copyable: one owner frees the memory.
  DeviceBuffer(const DeviceBuffer&) = delete;
  /// Not copyable: one owner frees the memory.
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  /// Device address of the first byte (pass `&ptr` in a kernel's argument array).
  void* data() const noexcept { return data_; }
  /// Size in bytes.
  size_t bytes() const noexcept { return bytes_; }
  /// Copies `bytes` bytes from host memory to the start of the buffer.
  void upload(const void* host, size_t bytes);
  /// Copies the first `bytes` bytes of the buffer to host memory.
  void download(void* host, size_t bytes) const;
  /// The first `count` elements as a host vector (all of them when `count` is omitted).
  template <class T>
  std::vector<T> to_host(size_t count = static_cast<size_t>(-1)) const {
    if (count == static_cast<size_t>(-1)) count = bytes_ / sizeof(T);
    std::vector<T> out(count);
    download(out.data(), count * sizeof(T));
    return out;
  }
  /// Sets every byte to `value`, e.g. to poison an output before a kernel writes it.
  void fill_bytes(unsigned char value);

 private:
  DeviceBuffer(void* data, size_t bytes, CUctx_st* context) noexcept
      : data_(data), bytes_(bytes), context_(context) {}
  void release() noexcept;

  void* data_ = nullptr;
  size_t bytes_ = 0;
  CUctx_st* context_ = nullptr;
  bool owned_ = true;  // false for borrow(): the owner frees the memory
};

/// Times GPU work between two points of a stream with CUDA events:
/// `timer.start(s); launch(...); timer.stop(s); float ms = timer.milliseconds();`.
/// Reusable: start/stop again for the next measurement.
class EventTimer {
 public:
  /// No events are created until the first start().
  EventTimer() noexcept = default;
  /// Destroys the events.
  ~EventTimer();
  /// Takes over `other`'s events.
  EventTimer(EventTimer&& other) noexcept;
  /// Destroys this timer's events and takes over `other`'s.
  EventTimer& operator=(EventTimer&& other) noexcept;
  /// Not copyable: one owner destroys the events.
  EventTimer(const EventTimer&) = delete;
  /// Not copyable: one owner destroys the events.
  EventTimer& operator=(const EventTimer&) = delete;

  /// Records the start event on `stream`.
  void start(Stream stream = nullptr);
  /// Records the stop event on `stream`.
  void stop(Stream stream = nullptr);
  /// Waits for the stop event and returns the time between start and stop in milliseconds.
  /// Throws UsageError unless start() and stop() were called.
  float milliseconds() const;

 private:
  void release() noexcept;

  CUevent_st* start_ = nullptr;
  CUevent_st* stop_ = nullptr;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace flexjit
