// A CUDA driver that runs nothing, for timing flexjit's host work per call without a GPU
// (tests/host_cost): loaded as libcuda.so.1 through LD_LIBRARY_PATH. It answers as one Hopper
// device (sm_90, 132 SMs, 227 KB of shared memory per block); "device" memory is host memory,
// copies act on it, and launches only count themselves (fake_cuda_launches()); every entry point
// counts its calls (fake_cuda_calls()), so that a host-cost run can say which driver work a call
// repeats. Kernels never run,
// so results are meaningless; the host path up to each launch is the real one. Memsets of more
// than 64 KB (scratch a real GPU clears asynchronously) are skipped and large allocations are
// left uninitialised, so that the host time measured is the library's, not the fake's; small
// ones (error words, counters the host reads back) are zeroed, as the library expects.
#include <cuda.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {
constexpr size_t kSmall = 64 << 10;
int launches = 0;
int context_storage = 0, module_storage = 0, function_storage = 0, stream_storage = 0, event_storage = 0;
thread_local CUcontext current = nullptr;

// Calls per entry point, registered by name on an entry point's first call.
struct CallCount {
  const char* entry;
  long calls;
};
constexpr int kMaxEntries = 96;
CallCount call_counts[kMaxEntries];
int entries = 0;
std::mutex entries_mutex;

long* call_counter(const char* entry) {
  std::lock_guard<std::mutex> lock(entries_mutex);
  if (entries == kMaxEntries) std::abort();  // more entry points than this fake defines
  call_counts[entries] = {entry, 0};
  return &call_counts[entries++].calls;
}

// Small allocations are zeroed (error words, counters the host reads back); large ones are left
// as they are, and large memsets skipped, so that the time measured is the library's.
CUresult allocate(CUdeviceptr* pointer, size_t bytes) {
  void* p = bytes <= kSmall ? std::calloc(bytes ? bytes : 1, 1) : std::malloc(bytes);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

void clear(CUdeviceptr pointer, unsigned char value, size_t bytes) {
  if (bytes <= kSmall) std::memset(reinterpret_cast<void*>(pointer), value, bytes);
}

}  // namespace

// Counts the enclosing entry point's call (its name is __func__).
#define FAKE_CUDA_COUNT_CALL()                                 \
  static long* const fake_cuda_calls_ = call_counter(__func__); \
  ++*fake_cuda_calls_

