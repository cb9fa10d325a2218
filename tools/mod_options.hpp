#pragma once
// Command-line options shared by commands that take an attention variant: --score, --mask,
// --buffer NAME:DTYPE:SHAPE, --param NAME[:TYPE]=VALUE or NAME:TYPE, --dtype, --head-dim, --head-dim-v, and the block
// configuration flags.
#include <CLI/CLI.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "flexjit/config.hpp"
#include "flexjit/dtype.hpp"
#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"

namespace flexjit::cli {

// One spelling of --param for every command: NAME[:TYPE]=VALUE (TYPE int or float; without it an
// integer literal makes an int). Commands that only declare (check, emit) also accept NAME:TYPE
// and ignore a value. Returns the declaration and the value (nullopt when none was given).
inline std::pair<ParamDecl, std::optional<double>> parse_param(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return {ParamDecl::parse(text), std::nullopt};
  std::string name = text.substr(0, eq);
  const std::string value_text = text.substr(eq + 1);
  if (name.empty() || value_text.empty())
    throw UsageError("--param '" + text + "': expected NAME=VALUE, NAME:TYPE=VALUE or NAME:TYPE");
  bool integer = value_text.find_first_of(".eEnN") == std::string::npos;  // nan, inf: float
  const auto colon = name.find(':');
  if (colon != std::string::npos) {
    const std::string type = name.substr(colon + 1);
    if (type != "int" && type != "float")
      throw UsageError("--param '" + text + "': type must be int or float, got '" + type + "'");
    integer = type == "int";
    name = name.substr(0, colon);
  }
  size_t used = 0;
  double value = 0;
  bool out_of_range = false;
  try {
    value = std::stod(value_text, &used);
  } catch (const std::out_of_range&) {
    out_of_range = true;
  } catch (const std::exception&) {
    used = 0;
  }
  // The kernels read a float parameter as a 32-bit float: a finite value beyond its range would
  // become an infinity on the GPU while the CPU reference kept the double.
  if (out_of_range && integer)
    throw UsageError("--param '" + text + "': " + value_text + " is not a 32-bit integer");
  if (out_of_range || (!integer && std::isfinite(value) && std::isinf(static_cast<float>(value))))
    throw UsageError("--param '" + text + "': " + value_text + " is beyond the range of a 32-bit float (largest " +
                     "magnitude about 3.4e38); the kernels compute in float");
  if (used != value_text.size())
    throw UsageError("--param '" + text + "': '" + value_text + "' is not a number");
  return {ParamDecl::parse(name + (integer ? ":int" : ":float")), value};
}

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
    app.add_option("--param", param_decls,
                   "declare a parameter NAME:int|float, or NAME[:TYPE]=VALUE as `run` takes it (the value "
                   "gives the type when TYPE is left out)");
    app.add_option("--grad", grad_buffers, "mark a declared float buffer learnable (its gradient is derived)");
  }
  void add_kernel_flags(CLI::App& app) {
    app.add_option("--dtype", dtype, "element type of q, k, v, o: bf16 or f16")->capture_default_str();
    app.add_option("--head-dim", head_dim, "head dim of q and k")->capture_default_str();
    given_.head_dim_v = app.add_option("--head-dim-v", head_dim_v, "head dim of v and o (default: --head-dim)");
    add_config_flag(app, "block config, e.g. m128n64w4s2 (or the four flags below)");
    given_.block_m = app.add_option("--block-m", block_m, "query rows per CTA");
    given_.block_n = app.add_option("--block-n", block_n, "kv rows per step");
    given_.warps = app.add_option("--warps", warps, "warps per CTA");
    given_.stages = app.add_option("--stages", stages, "K/V pipeline stages");
  }
  void add_config_flag(CLI::App& app, const std::string& help) {
    given_.config = app.add_option("--config", config, help);
  }

  // The --config string parsed and checked the same way by every command, so one bad string
  // gives one message: given but empty is an error, not "no config".
  std::optional<BlockConfig> parsed_config() const {
    if (!given_.config || given_.config->count() == 0) return std::nullopt;
    if (config.empty())
      throw UsageError("--config '': give a block config such as m128n64w4s2, or leave --config out for the default");
    return BlockConfig::parse(config);
  }

  Declarations declarations() const {
    Declarations d;
    for (const auto& b : buffer_decls) d.buffers.push_back(BufferDecl::parse(b));
    for (const auto& p : param_decls) d.params.push_back(parse_param(p).first);
    mark_learnable(d, grad_buffers);
    return d;
  }
  DType element_type() const {
    auto parsed = parse_dtype(dtype);
    if (!parsed || (*parsed != DType::bf16 && *parsed != DType::f16))
      throw UsageError("--dtype must be bf16 or f16, got '" + dtype + "'");
    return *parsed;
  }
  // A given --head-dim-v is used as given (a bad one is the kernel family's named error), never
  // replaced by --head-dim.
  int value_head_dim() const { return given_.head_dim_v && given_.head_dim_v->count() > 0 ? head_dim_v : head_dim; }
  // The config the flags describe, merged over `fallback` (flags override single fields). A flag
  // given with 0 or a negative value is an error that names it, not "unset".
  std::optional<BlockConfig> block_config(const BlockConfig& fallback) const {
    const std::pair<const char*, std::pair<CLI::Option*, int>> flags[] = {
        {"--block-m", {given_.block_m, block_m}},
        {"--block-n", {given_.block_n, block_n}},
        {"--warps", {given_.warps, warps}},
        {"--stages", {given_.stages, stages}}};
    bool any = false;
    for (const auto& [name, option] : flags) {
      if (!option.first || option.first->count() == 0) continue;
      any = true;
      if (option.second <= 0)
        throw UsageError(std::string(name) + " must be a positive number, got " + std::to_string(option.second));
    }
    const std::optional<BlockConfig> parsed = parsed_config();
    if (!parsed && !any) return std::nullopt;
    BlockConfig c = parsed.value_or(fallback);
    if (given_.block_m && given_.block_m->count()) c.block_m = block_m;
    if (given_.block_n && given_.block_n->count()) c.block_n = block_n;
    if (given_.warps && given_.warps->count()) c.num_warps = warps;
    if (given_.stages && given_.stages->count()) c.stages = stages;
    return c;
  }

 private:
  struct Given {
    CLI::Option* config = nullptr;
    CLI::Option* block_m = nullptr;
    CLI::Option* block_n = nullptr;
    CLI::Option* warps = nullptr;
    CLI::Option* stages = nullptr;
    CLI::Option* head_dim_v = nullptr;
  } given_;
};

}  // namespace flexjit::cli
