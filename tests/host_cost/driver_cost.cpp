// What the CUDA driver's entry points that flexjit calls per attention call cost on the host, on a
// real GPU: launches (small and large parameter blocks), the stream-ordered allocation and free of a
// scratch buffer, the occupancy query, the dynamic shared memory attribute, the context query and
// a TMA descriptor's encoding. Together with the fake driver's count of calls per entry point
// (flexjit_host_cost prints it), this says which driver work a call could stop repeating.
//
//   build/tests/host_cost/flexjit_driver_cost [--calls N]   (a GPU and the real libcuda.so.1)
//
// Prints one JSON line per entry point: {"entry", "us_per_call"} (median of five rounds).
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

void* driver_library() {
  static void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "flexjit_driver_cost: cannot open libcuda.so.1 (%s): run it on a machine with a GPU\n",
                 dlerror());
    std::exit(2);
  }
  return handle;
}

template <typename F>
F entry(const char* name) {
  void* symbol = dlsym(driver_library(), name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "flexjit_driver_cost: libcuda.so.1 has no %s\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(symbol);
}

void check(CUresult rc, const char* what) {
  if (rc != CUDA_SUCCESS) {
    std::fprintf(stderr, "flexjit_driver_cost: %s failed with CUresult %d\n", what, static_cast<int>(rc));
    std::exit(1);
  }
}

// Two kernels that return at once: one with an 8-byte parameter, one with flexjit's decode-sized
// parameter block (the parameters struct and two TMA descriptors are about 1.5 KB).
const char* const kPtx = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry small_params(.param .u64 p) { ret; }
.visible .entry large_params(.param .align 64 .b8 p[1536]) { ret; }
)";

