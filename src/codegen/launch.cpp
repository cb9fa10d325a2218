#include "codegen/launch.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/error_words.hpp"

namespace flexjit::codegen {
namespace {

// 90 for "sm_90a", 100 for "sm_100f" (compile_kernel accepts "sm_<NN>" with an optional suffix only).
int arch_number(const std::string& arch) { return arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0; }

}  // namespace

ConfiguredKernel::ConfiguredKernel(const ReadyKernel& kernel, const CallShape& shape, int index)
    : kernel_(kernel),
      family_(descriptor(kernel.spec.family)),
      index_(index),
      geometry_(family_.geometry(kernel.spec, shape, index)) {}

void ConfiguredKernel::launch(Stream stream, std::initializer_list<void*> args) const {
  launch(stream, stream, args);
}

void ConfiguredKernel::launch(Stream stream, Stream owner, std::initializer_list<void*> args) const {
  std::vector<void*> all(args);
  // Only the kernels that evaluate mods take the word (block_mask's compact kernel does not).
  CUdeviceptr word = 0;
  if (family_.reports_errors && (index_ == 0 || family_.errors_in_every_kernel)) {
    word = error_word(owner, kernel_.description);
    all.push_back(&word);
  }
  // Programmatic dependents need sm_90+ (griddepcontrol); the kernels test __CUDA_ARCH__ alike.
  const bool programmatic = geometry_.programmatic && arch_number(kernel_.compiled.arch) >= 90;
  kernel_.kernel(index_).launch(geometry_.grid, geometry_.block, geometry_.dynamic_smem, stream, all.data(),
                                programmatic);
}

}  // namespace flexjit::codegen
