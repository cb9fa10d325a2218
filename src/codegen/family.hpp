#pragma once
// Kernel families as descriptors. A family (fwd, bwd_dq, ...) is one file in src/codegen/families/
// that fills in a FamilyDescriptor: its template, kernels, default config, config space,
// validation, launch geometry and template constants. Everything else (rendering, the config
// space, the launch stage, the CLI) asks the descriptor; only the registry (families/registry.cpp)
// lists the families.
//
// Adding a family: a value in `Family` (kernel_spec.hpp), a descriptor file under families/, its
// template under templates/, and one line in families/registry.cpp.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/kernel_spec.hpp"
#include "codegen/wgmma.hpp"
#include "jit/module.hpp"

namespace flexjit::codegen {

// The sizes of one call that launch geometry depends on. Attention families read all of them; the
// block-mask family reads `batch` / `heads` as the table's (broadcast) extents.
struct CallShape {
  int batch = 1;
  int heads = 1;     // query heads (block_mask: the table's heads)
  int kv_heads = 1;
  int q_len = 1;
  int kv_len = 1;
  long long elements = 0;  // builtin: elements of the vectors
  int splits = 1;          // decode: key-range splits (the host's choice per call)
  int sm_count = 0;  // persistent kernels (warp-specialised forward): the device's SMs; the family fits its CTAs per SM
  int classify_parts = 1;  // decode: CTAs classifying one sequence's tiles (the host's choice)
  int kv_head_splits = 1;  // bwd_dkdv (warp-specialised): CTAs per GQA group (the host's choice per call)
};

// Grid, block and dynamic shared memory of one kernel launch, plus the tile count the kernel's
// parameter block carries (num_q_tiles / num_kv_tiles; 0 where the family has none).
struct LaunchGeometry {
  jit::Dim3 grid;
  jit::Dim3 block;
  size_t dynamic_smem = 0;
  int tiles = 0;
  // Launched as the previous kernel's programmatic dependent on sm_90+ (PDL): its CTAs may start
  // while that kernel still runs, and the kernel waits (griddepcontrol.wait) for it before reading
  // anything it wrote. The launch's latency hides behind the previous kernel.
  bool programmatic = false;
};

// Head-dim classes the curated config lists are written for (the larger of D and DV decides).
enum class HeadClass { d64, d128, d256 };
HeadClass head_class(const KernelSpec& spec);

struct FamilyDescriptor {
  Family family;
  std::string_view name;           // "fwd": CLI spelling, cache keys, messages
  std::string_view template_name;  // "attention_fwd.cu.j2"
  std::string_view source_name;    // "attention_fwd.cu" (NVRTC program name)
  std::vector<std::string> kernel_names;  // in launch order; index = LaunchGeometry's kernel index
  bool attention = false;          // reads dtype, head dims, tiles and both mods
  bool shared_headers = true;      // includes the flexjit_*.cuh headers and the variant header
  bool score_gradient = false;     // the variant header also defines flexjit_score_grad
  bool reports_errors = false;     // takes a trailing `unsigned* flexjit_errors` (mods read buffers)
  bool errors_in_every_kernel = false;  // with reports_errors: every kernel takes it, not only kernel 0
  bool tiled = false;              // walks query / kv tiles: a tuned block config, block-mask tables,
                                   // tail predication (false: row-wise or block-wise kernels)
  bool walks_kv_rows = false;      // warps split kv rows and stream query tiles (dK/dV)
  // One of the backward's kernels, which share the dQ sums' rows and so their tiles' head dims
  // (tile_head_dims: on sm_90a 256 columns for 192, and 128 for 64 beside 256).
  bool backward = false;

  // The config when neither the caller nor the autotuner chose one.
  BlockConfig (*default_config)(int head_dim, int head_dim_v) = nullptr;
  // Throws UsageError naming the first field out of range (tiles, warps, dims...).
  void (*validate)(const KernelSpec&) = nullptr;
  // Dynamic shared memory per CTA, in bytes (also the template's EXPECTED_SMEM_BYTES).
  size_t (*shared_memory_bytes)(const KernelSpec&) = nullptr;
  // Threads per CTA of kernel `index`.
  int (*threads)(const KernelSpec&, int index) = nullptr;
  // Family-specific context entries and compile-time constants (in order).
  void (*add_constants)(const KernelSpec&, nlohmann::json& ctx, nlohmann::json& constants) = nullptr;
  // One line naming the family and every specialisation (generated-source headers, logs, keys).
  std::string (*describe)(const KernelSpec&) = nullptr;
  // Launch geometry of kernel `index` for a call of `shape`.
  LaunchGeometry (*geometry)(const KernelSpec&, const CallShape& shape, int index) = nullptr;

  // ---- config space (families with has_tuning()) ----
  // fp32 accumulator registers per thread the config keeps live (0 when not applicable).
  int (*accumulator_registers)(const KernelSpec&) = nullptr;
  // The curated small search space for a head-dim class, most promising first.
  std::vector<const char*> (*curated_configs)(HeadClass) = nullptr;
  // The Hopper (sm_90a) default config text, or nullptr to fall back to default_config.
  const char* (*hopper_default)(const KernelSpec&) = nullptr;
  // wgmma wrapper shapes the wgmma variant needs (empty: no wgmma path).
  std::vector<WgmmaShape> (*wgmma_shapes)(const KernelSpec&) = nullptr;

  // Whether the spec's kernel has a lean form (KernelSpec::lean_registers) beside its full one:
  // the full form keeps more values live (for overlap, or to save instructions), which fits the
  // registers with some mods and spills with others, and only ptxas knows which. compile_kernel
  // compiles the full form and takes the lean one where the full one spills more than
  // `full_form_spill_bytes` of stores and the lean one fewer (nullptr: one form).
  bool (*has_lean_form)(const KernelSpec&) = nullptr;
  int full_form_spill_bytes = 0;

  bool has_tuning() const { return curated_configs != nullptr; }
};

// The descriptor of `family` (every enum value has one).
const FamilyDescriptor& descriptor(Family family);
// The descriptor named `name`, or nullptr.
const FamilyDescriptor* find_descriptor(std::string_view name);
// Every family, in the registry's order.
const std::vector<const FamilyDescriptor*>& all_families();

// Helpers the descriptor files share.
nlohmann::json int_constant(const char* name, long long value);
nlohmann::json bool_constant(const char* name, bool value);
unsigned ceil_div(long long a, long long b);

}  // namespace flexjit::codegen
