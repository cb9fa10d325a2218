#include "jit/module.hpp"

#include <cstring>

#include "flexjit/error.hpp"
#include "jit/driver.hpp"
#include "jit/memo.hpp"

namespace flexjit::jit {
namespace {

constexpr size_t kDefaultSmemLimit = 48 * 1024;  // per block, without opting in

std::string shape(Dim3 d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

int function_attribute(CUfunction_attribute attr, CUfunction function) {
  int value = 0;
  FLEXJIT_CU(driver().cuFuncGetAttribute(&value, attr, function));
  return value;
}

// Loaded modules by (context id, kernel key). An evicted module stays loaded while a
// LoadedKernel or ReadyKernel still holds it, and unloads after its last user.
constexpr size_t kModuleMemoCapacity = 512;

// Never destroyed: at exit the driver may already be shut down, and unloading then is pointless.
LruMemo<std::shared_ptr<const LoadedModule>>& module_cache() {
  static auto* cache = new LruMemo<std::shared_ptr<const LoadedModule>>(kModuleMemoCapacity);
  return *cache;
}

}  // namespace

LoadedModule::LoadedModule(CUmodule module, CUcontext context, std::string key,
                           std::string source_name, const std::vector<std::string>& kernel_names)
    : module_(module), context_(context), key_(std::move(key)), source_name_(std::move(source_name)) {
  CUdevice device = 0;
  FLEXJIT_CU(driver().cuCtxGetDevice(&device));
  int optin = 0;
  FLEXJIT_CU(driver().cuDeviceGetAttribute(
      &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device));
  for (const auto& name : kernel_names) {
    auto state = std::make_unique<FunctionState>();
    state->name = name;
    const CUresult rc = driver().cuModuleGetFunction(&state->function, module_, name.c_str());
    if (rc == CUDA_ERROR_NOT_FOUND)
      throw UsageError("the module of " + source_name_ + " has no kernel '" + name +
                       "' (declare it extern \"C\" __global__)");
    if (rc != CUDA_SUCCESS) throw_driver_error(rc, "cuModuleGetFunction(" + name + ")", __FILE__, __LINE__);
    state->max_threads =
        function_attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, state->function);
    state->registers = function_attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, state->function);
    state->static_smem =
        static_cast<size_t>(function_attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, state->function));
    state->smem_optin = static_cast<size_t>(optin);
    state->dynamic_smem_limit =
        state->static_smem < kDefaultSmemLimit ? kDefaultSmemLimit - state->static_smem : 0;
    functions_[name] = std::move(state);
  }
}

LoadedModule::~LoadedModule() {
  if (!module_ || !driver_available()) return;
  const Driver& d = driver();
  unsigned version = 0;  // a destroyed context took its modules with it
  if (d.cuCtxGetApiVersion(context_, &version) != CUDA_SUCCESS) return;
  CUcontext current = nullptr;
  if (d.cuCtxGetCurrent(&current) != CUDA_SUCCESS) return;
  if (current == context_) {
    d.cuModuleUnload(module_);
  } else if (d.cuCtxPushCurrent(context_) == CUDA_SUCCESS) {
    d.cuModuleUnload(module_);
    CUcontext popped = nullptr;
    d.cuCtxPopCurrent(&popped);
  }
}

LoadedKernel LoadedModule::kernel(const std::string& name) const {
  auto it = functions_.find(name);
  if (it == functions_.end()) {
    std::string known;
    for (const auto& [n, s] : functions_) known += (known.empty() ? "" : ", ") + n;
    throw UsageError("the module of " + source_name_ + " has no kernel '" + name +
                     "'; it has: " + (known.empty() ? std::string("(none)") : known));
  }
  const FunctionState& s = *it->second;
  LoadedKernel k;
  k.function = s.function;
  k.name = s.name;
  k.max_threads = s.max_threads;
  k.registers = s.registers;
  k.static_smem = s.static_smem;
  k.module = shared_from_this();
  k.state = it->second.get();
  return k;
}

void LoadedKernel::set_max_dynamic_smem(size_t bytes) const {
  if (!state) throw UsageError("LoadedKernel used before LoadedModule::kernel() set it up");
  if (bytes + state->static_smem > state->smem_optin)
    throw UsageError("kernel '" + name + "' needs " + std::to_string(bytes) +
                     " bytes of dynamic shared memory (+ " + std::to_string(state->static_smem) +
                     " static = " + std::to_string(bytes + state->static_smem) +
                     " bytes per block), but this device allows at most " +
                     std::to_string(state->smem_optin) +
                     " bytes per block; choose a configuration with smaller tiles or fewer "
                     "pipeline stages");
  std::lock_guard<std::mutex> lock(state->raise_mutex);
  if (bytes <= state->dynamic_smem_limit.load()) return;
  const CUresult rc = driver().cuFuncSetAttribute(
      function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes));
  if (rc != CUDA_SUCCESS)
    throw_driver_error(rc,
                       "cuFuncSetAttribute(" + name + ", MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                           std::to_string(bytes) + ")",
                       __FILE__, __LINE__);
  state->dynamic_smem_limit = bytes;
}

