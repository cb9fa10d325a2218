#include "tune/config_space.hpp"

#include <algorithm>
#include <tuple>

#include "codegen/family.hpp"
#include "flexjit/error.hpp"

namespace flexjit::tune {

namespace {

// The curated small space of the spec's family and head-dim class (empty: the family has none).
std::vector<const char*> curated(const codegen::KernelSpec& spec) {
  const codegen::FamilyDescriptor& family = codegen::descriptor(spec.family);
  return family.has_tuning() ? family.curated_configs(codegen::head_class(spec)) : std::vector<const char*>{};
}

void require_tunable(const codegen::KernelSpec& base) {
  if (codegen::descriptor(base.family).has_tuning()) return;
  std::vector<std::string> tunable;
  for (const codegen::FamilyDescriptor* f : codegen::all_families())
    if (f->has_tuning()) tunable.emplace_back(f->name);
  std::string list;
  for (size_t i = 0; i < tunable.size(); ++i)
    list += (i == 0 ? "" : i + 1 == tunable.size() ? " and " : ", ") + tunable[i];
  throw UsageError("autotuning covers the " + list + " kernels; " + std::string(codegen::family_name(base.family)) +
                   " has no block config to tune");
}

codegen::KernelSpec with_config(const codegen::KernelSpec& base, const BlockConfig& config) {
  codegen::KernelSpec spec = base;
  spec.config = config;
  return spec;
}

bool survives(const codegen::KernelSpec& base, const BlockConfig& config, const std::string& arch) {
  return !prune_reason(with_config(base, config), arch).has_value();
}

// The wgmma variant of `c` ("...g").
BlockConfig wgmma_variant(BlockConfig c) {
  c.wgmma = true;
  return c;
}

// The warp-specialised variant of `c` ("...ws"; the forward only).
BlockConfig warp_specialized_variant(BlockConfig c) {
  c.wgmma = c.warp_specialized = true;
  return c;
}

bool config_less(const BlockConfig& a, const BlockConfig& b) {
  if (a.block_m != b.block_m) return a.block_m < b.block_m;
  if (a.block_n != b.block_n) return a.block_n < b.block_n;
  if (a.num_warps != b.num_warps) return a.num_warps < b.num_warps;
  if (a.stages != b.stages) return a.stages < b.stages;
  return a.str() < b.str();  // mma.sync, then the wgmma variant, then the warp-specialised one
}

}  // namespace

int estimated_accumulator_registers(const codegen::KernelSpec& spec) {
  const codegen::FamilyDescriptor& family = codegen::descriptor(spec.family);
  return family.accumulator_registers ? family.accumulator_registers(spec) : 0;
}

std::optional<std::string> prune_reason(const codegen::KernelSpec& spec, const std::string& arch) {
  try {
    spec.validate();
    codegen::check_shared_memory(spec, arch);
  } catch (const UsageError& e) {
    return std::string(e.what());
  }
  const int registers = estimated_accumulator_registers(spec);
  if (registers > kMaxAccumulatorRegisters)
    return std::string(codegen::family_name(spec.family)) + " config " + spec.config.str() + " needs ~" +
           std::to_string(registers) + " fp32 accumulator registers per thread (more than " +
           std::to_string(kMaxAccumulatorRegisters) + " spill) — use more warps or smaller tiles";
  return std::nullopt;
}

std::vector<BlockConfig> candidate_configs(const codegen::KernelSpec& base, SearchSpace space,
                                           const std::string& arch) {
  require_tunable(base);
  std::vector<BlockConfig> out;
  if (space == SearchSpace::small) {
    auto add = [&](const BlockConfig& c) {
      if (std::find(out.begin(), out.end(), c) == out.end() && survives(base, c, arch)) out.push_back(c);
    };
    add(default_for(base, arch));
    for (const char* text : curated(base)) add(BlockConfig::parse(text));
    return out;
  }
  for (int m : kBlockSizes)
    for (int n : kBlockSizes)
      for (int w : kWarpCounts)
        for (int s : kStageCounts) {
          BlockConfig c;
          c.block_m = m, c.block_n = n, c.num_warps = w, c.stages = s;
          if (survives(base, c, arch)) out.push_back(c);
          if (const BlockConfig g = wgmma_variant(c); survives(base, g, arch)) out.push_back(g);
          if (const BlockConfig ws = warp_specialized_variant(c); survives(base, ws, arch)) out.push_back(ws);
        }
  // The warp-specialised forward's wide tiles, outside the power-of-two grid: three consumer
  // warpgroups over 192 query rows, and 176-key tiles (validation keeps them to calls without a
  // block mask and head dims up to 128).
  for (int s : kStageCounts) {
    for (int n : {64, 128}) {
      BlockConfig c;
      c.block_m = 192, c.block_n = n, c.num_warps = 12, c.stages = s;
      if (const BlockConfig ws = warp_specialized_variant(c); survives(base, ws, arch)) out.push_back(ws);
    }
    for (auto [m, w] : {std::pair{64, 4}, std::pair{128, 8}}) {
      BlockConfig c;
      c.block_m = m, c.block_n = 176, c.num_warps = w, c.stages = s;
      if (const BlockConfig ws = warp_specialized_variant(c); survives(base, ws, arch)) out.push_back(ws);
    }
  }
  std::sort(out.begin(), out.end(), config_less);
  return out;
}

BlockConfig default_for(const codegen::KernelSpec& base, const std::string& arch) {
  // On Hopper the family's wgmma config is the default where it has one (the measurements are in
  // each family's hopper_default).
  const codegen::FamilyDescriptor& family = codegen::descriptor(base.family);
  if (arch == "sm_90a" && family.hopper_default)
    if (const char* hopper = family.hopper_default(base))
      if (const BlockConfig c = BlockConfig::parse(hopper); survives(base, c, arch)) return c;
  const BlockConfig builtin = codegen::default_config(base.family, base.head_dim, base.head_dim_v);
  if (curated(base).empty() || survives(base, builtin, arch)) return builtin;
  for (const char* text : curated(base))
    if (const BlockConfig c = BlockConfig::parse(text); survives(base, c, arch)) return c;
  // Nothing curated fits (an unusual block-mask size, say): the largest surviving tile, fewest
  // stages, then the fewest warps that reach it.
  std::optional<BlockConfig> best;
  for (int m : kBlockSizes)
    for (int n : kBlockSizes)
      for (int w : kWarpCounts)
        for (int s : kStageCounts) {
          BlockConfig c;
          c.block_m = m, c.block_n = n, c.num_warps = w, c.stages = s;
          if (!survives(base, c, arch)) continue;
          auto score = [](const BlockConfig& x) { return std::make_tuple(x.block_m * x.block_n, -x.stages, -x.num_warps); };
          if (!best || score(c) > score(*best)) best = c;
        }
  return best.value_or(builtin);
}

}  // namespace flexjit::tune
