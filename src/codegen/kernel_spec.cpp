#include "codegen/kernel_spec.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "codegen/buffer_grad.hpp"
#include "codegen/families/bwd_dkdv.hpp"
#include "codegen/families/fwd.hpp"
#include "codegen/family.hpp"
#include "codegen/template_registry.hpp"
#include "codegen/wgmma.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen {

namespace {

// The static device headers every kernel with shared headers may include (templates/*.cuh): the
// stages kernels are composed of. Only flexjit_variant.cuh and flexjit_wgmma.cuh are generated.
constexpr const char* kSharedHeaders[] = {"flexjit_mma.cuh",      "flexjit_attention.cuh", "flexjit_expr.cuh",
                                          "flexjit_params.cuh",   "flexjit_softmax.cuh",   "flexjit_warp_gemm.cuh",
                                          "flexjit_epilogue.cuh", "flexjit_wgmma_ops.cuh", "flexjit_bwd_gemm.cuh",
                                          "flexjit_tma.cuh"};

std::string kib(size_t bytes) {
  const size_t whole = bytes / 1024, tenth = (bytes % 1024) * 10 / 1024;
  return std::to_string(whole) + (tenth ? "." + std::to_string(tenth) : "") + " KiB";
}

}  // namespace

std::string_view family_name(Family family) noexcept {
  for (const FamilyDescriptor* f : all_families())
    if (f->family == family) return f->name;
  return "?";
}

Family parse_family(std::string_view name) {
  if (const FamilyDescriptor* f = find_descriptor(name)) return f->family;
  std::string known;
  for (const FamilyDescriptor* f : all_families()) known += (known.empty() ? "" : ", ") + std::string(f->name);
  throw UsageError("unknown kernel family '" + std::string(name) + "' (known: " + known + ")");
}

std::string kernel_name(Family family, int index) { return descriptor(family).kernel_names.at(static_cast<size_t>(index)); }

BlockConfig default_config(Family family, int head_dim, int head_dim_v) {
  return descriptor(family).default_config(head_dim, head_dim_v);
}

void KernelSpec::validate() const {
  for (auto [field, value] : {std::pair<const char*, int>{"block_m", config.block_m}, {"block_n", config.block_n},
                              {"warps", config.num_warps}, {"stages", config.stages}})
    if (value < 0)
      throw UsageError(std::string(family_name(family)) + " config: " + field + " must not be negative, got " +
                       std::to_string(value));
  descriptor(family).validate(*this);
}

int KernelSpec::threads() const { return descriptor(family).threads(*this, 0); }

size_t KernelSpec::shared_memory_bytes() const { return descriptor(family).shared_memory_bytes(*this); }

bool is_attention_family(Family family) { return descriptor(family).attention; }

int tile_head_dim(int dim) { return dim >= 1 && dim <= 256 ? (dim + 63) / 64 * 64 : dim; }

std::pair<int, int> tile_head_dims(Family family, int d, int dv, const std::string& arch) {
  int td = tile_head_dim(d), tdv = tile_head_dim(dv);
  if (descriptor(family).backward && arch == "sm_90a") {
    if (td == 192) td = 256;
    if (tdv == 192) tdv = 256;
    // Beside a 256-column one, a 64-column tile would split into 32-column slices: 128.
    if (std::max(td, tdv) == 256 && std::min(td, tdv) == 64) (td == 64 ? td : tdv) = 128;
  }
  return {td, tdv};
}

void KernelSpec::set_head_dims(int d, int dv, const std::string& arch) {
  std::tie(head_dim, head_dim_v) = tile_head_dims(family, d, dv, arch);
  io_head_dim = d == head_dim ? 0 : d;
  io_head_dim_v = dv == head_dim_v ? 0 : dv;
}

bool dkdv_half_slab_dims(int head_dim, int head_dim_v) {
  // (192 / 64 needs no slices: one warpgroup's dK and dV hold 128 columns of 64 rows.)
  return head_dim == 192 && head_dim_v <= 192 && dkdv_splits(head_dim, head_dim_v) == 2;
}