extern "C" {

// Not a driver entry point: how many kernels were "launched" so far.
int fake_cuda_launches() { return launches; }

// Not a driver entry point: the calls of each entry point called so far, as (name, count) pairs in
// the order of their first calls; returns how many there are (at most `capacity` are written).
int fake_cuda_calls(const char** names, long* counts, int capacity) {
  std::lock_guard<std::mutex> lock(entries_mutex);
  for (int i = 0; i < entries && i < capacity; ++i) names[i] = call_counts[i].entry, counts[i] = call_counts[i].calls;
  return entries;
}

CUresult CUDAAPI cuDriverGetVersion(int* version) { FAKE_CUDA_COUNT_CALL(); *version = 13000; return CUDA_SUCCESS; }
CUresult CUDAAPI cuInit(unsigned int /*flags*/) { FAKE_CUDA_COUNT_CALL(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuGetErrorName(CUresult error, const char** name) {
  FAKE_CUDA_COUNT_CALL();
  *name = error == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_NOT_SUPPORTED";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorString(CUresult error, const char** text) {
  FAKE_CUDA_COUNT_CALL();
  *text = error == CUDA_SUCCESS ? "no error" : "operation not supported by the fake driver";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  FAKE_CUDA_COUNT_CALL();
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetCount(int* count) { FAKE_CUDA_COUNT_CALL(); *count = 1; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGetName(char* name, int length, CUdevice /*device*/) {
  FAKE_CUDA_COUNT_CALL();
  std::strncpy(name, "fake sm_90 (tests/host_cost)", static_cast<size_t>(length));
  if (length > 0) name[length - 1] = '\0';
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice /*device*/) {
  FAKE_CUDA_COUNT_CALL();
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 232448; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    default: *value = 1;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice /*device*/) {
  FAKE_CUDA_COUNT_CALL();
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice /*device*/) {
  FAKE_CUDA_COUNT_CALL();
  *context = reinterpret_cast<CUcontext>(&context_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice /*device*/) { FAKE_CUDA_COUNT_CALL(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) {
  FAKE_CUDA_COUNT_CALL();
  *context = current;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) { FAKE_CUDA_COUNT_CALL(); current = context; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) { FAKE_CUDA_COUNT_CALL(); *device = 0; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxSynchronize() { FAKE_CUDA_COUNT_CALL(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) { FAKE_CUDA_COUNT_CALL(); current = context; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxPopCurrent(CUcontext* context) {
  FAKE_CUDA_COUNT_CALL();
  if (context) *context = current;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetApiVersion(CUcontext /*context*/, unsigned int* version) {
  FAKE_CUDA_COUNT_CALL();
  *version = 13000;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetId(CUcontext /*context*/, unsigned long long* id) {
  FAKE_CUDA_COUNT_CALL();
  *id = 1;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* /*image*/) {
  FAKE_CUDA_COUNT_CALL();
  *module = reinterpret_cast<CUmodule>(&module_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleUnload(CUmodule /*module*/) { FAKE_CUDA_COUNT_CALL(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule /*module*/, const char* /*name*/) {
  FAKE_CUDA_COUNT_CALL();
  *function = reinterpret_cast<CUfunction>(&function_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* pointer, size_t* bytes, CUmodule /*module*/, const char* /*name*/) {
  FAKE_CUDA_COUNT_CALL();
  static char global[4096];
  if (pointer) *pointer = reinterpret_cast<CUdeviceptr>(global);
  if (bytes) *bytes = sizeof(global);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction /*function*/) {
  FAKE_CUDA_COUNT_CALL();
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 128; break;
    default: *value = 0;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction /*function*/, CUfunction_attribute /*attribute*/, int /*value*/) {
  FAKE_CUDA_COUNT_CALL();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**) {
  FAKE_CUDA_COUNT_CALL();
  ++launches;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void**, void**) {
  FAKE_CUDA_COUNT_CALL();
  ++launches;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction, int, size_t smem) {
  FAKE_CUDA_COUNT_CALL();
  *blocks = smem > 116 * 1024 ? 1 : 2;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemAlloc(CUdeviceptr* pointer, size_t bytes) {
  FAKE_CUDA_COUNT_CALL();
  return allocate(pointer, bytes);
}
CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) {
  FAKE_CUDA_COUNT_CALL();
  std::free(reinterpret_cast<void*>(pointer));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* pointer, size_t bytes, CUstream /*stream*/) {
  FAKE_CUDA_COUNT_CALL();
  return allocate(pointer, bytes);
}
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr pointer, CUstream /*stream*/) {
  FAKE_CUDA_COUNT_CALL();
  std::free(reinterpret_cast<void*>(pointer));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr to, const void* from, size_t bytes) {
  FAKE_CUDA_COUNT_CALL();
  std::memcpy(reinterpret_cast<void*>(to), from, bytes);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoH(void* to, CUdeviceptr from, size_t bytes) {
  FAKE_CUDA_COUNT_CALL();
  std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr to, const void* from, size_t bytes, CUstream /*stream*/) {
  FAKE_CUDA_COUNT_CALL();
  std::memcpy(reinterpret_cast<void*>(to), from, bytes);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoHAsync(void* to, CUdeviceptr from, size_t bytes, CUstream /*stream*/) {
  FAKE_CUDA_COUNT_CALL();
  std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemsetD8(CUdeviceptr pointer, unsigned char value, size_t bytes) {
  FAKE_CUDA_COUNT_CALL();
  clear(pointer, value, bytes);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr pointer, unsigned char value, size_t bytes, CUstream /*stream*/) {
  FAKE_CUDA_COUNT_CALL();
  clear(pointer, value, bytes);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int /*flags*/) {
  FAKE_CUDA_COUNT_CALL();
  *stream = reinterpret_cast<CUstream>(&stream_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamDestroy(CUstream /*stream*/) { FAKE_CUDA_COUNT_CALL(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamSynchronize(CUstream /*stream*/) { FAKE_CUDA_COUNT_CALL(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamWaitEvent(CUstream /*stream*/, CUevent /*event*/, unsigned int /*flags*/) {
  FAKE_CUDA_COUNT_CALL();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int /*flags*/) {
  FAKE_CUDA_COUNT_CALL();
  *event = reinterpret_cast<CUevent>(&event_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventDestroy(CUevent /*event*/) { FAKE_CUDA_COUNT_CALL(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventRecord(CUevent /*event*/, CUstream /*stream*/) { FAKE_CUDA_COUNT_CALL(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventSynchronize(CUevent /*event*/) { FAKE_CUDA_COUNT_CALL(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent /*start*/, CUevent /*stop*/) {
  FAKE_CUDA_COUNT_CALL();
  *ms = 0.001f;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                        const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                        CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  FAKE_CUDA_COUNT_CALL();
  std::memset(map, 0, sizeof(*map));
  return CUDA_SUCCESS;
}

}  // extern "C"
