#include "codegen/kernel_spec.hpp"

#include <algorithm>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include "codegen/buffer_grad.hpp"
#include "codegen/template_registry.hpp"
#include "codegen/wgmma.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen {

namespace {

constexpr const char* kSharedHeaders[] = {"flexjit_mma.cuh", "flexjit_attention.cuh", "flexjit_expr.cuh",
                                          "flexjit_params.cuh"};

bool is_power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

std::string kib(size_t bytes) {
  const size_t whole = bytes / 1024, tenth = (bytes % 1024) * 10 / 1024;
  return std::to_string(whole) + (tenth ? "." + std::to_string(tenth) : "") + " KiB";
}

nlohmann::json constant(const char* type, const char* name, const std::string& value) {
  return {{"type", type}, {"name", name}, {"value", value}};
}
nlohmann::json int_constant(const char* name, long long value) {
  return constant("int", name, std::to_string(value));
}
nlohmann::json bool_constant(const char* name, bool value) {
  return constant("bool", name, value ? "true" : "false");
}

void validate_attention(const KernelSpec& s) {
  if (s.dtype != DType::bf16 && s.dtype != DType::f16)
    throw UsageError("attention kernels take bf16 or f16 inputs (got " +
                     std::string(dtype_name(s.dtype)) + ")");
  for (auto [what, dim] : {std::pair<const char*, int>{"head_dim", s.head_dim}, {"head_dim_v", s.head_dim_v}}) {
    if (dim < 64 || dim > 256 || dim % 64 != 0)
      throw UsageError(std::string(what) + " " + std::to_string(dim) +
                       " is not supported: the tensor-core path takes 64, 128, 192 or 256");
  }
  if (s.gqa_group < 1)
    throw UsageError("gqa_group must be at least 1 (query heads per kv head), got " +
                     std::to_string(s.gqa_group));
  const BlockConfig& c = s.config;
  if (s.family == Family::bwd_preprocess) {
    if (c.num_warps < 1 || c.num_warps > 32)
      throw UsageError("config " + c.str() + ": warps must be between 1 and 32");
    return;
  }
  if (!c.is_set()) throw UsageError("block config " + c.str() + " has unset fields");
  if (c.num_warps != 1 && c.num_warps != 2 && c.num_warps != 4 && c.num_warps != 8)
    throw UsageError("config " + c.str() + ": warps must be 1, 2, 4 or 8");
  // The tile the warps split into 16-row mma tiles: query rows, except in dK/dV (kv rows).
  const bool kv_rows = s.family == Family::bwd_dkdv;
  const int warp_tile = kv_rows ? c.block_n : c.block_m;
  const int streamed = kv_rows ? c.block_m : c.block_n;
  const char* warp_name = kv_rows ? "block_n" : "block_m";
  const char* streamed_name = kv_rows ? "block_m" : "block_n";
  if (warp_tile % (16 * c.num_warps) != 0)
    throw UsageError("config " + c.str() + ": " + warp_name + " must be a multiple of 16 * warps = " +
                     std::to_string(16 * c.num_warps) + " (each warp owns whole 16-row mma tiles)");
  if (warp_tile / c.num_warps > 32)
    throw UsageError("config " + c.str() + ": at most 32 rows per warp (" + warp_name + " / warps = " +
                     std::to_string(warp_tile / c.num_warps) + ")");
  if (!is_power_of_two(streamed) || streamed < 16 || streamed > 128)
    throw UsageError("config " + c.str() + ": " + streamed_name + " must be 16, 32, 64 or 128");
  if (!is_power_of_two(warp_tile) || warp_tile > 128)
    throw UsageError("config " + c.str() + ": " + warp_name + " must be a power of two up to 128");
  if (c.wgmma) {
    if (c.num_warps % 4 != 0 || warp_tile != 16 * c.num_warps)
      throw UsageError("config " + c.str() + ": the wgmma path needs whole warpgroups (warps a multiple of 4) "
                       "and " + warp_name + " = 16 * warps = " + std::to_string(16 * c.num_warps));
    if (s.family == Family::bwd_dkdv) {
      const int splits = dkdv_splits(s.head_dim, s.head_dim_v);
      if (splits == 0 || (s.head_dim / splits) % 64 != 0 || (s.head_dim_v / splits) % 64 != 0)
        throw UsageError("config " + c.str() + ": the wgmma dK/dV kernel needs head dims that split into "
                         "64-column slices (use the mma.sync path: drop the trailing 'g')");
    }
  }
  if (s.family == Family::bwd_dkdv) {
    const int splits = dkdv_splits(s.head_dim, s.head_dim_v);
    if (splits == 0)
      throw UsageError("backward: head dims " + std::to_string(s.head_dim) + "/" + std::to_string(s.head_dim_v) +
                       " cannot be split into 16-column slices whose dK/dV accumulators fit in registers");
  }
  if (s.sparse_q_block % c.block_m != 0 || s.sparse_kv_block % c.block_n != 0)
    throw UsageError("config " + c.str() + ": tiles must divide the block-mask blocks (" +
                     std::to_string(s.sparse_q_block) + " x " + std::to_string(s.sparse_kv_block) + ")");
  if (c.stages < 2 || c.stages > 4)
    throw UsageError("config " + c.str() + ": stages must be 2, 3 or 4");
  if (s.has_full_blocks && !s.has_block_mask)
    throw UsageError("has_full_blocks needs has_block_mask");
}

size_t attention_smem(const KernelSpec& s) {
  const size_t e = 2, m = s.config.block_m, n = s.config.block_n, d = s.head_dim, dv = s.head_dim_v;
  switch (s.family) {
    case Family::fwd:
      return std::max(m * d, m * dv) * e + s.config.stages * n * (d + dv) * e + (s.config.wgmma ? 1024 : 0);
    case Family::bwd_dq:
      return m * (d + dv) * e + s.config.stages * n * (d + dv) * e + (s.config.wgmma ? 1024 : 0) +
             buffer_grad_smem_bytes(s);
    case Family::bwd_dkdv: {
      size_t stage = m * (d + dv) * e + 2 * m * 4;  // Q, dO, and the LSE / delta rows
      if (s.config.wgmma) stage = (stage + 1023) / 1024 * 1024;  // wgmma tiles start 1024-aligned
      return n * (d + dv) * e + s.config.stages * stage + (s.config.wgmma ? 1024 : 0);
    }
    default: return 0;
  }
}

void validate_block_mask(const KernelSpec& s) {
  for (int block : {s.sparse_q_block, s.sparse_kv_block})
    if (block < 16 || block > 1024 || block % 16 != 0)
      throw UsageError("block-mask block size " + std::to_string(block) +
                       " is not supported: use a multiple of 16 between 16 and 1024");
}

std::string bool_text(bool b) { return b ? "1" : "0"; }

}  // namespace