void LoadedKernel::launch(Dim3 grid, Dim3 block, size_t dynamic_smem, Stream stream, void** args,
                          bool programmatic) const {
  if (!state) throw UsageError("LoadedKernel used before LoadedModule::kernel() set it up");
  const unsigned long long threads =
      static_cast<unsigned long long>(block.x) * block.y * block.z;
  if (threads == 0 || threads > static_cast<unsigned long long>(max_threads))
    throw UsageError("kernel '" + name + "' launched with a block of " + shape(block) + " = " +
                     std::to_string(threads) + " threads, but it can run at most " +
                     std::to_string(max_threads) + " threads per block (it uses " +
                     std::to_string(registers) + " registers per thread)");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    throw UsageError("kernel '" + name + "' launched with an empty grid " + shape(grid));
  if (dynamic_smem > state->dynamic_smem_limit.load()) set_max_dynamic_smem(dynamic_smem);
  const Driver& d = driver();
  CUcontext current = nullptr;
  FLEXJIT_CU(d.cuCtxGetCurrent(&current));
  if (!current) FLEXJIT_CU(d.cuCtxSetCurrent(module->context()));
  const bool dependent = programmatic && d.cuLaunchKernelEx != nullptr;
  CUresult rc = CUDA_SUCCESS;
  if (dependent) {
    CUlaunchAttribute attribute;
    std::memset(&attribute, 0, sizeof attribute);
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config;
    std::memset(&config, 0, sizeof config);
    config.gridDimX = grid.x, config.gridDimY = grid.y, config.gridDimZ = grid.z;
    config.blockDimX = block.x, config.blockDimY = block.y, config.blockDimZ = block.z;
    config.sharedMemBytes = static_cast<unsigned>(dynamic_smem);
    config.hStream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    rc = d.cuLaunchKernelEx(&config, function, args, nullptr);
  } else {
    rc = d.cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                          static_cast<unsigned>(dynamic_smem), stream, args, nullptr);
  }
  if (rc != CUDA_SUCCESS)
    throw_driver_error(rc,
                       std::string(dependent ? "cuLaunchKernelEx(" : "cuLaunchKernel(") + name +
                           (dependent ? ", programmatic dependent" : "") + ", grid " + shape(grid) + ", block " +
                           shape(block) + ", " + std::to_string(dynamic_smem) +
                           " bytes dynamic shared memory)",
                       __FILE__, __LINE__);
}

std::shared_ptr<const LoadedModule> load(const CompiledKernel& kernel) {
  const CUcontext context = ensure_context();
  const MemoKey memo_key{context_id(context), kernel.key};
  if (auto hit = module_cache().find(memo_key)) return hit;
  // Load outside the lock so that other kernels load in parallel; if another thread loaded the
  // same key meanwhile, its module wins and ours is unloaded.
  CUmodule module = nullptr;
  const CUresult rc = driver().cuModuleLoadData(&module, kernel.cubin.data());
  if (rc != CUDA_SUCCESS) {
    try {
      throw_driver_error(rc, "cuModuleLoadData", __FILE__, __LINE__);
    } catch (const DriverError& e) {
      std::string message = e.what();
      message += " (loading " + kernel.source_name + ", built for " + kernel.arch + ")";
      if (rc == CUDA_ERROR_NO_BINARY_FOR_GPU || rc == CUDA_ERROR_INVALID_IMAGE ||
          rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
        try {
          const DeviceInfo device = current_device();
          message += ": device " + std::to_string(device.ordinal) + " (" + device.name +
                     ") has compute capability " + std::to_string(device.cc_major) + "." +
                     std::to_string(device.cc_minor) + "; compile for " + device.default_arch();
        } catch (const Error&) {
        }
      }
      throw DriverError(message, e.code());
    }
  }
  std::shared_ptr<const LoadedModule> loaded;
  try {
    loaded = std::make_shared<LoadedModule>(module, context, kernel.key, kernel.source_name,
                                            kernel.kernel_names);
  } catch (...) {
    driver().cuModuleUnload(module);
    throw;
  }
  return module_cache().insert(memo_key, loaded);  // when another thread won, `loaded` unloads here
}

size_t loaded_module_count() { return module_cache().size(); }

unsigned long long context_id(CUcontext context) {
  unsigned long long id = 0;
  if (driver().cuCtxGetId && driver().cuCtxGetId(context, &id) == CUDA_SUCCESS) return id;
  return static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(context));
}

unsigned long long current_context_id() { return context_id(ensure_context()); }

}  // namespace flexjit::jit
