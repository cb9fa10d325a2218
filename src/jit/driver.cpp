#include "jit/driver.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "flexjit/error.hpp"

#define FLEXJIT_STR_(x) #x
#define FLEXJIT_STR(x) FLEXJIT_STR_(x)

namespace flexjit::jit {
namespace {

constexpr const char* kDriverLibrary = "libcuda.so.1";
constexpr int kMinimumDriverVersion = 12000;

[[noreturn]] void throw_not_found(const std::string& library, const std::string& reason) {
  throw DriverError("no CUDA driver found (" + library + "): " + reason +
                        ". flexjit can still check, emit and compile kernels without a GPU; "
                        "running them needs the NVIDIA driver.",
                    -1);
}

std::string version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

template <class Fn>
void resolve(void* handle, const char* library, const char* symbol, Fn* out, bool required,
             int version) {
  dlerror();
  *out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (!*out && required)
    throw DriverError(std::string("the CUDA driver ") + library + " (CUDA " +
                          version_string(version) + ") lacks " + symbol +
                          "; flexjit needs a driver for CUDA " +
                          version_string(kMinimumDriverVersion) +
                          " or newer: update the NVIDIA driver",
                      -1);
}

struct LoadState {
  std::unique_ptr<Driver> driver;
  std::string error;
};

const LoadState& load_state() {
  static const LoadState state = [] {
    LoadState s;
    try {
      s.driver = std::make_unique<Driver>(load_driver(kDriverLibrary));
    } catch (const DriverError& e) {
      s.error = e.what();
    }
    return s;
  }();
  return state;
}

// "src/jit/module.cpp" from "/home/x/flexjit/src/jit/module.cpp".
std::string short_file(const char* file) {
  const std::string path = file ? file : "?";
  size_t best = std::string::npos;
  for (const char* marker : {"/src/", "/tests/", "/tools/", "/include/"}) {
    const size_t at = path.rfind(marker);
    if (at != std::string::npos && (best == std::string::npos || at > best)) best = at;
  }
  return best == std::string::npos ? path : path.substr(best + 1);
}

// "cuMemAlloc" from "driver().cuMemAlloc(&ptr, bytes)".
std::string function_name(const char* call) {
  const std::string text = call ? call : "";
  for (size_t i = 0; i + 2 < text.size(); ++i) {
    const bool boundary = i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) ||
                                      text[i - 1] == '_');
    if (boundary && text[i] == 'c' && text[i + 1] == 'u' &&
        std::isupper(static_cast<unsigned char>(text[i + 2]))) {
      size_t end = i;
      while (end < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
        ++end;
      return text.substr(i, end - i);
    }
  }
  return text;
}

}  // namespace

Driver load_driver(const char* library) {
  dlerror();
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* reason = dlerror();
    throw_not_found(library, reason ? reason : "dlopen failed");
  }
  // The handle stays open for the life of the process: modules and contexts outlive any scope.
  Driver d;
  resolve(handle, library, "cuDriverGetVersion", &d.cuDriverGetVersion, true, 0);
  if (d.cuDriverGetVersion(&d.version) != CUDA_SUCCESS) d.version = 0;
  if (d.version < kMinimumDriverVersion)
    throw DriverError(std::string("the CUDA driver ") + library + " supports CUDA " +
                          version_string(d.version) + ", but flexjit needs CUDA " +
                          version_string(kMinimumDriverVersion) +
                          " or newer: update the NVIDIA driver",
                      -1);
#define FLEXJIT_RESOLVE_REQUIRED(name) \
  resolve(handle, library, FLEXJIT_STR(name), &d.name, true, d.version);
#define FLEXJIT_RESOLVE_OPTIONAL(name) \
  resolve(handle, library, FLEXJIT_STR(name), &d.name, false, d.version);
  FLEXJIT_DRIVER_REQUIRED(FLEXJIT_RESOLVE_REQUIRED)
  FLEXJIT_DRIVER_OPTIONAL(FLEXJIT_RESOLVE_OPTIONAL)
#undef FLEXJIT_RESOLVE_REQUIRED
#undef FLEXJIT_RESOLVE_OPTIONAL
  resolve(handle, library, FLEXJIT_STR(cuEventElapsedTime), &d.cuEventElapsedTime, false,
          d.version);
  if (!d.cuEventElapsedTime)  // drivers before CUDA 12.8 only have the original symbol
    resolve(handle, library, "cuEventElapsedTime", &d.cuEventElapsedTime, true, d.version);
  return d;
}

const Driver& driver() {
  const LoadState& state = load_state();
  if (!state.driver) throw DriverError(state.error, -1);
  return *state.driver;
}

bool driver_available(std::string* why) {
  const LoadState& state = load_state();
  if (!state.driver && why) *why = state.error;
  return state.driver != nullptr;
}

std::string describe(CUresult result) {
  const LoadState& state = load_state();
  const char* name = nullptr;
  const char* text = nullptr;
  if (state.driver) {
    if (state.driver->cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
    if (state.driver->cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  }
  std::string out = name ? name : "CUresult " + std::to_string(static_cast<int>(result));
  out += " (";
  out += text ? text : "unknown error";
  out += ")";
  return out;
}

void throw_driver_error(CUresult result, const std::string& what, const char* file, int line) {
  throw DriverError(what + " failed: " + describe(result) + " at " + short_file(file) + ":" +
                        std::to_string(line),
                    static_cast<int>(result));
}

void check(CUresult result, const char* call, const char* file, int line) {
  if (result != CUDA_SUCCESS) throw_driver_error(result, function_name(call), file, line);
}

void ensure_initialized() {
  static const CUresult init_result = driver().cuInit(0);
  if (init_result != CUDA_SUCCESS)
    throw_driver_error(init_result, "cuInit", __FILE__, __LINE__);
}

int requested_device_ordinal() {
  const char* value = std::getenv("FLEXJIT_DEVICE");
  if (!value || !*value) return 0;
  const std::string text = value;
  bool digits = text.size() <= 6;
  for (char c : text) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits)
    throw UsageError("FLEXJIT_DEVICE='" + text +
                     "' is not a device ordinal; set it to 0 for the first GPU, 1 for the "
                     "second, ...");
  return std::atoi(value);
}

CUcontext ensure_context() {
  const Driver& d = driver();
  ensure_initialized();
  CUcontext current = nullptr;
  FLEXJIT_CU(d.cuCtxGetCurrent(&current));
  if (current) return current;

  const int ordinal = requested_device_ordinal();
  static std::mutex mutex;
  static std::map<int, CUcontext> primary;  // retained once, never released
  CUcontext ctx = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = primary.find(ordinal);
    if (it == primary.end()) {
      int count = 0;
      FLEXJIT_CU(d.cuDeviceGetCount(&count));
      if (count == 0)
        throw DriverError("no CUDA device found: the driver is installed but reports 0 devices",
                          static_cast<int>(CUDA_ERROR_NO_DEVICE));
      if (ordinal >= count)
        throw UsageError("FLEXJIT_DEVICE=" + std::to_string(ordinal) + ", but this machine has " +
                         std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") +
                         " (ordinals 0 to " + std::to_string(count - 1) + ")");
      CUdevice device = 0;
      FLEXJIT_CU(d.cuDeviceGet(&device, ordinal));
      FLEXJIT_CU(d.cuDevicePrimaryCtxRetain(&ctx, device));
      it = primary.emplace(ordinal, ctx).first;
    }
    ctx = it->second;
  }
  FLEXJIT_CU(d.cuCtxSetCurrent(ctx));
  return ctx;
}

}  // namespace flexjit::jit