std::string_view family_name(Family family) noexcept {
  switch (family) {
    case Family::builtin_axpy: return "builtin";
    case Family::block_mask: return "block_mask";
    case Family::fwd: return "fwd";
    case Family::bwd_preprocess: return "bwd_preprocess";
    case Family::bwd_dq: return "bwd_dq";
    case Family::bwd_dkdv: return "bwd_dkdv";
    case Family::bwd_buffer_grad: return "bwd_buffer_grad";
  }
  return "?";
}

Family parse_family(std::string_view name) {
  for (Family f : {Family::builtin_axpy, Family::block_mask, Family::fwd, Family::bwd_preprocess,
                   Family::bwd_dq, Family::bwd_dkdv, Family::bwd_buffer_grad})
    if (family_name(f) == name) return f;
  throw UsageError("unknown kernel family '" + std::string(name) +
                   "' (known: fwd, bwd_preprocess, bwd_dq, bwd_dkdv, bwd_buffer_grad, block_mask, builtin)");
}

std::string kernel_name(Family family, int index) {
  switch (family) {
    case Family::builtin_axpy: return "flexjit_builtin_axpy";
    case Family::block_mask: return index == 0 ? "flexjit_block_mask_classify" : "flexjit_block_mask_compact";
    case Family::fwd: return "flexjit_attention_fwd";
    case Family::bwd_preprocess: return "flexjit_attention_bwd_preprocess";
    case Family::bwd_dq: return "flexjit_attention_bwd_dq";
    case Family::bwd_dkdv: return "flexjit_attention_bwd_dkdv";
    case Family::bwd_buffer_grad: return buffer_grad_reduce_kernel_names().at(static_cast<size_t>(index));
  }
  return "";
}

