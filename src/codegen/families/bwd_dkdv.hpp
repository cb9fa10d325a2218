#pragma once
// What the backward's host code (src/attention/attention.cpp) needs of the bwd_dkdv family beyond
// its descriptor: the facts of the warp-specialised kernel's column slices (above head dim 128)
// that change what a call must set up around it.
#include "codegen/kernel_spec.hpp"

namespace flexjit::codegen {

// The kv length the kernel's tail-free form (KernelSpec::is_divisible) needs a multiple of: its
// kv tiles, or with column slices two of them. (The reason, kv tiles 2c and 2c + 1 running as a
// cluster, went with the GQA pairs in session (zx); one tile would do, but the slices' tail-free
// form over an odd count of kv tiles has not run on a GPU since, so the rule stays until it has.)
int dkdv_kv_len_multiple(const KernelSpec& spec);

// The kernel adds its dQ shares through a TMA map of the fp32 accumulator (FlexjitBwdTma::dq,
// codegen::encode_dq_accum_tma) rather than with bulk copies of whole rows: its column slices.
bool dkdv_adds_dq_through_tensor_map(const KernelSpec& spec);

// The fast mode's first stores (FlexjitBwdParams::dq_first; the template's DQ_FIRST_STORES): the
// warp-specialised kernel's single dQ writer under a mask, where the warpgroups split dQ's
// columns (head dim 128). The first writer to reach a query tile stores its share, so the fp32
// sums are not zeroed first. Not at head dim 64, whose warpgroups take dQ by turns over tiles half
// as long: the writer's claim and wait per tile cost 7-10 % there (H200, notes/perf.md "(ze)");
// nor without a mask, where every kv tile reaches a query tile at about the same time; nor with
// GQA, whose CTAs walk every head of the group (H100 0.97-0.99x with them, H200 1.00x; causal 8:1
// 0.94x), unless the mask has no tile bounds (documents: 1.07-1.08x, notes/results/2026-12-07-zzzr).
bool dkdv_first_stores(const KernelSpec& spec);

// The fast mode's early conversion (FlexjitBwdParams::dq_done; the template's DQ_DONE_COUNT): the
// kernel counts, per (batch, kv head), its CTAs whose dQ shares have all landed, so that the
// convert kernel (its programmatic dependent) converts a kv head's query heads as soon as the
// count is whole, on the SMs the grid's last wave leaves idle, rather than after the grid. With
// GQA only, and not in the documents' launch groups of 1024 CTAs (measured: see the definition).
bool dkdv_counts_landed_ctas(const KernelSpec& spec);

// The deterministic mode's turn counters per (query tile, chain) (FlexjitBwdParams::dq_order) of
// a backward at these head dims: one per column slice of the warp-specialised kernel, each of
// whose writer warps takes its own turns.
int ordered_dq_counters_per_tile(int head_dim, int head_dim_v);

// The warp-specialised kernel folds a score_mod's derivative into Pᵀ as it computes Pᵀ (the
// template's FOLD_SCORE_GRAD): one register per score instead of two until dSᵀ. Where the whole
// tile's dK and dV columns sit in registers above head dim 64 the derivatives spilled (ptxas -v
// on emit's PTX, soft-capping d128: 144/112 bytes of spill stores/loads fast, 212/148 ordered;
// folded 12/28 and 80/80): H200 soft-capping causal d128 1.06x fast, 1.20x deterministic. At head
// dim 64 and with column slices (above 128) nothing spilled and the fold's selects cost 1-3 %
// (notes/perf.md, "(zp)"). Not for a derivative that is a constant (ALiBi, bias tables: `1`),
// which costs no register.
bool dkdv_folds_score_gradient(const KernelSpec& spec);

// Whether the score_mod's derivative is a constant: the identity's, ALiBi's and the bias tables'
// `1`, never saturating, so that a tile that drops no score needs no `P == 0` select in dSᵀ
// (dkdv_whole_tiles_without_select decides where that pays).
bool score_gradient_is_constant(const KernelSpec& spec);

// Whether the warp-specialised dK/dV kernel of `spec` takes dSᵀ without its select on whole tiles
// (the template's WHOLE_TILES_WITHOUT_SELECT): the score_mod's derivative is constant, and the mask
// (if any) has tile bounds, so that most of a walk's tiles are whole. Where data cuts the walks
// (documents: about 70 % of the tiles partial) the second form of dSᵀ cost more than it saved.
// H100, fast backward against main's kernels, the second of two calls of three rounds
// (notes/perf.md "(zzzn)"): long causal 1.047, causal d64 1.020, ALiBi causal 1.015, sliding
// window 1.013; documents 0.994 (0 of 3 rounds faster), 0.981 in the deterministic mode.
bool dkdv_whole_tiles_without_select(const KernelSpec& spec);

// The fast warp-specialised kernel reads each thread's two row statistics of an 8-column tile as
// one 8-byte load (the template's stats_pairs). H200, eight alternating rounds against main's
// binary (notes/perf.md "(zzq) and (zzr)", "(zzs)"):
// - tile head dims up to 64 under a mask, tables or a score_mod: 1.003-1.028x (ALiBi causal d64
//   1.028x, causal d32 1.024x, causal d48 1.016x). Not the plain kernel (no mask, no tables,
//   identity score_mod): 0.995x at d64, slower in 6 of 8 rounds.
// - tile head dim 128 with a score_mod whose derivative is not folded and whose buffers are
//   rank 1: ALiBi causal 1.026x, no mask 1.023x, GQA 4:1 1.033x, documents 1.012x, d112 1.027x,
//   a relative-position table 1.083x (ptxas' spills 8/36 bytes -> 0), each faster in 8 of 8
//   rounds. Not mask-only (causal 0.998x, sliding window 0.990x), not a folded derivative
//   (soft-capping 0.995x causal, 0.996x unmasked; spills 12 -> 44 bytes), not a table over two or
//   more coordinates (bias[h][q_idx][kv_idx] 0.978x, slower in 8 of 8; spills 76/100 -> 92/132).
// - never the ordered kernel, whose spills the text moved.
bool dkdv_reads_stats_pairs(const KernelSpec& spec);

// The warp-specialised kernel's LSE pairs (of the tile's first 8-column tiles) read into
// registers ahead of Sᵀ's wait, and as many of delta's ahead of dPᵀ's wait (the dSᵀ products
// waited on their delta reads as the probabilities did on the LSE's); the template's
// stats_ahead_tiles, 0: each value read where it is used.
// The wait's asm clobbers memory, so ptxas never hoists the reads itself, and the exponentials
// waited on them: short-scoreboard stalls on the FFMAs that subtract the LSE were 8.4 % of the
// causal d128 kernel's stall samples (H100, ncu, notes/results/2026-12-07-zzzp); FA4 reads all of
// them ahead. Head dims up to 64 only (at d128 the registers cost more than the waits saved), any
// lengths and GQA, but not GQA under a mask without tile bounds, nor the ordered kernel or
// per-sequence lengths (notes/results/2026-12-07-zzzr).
int dkdv_stats_ahead_tiles(const KernelSpec& spec);

// The score_mod's diagonal values (Expr::diagonal_value_count: `relh[h][kv_idx - q_idx + 4096]`,
// a T5 bucket's table read) that the warp-specialised kernel computes once per diagonal of every
// tile (each consumer warpgroup: BLOCK_M + 63 of them for its 64 kv rows) into shared memory,
// where each recomputed score reads its diagonal's, instead of reading the buffers once per score
// (as the forward does, forward_score_diagonal_values). 0 where the score_mod's derivative reads
// diagonal values of its own (those reads would stay per score), for an affine score (ALiBi: its
// per-score form is two FFMAs, cheaper than a shared load), with column slices (above head dim
// 128), and where the buffers do not fit beside one dQ staging buffer; at head dim 128 the kernel
// then has one dQ buffer instead of two (it left 896 bytes beside two; the trade is unmeasured).
int dkdv_score_diagonal_values(const KernelSpec& spec);

// Whether the dK/dV kernel reads its one diagonal value from a table of the call's diagonals (the
// diagonal_table family, written ahead of it), copied a query tile's slice at a time into shared
// memory by the producer beside the tile's Q and dO, instead of computing the values in the
// consumer warpgroups every tile: one value that reads neither b, q_len nor kv_len
// (relative-position tables, T5 buckets), where the stages' slices fit beside the rest. A call
// whose table holds some read's error bits computes the values as without it (exact errors).
bool dkdv_diagonal_table(const KernelSpec& spec);

// Whether, with the table, Sᵀ's accumulators start from the tile's diagonal values (8-byte pairs
// in the accumulators' units, the forward's table: FlexjitDiagonalTable) so that K Qᵀ adds onto
// them and the score needs no per-score read or add: a score_mod that is `score + V` exactly
// (Expr::diagonal_value_is_added_to_score) at a scale the forward's bias form takes
// (KernelSpec::negative_scale, small_scale), at head dim 64 (where it measured faster), where the
// stages' pair slices fit (else the raw table). A call whose table has error bits, or a value
// held at 2^126 (the table kernel's FLEXJIT_DIAGONAL_TABLE_HELD), computes its values as without
// the table.
bool dkdv_diagonal_seed(const KernelSpec& spec);

// The kernel may split each GQA group's query heads over its CTAs (KernelSpec::dkdv_head_splits
// on the warp-specialised kernel that sums dQ, fast or ordered: the template's HEAD_SPLITS);
// elsewhere the flag changes nothing.
bool dkdv_splits_heads(const KernelSpec& spec);

}  // namespace flexjit::codegen
