#include "tune/config_space.hpp"

#include <algorithm>
#include <tuple>

#include "flexjit/error.hpp"

namespace flexjit::tune {

namespace {

using codegen::Family;

// Head-dim classes the curated lists are written for (the larger of D and DV decides).
enum class HeadClass { d64, d128, d256 };

HeadClass head_class(const codegen::KernelSpec& spec) {
  const int d = std::max(spec.head_dim, spec.head_dim_v);
  return d <= 64 ? HeadClass::d64 : d <= 128 ? HeadClass::d128 : HeadClass::d256;
}

// The small space, most promising first. Each list starts with codegen::default_config for its
// class; the rest vary the tiles, warps and stages around it the way FlashAttention-style kernels
// usually gain (wider tiles for small head dims, 8 warps to halve the rows per warp when the
// accumulators are wide, a third pipeline stage where shared memory allows it). m64n64w2s3 for
// the d64 dQ kernel is there because it won the full search on an H100 (S = 4096).
// Entries that do not survive pruning for a spec (shared memory of the arch, block-mask sizes)
// simply drop out, so each list also holds smaller fallbacks for sm_86/sm_89 (99 KiB). Entries
// ending in 'g' take the forward's wgmma path, which only the sm_90a target keeps.
std::vector<const char*> curated(Family family, HeadClass hc) {
  switch (family) {
    case Family::fwd:
      switch (hc) {
        case HeadClass::d64:
          return {"m128n64w4s2", "m128n128w4s2", "m128n64w4s3", "m128n128w8s2", "m64n64w4s2", "m128n64w8s2",
                  "m64n128w4s2", "m128n128w8s2g", "m64n128w4s2g"};
        case HeadClass::d128:
          return {"m128n32w4s2", "m128n64w4s2", "m128n64w8s2", "m64n64w4s2", "m128n32w4s3", "m128n128w8s2",
                  "m64n32w4s2", "m128n128w8s2g", "m128n64w8s2g", "m64n128w4s2g"};
        case HeadClass::d256:
          return {"m64n32w4s2", "m64n64w4s2", "m128n32w8s2", "m128n64w8s2", "m64n32w4s3", "m32n32w2s2",
                  "m64n16w4s2", "m128n64w8s2g", "m64n64w4s2g"};
      }
      break;
    case Family::bwd_dq:
      switch (hc) {
        case HeadClass::d64:
          return {"m64n64w4s2", "m64n128w4s2", "m128n64w8s2", "m128n128w8s2", "m64n64w4s3", "m64n64w2s3",
                  "m64n32w4s2", "m64n64w4s2g", "m128n64w8s2g"};
        case HeadClass::d128:
          return {"m64n64w4s2", "m64n32w4s2", "m128n64w8s2", "m128n32w8s2", "m64n64w4s3", "m64n128w4s2",
                  "m64n64w4s2g", "m128n64w8s2g", "m64n128w4s2g"};
        case HeadClass::d256:
          return {"m64n32w4s2", "m64n64w4s2", "m128n32w8s2", "m64n32w4s3", "m32n32w2s2", "m64n16w4s2",
                  "m64n32w4s2g"};
      }
      break;
    case Family::bwd_dkdv:  // block_n: kv rows each CTA owns; block_m: query rows streamed
      switch (hc) {
        case HeadClass::d64:
          return {"m64n128w8s2", "m64n64w4s2", "m128n128w8s2", "m32n128w8s2", "m64n128w8s3", "m64n64w4s3",
                  "m64n128w8s2g", "m64n64w4s2g"};
        case HeadClass::d128:
          return {"m64n64w4s2", "m32n64w4s2", "m64n128w8s2", "m32n128w8s2", "m64n64w4s3", "m16n64w4s2",
                  "m64n64w4s2g", "m32n64w4s2g", "m64n128w8s2g"};
        case HeadClass::d256:
          return {"m64n64w4s2", "m32n64w4s2", "m16n64w4s2", "m32n32w2s2", "m32n128w8s2", "m16n128w8s2",
                  "m16n32w2s2", "m32n64w4s2g"};
      }
      break;
    default: break;
  }
  return {};
}

void require_tunable(const codegen::KernelSpec& base) {
  if (base.family != Family::fwd && base.family != Family::bwd_dq && base.family != Family::bwd_dkdv)
    throw UsageError("autotuning covers the fwd, bwd_dq and bwd_dkdv kernels; " +
                     std::string(codegen::family_name(base.family)) + " has no block config to tune");
}

codegen::KernelSpec with_config(const codegen::KernelSpec& base, const BlockConfig& config) {
  codegen::KernelSpec spec = base;
  spec.config = config;
  return spec;
}

bool survives(const codegen::KernelSpec& base, const BlockConfig& config, const std::string& arch) {
  return !prune_reason(with_config(base, config), arch).has_value();
}

// The config `text` names, or nullopt when this build's BlockConfig does not know the form (the
// 'g' suffix of the wgmma path).
std::optional<BlockConfig> try_parse(const char* text) {
  try {
    return BlockConfig::parse(text);
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

// The wgmma variant of `c`, when this build has that path.
std::optional<BlockConfig> wgmma_variant(const BlockConfig& c) { return try_parse((c.str() + "g").c_str()); }

bool config_less(const BlockConfig& a, const BlockConfig& b) {
  if (a.block_m != b.block_m) return a.block_m < b.block_m;
  if (a.block_n != b.block_n) return a.block_n < b.block_n;
  if (a.num_warps != b.num_warps) return a.num_warps < b.num_warps;
  if (a.stages != b.stages) return a.stages < b.stages;
  return a.str() < b.str();  // the wgmma variant after the mma.sync one
}

}  // namespace

int estimated_accumulator_registers(const codegen::KernelSpec& spec) {
  const BlockConfig& c = spec.config;
  if (c.num_warps <= 0) return 0;
  const int d = spec.head_dim, dv = spec.head_dim_v;
  switch (spec.family) {
    case Family::fwd:
      if (c.block_m % c.num_warps) return 0;
      return (c.block_m / c.num_warps / 16) * (c.block_n / 8 + dv / 8) * 4;
    case Family::bwd_dq:
      if (c.block_m % c.num_warps) return 0;
      return (c.block_m / c.num_warps / 16) * (2 * c.block_n / 8 + d / 8) * 4;
    case Family::bwd_dkdv: {
      const int splits = codegen::dkdv_splits(d, dv);
      if (c.block_n % c.num_warps || splits == 0) return 0;
      return (c.block_n / c.num_warps / 16) * (2 * c.block_m / 8 + (d + dv) / splits / 8) * 4;
    }
    default: return 0;
  }
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
    for (const char* text : curated(base.family, head_class(base)))
      if (const std::optional<BlockConfig> c = try_parse(text)) add(*c);
    return out;
  }
  for (int m : kBlockSizes)
    for (int n : kBlockSizes)
      for (int w : kWarpCounts)
        for (int s : kStageCounts) {
          BlockConfig c;
          c.block_m = m, c.block_n = n, c.num_warps = w, c.stages = s;
          if (survives(base, c, arch)) out.push_back(c);
          if (const std::optional<BlockConfig> g = wgmma_variant(c); g && survives(base, *g, arch)) out.push_back(*g);
        }
  std::sort(out.begin(), out.end(), config_less);
  return out;
}

BlockConfig default_for(const codegen::KernelSpec& base, const std::string& arch) {
  // On Hopper the forward's wgmma path is the default (measured on an H100: 472 TF/s noop d128
  // against 332 for the best mma.sync config).
  // The backward's wgmma kernels likewise (noop d128: 362 TF/s against 246). For dK/dV, 128 kv
  // rows in two warpgroups: tuning the suite on an H100 picked it for 9 of the 13 problems, d64
  // included; where one warpgroup of 64 rows won (document masks, softcap, GQA) it was by at
  // most 1.05x.
  if (arch == "sm_90a") {
    const bool narrow = std::max(base.head_dim, base.head_dim_v) <= 128;
    const char* hopper = nullptr;
    if (base.family == Family::fwd) hopper = narrow ? "m128n128w8s2g" : "m128n64w8s2g";
    if (base.family == Family::bwd_dq && narrow) hopper = "m64n64w4s2g";
    if (base.family == Family::bwd_dkdv && narrow) hopper = "m64n128w8s2g";
    if (hopper)
      if (const std::optional<BlockConfig> c = try_parse(hopper); c && survives(base, *c, arch)) return *c;
  }
  const BlockConfig builtin = codegen::default_config(base.family, base.head_dim, base.head_dim_v);
  if (curated(base.family, head_class(base)).empty() || survives(base, builtin, arch)) return builtin;
  for (const char* text : curated(base.family, head_class(base))) {
    const std::optional<BlockConfig> c = try_parse(text);
    if (c && survives(base, *c, arch)) return *c;
  }
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
