#pragma once
// Compiled-and-loaded kernels of one process, by KernelSpec and target arch: the first request
// renders, compiles (or finds in the disk cache) and loads; later ones cost a map lookup.
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "jit/module.hpp"

namespace flexjit::codegen {

struct ReadyKernel {
  jit::CompiledKernel compiled;   // cubin, resources, compile time, whether it came from disk
  std::shared_ptr<const jit::LoadedModule> module;
  size_t shared_memory_bytes = 0; // dynamic shared memory per launch
  int threads = 0;                // threads per CTA
  jit::LoadedKernel kernel(int index = 0) const;
  std::vector<std::string> names;
  std::string description;  // KernelSpec::describe() of the kernel, for error reports
  bool has_error_flags = false;  // the module defines flexjit_error_flags (read from its cubin)
  double ready_ms = 0;      // wall time of the first request in this process (compile or disk, + load)
};

// The arch kernels are built for: `requested` when not empty, else the current device's.
std::string resolve_arch(const std::string& requested);

// Rendered, compiled and loaded on first use for the current context; thread-safe.
std::shared_ptr<const ReadyKernel> ready_kernel(const KernelSpec& spec, const std::string& arch);

// Reads and clears the error bits (flexjit_error_flags) of every kernel loaded in the current
// context; returns one line per kernel whose mods read a buffer out of bounds. Synchronises the
// context first.
std::vector<std::string> take_kernel_errors();

// Rendered and compiled (no GPU needed), through the disk cache.
jit::CompiledKernel compile_kernel(const KernelSpec& spec, const std::string& arch);

}  // namespace flexjit::codegen