void set_dkdv_half_slab_tiles(KernelSpec& spec, int d, int dv, const std::string& arch) {
  if (spec.family != Family::bwd_dkdv || !spec.dq_accumulate || !spec.config.warp_specialized || arch != "sm_90a" ||
      !dkdv_half_slab_dims(tile_head_dim(d), tile_head_dim(dv)))
    return;
  // The ordered sums without a mask or a score_mod keep 256 columns: there MLA's backward ran
  // 0.90x on 192 (H200, two rounds, notes/perf.md "(zy)", zy4), where masked and modified ones ran
  // 1.03-1.06x.
  if (spec.dq_ordered && !spec.has_mask() && !spec.has_block_mask && spec.score_is_identity()) return;
  spec.head_dim = 192;
  spec.head_dim_v = tile_head_dim(dv);
  spec.io_head_dim = d == spec.head_dim ? 0 : d;
  spec.io_head_dim_v = dv == spec.head_dim_v ? 0 : dv;
}

int dkdv_splits(int head_dim, int head_dim_v) {
  // dK and dV accumulators of one warp's 16 kv rows take (D + Dv) / 2 registers per thread; keep
  // a slice's under 128 so S, dP and addressing fit beside them in 255.
  for (int splits = 1; splits <= 8; ++splits)
    if (head_dim % (16 * splits) == 0 && head_dim_v % (16 * splits) == 0 &&
        (head_dim + head_dim_v) / (2 * splits) <= 128)
      return splits;
  return 0;
}

KernelSpec attention_kernel_spec(Family family, const AttentionSpec& spec, const Expr& score, const Expr& mask,
                                 const std::string& arch) {
  KernelSpec ks;
  ks.family = family;
  ks.dtype = spec.dtype;
  ks.set_head_dims(spec.head_dim, spec.head_dim_v, arch);
  ks.config = default_config(family, ks.head_dim, ks.head_dim_v);
  ks.declarations = spec.declarations;
  ks.score_mod = score;
  ks.mask_mod = mask;
  ks.rows_guaranteed_safe = spec.rows_guaranteed_safe;
  return ks;
}

KernelSpec block_mask_kernel_spec(const Expr& mask, int q_block, int kv_block, bool seq_lens) {
  KernelSpec ks;
  ks.family = Family::block_mask;
  ks.seq_lens = seq_lens;
  ks.sparse_q_block = q_block;
  ks.sparse_kv_block = kv_block;
  ks.mask_mod = mask;
  ks.declarations = mask.declarations();
  ks.config = default_config(Family::block_mask, 0, 0);
  return ks;
}

KernelSpec diagonal_table_kernel_spec(const KernelSpec& reader) {
  KernelSpec ks;
  ks.family = Family::diagonal_table;
  ks.declarations = reader.declarations;
  ks.score_mod = reader.score_mod;
  ks.mask_mod = reader.mask_mod;
  ks.buffer_offsets_32 = reader.buffer_offsets_32;
  ks.config = default_config(Family::diagonal_table, 0, 0);
  return ks;
}

std::string KernelSpec::describe() const {
  const bool narrow = memory_head_dim() != head_dim || memory_head_dim_v() != head_dim_v;
  return descriptor(family).describe(*this) + (buffer_offsets_32 ? " buffer_offsets=32" : "") +
         (narrow ? " io_dims=" + std::to_string(memory_head_dim()) + "/" + std::to_string(memory_head_dim_v()) : "");
}

size_t max_shared_memory_for_arch(const std::string& arch) {
  // Opt-in dynamic shared memory per block, by compute capability (CUDA programming guide).
  if (arch.rfind("sm_80", 0) == 0 || arch.rfind("sm_87", 0) == 0) return 163 * 1024;
  if (arch.rfind("sm_86", 0) == 0 || arch.rfind("sm_89", 0) == 0 || arch.rfind("sm_12", 0) == 0)
    return 99 * 1024;
  return 227 * 1024;  // sm_90, sm_100, sm_103
}

