#include "codegen/kernel_store.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "codegen/family.hpp"
#include "flexjit/device.hpp"
#include "flexjit/error.hpp"
#include "jit/driver.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/memo.hpp"

namespace flexjit::codegen {

namespace {

// Kernels a process keeps ready; an evicted one is loaded again from the disk cache on next use.
constexpr size_t kReadyKernelCapacity = 256;

jit::LruMemo<std::shared_ptr<const ReadyKernel>>& store() {
  static auto* kernels = new jit::LruMemo<std::shared_ptr<const ReadyKernel>>(kReadyKernelCapacity);
  return *kernels;
}

// Kernel keys by spec text (arch, describe(), declarations), so that a repeated request (a block
// mask built every training step) costs a lookup instead of a template render and a hash.
jit::LruMemo<std::shared_ptr<const std::string>>& keys_by_spec() {
  static auto* keys = new jit::LruMemo<std::shared_ptr<const std::string>>(kReadyKernelCapacity);
  return *keys;
}

jit::CompileOptions options_for(const std::string& arch) {
  jit::CompileOptions options;
  options.arch = arch;
  return options;
}

}  // namespace

jit::LoadedKernel ReadyKernel::kernel(int index) const {
  return module->kernel(compiled.kernel_names.at(static_cast<size_t>(index)));
}

std::string resolve_arch(const std::string& requested) {
  if (!requested.empty()) {
    jit::validate_arch(requested);
    return requested;
  }
  // The current context's device, queried once per thread and context: the query (name, memory,
  // five attributes) cost more than the rest of a small block-mask build's host work.
  // Keyed by the context's id, which the driver never reuses (a new context may reuse an address).
  CUcontext context = nullptr;
  FLEXJIT_CU(jit::driver().cuCtxGetCurrent(&context));
  if (context == nullptr) return current_device().default_arch();
  const unsigned long long id = jit::context_id(context);
  static thread_local std::pair<unsigned long long, std::string> cached{0, std::string()};
  if (cached.second.empty() || cached.first != id) cached = {id, current_device().default_arch()};
  return cached.second;
}

namespace {
int spill_store_bytes(const jit::CompiledKernel& compiled) {
  int bytes = 0;
  for (const auto& [name, resources] : compiled.resources) bytes += resources.spill_store_bytes;
  return bytes;
}
}  // namespace

CompiledSpec compile_kernel(const KernelSpec& spec, const std::string& arch) {
  check_shared_memory(spec, arch);
  CompiledSpec full{spec, jit::get_or_compile(render(spec), options_for(arch))};
  const FamilyDescriptor& family = descriptor(spec.family);
  if (spec.lean_registers || !family.has_lean_form || !family.has_lean_form(spec) ||
      spill_store_bytes(full.kernel) <= family.full_form_spill_bytes)
    return full;
  KernelSpec lean_spec = spec;
  lean_spec.lean_registers = true;
  CompiledSpec lean{lean_spec, jit::get_or_compile(render(lean_spec), options_for(arch))};
  return spill_store_bytes(lean.kernel) < spill_store_bytes(full.kernel) ? std::move(lean) : std::move(full);
}

KernelSpec compiled_form(const KernelSpec& spec, const std::string& arch) {
  const FamilyDescriptor& family = descriptor(spec.family);
  if (!family.has_lean_form || !family.has_lean_form(spec)) return spec;
  return compile_kernel(spec, arch).spec;
}

std::string kernel_key_of(const KernelSpec& spec, const std::string& arch) {
  const jit::CompileOptions options = options_for(arch);
  return jit::kernel_key(jit::kernel_key_text(render(spec), arch, options.canonical()));
}

ReadyKernel load_ready_kernel(const KernelSpec& spec, jit::CompiledKernel compiled) {
  ReadyKernel ready;
  ready.module = jit::load(compiled);
  ready.compiled = std::move(compiled);
  ready.spec = spec;
  ready.description = spec.describe();
  return ready;
}

std::shared_ptr<const ReadyKernel> ready_kernel(const KernelSpec& spec, const std::string& arch) {
  check_shared_memory(spec, arch);
  // describe() names every specialisation except the block-mask block sizes; those are added.
  const jit::MemoKey spec_text{0, arch + " " + spec.describe() + " blocks=" + std::to_string(spec.sparse_q_block) +
                                      "x" + std::to_string(spec.sparse_kv_block) +
                                      " decls=" + emit_mod_args_struct(spec.declarations)};
  std::shared_ptr<const std::string> kernel_key = keys_by_spec().find(spec_text);
  if (!kernel_key)
    kernel_key = keys_by_spec().insert(spec_text, std::make_shared<const std::string>(kernel_key_of(spec, arch)));
  const jit::MemoKey key{jit::current_context_id(), *kernel_key};
  if (auto hit = store().find(key)) return hit;
  const auto start = std::chrono::steady_clock::now();
  CompiledSpec compiled = compile_kernel(spec, arch);
  auto ready = std::make_shared<ReadyKernel>(load_ready_kernel(compiled.spec, std::move(compiled.kernel)));
  ready->ready_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return store().insert(key, std::move(ready));
}

}  // namespace flexjit::codegen