BlockConfig default_config(Family family, int head_dim, int head_dim_v) {
  switch (family) {
    case Family::builtin_axpy: return {256, 1, 8, 2};
    case Family::block_mask: return {128, 128, 8, 2};
    case Family::fwd: {
      const int d = std::max(head_dim, head_dim_v);
      if (d <= 64) return {128, 64, 4, 2};
      if (d <= 128) return {128, 32, 4, 2};
      return {64, 32, 4, 2};
    }
    case Family::bwd_preprocess: return {0, 0, 8, 0};
    case Family::bwd_dq: {
      const int d = std::max(head_dim, head_dim_v);
      return d <= 128 ? BlockConfig{64, 64, 4, 2} : BlockConfig{64, 32, 4, 2};
    }
    case Family::bwd_dkdv: {
      const int d = std::max(head_dim, head_dim_v);
      if (d <= 64) return {64, 128, 8, 2};
      return d <= 128 ? BlockConfig{64, 64, 4, 2} : BlockConfig{32, 64, 4, 2};  // fits sm_80's 163 KiB
    }
    case Family::bwd_buffer_grad: return {0, 0, 8, 0};
  }
  return {};
}

void KernelSpec::validate() const {
  switch (family) {
    case Family::builtin_axpy:
      if (config.num_warps < 1 || config.num_warps > 32)
        throw UsageError("builtin kernel: warps must be between 1 and 32");
      break;
    case Family::block_mask: validate_block_mask(*this); break;
    case Family::bwd_buffer_grad: break;
    case Family::fwd:
    case Family::bwd_preprocess:
    case Family::bwd_dq:
    case Family::bwd_dkdv: validate_attention(*this); break;
  }
}

int KernelSpec::threads() const {
  switch (family) {
    case Family::block_mask:
    case Family::bwd_buffer_grad: return 256;
    default: return config.num_warps * 32;
  }
}

size_t KernelSpec::shared_memory_bytes() const { return attention_smem(*this); }

