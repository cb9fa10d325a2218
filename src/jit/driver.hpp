#pragma once
// The CUDA Driver API, loaded at run time. flexjit does not link libcuda: libcuda.so.1 is opened
// with dlopen on first use, so the library (check, emit, compile, CPU references) works on a
// machine without the NVIDIA driver, and only running kernels needs one.
//
// <cuda.h> is included for its types only. Its macros map API names to versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2, ...); the members below are declared through the same macros, so
// `driver().cuMemAlloc(...)` calls the symbol the headers mean, resolved by that exact name.
#include <cuda.h>

#include <string>

namespace flexjit::jit {

// Entry points flexjit requires (a driver for CUDA 12.0 or newer has them all).
#define FLEXJIT_DRIVER_REQUIRED(X)                                                              \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGet)          \
  X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)            \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxGetCurrent)                   \
  X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize) X(cuCtxPushCurrent)                  \
  X(cuCtxPopCurrent) X(cuCtxGetApiVersion) X(cuModuleLoadData) X(cuModuleUnload)               \
  X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel)          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD)     \
  X(cuMemcpyDtoH) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemsetD8) X(cuMemsetD8Async)    \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamWaitEvent) X(cuEventCreate) \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuMemAllocAsync) X(cuMemFreeAsync) \
  X(cuModuleGetGlobal)

// Entry points that newer drivers have, or that only tests use (stream capture); null when absent
// (callers check).
#define FLEXJIT_DRIVER_OPTIONAL(X)                                                                \
  X(cuCtxGetId) X(cuTensorMapEncodeTiled) X(cuLaunchKernelEx) X(cuStreamBeginCapture)            \
  X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch) X(cuGraphDestroy) X(cuGraphExecDestroy)

#define FLEXJIT_DRIVER_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;

// Function pointers into libcuda.so.1.
struct Driver {
  FLEXJIT_DRIVER_REQUIRED(FLEXJIT_DRIVER_DECLARE_MEMBER)
  FLEXJIT_DRIVER_OPTIONAL(FLEXJIT_DRIVER_DECLARE_MEMBER)
  // cuEventElapsedTime_v2 (CUDA 12.8+) where present, else the original symbol (same signature).
  decltype(&::cuEventElapsedTime) cuEventElapsedTime = nullptr;
  int version = 0;  // cuDriverGetVersion, e.g. 13000
};

// The driver, loaded on first call (thread-safe). Throws DriverError (code -1) with
// "no CUDA driver found (libcuda.so.1): <dlerror>. flexjit can still check, emit and compile
// kernels without a GPU; running them needs the NVIDIA driver." when it cannot be loaded, or when
// it is too old (the message names the missing entry point). Every later call throws the same.
const Driver& driver();

// True when driver() loads; otherwise false and the reason in `why` (when non-null).
bool driver_available(std::string* why = nullptr);

// Loads a driver from `library` (a dlopen name or path) into a new Driver; driver() uses
// "libcuda.so.1". For tests of the failure messages. Throws like driver().
Driver load_driver(const char* library);

// Throws DriverError "<cuName> failed: <CUDA_ERROR_NAME> (<description>) at <file>:<line>" unless
// `result` is CUDA_SUCCESS. `call` is the call's text; the cu* function name is taken from it.
// `file` is shortened to the part from src/ (or tests/, tools/) on.
void check(CUresult result, const char* call, const char* file, int line);
// Same message, with `what` used verbatim in place of the function name (to add context such as
// the kernel name and launch shape).
[[noreturn]] void throw_driver_error(CUresult result, const std::string& what, const char* file,
                                     int line);

// "CUDA_ERROR_INVALID_VALUE (invalid argument)", or a numeric fallback when the driver is absent.
std::string describe(CUresult result);

// The context flexjit works in on this thread: the caller's current context if it has one,
// otherwise the primary context of device $FLEXJIT_DEVICE (default 0), retained for the life of
// the process and made current (cuInit(0) runs once). Throws DriverError / UsageError.
CUcontext ensure_context();

// The device flexjit uses when the thread has no current context: $FLEXJIT_DEVICE, default 0.
// Throws UsageError for a value that is not a device ordinal.
int requested_device_ordinal();

// Calls cuInit(0) once per process (the result is remembered); throws DriverError on failure.
void ensure_initialized();

}  // namespace flexjit::jit

// Checks a Driver API call: FLEXJIT_CU(driver().cuMemAlloc(&ptr, bytes));
#define FLEXJIT_CU(call) ::flexjit::jit::check((call), #call, __FILE__, __LINE__)