std::string self_contained_source(const jit::Source& source) {
  std::string out;
  const std::regex include_line(R"re(^\s*#include\s+"([^"]+)".*$)re");
  std::set<std::string> done;
  // Each inlined header gets `#line 1 "<header>"` and the including file resumes with a `#line`
  // of its own, so compiler messages keep pointing at the right file and line.
  std::function<void(const std::string&, const std::string&)> emit = [&](const std::string& text,
                                                                          const std::string& file) {
    std::istringstream in(text);
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      std::smatch m;
      if (std::regex_match(line, m, include_line) && source.headers.count(m[1].str())) {
        if (done.insert(m[1].str()).second) {
          out += "// ---- begin " + m[1].str() + " ----\n#line 1 \"" + m[1].str() + "\"\n";
          emit(source.headers.at(m[1].str()), m[1].str());
          out += "// ---- end " + m[1].str() + " ----\n";
        }
        out += "#line " + std::to_string(line_no + 1) + " \"" + file + "\"\n";
        continue;
      }
      if (line.rfind("#pragma once", 0) == 0) {
        out += "\n";  // keeps the line count
        continue;
      }
      out += line + "\n";
    }
  };
  emit(source.text, source.name);
  return out;
}

void check_shared_memory(const KernelSpec& spec, const std::string& arch) {
  spec.validate();  // a shared-memory figure computed from a negative head dim means nothing
  if (spec.config.wgmma && arch != "sm_90a")
    throw UsageError(std::string(family_name(spec.family)) + " config " + spec.config.str() +
                     " uses wgmma, which needs the sm_90a target (Hopper); the target is " + arch +
                     " — drop the trailing 'g' for the portable mma.sync path");
  if (spec.config.tma && arch != "sm_90a")
    throw UsageError(std::string(family_name(spec.family)) + " config " + spec.config.str() +
                     " loads through TMA, which needs the sm_90a target (Hopper); the target is " + arch +
                     " — drop the trailing 't' for the cp.async loads");
  const size_t need = spec.shared_memory_bytes(), limit = max_shared_memory_for_arch(arch);
  if (need > limit)
    throw UsageError(std::string(family_name(spec.family)) + " config " + spec.config.str() + " needs " +
                     kib(need) + " of shared memory; " + arch + " allows " + kib(limit) +
                     " per block — use fewer stages or smaller tiles");
}

nlohmann::json template_context(const KernelSpec& spec) {
  const FamilyDescriptor& family = descriptor(spec.family);
  nlohmann::json ctx;
  ctx["description"] = spec.describe();
  if (family.kernel_names.size() == 1) ctx["kernel_name"] = family.kernel_names.front();
  nlohmann::json constants = nlohmann::json::array();
  family.add_constants(spec, ctx, constants);
  ctx["constants"] = constants;
  return ctx;
}

namespace {
// A float's value as CUDA source, to the last bit ("1.442695022e+00f").
std::string cuda_float_literal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9ef", static_cast<double>(static_cast<float>(value)));
  return text;
}
}  // namespace

