#pragma once
// Loaded modules and launches: CompiledKernel -> LoadedModule (a CUmodule in a context) ->
// LoadedKernel (one function, with its limits) -> launch. Thread-safe.
#include <cuda.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flexjit/device.hpp"
#include "jit/compiler.hpp"

namespace flexjit::jit {

// Grid or block shape.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class LoadedModule;

// Per-function state shared by every LoadedKernel handle of that function.
struct FunctionState {
  CUfunction function = nullptr;
  std::string name;
  int max_threads = 0;
  int registers = 0;
  size_t static_smem = 0;
  size_t smem_optin = 0;  // the device's opt-in limit per block (static + dynamic)
  // Dynamic shared memory the function may use now: 48 KiB - static until raised.
  std::atomic<size_t> dynamic_smem_limit{0};
  std::mutex raise_mutex;
};

// One kernel of a loaded module. Cheap to copy; keeps its module loaded.
struct LoadedKernel {
  CUfunction function = nullptr;
  std::string name;
  int max_threads = 0;     // most threads per block this function can launch with
  int registers = 0;       // registers per thread
  size_t static_smem = 0;  // bytes of static shared memory per block

  // Allows up to `bytes` of dynamic shared memory per block (cuFuncSetAttribute
  // MAX_DYNAMIC_SHARED_SIZE_BYTES). launch() calls it by itself when needed. Throws UsageError
  // when static + dynamic exceeds the device's opt-in limit; the message names both numbers.
  void set_max_dynamic_smem(size_t bytes) const;

  // Launches on `stream` (nullptr: the default stream) with `args` as cuLaunchKernel takes them
  // (an array of pointers to each argument). Raises the dynamic shared memory limit when
  // `dynamic_smem` needs it. Throws UsageError for a block larger than max_threads, DriverError
  // when the launch fails (the message names the kernel and the launch shape). Asynchronous:
  // errors inside the kernel surface at the next synchronisation. `programmatic`: launched as the
  // stream's previous kernel's programmatic dependent (cuLaunchKernelEx with programmatic stream
  // serialization, sm_90+): the kernel must wait for that kernel (griddepcontrol.wait) before it
  // reads what that kernel wrote. A driver without cuLaunchKernelEx launches it plainly, after
  // the previous kernel, which gives the same results.
  void launch(Dim3 grid, Dim3 block, size_t dynamic_smem, Stream stream, void** args, bool programmatic = false) const;

  std::shared_ptr<const LoadedModule> module;  // keeps the CUmodule alive
  FunctionState* state = nullptr;              // owned by `module`
};

// A CUmodule loaded into one context. Unloads in the destructor when the context still exists.
class LoadedModule : public std::enable_shared_from_this<LoadedModule> {
 public:
  LoadedModule(CUmodule module, CUcontext context, std::string key, std::string source_name,
               const std::vector<std::string>& kernel_names);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  // The named kernel (one of the Source's kernel_names). Throws UsageError for another name.
  LoadedKernel kernel(const std::string& name) const;

  CUmodule handle() const { return module_; }
  CUcontext context() const { return context_; }
  const std::string& key() const { return key_; }
  const std::string& source_name() const { return source_name_; }

 private:
  CUmodule module_;
  CUcontext context_;
  std::string key_;
  std::string source_name_;
  std::map<std::string, std::unique_ptr<FunctionState>> functions_;
};

// Loads `kernel` into the current context (ensure_context()). The result is kept per (context id,
// kernel key) in a bounded LRU memo (jit/memo.hpp): a second call costs a hash lookup. Throws
// DriverError when the driver rejects the image (for a cubin built for another GPU the message
// names the cubin's arch and the device's default_arch()).
std::shared_ptr<const LoadedModule> load(const CompiledKernel& kernel);

// Number of modules in the in-process memo (all contexts); for tests.
size_t loaded_module_count();

}  // namespace flexjit::jit
