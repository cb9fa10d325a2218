#pragma once
// How the backward's warp-specialised dK/dV kernel (both modes) splits a GQA group's query heads over CTAs
// (host side, no GPU needed: tested on the CPU).
//
// The kernel runs one CTA per (kv tile, kv head, batch), and each walks the query tiles of every
// query head of its group. With few kv heads (a tensor-parallel shard of a GQA model holds one or
// two) those CTAs are fewer than the SMs, or so long that the last ones run alone: H200, causal
// d128, 8 query heads on one kv head, B=1 S=8192: 152 TF/s against cuDNN's 453 (notes/perf.md
// "(zzg)"). Split s ways, each CTA walks group / s of the heads and stores its dK and dV in fp32;
// a small kernel adds the s partial sums in order (the same bits every run: the deterministic mode
// takes it too).
#include <cstdint>

namespace flexjit::attention {

/// The dK/dV grid a split is chosen for.
struct HeadSplitProblem {
  int kv_tiles = 1;    ///< kv tiles of a sequence (the kernel's units)
  int64_t pairs = 1;   ///< (kv head, batch) pairs
  int group = 1;       ///< query heads per kv head
  int q_tiles = 1;     ///< 64-row query tiles a kv tile's walk can visit per head
  bool masked = false; ///< walks of unequal length (a mask: modelled as causal's, the longest first)
  int sm_count = 132;  ///< CTAs that run at once (one per SM)
  int kv_len = 1;      ///< keys per sequence (the partial sums' rows)
  int head_dims = 256; ///< D + Dv (the partial sums' columns and the work per tile)
  int launch_group_ctas = 0; ///< the kernel's launch groups (codegen::dkdv_launch_group_ctas; 0: the plain order)
};

/// How many CTAs share each (kv tile, kv head): 1 (no split) to `group`, each split walking the
/// heads flexjit_first_split_head gives it (templates/flexjit_params.cuh; 7 in 3: 2, 2, 3). The
/// choice simulates the grid as the GPU runs it (CTAs start in launch order, each on the first SM
/// that is free, as the kernel orders them: heaviest kv tiles first in groups of pairs under a
/// mask) for every count, adds the partial sums' traffic to the split ones, and takes the
/// fastest, a split only where it gains at least 5 % and its fp32 partial sums fit 1 GiB. Pure
/// function of its argument.
int choose_bwd_head_splits(const HeadSplitProblem& problem);

/// The estimated time of one choice, in units of one query tile of one head on one SM (for tests
/// and notes): the simulated grid's end plus the partial sums' cost where `splits` > 1.
double estimate_bwd_head_split_time(const HeadSplitProblem& problem, int splits);

/// FLEXJIT_BWD_HEAD_SPLITS (a measurement knob of the warp-specialised kernel, both modes): 0 when
/// unset (choose_bwd_head_splits decides), else the split count, from 1 to `group`.
/// Throws UsageError naming the variable, its value and the group otherwise.
int forced_bwd_head_splits(int group);

}  // namespace flexjit::attention
