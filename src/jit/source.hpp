#pragma once
// A rendered CUDA translation unit, ready for NVRTC: the stage between codegen and the compiler.
#include <map>
#include <string>
#include <vector>

namespace flexjit::jit {

struct Source {
  // File name NVRTC reports in diagnostics and #line info, and the stem of a failed-compile dump,
  // e.g. "attention_fwd.cu". Part of the cache key (it ends up in the cubin's line table).
  std::string name;
  // The CUDA C++ text.
  std::string text;
  // #include name -> contents, handed to NVRTC in memory so no include path is needed.
  std::map<std::string, std::string> headers;
  // The extern "C" __global__ functions the caller will look up after loading.
  std::vector<std::string> kernel_names;
};

}  // namespace flexjit::jit