bool is_attention_family(Family family) {
  return family == Family::fwd || family == Family::bwd_preprocess || family == Family::bwd_dq ||
         family == Family::bwd_dkdv;
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

std::string KernelSpec::describe() const {
  std::string out(family_name(family));
  if (is_attention_family(family)) {
    out += " " + std::string(dtype_name(dtype)) + " d" + std::to_string(head_dim) + "/" +
           std::to_string(head_dim_v) + " " + config.str() + " gqa" + std::to_string(gqa_group) +
           " divisible=" + bool_text(is_divisible) + " block_mask=" + bool_text(has_block_mask) +
           " full_blocks=" + bool_text(has_full_blocks) + " safe_rows=" + bool_text(rows_guaranteed_safe) +
           " score_mod=" + score_mod.canonical() + " mask_mod=" + mask_mod.canonical();
    if (family == Family::bwd_dkdv) out += " splits=" + std::to_string(dkdv_splits(head_dim, head_dim_v));
    if (buffer_grads) out += " buffer_grads=1";
  } else if (family == Family::bwd_buffer_grad) {
    out += " score_mod=" + score_mod.canonical();
  } else if (family == Family::block_mask) {
    out += " blocks " + std::to_string(sparse_q_block) + "x" + std::to_string(sparse_kv_block) +
           " mask_mod=" + mask_mod.canonical();
  } else {
    out += " warps=" + std::to_string(config.num_warps);
  }
  return out;
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
  if (spec.config.wgmma && arch != "sm_90a")
    throw UsageError(std::string(family_name(spec.family)) + " config " + spec.config.str() +
                     " uses wgmma, which needs the sm_90a target (Hopper); the target is " + arch +
                     " — drop the trailing 'g' for the portable mma.sync path");
  const size_t need = spec.shared_memory_bytes(), limit = max_shared_memory_for_arch(arch);
  if (need > limit)
    throw UsageError(std::string(family_name(spec.family)) + " config " + spec.config.str() + " needs " +
                     kib(need) + " of shared memory; " + arch + " allows " + kib(limit) +
                     " per block — use fewer stages or smaller tiles");
}

nlohmann::json template_context(const KernelSpec& spec) {
  nlohmann::json ctx;
  ctx["description"] = spec.describe();
  nlohmann::json constants = nlohmann::json::array();
  switch (spec.family) {
    case Family::builtin_axpy:
      ctx["kernel_name"] = kernel_name(spec.family);
      constants.push_back(int_constant("THREADS", spec.threads()));
      break;
    case Family::block_mask:
      ctx["classify_kernel_name"] = kernel_name(spec.family, 0);
      ctx["compact_kernel_name"] = kernel_name(spec.family, 1);
      constants.push_back(int_constant("Q_BLOCK", spec.sparse_q_block));
      constants.push_back(int_constant("KV_BLOCK", spec.sparse_kv_block));
      break;
    case Family::bwd_preprocess:
      ctx["kernel_name"] = kernel_name(spec.family);
      ctx["element_type"] = spec.dtype == DType::bf16 ? "bf16" : "f16";
      constants.push_back(int_constant("DV", spec.head_dim_v));
      constants.push_back(int_constant("THREADS", spec.threads()));
      break;
    case Family::fwd:
    case Family::bwd_dq:
    case Family::bwd_dkdv:
      ctx["kernel_name"] = kernel_name(spec.family);
      ctx["element_type"] = spec.dtype == DType::bf16 ? "bf16" : "f16";
      if (spec.family == Family::bwd_dkdv)
        constants.push_back(int_constant("SPLITS", dkdv_splits(spec.head_dim, spec.head_dim_v)));
      constants.push_back(int_constant("D", spec.head_dim));
      constants.push_back(int_constant("DV", spec.head_dim_v));
      constants.push_back(int_constant("BLOCK_M", spec.config.block_m));
      constants.push_back(int_constant("BLOCK_N", spec.config.block_n));
      constants.push_back(int_constant("NUM_WARPS", spec.config.num_warps));
      constants.push_back(int_constant("STAGES", spec.config.stages));
      constants.push_back(int_constant("GQA_GROUP", spec.gqa_group));
      constants.push_back(int_constant("SPARSE_Q_BLOCK", spec.sparse_q_block));
      constants.push_back(int_constant("SPARSE_KV_BLOCK", spec.sparse_kv_block));
      constants.push_back(int_constant("EXPECTED_SMEM_BYTES", static_cast<long long>(spec.shared_memory_bytes())));
      constants.push_back(bool_constant("IS_DIVISIBLE", spec.is_divisible));
      constants.push_back(bool_constant("HAS_BLOCK_MASK", spec.has_block_mask));
      constants.push_back(bool_constant("HAS_FULL_BLOCKS", spec.has_full_blocks));
      constants.push_back(bool_constant("HAS_MASK", spec.has_mask()));
      constants.push_back(bool_constant("SCORE_IS_IDENTITY", spec.score_is_identity()));
      constants.push_back(bool_constant("ROWS_GUARANTEED_SAFE", spec.rows_guaranteed_safe));
      constants.push_back(bool_constant("WGMMA", spec.config.wgmma));
      ctx["wgmma"] = spec.config.wgmma;
      if (spec.family == Family::bwd_dq) add_buffer_grad_dq_context(spec, ctx, constants);
      break;
    case Family::bwd_buffer_grad: return buffer_grad_reduce_context(spec);
  }
  ctx["constants"] = constants;
  return ctx;
}

std::string variant_header(const KernelSpec& spec) {
  std::string out = "// Per-variant code emitted by flexjit's expression compiler.\n#pragma once\n";
  out += emit_mod_args_struct(spec.declarations);
  out += "\n";
  out += spec.score_mod.emit_cuda("flexjit_score_mod");
  out += "\n";
  out += spec.mask_mod.emit_cuda("flexjit_mask_mod");
  out += "\n";
  if (spec.family == Family::bwd_dq || spec.family == Family::bwd_dkdv) {
    out += spec.score_mod.gradient().emit_cuda("flexjit_score_grad", "score_mod_gradient");
    out += "\n";
  }
  if ((spec.family == Family::bwd_dq && spec.buffer_grads) || spec.family == Family::bwd_buffer_grad)
    out += buffer_grad_variant_code(spec);
  return out;
}

std::vector<WgmmaShape> wgmma_shapes(const KernelSpec& spec) {
  const BlockConfig& c = spec.config;
  switch (spec.family) {
    case Family::fwd: return {{c.block_n, false, false}, {spec.head_dim_v, true, true}};
    case Family::bwd_dq: return {{c.block_n, false, false}, {spec.head_dim, true, true}};
    case Family::bwd_dkdv: {
      const int splits = dkdv_splits(spec.head_dim, spec.head_dim_v);
      return {{c.block_m, false, false}, {spec.head_dim_v / splits, true, true}, {spec.head_dim / splits, true, true}};
    }
    default: return {};
  }
}

jit::Source render(const KernelSpec& spec) {
  spec.validate();
  jit::Source source;
  std::string template_name;
  switch (spec.family) {
    case Family::builtin_axpy:
      template_name = "builtin_axpy.cu.j2";
      source.name = "builtin_axpy.cu";
      source.kernel_names = {kernel_name(spec.family)};
      break;
    case Family::block_mask:
      template_name = "block_mask.cu.j2";
      source.name = "block_mask.cu";
      source.kernel_names = {kernel_name(spec.family, 0), kernel_name(spec.family, 1)};
      break;
    case Family::fwd:
    case Family::bwd_preprocess:
    case Family::bwd_dq:
    case Family::bwd_dkdv: {
      const std::string base = spec.family == Family::fwd ? "attention_fwd" : "attention_" + std::string(family_name(spec.family));
      template_name = base + ".cu.j2";
      source.name = base + ".cu";
      source.kernel_names = {kernel_name(spec.family)};
      break;
    }
    case Family::bwd_buffer_grad:
      template_name = "buffer_grad_reduce.cu.j2";
      source.name = "buffer_grad_reduce.cu";
      source.kernel_names = buffer_grad_reduce_kernel_names();
      break;
  }
  source.text = template_environment().render(template_name, template_context(spec));
  if (spec.family != Family::builtin_axpy) {
    for (const char* header : kSharedHeaders) source.headers[header] = template_registry().read(header);
    source.headers["flexjit_variant.cuh"] = variant_header(spec);
    if (spec.config.wgmma) source.headers["flexjit_wgmma.cuh"] = wgmma_header(spec.dtype, wgmma_shapes(spec));
    if (spec.buffer_grads || spec.family == Family::bwd_buffer_grad)
      for (const char* header : {"flexjit_buffer_grad.cuh", "flexjit_buffer_grad_params.cuh"})
        source.headers[header] = template_registry().read(header);
  }
  return source;
}

}  // namespace flexjit::codegen
