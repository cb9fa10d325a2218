#pragma once
// A few CUDA driver entry points, loaded from libcuda.so.1 at run time, for the expression GPU
// tests (which link only the expr module): compile emitted code with NVRTC, run it, compare.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "flexjit/expr.hpp"

namespace flexjit::test {

struct MiniDriver {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetAttribute) attribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) retain = nullptr;
  decltype(&::cuCtxSetCurrent) set_current = nullptr;
  decltype(&::cuModuleLoadData) load = nullptr;
  decltype(&::cuModuleGetFunction) function = nullptr;
  decltype(&::cuModuleGetGlobal) global = nullptr;
  decltype(&::cuMemAlloc) alloc = nullptr;
  decltype(&::cuMemFree) free = nullptr;
  decltype(&::cuMemcpyHtoD) upload = nullptr;
  decltype(&::cuMemcpyDtoH) download = nullptr;
  decltype(&::cuLaunchKernel) launch = nullptr;
  decltype(&::cuCtxSynchronize) synchronize = nullptr;
  CUdevice device = 0;
  std::string unavailable;  // why not, or ""

  MiniDriver() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      unavailable = "libcuda.so.1 not found";
      return;
    }
    auto get = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name)); };
    get(init, "cuInit");
    get(device_get, "cuDeviceGet");
    get(attribute, "cuDeviceGetAttribute");
    get(retain, "cuDevicePrimaryCtxRetain");
    get(set_current, "cuCtxSetCurrent");
    get(load, "cuModuleLoadData");
    get(function, "cuModuleGetFunction");
    get(global, "cuModuleGetGlobal_v2");
    get(alloc, "cuMemAlloc_v2");
    get(free, "cuMemFree_v2");
    get(upload, "cuMemcpyHtoD_v2");
    get(download, "cuMemcpyDtoH_v2");
    get(launch, "cuLaunchKernel");
    get(synchronize, "cuCtxSynchronize");
    CUcontext context = nullptr;
    if (!init || init(0) != CUDA_SUCCESS || device_get(&device, 0) != CUDA_SUCCESS ||
        retain(&context, device) != CUDA_SUCCESS || set_current(context) != CUDA_SUCCESS)
      unavailable = "no usable CUDA device";
  }
};

inline const MiniDriver& driver() {
  static const MiniDriver d;
  return d;
}

#define CU(call) ASSERT_EQ((call), CUDA_SUCCESS) << #call

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Compiles `program` with NVRTC for the device (sm_80 without one, so the compile is tested on
// any machine), the named headers read from templates/. Fails the test on a compile error.
inline void compile_for_device(const std::string& program, const std::vector<std::string>& header_names,
                               std::vector<char>& cubin) {
  const MiniDriver& cu = driver();
  int major = 8, minor = 0;
  if (cu.unavailable.empty()) {
    CU(cu.attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu.device));
    CU(cu.attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu.device));
  }
  std::vector<std::string> texts;
  for (const auto& name : header_names) texts.push_back(read_text(FLEXJIT_SOURCE_DIR "/templates/" + name));
  std::vector<const char*> headers, names;
  for (size_t i = 0; i < texts.size(); ++i) {
    headers.push_back(texts[i].c_str());
    names.push_back(header_names[i].c_str());
  }
  nvrtcProgram prog = nullptr;
  ASSERT_EQ(nvrtcCreateProgram(&prog, program.c_str(), "test.cu", static_cast<int>(headers.size()), headers.data(),
                               names.data()),
            NVRTC_SUCCESS);
  const std::string arch = "-arch=sm_" + std::to_string(major * 10 + minor);
  const char* options[] = {arch.c_str(), "-std=c++17", "-default-device"};
  const nvrtcResult compiled = nvrtcCompileProgram(prog, 3, options);
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  ASSERT_EQ(compiled, NVRTC_SUCCESS) << log << program;
  size_t cubin_size = 0;
  ASSERT_EQ(nvrtcGetCUBINSize(prog, &cubin_size), NVRTC_SUCCESS);
  cubin.resize(cubin_size);
  ASSERT_EQ(nvrtcGetCUBIN(prog, cubin.data()), NVRTC_SUCCESS);
  nvrtcDestroyProgram(&prog);
}

// A copy of `bytes` in device memory (0 when the copy failed: the test has already failed then).
inline CUdeviceptr device_copy(const void* data, size_t bytes) {
  CUdeviceptr p = 0;
  EXPECT_EQ(driver().alloc(&p, bytes), CUDA_SUCCESS);
  EXPECT_EQ(driver().upload(p, data, bytes), CUDA_SUCCESS);
  return p;
}

// The FlexjitModArgs bytes for `inputs`, laid out by mod_args_layout: parameters by value, each
// buffer copied to the device (its pointer appended to `buffers`) with its extents and strides.
inline std::vector<unsigned char> pack_mod_args_for_test(const Declarations& decls, const EvalInputs& inputs,
                                                         std::vector<CUdeviceptr>& buffers) {
  const ModArgsLayout layout = mod_args_layout(decls);
  std::vector<unsigned char> args(layout.size, 0);
  for (const auto& field : layout.fields) {
    if (!field.is_buffer) {
      if (field.type == ScalarType::integer) {
        const int32_t v = static_cast<int32_t>(inputs.params.at(field.name));
        std::memcpy(&args[field.offset], &v, 4);
      } else {
        const float v = static_cast<float>(inputs.params.at(field.name));
        std::memcpy(&args[field.offset], &v, 4);
      }
      continue;
    }
    const HostBufferView& view = inputs.buffers.at(field.name);
    size_t elements = 1;
    for (int64_t e : view.shape) elements *= static_cast<size_t>(e);
    buffers.push_back(device_copy(view.data, elements * dtype_size(view.dtype)));
    const uint64_t pointer = buffers.back();
    std::memcpy(&args[field.offset], &pointer, 8);
    int64_t stride = 1;
    for (size_t d = field.rank; d-- > 0;) {
      std::memcpy(&args[field.offset + 8 + 8 * d], &view.shape[d], 8);
      std::memcpy(&args[field.offset + 8 + 8 * field.rank + 8 * d], &stride, 8);
      stride *= view.shape[d];
    }
  }
  return args;
}

}  // namespace flexjit::test
