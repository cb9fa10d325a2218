// A CUDA driver that runs nothing, for timing flexjit's host work per call without a GPU
// (tests/host_cost): loaded as libcuda.so.1 through LD_LIBRARY_PATH. It answers as one Hopper
// device (sm_90, 132 SMs, 227 KB of shared memory per block); "device" memory is host memory,
// copies act on it, and launches only count themselves (fake_cuda_launches()). Kernels never run,
// so results are meaningless; the host path up to each launch is the real one. Memsets of more
// than 64 KB (scratch a real GPU clears asynchronously) are skipped and large allocations are
// left uninitialised, so that the host time measured is the library's, not the fake's; small
// ones (error words, counters the host reads back) are zeroed, as the library expects.
#include <cuda.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
constexpr size_t kSmall = 64 << 10;
int launches = 0;
int context_storage = 0, module_storage = 0, function_storage = 0, stream_storage = 0, event_storage = 0;
thread_local CUcontext current = nullptr;

}  // namespace

extern "C" {

// Not a driver entry point: how many kernels were "launched" so far.
int fake_cuda_launches() { return launches; }

CUresult CUDAAPI cuDriverGetVersion(int* version) { *version = 13000; return CUDA_SUCCESS; }
CUresult CUDAAPI cuInit(unsigned int /*flags*/) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuGetErrorName(CUresult error, const char** name) {
  *name = error == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_NOT_SUPPORTED";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorString(CUresult error, const char** text) {
  *text = error == CUDA_SUCCESS ? "no error" : "operation not supported by the fake driver";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetCount(int* count) { *count = 1; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGetName(char* name, int length, CUdevice /*device*/) {
  std::strncpy(name, "fake sm_90 (tests/host_cost)", static_cast<size_t>(length));
  if (length > 0) name[length - 1] = '\0';
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice /*device*/) {
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
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice /*device*/) {
  *context = reinterpret_cast<CUcontext>(&context_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice /*device*/) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) { *context = current; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) { current = context; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) { *device = 0; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxSynchronize() { return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) { current = context; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxPopCurrent(CUcontext* context) {
  if (context) *context = current;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetApiVersion(CUcontext /*context*/, unsigned int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetId(CUcontext /*context*/, unsigned long long* id) {
  *id = 1;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* /*image*/) {
  *module = reinterpret_cast<CUmodule>(&module_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleUnload(CUmodule /*module*/) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule /*module*/, const char* /*name*/) {
  *function = reinterpret_cast<CUfunction>(&function_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* pointer, size_t* bytes, CUmodule /*module*/, const char* /*name*/) {
  static char global[4096];
  if (pointer) *pointer = reinterpret_cast<CUdeviceptr>(global);
  if (bytes) *bytes = sizeof(global);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction /*function*/) {
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 128; break;
    default: *value = 0;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction /*function*/, CUfunction_attribute /*attribute*/, int /*value*/) {
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**) {
  ++launches;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void**, void**) {
  ++launches;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction, int, size_t smem) {
  *blocks = smem > 116 * 1024 ? 1 : 2;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemAlloc(CUdeviceptr* pointer, size_t bytes) {
  void* p = bytes <= kSmall ? std::calloc(bytes ? bytes : 1, 1) : std::malloc(bytes);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) { std::free(reinterpret_cast<void*>(pointer)); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* pointer, size_t bytes, CUstream /*stream*/) {
  return cuMemAlloc(pointer, bytes);
}
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr pointer, CUstream /*stream*/) { return cuMemFree(pointer); }
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr to, const void* from, size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(to), from, bytes);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoH(void* to, CUdeviceptr from, size_t bytes) {
  std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr to, const void* from, size_t bytes, CUstream /*stream*/) {
  return cuMemcpyHtoD(to, from, bytes);
}
CUresult CUDAAPI cuMemcpyDtoHAsync(void* to, CUdeviceptr from, size_t bytes, CUstream /*stream*/) {
  return cuMemcpyDtoH(to, from, bytes);
}
CUresult CUDAAPI cuMemsetD8(CUdeviceptr pointer, unsigned char value, size_t bytes) {
  if (bytes <= kSmall) std::memset(reinterpret_cast<void*>(pointer), value, bytes);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr pointer, unsigned char value, size_t bytes, CUstream /*stream*/) {
  return cuMemsetD8(pointer, value, bytes);
}
CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int /*flags*/) {
  *stream = reinterpret_cast<CUstream>(&stream_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamDestroy(CUstream /*stream*/) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamSynchronize(CUstream /*stream*/) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamWaitEvent(CUstream /*stream*/, CUevent /*event*/, unsigned int /*flags*/) {
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int /*flags*/) {
  *event = reinterpret_cast<CUevent>(&event_storage);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventDestroy(CUevent /*event*/) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventRecord(CUevent /*event*/, CUstream /*stream*/) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventSynchronize(CUevent /*event*/) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent /*start*/, CUevent /*stop*/) {
  *ms = 0.001f;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                        const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                        CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  std::memset(map, 0, sizeof(*map));
  return CUDA_SUCCESS;
}

}  // extern "C"
