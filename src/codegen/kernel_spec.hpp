#pragma once
// KernelSpec: everything that makes one compiled kernel different from another (family, dtype,
// head dims, tiles, specialisation flags, the user's mods). Rendering a spec gives a jit::Source;
// every field that changes the source is therefore part of the kernel cache key.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flexjit/config.hpp"
#include "flexjit/dtype.hpp"
#include "flexjit/expr.hpp"
#include "codegen/wgmma.hpp"
#include "jit/source.hpp"

namespace flexjit::codegen {

enum class Family {
  builtin_axpy,  // y = a * x + y: the self-test kernel of the main job and `flexjit emit`
  block_mask,    // mask_mod -> block-sparse tables (classify + compact)
  fwd,           // forward attention
  bwd_preprocess,  // delta = rowsum(O * dO)
  bwd_dq,          // dQ per query tile (kv_* tables)
  bwd_dkdv,        // dK, dV per kv tile (q_* tables), GQA heads summed in registers
  bwd_buffer_grad, // learnable-buffer gradients: per-CTA partials -> fp32 gradient (codegen/buffer_grad)
};

std::string_view family_name(Family family) noexcept;
// Accepts "builtin", "block_mask", "fwd"; throws UsageError listing them otherwise.
Family parse_family(std::string_view name);

struct KernelSpec {
  Family family = Family::fwd;
  DType dtype = DType::bf16;
  int head_dim = 128;
  int head_dim_v = 128;
  int gqa_group = 1;  // query heads per kv head
  BlockConfig config;
  int sparse_q_block = 128;
  int sparse_kv_block = 128;
  // Specialisations (compile-time constants of the kernel).
  bool is_divisible = false;       // lengths are multiples of the tiles: no tail predication
  bool has_block_mask = false;     // visit the tiles the kv_* tables list (else every tile)
  bool has_full_blocks = false;    // the tables have full_* lists (mask_mod skipped there)
  bool rows_guaranteed_safe = false;
  bool buffer_grads = false;       // bwd_dq: also accumulate the learnable buffers' gradients
  Declarations declarations;
  Expr score_mod = Expr::identity_score();
  Expr mask_mod = Expr::no_mask();

  bool has_mask() const { return !mask_mod.is_always_true(); }
  bool score_is_identity() const { return score_mod.is_identity(); }
  // Throws UsageError naming the first field that is out of range, and what is accepted.
  void validate() const;
  // Dynamic shared memory the kernel needs, in bytes.
  size_t shared_memory_bytes() const;
  // Threads per CTA.
  int threads() const;
  // One line naming the family and every specialisation, for generated-source headers and logs.
  std::string describe() const;
};

// Column slices the dK/dV kernel splits its accumulators into so they fit in registers.
int dkdv_splits(int head_dim, int head_dim_v);

// True for the families of the attention forward and backward passes (tiles, dtype, mods).
bool is_attention_family(Family family);

// Default tiles for a family / head dim when neither the caller nor the autotuner chose.
BlockConfig default_config(Family family, int head_dim, int head_dim_v);

// Names of the kernels a family's source defines.
std::string kernel_name(Family family, int index = 0);

// The template context (for tests and `flexjit emit --format context`).
nlohmann::json template_context(const KernelSpec& spec);

// The per-variant header: FlexjitModArgs and the emitted mod functions.
std::string variant_header(const KernelSpec& spec);

// The warpgroup MMA shapes (N, A from registers, B transposed) a wgmma config of the spec uses.
std::vector<WgmmaShape> wgmma_shapes(const KernelSpec& spec);

// Renders the spec into a compilable source with its headers (validates first).
jit::Source render(const KernelSpec& spec);

// The source with its in-memory headers inlined where they are included, so `nvcc` can compile
// the file on its own (what `flexjit emit --format cu` writes).
std::string self_contained_source(const jit::Source& source);

// Largest dynamic shared memory a CTA may use on `arch` ("sm_80", "sm_90a", ...), in bytes.
size_t max_shared_memory_for_arch(const std::string& arch);

// Throws UsageError when the spec needs more shared memory than `arch` offers per block.
void check_shared_memory(const KernelSpec& spec, const std::string& arch);

}  // namespace flexjit::codegen
