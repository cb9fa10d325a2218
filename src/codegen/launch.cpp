#include "codegen/launch.hpp"

#include <vector>

#include "codegen/error_words.hpp"

namespace flexjit::codegen {

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
  kernel_.kernel(index_).launch(geometry_.grid, geometry_.block, geometry_.dynamic_smem, stream, all.data());
}

}  // namespace flexjit::codegen
