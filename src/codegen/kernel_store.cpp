#include "codegen/kernel_store.hpp"

#include <chrono>
#include <map>
#include <mutex>

#include "flexjit/device.hpp"
#include "flexjit/error.hpp"
#include "jit/cubin_symbols.hpp"
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

namespace {

std::mutex& store_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::pair<CUcontext, std::string>, std::shared_ptr<const ReadyKernel>>& store() {
  static std::map<std::pair<CUcontext, std::string>, std::shared_ptr<const ReadyKernel>> kernels;
  return kernels;
}

}  // namespace

std::vector<std::string> take_kernel_errors() {
  const CUcontext context = jit::ensure_context();
  FLEXJIT_CU(jit::driver().cuCtxSynchronize());
  std::vector<std::shared_ptr<const ReadyKernel>> loaded;
  {
    std::lock_guard<std::mutex> lock(store_mutex());
    for (const auto& [key, kernel] : store())
      if (key.first == context) loaded.push_back(kernel);
  }
  std::vector<std::string> errors;
  for (const auto& kernel : loaded) {
    // Kernels without mods have no error word: the driver is only asked for one that exists, so
    // a program run under compute-sanitizer sees no failing cuModuleGetGlobal.
    if (!kernel->has_error_flags) continue;
    CUdeviceptr flags = 0;
    size_t bytes = 0;
    FLEXJIT_CU(jit::driver().cuModuleGetGlobal(&flags, &bytes, kernel->module->handle(), "flexjit_error_flags"));
    unsigned value = 0;
    FLEXJIT_CU(jit::driver().cuMemcpyDtoH(&value, flags, sizeof(value)));
    if (value == 0) continue;
    const unsigned zero = 0;
    FLEXJIT_CU(jit::driver().cuMemcpyHtoD(flags, &zero, sizeof(zero)));
    errors.push_back(kernel->description);
  }
  return errors;
}

std::shared_ptr<const ReadyKernel> ready_kernel(const KernelSpec& spec, const std::string& arch) {
  std::mutex& mutex = store_mutex();
  auto& kernels = store();
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
  const auto start = std::chrono::steady_clock::now();
  ready->compiled = compile_kernel(spec, arch);
  ready->module = jit::load(ready->compiled);
  ready->shared_memory_bytes = smem;
  ready->threads = spec.threads();
  ready->names = ready->compiled.kernel_names;
  ready->has_error_flags = jit::cubin_defines_symbol(ready->compiled.cubin, "flexjit_error_flags");
  ready->description = spec.describe();
  ready->ready_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard<std::mutex> lock(mutex);
  return kernels.emplace(std::make_pair(context, key), std::move(ready)).first->second;
}

}  // namespace flexjit::codegen
