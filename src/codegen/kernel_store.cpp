#include "codegen/kernel_store.hpp"

#include <map>
#include <mutex>

#include "flexjit/device.hpp"
#include "flexjit/error.hpp"
#include "jit/driver.hpp"
#include "jit/kernel_cache.hpp"

namespace flexjit::codegen {

jit::LoadedKernel ReadyKernel::kernel(int index) const { return module->kernel(names.at(index)); }

std::string resolve_arch(const std::string& requested) {
  if (!requested.empty()) {
    jit::validate_arch(requested);
    return requested;
  }
  return current_device().default_arch();
}

jit::CompiledKernel compile_kernel(const KernelSpec& spec, const std::string& arch) {
  check_shared_memory(spec, arch);
  jit::CompileOptions options;
  options.arch = arch;
  return jit::get_or_compile(render(spec), options);
}

std::shared_ptr<const ReadyKernel> ready_kernel(const KernelSpec& spec, const std::string& arch) {
  static std::mutex mutex;
  static std::map<std::pair<CUcontext, std::string>, std::shared_ptr<const ReadyKernel>> kernels;
  const CUcontext context = jit::ensure_context();
  const std::string key = arch + " " + spec.describe() + " decls=" +
                          emit_mod_args_struct(spec.declarations);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = kernels.find({context, key});
    if (it != kernels.end()) return it->second;
  }
  const size_t smem = spec.shared_memory_bytes();
  const size_t limit = current_device().max_smem_per_block_optin;
  if (smem > limit)
    throw UsageError(std::string(family_name(spec.family)) + " config " + spec.config.str() +
                     " needs " + std::to_string(smem) + " bytes of shared memory, but this GPU allows " +
                     std::to_string(limit) + " per block; use fewer stages or smaller tiles");
  auto ready = std::make_shared<ReadyKernel>();
  ready->compiled = compile_kernel(spec, arch);
  ready->module = jit::load(ready->compiled);
  ready->shared_memory_bytes = smem;
  ready->threads = spec.threads();
  ready->names = ready->compiled.kernel_names;
  std::lock_guard<std::mutex> lock(mutex);
  return kernels.emplace(std::make_pair(context, key), std::move(ready)).first->second;
}

}  // namespace flexjit::codegen
