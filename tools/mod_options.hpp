#pragma once
// Command-line options shared by commands that take an attention variant: --score, --mask,
// --buffer NAME:DTYPE:SHAPE, --param NAME:TYPE, --dtype, --head-dim, --head-dim-v, and the block
// configuration flags.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "flexjit/config.hpp"
#include "flexjit/dtype.hpp"
#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"

namespace flexjit::cli {

// `--grad NAME`: marks declared buffers learnable; a name that is not a declared buffer is an error
// (whether the buffer may be learnable is checked with the expressions).
inline void mark_learnable(Declarations& declarations, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    bool found = false;
    for (auto& buffer : declarations.buffers)
      if (buffer.name == name) buffer.learnable = found = true;
    if (!found)
      throw UsageError("--grad " + name + ": no buffer '" + name + "' is declared; declare it with --buffer " +
                       name + ":f32:DIMS first");
  }
}

struct VariantOptions {
  std::string score;
  std::string mask;
  std::vector<std::string> buffer_decls;
  std::vector<std::string> param_decls;
  std::vector<std::string> grad_buffers;
  std::string dtype = "bf16";
  int head_dim = 128;
  int head_dim_v = 0;
  std::string config;
  int block_m = 0, block_n = 0, warps = 0, stages = 0;

  void add_mod_flags(CLI::App& app) {
    app.add_option("--score", score, "score_mod expression (default: score)");
    app.add_option("--mask", mask, "mask_mod expression (default: no mask)");
    app.add_option("--buffer", buffer_decls, "declare a buffer NAME:DTYPE:DIM[xDIM...] (DIM may be ?)");
    app.add_option("--param", param_decls, "declare a parameter NAME:int|float");
    app.add_option("--grad", grad_buffers, "mark a declared float buffer learnable (its gradient is derived)");
  }
  void add_kernel_flags(CLI::App& app) {
    app.add_option("--dtype", dtype, "element type of q, k, v, o: bf16 or f16")->capture_default_str();
    app.add_option("--head-dim", head_dim, "head dim of q and k")->capture_default_str();
    app.add_option("--head-dim-v", head_dim_v, "head dim of v and o (default: --head-dim)");
    app.add_option("--config", config, "block config, e.g. m128n64w4s2 (or the four flags below)");
    app.add_option("--block-m", block_m, "query rows per CTA");
    app.add_option("--block-n", block_n, "kv rows per step");
    app.add_option("--warps", warps, "warps per CTA");
    app.add_option("--stages", stages, "K/V pipeline stages");
  }

  Declarations declarations() const {
    Declarations d;
    for (const auto& b : buffer_decls) d.buffers.push_back(BufferDecl::parse(b));
    for (const auto& p : param_decls) d.params.push_back(ParamDecl::parse(p));
    mark_learnable(d, grad_buffers);
    return d;
  }
  DType element_type() const {
    auto parsed = parse_dtype(dtype);
    if (!parsed || (*parsed != DType::bf16 && *parsed != DType::f16))
      throw UsageError("--dtype must be bf16 or f16, got '" + dtype + "'");
    return *parsed;
  }
  int value_head_dim() const { return head_dim_v > 0 ? head_dim_v : head_dim; }
  // The config the flags describe, merged over `fallback` (flags override single fields).
  std::optional<BlockConfig> block_config(const BlockConfig& fallback) const {
    if (config.empty() && !block_m && !block_n && !warps && !stages) return std::nullopt;
    BlockConfig c = config.empty() ? fallback : BlockConfig::parse(config);
    if (block_m) c.block_m = block_m;
    if (block_n) c.block_n = block_n;
    if (warps) c.num_warps = warps;
    if (stages) c.stages = stages;
    return c;
  }
};

}  // namespace flexjit::cli
