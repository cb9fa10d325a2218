#pragma once
// NVRTC wrapper: Source + CompileOptions -> CompiledKernel (cubin, PTX, log, ptxas resources).
// Needs no GPU. compile() may be called from several threads at once (one NVRTC program each).
#include <map>
#include <string>
#include <vector>

#include "flexjit/kernel_cache.hpp"
#include "jit/source.hpp"

namespace flexjit::jit {

using flexjit::KernelResources;

struct CompileOptions {
  // Target, "sm_<NN>" with an optional "a" (arch-specific, NN >= 90) or "f" (family, NN >= 100)
  // suffix; must be one NVRTC supports, and sm_80 or newer (see supported_archs()).
  std::string arch = "sm_90a";
  bool line_info = true;       // -lineinfo: source lines in profiles, no cost at run time
  // --ptxas-options=-v: fills CompiledKernel::resources. Adds --no-cache (NVRTC 12.9+): with a
  // driver installed NVRTC otherwise takes SASS from the driver's JIT cache and ptxas stays silent.
  bool ptxas_verbose = true;
  // Further NVRTC options, one complete option per element ("-DTILE=128", "--maxrregcount=128").
  // The target must come from `arch`, not from here.
  std::vector<std::string> extra;

  // The full NVRTC option list in canonical form: sorted and de-duplicated, except include paths
  // and pre-includes, which keep their order after the rest. Two option sets that mean the same
  // compile give the same list (and so the same cache key). Throws UsageError for an unknown arch,
  // an option that does not start with '-', an -arch in `extra`, or two different definitions of
  // one macro.
  std::vector<std::string> canonical() const;
};

struct CompiledKernel {
  std::string key;                         // cache key (32 hex digits), see kernel_cache.hpp
  std::string source_name;
  std::vector<std::string> kernel_names;
  std::string arch;
  std::vector<std::string> options;        // canonical NVRTC options used
  std::string cubin;                       // ELF bytes
  std::string ptx;                         // PTX text (without the trailing NUL)
  std::string log;                         // NVRTC program log (ptxas -v output included)
  std::map<std::string, KernelResources> resources;  // per kernel name, from the log
  double compile_ms = 0;                   // NVRTC wall time (of the original compile on a hit)
  bool from_disk_cache = false;
};

// Compiles with NVRTC, always (no cache; see get_or_compile() in kernel_cache.hpp). On failure
// throws CompileError whose summary names the source and the first error line of the log, after
// dumping the source and its headers to `<cache dir>/failed/<stem>-<hash>.cu` (+ `.include/`),
// or to `<tmp>/flexjit-failed-<uid>/` when that is not writable. Also fails when a name in
// `kernel_names` is not an entry point of the result.
CompiledKernel compile(const Source& source, const CompileOptions& options);

// Parses `ptxas -v` output (as found in the NVRTC log) into resources per entry function.
std::map<std::string, KernelResources> parse_ptxas_resources(const std::string& log);

// NVRTC's version as major*1000 + minor*10 (13.0 -> 13000), and as "13.0".
int nvrtc_version();
std::string nvrtc_version_string();

// The compute capabilities NVRTC can target (nvrtcGetSupportedArchs), e.g. {75, 80, ..., 121}.
const std::vector<int>& nvrtc_supported_archs();
// The arch strings CompileOptions::arch accepts: sm_NN for NVRTC's NN >= 80, plus sm_NNa for
// NN >= 90 and sm_NNf for NN >= 100, in ascending order.
const std::vector<std::string>& supported_archs();
// Throws UsageError listing supported_archs() unless `arch` is one of them.
void validate_arch(const std::string& arch);

// Number of NVRTC compilations this process has run (successful or not); for tests and stats.
long nvrtc_compile_count();

}  // namespace flexjit::jit
