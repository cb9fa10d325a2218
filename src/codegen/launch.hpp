#pragma once
// The launch stage (jitify's ConfiguredKernel): a ready kernel plus its family's launch geometry
// for one call's shape. Host code fills the kernel's parameter block and launches through this;
// grid, block and dynamic shared memory come from the family descriptor only, and the per-call
// error word (error_words.hpp) is appended for families whose kernels report buffer errors.
#include <initializer_list>

#include "codegen/family.hpp"
#include "codegen/kernel_store.hpp"

namespace flexjit::codegen {

class ConfiguredKernel {
 public:
  // Kernel `index` of `kernel` (block_mask: 0 classify, 1 compact) for a call of `shape`.
  ConfiguredKernel(const ReadyKernel& kernel, const CallShape& shape, int index = 0);

  const LaunchGeometry& geometry() const { return geometry_; }
  // The tile count the parameter block carries (num_q_tiles / num_kv_tiles).
  int tiles() const { return geometry_.tiles; }

  // Launches on `stream` with `args` (pointers to the kernel's parameters, without the error
  // word). Buffer errors are recorded for `owner` (default: `stream`): a kernel run on a side
  // stream on behalf of the caller's stream reports to the caller's.
  void launch(Stream stream, std::initializer_list<void*> args) const;
  void launch(Stream stream, Stream owner, std::initializer_list<void*> args) const;

 private:
  const ReadyKernel& kernel_;
  const FamilyDescriptor& family_;
  int index_;
  LaunchGeometry geometry_;
};

}  // namespace flexjit::codegen
