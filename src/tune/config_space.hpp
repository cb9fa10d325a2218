#pragma once
// The block configurations worth trying for one attention kernel: every (BLOCK_M, BLOCK_N, warps,
// stages) the kernel accepts, pruned before anything is compiled by what would fail or spill on the
// target (shared memory, accumulator registers, block-mask block sizes), and a curated "small"
// subset for FLEXJIT_AUTOTUNE=on. Needs no GPU: everything is decided from the spec and the arch.
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "flexjit/config.hpp"

namespace flexjit::tune {

enum class SearchSpace {
  small,  // a handful of configs known to do well for the family and head dim (FLEXJIT_AUTOTUNE=on)
  full,   // everything that survives pruning (FLEXJIT_AUTOTUNE=max)
};

// The values the full space enumerates.
inline constexpr int kBlockSizes[] = {16, 32, 64, 128};
inline constexpr int kWarpCounts[] = {1, 2, 4, 8};
inline constexpr int kStageCounts[] = {2, 3, 4};

// Configs whose estimated fp32 accumulator registers per thread exceed this are pruned. A thread
// has 255 registers; about 50 go to addressing, loop state, softmax statistics and the operand
// fragments loaded for each mma, so accumulators beyond ~200 make ptxas spill to local memory, and
// a spilling attention kernel is never the fastest candidate. Checked against ptxas (NVRTC 13.0,
// sm_80, d128, all three families): estimates up to 160 compile without spills, 192 spills at most
// 24 bytes per thread, 256 and above spill 450 to 2200 bytes; power-of-two tiles put nothing
// between 192 and 256.
inline constexpr int kMaxAccumulatorRegisters = 200;

// fp32 accumulator registers per thread the spec's kernel keeps live in its inner loop (mma
// m16n8 accumulators: 4 per thread per 16x8 tile), by family:
//   fwd      (BLOCK_M / warps / 16) * (BLOCK_N / 8 + DV / 8) * 4            S tile + O
//   bwd_dq   (BLOCK_M / warps / 16) * (2 * BLOCK_N / 8 + D / 8) * 4         S, dP + dQ
//   bwd_dkdv (BLOCK_N / warps / 16) * (2 * BLOCK_M / 8 + (D + DV) / splits / 8) * 4
//                                                          S^T, dP^T + one dK/dV column slice
// The wgmma path (block_m = 16 * warps: one 64-row warpgroup tile per 4 warps) holds the same
// number per thread. 0 for the other families, and for a config whose warps do not divide the tile.
int estimated_accumulator_registers(const codegen::KernelSpec& spec);

// Why `spec` (with its config) cannot be a candidate on `arch`, or nullopt when it can: the
// UsageError text of KernelSpec::validate() (tiles, warps, stages, block-mask divisibility) or of
// codegen::check_shared_memory() ("fwd config m64n64w4s2 needs 160 KiB of shared memory; sm_86
// allows 99 KiB per block — use fewer stages or smaller tiles"), or
// "fwd config m128n32w4s2 needs ~288 fp32 accumulator registers per thread (more than 200 spill)
// — use more warps or smaller tiles".
std::optional<std::string> prune_reason(const codegen::KernelSpec& spec, const std::string& arch);

// Every config of `space` for `base` (its config is ignored) on `arch`, in a deterministic order:
// small in order of preference, full sorted by (block_m, block_n, warps, stages). The small space
// always holds default_for(base, arch), first, when any config survives. For fwd, both spaces
// also hold wgmma variants ("...g"), which survive only on sm_90a (and only where this build's
// BlockConfig has that path). Throws UsageError for a family without block configs (only fwd,
// bwd_dq and bwd_dkdv are tuned).
std::vector<BlockConfig> candidate_configs(const codegen::KernelSpec& base, SearchSpace space,
                                           const std::string& arch);

// The config to use when tuning is off (or before it has run): codegen::default_config when it
// survives pruning on `arch`, else the most preferred curated config that does (so a head dim 256
// backward on sm_86, whose 99 KiB of shared memory the built-in defaults exceed, still gets a
// config that launches), else the built-in default unchanged (its launch then reports why).
// Families without a search space (builtin, block_mask, bwd_preprocess) get codegen::default_config.
BlockConfig default_for(const codegen::KernelSpec& base, const std::string& arch);

}  // namespace flexjit::tune