std::string variant_header(const KernelSpec& spec) {
  std::string out = "// Per-variant code emitted by flexjit's expression compiler.\n#pragma once\n";
  out += emit_mod_args_struct(spec.declarations);
  out += "\n";
  // The emitted reads are flexjit_read calls; where the call's buffers all fit 31-bit offsets they
  // take the 32-bit form (a 64-bit address per read was about 12 instructions: notes/perf.md "(t)").
  if (spec.buffer_offsets_32) out += "#define flexjit_read flexjit_read_32  // KernelSpec::buffer_offsets_32\n\n";
  // The kernels call score_mod as flexjit_score_mod_log2(acc, score_scale, ...): its value at acc * scale
  // in base 2, with its constant factors folded into the scale and log2(e) (Expr::emit_cuda_prescaled;
  // soft-capping's forward 1.04-1.12x, notes/perf.md "(zz)"). Its derivative takes the same prescale.
  const double prescale = spec.score_mod.score_prescale();
  constexpr double kLog2e = 1.4426950408889634074;
  out += spec.score_mod.emit_cuda_prescaled("flexjit_score_mod_log2", prescale, kLog2e);
  out += "\n";
  if (const auto affine = forward_kv_affine(spec)) {
    // score_mod's affine form in kv_idx (Expr::kv_affine_form), in the same base-2 units:
    // flexjit_score_mod_log2(acc, score_scale, ...) = acc * score_scale * ACC_FACTOR + P, where P
    // grows by flexjit_score_mod_log2_kv_slope(...) from one key to the next.
    out += "constexpr float FLEXJIT_SCORE_KV_AFFINE_ACC_FACTOR = " +
           cuda_float_literal(affine->score_factor / prescale * kLog2e) + ";\n";
    out += "constexpr int FLEXJIT_SCORE_KV_AFFINE_MAX_LEN = " + std::to_string(affine->max_len) + ";\n";
    out += affine->kv_slope.emit_cuda_prescaled("flexjit_score_mod_log2_kv_slope", 1.0, kLog2e, "score_mod_kv_slope");
    out += "\n";
  }
  if (forward_score_column_values(spec) > 0) {
    // The score_mod with its key-only reads computed once per key of a tile (forward_score_column_values).
    out += spec.score_mod.emit_cuda_prescaled_columns("flexjit_score_columns", "flexjit_score_mod_log2_columns",
                                                      prescale, kLog2e);
    out += "\n";
  }
  if (forward_score_diagonal_values(spec) > 0 || dkdv_score_diagonal_values(spec) > 0 ||
      spec.family == Family::diagonal_table) {
    // The score_mod with its diagonal reads computed once per diagonal of a tile
    // (forward_score_diagonal_values, dkdv_score_diagonal_values).
    out += spec.score_mod.emit_cuda_prescaled_diagonals("flexjit_score_diagonals", "flexjit_score_mod_log2_columns",
                                                        prescale, kLog2e);
    out += "\n";
  }
  out += spec.mask_mod.emit_cuda("flexjit_mask_mod");
  out += "\n";
  if (forward_mask_column_values(spec) > 0) {
    out += spec.mask_mod.emit_cuda_columns("flexjit_mask_columns", "flexjit_mask_mod_columns");
    out += "\n";
  }
  if (spec.decode_tile_bounds || spec.tile_bounds_walk) {
    out += spec.mask_mod.emit_tile_bounds_cuda("flexjit_mask_mod_bounds");
    out += "\n";
  }
  if (descriptor(spec.family).score_gradient) {
    out += spec.score_mod.gradient().emit_cuda_prescaled("flexjit_score_grad", prescale, 1.0, "score_mod_gradient");
    out += "\n";
  }
  if ((spec.family == Family::bwd_dq && spec.buffer_grads) || spec.family == Family::bwd_buffer_grad)
    out += buffer_grad_variant_code(spec);
  if (spec.buffer_offsets_32) out += "#undef flexjit_read\n";
  return out;
}

std::vector<WgmmaShape> wgmma_shapes(const KernelSpec& spec) {
  const FamilyDescriptor& family = descriptor(spec.family);
  return family.wgmma_shapes ? family.wgmma_shapes(spec) : std::vector<WgmmaShape>{};
}

jit::Source render(const KernelSpec& spec) {
  spec.validate();
  const FamilyDescriptor& family = descriptor(spec.family);
  jit::Source source;
  source.name = std::string(family.source_name);
  source.kernel_names = family.kernel_names;
  source.text = template_environment().render(std::string(family.template_name), template_context(spec));
  if (family.shared_headers) {
    for (const char* header : kSharedHeaders) source.headers[header] = template_registry().read(header);
    source.headers["flexjit_variant.cuh"] = variant_header(spec);
    if (spec.config.wgmma) source.headers["flexjit_wgmma.cuh"] = wgmma_header(spec.dtype, wgmma_shapes(spec));
    // Decoding classifies key tiles by mask_mod's interval bounds (the decode template includes it).
    if (spec.family == Family::decode || spec.tile_bounds_walk)
      source.headers["flexjit_tile_bounds.cuh"] = template_registry().read("flexjit_tile_bounds.cuh");
    if (spec.buffer_grads || spec.family == Family::bwd_buffer_grad)
      for (const char* header : {"flexjit_buffer_grad.cuh", "flexjit_buffer_grad_params.cuh"})
        source.headers[header] = template_registry().read(header);
  }
  return source;
}

bool ordered_long_chains(const KernelSpec& s, int kv_len) {
  // Every attention call builds its specs through here: the mask's tile-bounds analysis (an AST
  // walk) runs only for the deterministic dK/dV kernel over enough kv tiles.
  if (s.family != Family::bwd_dkdv || !s.dq_ordered || (int64_t(kv_len) + 127) / 128 < 64) return false;
  if (ordered_dq_ascending(s)) return false;  // one chain is a pipeline there
  return mask_walks_cut_by_data(s) || (!s.has_mask() && s.has_block_mask);  // or tables alone
}

}  // namespace flexjit::codegen