void time_entry(const char* name, int calls, const std::function<void()>& call, const std::function<void()>& drain) {
  for (int i = 0; i < 100; ++i) call();
  drain();
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    drain();
    rounds.push_back(us / calls);
  }
  std::sort(rounds.begin(), rounds.end());
  std::printf("{\"entry\": \"%s\", \"us_per_call\": %.3f}\n", name, rounds[2]);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 5000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      calls = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: flexjit_driver_cost [--calls N]\n");
      return 2;
    }
  }
  const auto cuInit_ = entry<CUresult (*)(unsigned)>("cuInit");
  const auto cuDeviceGet_ = entry<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
  const auto cuDevicePrimaryCtxRetain_ = entry<CUresult (*)(CUcontext*, CUdevice)>("cuDevicePrimaryCtxRetain");
  const auto cuCtxSetCurrent_ = entry<CUresult (*)(CUcontext)>("cuCtxSetCurrent");
  const auto cuCtxGetCurrent_ = entry<CUresult (*)(CUcontext*)>("cuCtxGetCurrent");
  const auto cuModuleLoadData_ = entry<CUresult (*)(CUmodule*, const void*)>("cuModuleLoadData");
  const auto cuModuleGetFunction_ = entry<CUresult (*)(CUfunction*, CUmodule, const char*)>("cuModuleGetFunction");
  const auto cuLaunchKernel_ =
      entry<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                         void**, void**)>("cuLaunchKernel");
  const auto cuOccupancy_ = entry<CUresult (*)(int*, CUfunction, int, size_t)>(
      "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  const auto cuFuncSetAttribute_ = entry<CUresult (*)(CUfunction, CUfunction_attribute, int)>("cuFuncSetAttribute");
  const auto cuMemAllocAsync_ = entry<CUresult (*)(CUdeviceptr*, size_t, CUstream)>("cuMemAllocAsync");
  const auto cuMemFreeAsync_ = entry<CUresult (*)(CUdeviceptr, CUstream)>("cuMemFreeAsync");
  const auto cuMemAlloc_ = entry<CUresult (*)(CUdeviceptr*, size_t)>("cuMemAlloc_v2");
  const auto cuStreamCreate_ = entry<CUresult (*)(CUstream*, unsigned)>("cuStreamCreate");
  const auto cuStreamSynchronize_ = entry<CUresult (*)(CUstream)>("cuStreamSynchronize");
  const auto cuDeviceGetAttribute_ = entry<CUresult (*)(int*, CUdevice_attribute, CUdevice)>("cuDeviceGetAttribute");
  const auto cuTensorMapEncodeTiled_ =
      entry<CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                         const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                         CUtensorMapL2promotion, CUtensorMapFloatOOBfill)>("cuTensorMapEncodeTiled");

  check(cuInit_(0), "cuInit");
  CUdevice device;
  check(cuDeviceGet_(&device, 0), "cuDeviceGet");
  CUcontext context;
  check(cuDevicePrimaryCtxRetain_(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent_(context), "cuCtxSetCurrent");
  CUmodule module;
  check(cuModuleLoadData_(&module, kPtx), "cuModuleLoadData");
  CUfunction small, large;
  check(cuModuleGetFunction_(&small, module, "small_params"), "cuModuleGetFunction");
  check(cuModuleGetFunction_(&large, module, "large_params"), "cuModuleGetFunction");
  CUstream stream;
  check(cuStreamCreate_(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  const auto drain = [&] { check(cuStreamSynchronize_(stream), "cuStreamSynchronize"); };
  const auto nothing = [] {};

  unsigned long long small_arg = 0;
  void* small_args[] = {&small_arg};
  alignas(64) unsigned char large_arg[1536] = {};
  void* large_args[] = {large_arg};
  time_entry("cuLaunchKernel, 8-byte parameters", calls, [&] {
    check(cuLaunchKernel_(small, 1, 1, 1, 32, 1, 1, 0, stream, small_args, nullptr), "cuLaunchKernel");
  }, drain);
  time_entry("cuLaunchKernel, 1536-byte parameters", calls, [&] {
    check(cuLaunchKernel_(large, 132, 1, 1, 128, 1, 1, 0, stream, large_args, nullptr), "cuLaunchKernel");
  }, drain);
  time_entry("cuMemAllocAsync + cuMemFreeAsync, 64 KiB", calls, [&] {
    CUdeviceptr p;
    check(cuMemAllocAsync_(&p, 64 << 10, stream), "cuMemAllocAsync");
    check(cuMemFreeAsync_(p, stream), "cuMemFreeAsync");
  }, drain);
  time_entry("cuMemAllocAsync + launch + cuMemFreeAsync, 4 MiB", calls, [&] {
    CUdeviceptr p;
    check(cuMemAllocAsync_(&p, 4 << 20, stream), "cuMemAllocAsync");
    check(cuLaunchKernel_(small, 1, 1, 1, 32, 1, 1, 0, stream, small_args, nullptr), "cuLaunchKernel");
    check(cuMemFreeAsync_(p, stream), "cuMemFreeAsync");
  }, drain);
  time_entry("cuOccupancyMaxActiveBlocksPerMultiprocessor", calls, [&] {
    int blocks = 0;
    check(cuOccupancy_(&blocks, large, 128, 48 << 10), "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  }, nothing);
  time_entry("cuFuncSetAttribute, max dynamic shared memory", calls, [&] {
    check(cuFuncSetAttribute_(large, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 96 << 10),
          "cuFuncSetAttribute");
  }, nothing);
  time_entry("cuCtxGetCurrent", calls, [&] {
    CUcontext c;
    check(cuCtxGetCurrent_(&c), "cuCtxGetCurrent");
  }, nothing);
  time_entry("cuDeviceGetAttribute, SM count", calls, [&] {
    int sms = 0;
    check(cuDeviceGetAttribute_(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), "cuDeviceGetAttribute");
  }, nothing);
  CUdeviceptr pool;
  check(cuMemAlloc_(&pool, 64 << 20), "cuMemAlloc");
  time_entry("cuTensorMapEncodeTiled, bf16 rows of 128", calls, [&] {
    CUtensorMap map;
    const cuuint64_t dims[3] = {128, 8, 16384};
    const cuuint64_t strides[2] = {128 * 2, 8 * 128 * 2};
    const cuuint32_t box[3] = {64, 1, 64};
    const cuuint32_t element_strides[3] = {1, 1, 1};
    check(cuTensorMapEncodeTiled_(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, reinterpret_cast<void*>(pool), dims,
                                  strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeTiled");
  }, nothing);
  return 0;
}
