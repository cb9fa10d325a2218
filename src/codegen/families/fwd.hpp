#pragma once
// What the forward's host code (src/attention/attention.cpp) and the variant header
// (kernel_spec.cpp) need of the fwd family beyond its descriptor: the persistent warp-specialised
// kernel's walk over its work tiles, the mask's column values and the score_mod's affine form.
#include <optional>

#include "codegen/kernel_spec.hpp"

namespace flexjit::codegen {

// The (batch, query head) pairs per section of the warp-specialised forward's persistent walk
// (FlexjitFwdParams::tile_section): a section's work tiles come one after another, heaviest
// query tiles first. With tickets (`by_ticket`: the tiles' key counts differ, and CTAs take them
// in order) a section holds the heads whose K and V fit an 8 MiB share of L2 together, and at
// least 4 tiles per CTA, so that the last section's heaviest tile is taken early enough for the
// lighter ones to even out the CTAs' finishing times; then the sections are evened out (the last
// one, the heads left over, at least three quarters of the others, no section more than twice
// that size; where no split qualifies, that size). Striding over equal tiles, one head.
int forward_tile_section(const KernelSpec& spec, int heads, int tiles_per_head, int kv_len, int ctas,
                         bool by_ticket);

// The mask's column values (Expr::column_value_count) the forward computes once per key of a
// masked tile into shared memory (the warp-specialised kernel: each consumer warpgroup into its
// own buffers), instead of once per score; 0 for other kernels, masks without such values, more
// than four of them, the tile-bounds walk (KernelSpec::tile_bounds_walk: its warps class tiles
// alone), or where their buffers would not fit beside the rest of the kernel's shared memory (the
// synchronous kernel: on every GPU it runs on).
int forward_mask_column_values(const KernelSpec& spec);

// The score_mod's column values (Expr::column_value_count: `bias[b][kv_idx]` and the like) the
// warp-specialised forward computes once per key of every tile into its warpgroups' shared
// memory, where each score reads them, instead of reading the buffer once per score; 0 for other
// kernels, identity scores, more than four values, a mask with column values of its own, an
// affine score (forward_kv_affine) or where the buffers would not fit.
int forward_score_column_values(const KernelSpec& spec);

// The score_mod's diagonal values (Expr::diagonal_value_count: `rel[h][kv_idx - q_idx + 4096]`,
// a T5 bucket's table read) the warp-specialised forward computes once per diagonal of every tile
// (each consumer warpgroup: BLOCK_N + 63 of them for its 64 rows) into shared memory, where each
// score reads its diagonal's, instead of reading the buffer once per score; 0 where the score_mod
// has column values, and as forward_score_column_values otherwise.
int forward_score_diagonal_values(const KernelSpec& spec);

// Whether the forward adds the score_mod's diagonal value to the scores' accumulators before
// Q K^T adds in (Expr::diagonal_value_is_added_to_score: `score + rel[h][kv_idx - q_idx + 4096]`,
// T5 buckets), where it has diagonal values at all (forward_score_diagonal_values): the
// warp-specialised kernel with two or more consumer warpgroups, a positive scale of 2^-20 or more
// and no mask column values (KernelSpec::small_scale, forward_mask_column_values). Its
// warpgroups stage each key tile's values a tile ahead, also as pairs in the accumulators'
// layout, scaled by 1 / (scale log2 e), and read them into the accumulators with one 8-byte load
// per two scores: no add per score after the product (attention_fwd_ws.cu.j2,
// DIAGONAL_BIAS).
bool forward_diagonal_bias_form(const KernelSpec& spec);

// Whether the bias form reads its values from a table of the call's diagonals (the
// diagonal_table family, written ahead of the forward), copied a key tile's slice at a time into
// the stage beside K by the producer, instead of computing them in the consumer warpgroups every
// tile: V = the one diagonal value reads neither b, q_len nor kv_len (relative-position tables, T5
// buckets), up to 128-key tiles and Dv up to 128, two consumer warpgroups, or three where the mask
// reads no buffer and S, P and O fit the overlap's 128 registers (d64).
bool forward_diagonal_table(const KernelSpec& spec);

// The score_mod's affine form in kv_idx (Expr::kv_affine_form) where the forward takes it: its
// tiles that cross no key end then evaluate the mod's position part once per row and each score
// in two FFMAs (ALiBi's forward 1.04-1.09x on an H200, notes/perf.md "(zza)"). nullopt for other
// families and mods, and above head dim 128 (see fwd.cpp).
std::optional<ScoreKvAffineForm> forward_kv_affine(const KernelSpec& spec);

}  // namespace flexjit::codegen
