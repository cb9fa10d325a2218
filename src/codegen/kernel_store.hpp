#pragma once
// Compiled-and-loaded kernels of one process: the first request for a KernelSpec renders, compiles
// (or finds in the disk cache) and loads it; later ones cost a lookup in a bounded LRU memo keyed
// by (context id, kernel key) — the same key the disk cache and the module memo use.
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "jit/module.hpp"

namespace flexjit::codegen {

struct ReadyKernel {
  jit::CompiledKernel compiled;   // cubin, resources, compile time, whether it came from disk
  std::shared_ptr<const jit::LoadedModule> module;
  KernelSpec spec;                // what was rendered: the launch stage takes geometry from it
  std::string description;        // spec.describe(), for error reports
  double ready_ms = 0;            // wall time of the first request in this process (compile or disk, + load)
  jit::LoadedKernel kernel(int index = 0) const;
};

// The arch kernels are built for: `requested` when not empty, else the current device's.
std::string resolve_arch(const std::string& requested);

// Rendered, compiled and loaded on first use for the current context; thread-safe.
std::shared_ptr<const ReadyKernel> ready_kernel(const KernelSpec& spec, const std::string& arch);

// A ReadyKernel of an already compiled kernel, loaded into the current context (the tuner's
// candidates, which are timed once and not kept).
ReadyKernel load_ready_kernel(const KernelSpec& spec, jit::CompiledKernel compiled);

// A compiled kernel and the spec whose render it is: the request's, or its lean form.
struct CompiledSpec {
  KernelSpec spec;
  jit::CompiledKernel kernel;
};

// Rendered and compiled (no GPU needed), through the disk cache. Checks the spec against the
// target's shared memory first (check_shared_memory). Where the family has a lean form of the
// kernel (FamilyDescriptor::has_lean_form) and ptxas reports more spill stores in the full one
// than the family keeps (FamilyDescriptor::full_form_spill_bytes), the lean form is compiled too
// and whichever spills fewer bytes is returned (the full one on a tie: the lean form exists to cut spills); the
// full form's cache entry makes that choice a lookup next time.
CompiledSpec compile_kernel(const KernelSpec& spec, const std::string& arch);
// The spec whose render runs for `spec` on `arch`: the spec itself, or where the family has a lean
// form, compile_kernel's choice (what `flexjit emit` renders).
KernelSpec compiled_form(const KernelSpec& spec, const std::string& arch);

// The kernel key of `spec` on `arch` (kernel_key() of the rendered source, options and arch): what
// the disk cache files the kernel under and every in-process memo keys it by.
std::string kernel_key_of(const KernelSpec& spec, const std::string& arch);

}  // namespace flexjit::codegen
