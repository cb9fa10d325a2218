// Config spaces: pruning by shared memory per arch, by block-mask block sizes and by the
// accumulator-register estimate; the small space inside the full one, the default inside both;
// per-arch defaults that fit.
#include "tune/config_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "flexjit/error.hpp"

namespace flexjit::test {
namespace {

using codegen::Family;
using codegen::KernelSpec;
using tune::SearchSpace;

KernelSpec spec_of(Family family, int head_dim, int head_dim_v = 0) {
  KernelSpec s;
  s.family = family;
  s.dtype = DType::bf16;
  s.head_dim = head_dim;
  s.head_dim_v = head_dim_v ? head_dim_v : head_dim;
  return s;
}

KernelSpec with(const KernelSpec& base, const std::string& config) {
  KernelSpec s = base;
  s.config = BlockConfig::parse(config);
  return s;
}

std::vector<std::string> names(const std::vector<BlockConfig>& configs) {
  std::vector<std::string> out;
  for (const auto& c : configs) out.push_back(c.str());
  return out;
}

TEST(ConfigSpace, SharedMemoryOfTheArchPrunes) {
  const KernelSpec base = spec_of(Family::fwd, 256);
  const auto sm86 = tune::candidate_configs(base, SearchSpace::full, "sm_86");
  const auto sm80 = tune::candidate_configs(base, SearchSpace::full, "sm_80");
  ASSERT_FALSE(sm86.empty());
  for (const auto& c : sm86) EXPECT_LE(with(base, c.str()).shared_memory_bytes(), 99u * 1024) << c.str();
  // Everything that fits 99 KiB fits 163 KiB, and sm_80 keeps configs sm_86 cannot.
  for (const auto& c : sm86) EXPECT_NE(std::find(sm80.begin(), sm80.end(), c), sm80.end()) << c.str();
  EXPECT_GT(sm80.size(), sm86.size());
  EXPECT_EQ(tune::prune_reason(with(base, "m64n64w4s2"), "sm_86").value(),
            "fwd config m64n64w4s2 needs 160 KiB of shared memory; sm_86 allows 99 KiB per block — use fewer "
            "stages or smaller tiles");
  EXPECT_FALSE(tune::prune_reason(with(base, "m64n64w4s2"), "sm_80").has_value());
}

TEST(ConfigSpace, TilesMustDivideTheBlockMaskBlocks) {
  KernelSpec base = spec_of(Family::fwd, 128);
  base.has_block_mask = base.has_full_blocks = true;
  base.sparse_q_block = base.sparse_kv_block = 64;
  for (SearchSpace space : {SearchSpace::small, SearchSpace::full}) {
    const auto configs = tune::candidate_configs(base, space, "sm_90a");
    ASSERT_FALSE(configs.empty());
    for (const auto& c : configs) {
      EXPECT_EQ(64 % c.block_m, 0) << c.str();
      EXPECT_EQ(64 % c.block_n, 0) << c.str();
    }
  }
  EXPECT_EQ(tune::prune_reason(with(base, "m128n64w4s2"), "sm_90a").value(),
            "config m128n64w4s2: tiles must divide the block-mask blocks (64 x 64)");
  // The built-in default m128n32w4s2 does not divide 64-row blocks: the first curated config
  // that does takes its place.
  EXPECT_EQ(tune::default_for(base, "sm_90a").str(), "m64n64w4s2");
}

TEST(ConfigSpace, AccumulatorRegisterEstimate) {
  EXPECT_EQ(tune::estimated_accumulator_registers(with(spec_of(Family::fwd, 128), "m128n64w4s2")), 192);
  EXPECT_EQ(tune::estimated_accumulator_registers(with(spec_of(Family::fwd, 128), "m128n64w8s2")), 96);
  EXPECT_EQ(tune::estimated_accumulator_registers(with(spec_of(Family::fwd, 256), "m128n32w4s2")), 288);
  EXPECT_EQ(tune::estimated_accumulator_registers(with(spec_of(Family::bwd_dq, 128), "m64n64w4s2")), 128);
  // dK/dV: rows per warp from block_n; d256 splits the accumulators in two column slices.
  EXPECT_EQ(tune::estimated_accumulator_registers(with(spec_of(Family::bwd_dkdv, 128), "m64n64w4s2")), 192);
  EXPECT_EQ(tune::estimated_accumulator_registers(with(spec_of(Family::bwd_dkdv, 256), "m32n64w4s2")), 160);
  EXPECT_EQ(tune::estimated_accumulator_registers(with(spec_of(Family::bwd_preprocess, 128), "m64n64w4s2")), 0);
}

TEST(ConfigSpace, RegisterEstimatePrunesWideAccumulators) {
  const KernelSpec base = spec_of(Family::fwd, 256);
  // m128 with 4 warps at d256: 32 rows per warp, (32/8 + 256/8) * 4 * 2 = 288 accumulators.
  EXPECT_EQ(tune::prune_reason(with(base, "m128n32w4s2"), "sm_90a").value(),
            "fwd config m128n32w4s2 needs ~288 fp32 accumulator registers per thread (more than 200 spill) — use "
            "more warps or smaller tiles");
  EXPECT_FALSE(tune::prune_reason(with(base, "m128n32w8s2"), "sm_90a").has_value());
  const auto full = tune::candidate_configs(base, SearchSpace::full, "sm_90a");
  for (const auto& c : full) {
    EXPECT_FALSE(c.block_m == 128 && c.num_warps == 4) << c.str();
    EXPECT_LE(tune::estimated_accumulator_registers(with(base, c.str())), tune::kMaxAccumulatorRegisters) << c.str();
  }
}

TEST(ConfigSpace, FullSpaceIsEverythingThatSurvivesSorted) {
  // 32 x 32 block-mask blocks leave tiles of 16 and 32 rows; warps must own whole 16-row mma tiles
  // (m16: 1 warp; m32: 1 or 2), and everything of that fits sm_80's shared memory and registers.
  // No wgmma variant survives: it needs whole warpgroups (4 warps, 64 rows).
  const std::vector<std::string> expected = {
      "m16n16w1s2", "m16n16w1s3", "m16n16w1s4", "m16n32w1s2", "m16n32w1s3", "m16n32w1s4",
      "m32n16w1s2", "m32n16w1s3", "m32n16w1s4", "m32n16w2s2", "m32n16w2s3", "m32n16w2s4",
      "m32n32w1s2", "m32n32w1s3", "m32n32w1s4", "m32n32w2s2", "m32n32w2s3", "m32n32w2s4"};
  for (Family family : {Family::fwd, Family::bwd_dq})
    for (const char* arch : {"sm_80", "sm_90a"}) {
      KernelSpec base = spec_of(family, 128);
      base.has_block_mask = base.has_full_blocks = true;
      base.sparse_q_block = base.sparse_kv_block = 32;
      EXPECT_EQ(names(tune::candidate_configs(base, SearchSpace::full, arch)), expected)
          << codegen::family_name(family) << " " << arch;
    }
  // dK/dV splits its warps over kv rows (block_n), so the roles of m and n swap; one warp over 32
  // kv rows would need (32 / 16) * (2 * BLOCK_M / 8 + 256 / 8) * 4 >= 288 accumulators: pruned.
  KernelSpec dkdv = spec_of(Family::bwd_dkdv, 128);
  dkdv.sparse_q_block = dkdv.sparse_kv_block = 32;
  EXPECT_EQ(names(tune::candidate_configs(dkdv, SearchSpace::full, "sm_80")),
            (std::vector<std::string>{"m16n16w1s2", "m16n16w1s3", "m16n16w1s4", "m16n32w2s2", "m16n32w2s3",
                                      "m16n32w2s4", "m32n16w1s2", "m32n16w1s3", "m32n16w1s4", "m32n32w2s2",
                                      "m32n32w2s3", "m32n32w2s4"}));
}

TEST(ConfigSpace, SmallListsInOrderOfPreference) {
  EXPECT_EQ(names(tune::candidate_configs(spec_of(Family::fwd, 128), SearchSpace::small, "sm_80")),
            (std::vector<std::string>{"m128n32w4s2", "m128n64w4s2", "m128n64w8s2", "m64n64w4s2", "m128n32w4s3",
                                      "m128n128w8s2", "m64n32w4s2"}));
  // sm_86: m128n128w8s2 (160 KiB) does not fit 99 KiB.
  EXPECT_EQ(names(tune::candidate_configs(spec_of(Family::fwd, 128), SearchSpace::small, "sm_86")),
            (std::vector<std::string>{"m128n32w4s2", "m128n64w4s2", "m128n64w8s2", "m64n64w4s2", "m128n32w4s3",
                                      "m64n32w4s2"}));
  // sm_90a: the warp-specialised default first, then the curated list (its wgmma and
  // warp-specialised entries only survive here).
  EXPECT_EQ(names(tune::candidate_configs(spec_of(Family::fwd, 128), SearchSpace::small, "sm_90a")),
            (std::vector<std::string>{"m128n128w8s2ws", "m128n32w4s2", "m128n64w4s2", "m128n64w8s2", "m64n64w4s2",
                                      "m128n32w4s3", "m128n128w8s2", "m64n32w4s2", "m128n128w8s2g", "m128n64w8s2g",
                                      "m64n128w4s2g", "m128n128w8s3ws", "m128n64w8s3ws", "m64n64w4s2ws",
                                      "m128n176w8s2ws", "m192n128w12s2ws"}));
  EXPECT_EQ(names(tune::candidate_configs(spec_of(Family::bwd_dkdv, 256), SearchSpace::small, "sm_86")),
            (std::vector<std::string>{"m16n64w4s2", "m32n32w2s2", "m16n32w2s2"}));
}

TEST(ConfigSpace, SmallInsideFullWithTheDefaultFirst) {
  for (Family family : {Family::fwd, Family::bwd_dq, Family::bwd_dkdv})
    for (int d : {64, 128, 192, 256})
      for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90a"}) {
        const KernelSpec base = spec_of(family, d);
        const std::string what = std::string(codegen::family_name(family)) + " d" + std::to_string(d) + " " + arch;
        const auto small = tune::candidate_configs(base, SearchSpace::small, arch);
        const auto full = tune::candidate_configs(base, SearchSpace::full, arch);
        ASSERT_GE(small.size(), 2u) << what;
        EXPECT_LE(small.size(), 16u) << what;  // 14 and the two wide 'ws' tiles (unmasked calls only)
        const std::vector<std::string> full_names = names(full), small_names = names(small);
        const std::set<std::string> full_set(full_names.begin(), full_names.end());
        for (const auto& c : small) EXPECT_TRUE(full_set.count(c.str())) << what << " " << c.str();
        const BlockConfig def = tune::default_for(base, arch);
        EXPECT_EQ(small.front(), def) << what;
        EXPECT_FALSE(tune::prune_reason(with(base, def.str()), arch)) << what;
        const std::set<std::string> unique(small_names.begin(), small_names.end());
        EXPECT_EQ(unique.size(), small.size()) << what;
      }
}

TEST(ConfigSpace, DefaultsFitEveryDeviceClass) {
  // Where the built-in default fits, it stays.
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 128), "sm_86").str(), "m128n32w4s2");
  // On Hopper the forward defaults to its warp-specialised path: at d64 with unmodified scores and
  // no mask to three consumer warpgroups over 192 rows, with a score_mod, a mask, a block mask or
  // per-sequence lengths (which the wide tiles do not take) to two over 128.
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 64), "sm_90a").str(), "m192n128w12s2ws");
  KernelSpec softcap64 = spec_of(Family::fwd, 64);
  softcap64.score_mod = Expr::parse(ModKind::score, "30.0 * tanh(score / 30.0)");
  EXPECT_EQ(tune::default_for(softcap64, "sm_90a").str(), "m128n128w8s2ws");
  // A score_mod whose diagonal table takes three warpgroups (codegen::forward_diagonal_table: T5
  // buckets, relative tables) does too, without a mask; under one, at d128, with a negative scale
  // (no bias form), or where V reads q_len (no table), two.
  KernelSpec relative64 = spec_of(Family::fwd, 64);
  relative64.declarations.buffers = {BufferDecl::parse("relh:f32:16x8191")};
  relative64.score_mod = Expr::parse(ModKind::score, "score + relh[h][kv_idx - q_idx + 4095]", relative64.declarations);
  relative64.mask_mod = Expr::parse(ModKind::mask, "true", relative64.declarations);
  EXPECT_EQ(tune::default_for(relative64, "sm_90a").str(), "m192n128w12s2ws");
  KernelSpec relative_negative = relative64;
  relative_negative.negative_scale = true;
  EXPECT_EQ(tune::default_for(relative_negative, "sm_90a").str(), "m128n128w8s2ws");
  KernelSpec relative_q_len = relative64;
  relative_q_len.score_mod =
      Expr::parse(ModKind::score, "score + relh[h][kv_idx - q_idx + q_len - 1]", relative64.declarations);
  EXPECT_EQ(tune::default_for(relative_q_len, "sm_90a").str(), "m128n128w8s2ws");
  KernelSpec relative_causal = relative64;
  relative_causal.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx", relative64.declarations);
  EXPECT_EQ(tune::default_for(relative_causal, "sm_90a").str(), "m128n128w8s2ws");
  KernelSpec relative128 = relative64;
  relative128.head_dim = relative128.head_dim_v = 128;
  EXPECT_EQ(tune::default_for(relative128, "sm_90a").str(), "m128n128w8s2ws");
  KernelSpec tables64 = spec_of(Family::fwd, 64);
  tables64.has_block_mask = true;
  EXPECT_EQ(tune::default_for(tables64, "sm_90a").str(), "m128n128w8s2ws");
  KernelSpec unequal = spec_of(Family::fwd, 64, 128);
  EXPECT_EQ(tune::default_for(unequal, "sm_90a").str(), "m128n128w8s2ws");
  // Per-sequence lengths take the warp-specialised kernels as well: 192 rows for unmodified d64
  // scores without a mask, 128 x 128 tiles under a mask and at d128, 128 x 64 at d256.
  for (auto [d, expected] : {std::pair{64, "m192n128w12s2ws"}, {128, "m128n128w8s2ws"}, {256, "m128n64w8s2ws"}}) {
    KernelSpec lens = spec_of(Family::fwd, d);
    lens.seq_lens = true;
    EXPECT_EQ(tune::default_for(lens, "sm_90a").str(), expected) << d;
    lens.mask_mod = Expr::parse(ModKind::mask, "q_idx + kv_len - q_len >= kv_idx");
    EXPECT_EQ(tune::default_for(lens, "sm_90a").str(), d <= 128 ? "m128n128w8s2ws" : "m128n64w8s2ws") << d;
  }
  KernelSpec causal64 = spec_of(Family::fwd, 64);
  causal64.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  causal64.has_block_mask = causal64.has_full_blocks = true;
  EXPECT_EQ(tune::default_for(causal64, "sm_90a").str(), "m128n128w8s2ws");
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 128), "sm_90a").str(), "m128n128w8s2ws");
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 256), "sm_90a").str(), "m128n64w8s2ws");
  // Q and K of 192 beside V of 128 (MLA's prefill) take the 128-key tiles, which fit there; 192 /
  // 192 does not fit them (241 KiB) and 256 / 128 neither.
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 192, 128), "sm_90a").str(), "m128n128w8s2ws");
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 192, 64), "sm_90a").str(), "m128n128w8s2ws");
  KernelSpec documents = spec_of(Family::fwd, 192, 128);  // a mask with column values: 64-key tiles
  documents.declarations.buffers.push_back({"doc", DType::i32, {-1}, false});
  documents.mask_mod = Expr::parse(ModKind::mask, "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", documents.declarations);
  EXPECT_EQ(tune::default_for(documents, "sm_90a").str(), "m128n64w8s2ws");
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 192), "sm_90a").str(), "m128n64w8s2ws");
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 256, 128), "sm_90a").str(), "m128n64w8s2ws");
  // d256 dQ on sm_86: the built-in default needs 128 KiB.
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_dq, 256), "sm_86").str(), "m32n32w2s2");
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_dkdv, 256), "sm_80").str(), "m32n64w4s2");
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_dkdv, 256), "sm_86").str(), "m16n64w4s2");
  // On Hopper the backward's wgmma kernels at every head dim; at d192 the dK/dV kernel's column
  // slices are not whole 64-column slabs, so it keeps its mma.sync default there.
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_dq, 128), "sm_90a").str(), "m64n64w4s2g");
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_dkdv, 64), "sm_90a").str(), "m64n128w8s2g");
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_dq, 256), "sm_90a").str(), "m64n32w4s2g");
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_dkdv, 256), "sm_90a").str(), "m32n64w4s2g");
  // The fast mode's dK/dV kernel with per-sequence lengths: warp-specialised, as without them.
  for (auto [d, expected] : {std::pair{64, "m64n128w8s3ws"}, {128, "m64n128w8s2ws"}, {256, "m64n64w8s2ws"}}) {
    KernelSpec lens = spec_of(Family::bwd_dkdv, d);
    lens.dq_accumulate = lens.seq_lens = true;
    EXPECT_EQ(tune::default_for(lens, "sm_90a").str(), expected) << d;
  }
  // The fast mode's kernel at d256: a column slice per consumer warpgroup, warp-specialised.
  codegen::KernelSpec fast256 = spec_of(Family::bwd_dkdv, 256);
  fast256.dq_accumulate = true;
  EXPECT_EQ(tune::default_for(fast256, "sm_90a").str(), "m64n64w8s2ws");
  // ... with a third Q stage where it fits (V up to 128: MLA's tiles), under a mask or a score_mod,
  // in the fast mode only.
  codegen::KernelSpec mla = spec_of(Family::bwd_dkdv, 256, 128);
  mla.dq_accumulate = true;
  EXPECT_EQ(tune::default_for(mla, "sm_90a").str(), "m64n64w8s2ws");  // no mask, unmodified scores
  mla.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  EXPECT_EQ(tune::default_for(mla, "sm_90a").str(), "m64n64w8s3ws");
  mla.dq_ordered = true;
  EXPECT_EQ(tune::default_for(mla, "sm_90a").str(), "m64n64w8s2ws");
  mla.dq_ordered = false;
  mla.gqa_group = 8;  // GQA 8:1 too (no pairs of CTAs since session (zx))
  EXPECT_EQ(tune::default_for(mla, "sm_90a").str(), "m64n64w8s3ws");
  mla.gqa_group = 4;
  EXPECT_EQ(tune::default_for(mla, "sm_90a").str(), "m64n64w8s3ws");
  mla.head_dim = 128, mla.head_dim_v = 256;  // a 256-wide V beside 128-wide Q and K fits three stages too
  EXPECT_EQ(tune::default_for(mla, "sm_90a").str(), "m64n64w8s3ws");
  fast256.mask_mod = mla.mask_mod;  // 256 / 256: three stages do not fit
  EXPECT_EQ(tune::default_for(fast256, "sm_90a").str(), "m64n64w8s2ws");
  codegen::KernelSpec scored = spec_of(Family::bwd_dkdv, 256, 128);
  scored.dq_accumulate = true;
  scored.score_mod = Expr::parse(ModKind::score, "30.0 * tanh(score / 30.0)");
  EXPECT_EQ(tune::default_for(scored, "sm_90a").str(), "m64n64w8s3ws");
  // 192-column tiles (codegen::set_dkdv_half_slab_tiles): the warp-specialised kernel's slices of 96
  // columns, three stages under a mask as on 256-column tiles; the other modes' kernels have no
  // such slices (the mma.sync path).
  codegen::KernelSpec fast192 = spec_of(Family::bwd_dkdv, 192, 128);
  fast192.dq_accumulate = true;
  EXPECT_EQ(tune::default_for(fast192, "sm_90a").str(), "m64n64w8s2ws");
  fast192.mask_mod = mla.mask_mod;
  EXPECT_EQ(tune::default_for(fast192, "sm_90a").str(), "m64n64w8s3ws");
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_dq, 192), "sm_90a").str(), "m64n32w4s2g");
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_dkdv, 192), "sm_90a").str(), "m32n64w4s2");
  // Head dims 72 to 96 on 128-column tiles (dQ by turns): the fast mode takes a third stage (one dQ
  // staging buffer); the ordered mode and head dims 104 and up keep two, and so do per-sequence
  // lengths under a mask or over tables, or above 80 columns.
  for (auto [d, expected] : {std::pair{72, "m64n128w8s3ws"}, {80, "m64n128w8s3ws"}, {96, "m64n128w8s3ws"},
                             {104, "m64n128w8s2ws"}, {128, "m64n128w8s2ws"}}) {
    codegen::KernelSpec turns = spec_of(Family::bwd_dkdv, 128);
    turns.io_head_dim = turns.io_head_dim_v = d;
    turns.dq_accumulate = true;
    EXPECT_EQ(tune::default_for(turns, "sm_90a").str(), expected) << d;
    turns.seq_lens = true;
    EXPECT_EQ(tune::default_for(turns, "sm_90a").str(), d <= 80 ? expected : "m64n128w8s2ws")
        << d << " per-sequence lengths";
    turns.has_block_mask = turns.has_full_blocks = true;
    EXPECT_EQ(tune::default_for(turns, "sm_90a").str(), "m64n128w8s2ws") << d << " per-sequence lengths, tables";
    turns.has_block_mask = turns.has_full_blocks = false;
    turns.mask_mod = mla.mask_mod;
    EXPECT_EQ(tune::default_for(turns, "sm_90a").str(), "m64n128w8s2ws") << d << " per-sequence lengths, causal";
    turns.seq_lens = false;
    EXPECT_EQ(tune::default_for(turns, "sm_90a").str(), expected) << d << " causal";
    turns.dq_ordered = true;
    EXPECT_EQ(tune::default_for(turns, "sm_90a").str(), "m64n128w8s2ws") << d << " ordered";
  }
  // Families without a search space keep their built-in default: 8 warps, no tiles.
  EXPECT_EQ(tune::default_for(spec_of(Family::bwd_preprocess, 128), "sm_80").str(), "m0n0w8s0");
}

TEST(ConfigSpace, OnlyAttentionTilesAreTuned) {
  try {
    tune::candidate_configs(spec_of(Family::bwd_preprocess, 128), SearchSpace::small, "sm_80");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "autotuning covers the fwd, bwd_dq and bwd_dkdv kernels; bwd_preprocess has no block config to tune");
  }
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

// The warp-specialised config text, and what validation says where the path does not exist.
TEST(ConfigSpace, WarpSpecializedConfigs) {
  const BlockConfig ws = BlockConfig::parse("m128n128w8s2ws");
  EXPECT_TRUE(ws.wgmma);
  EXPECT_TRUE(ws.warp_specialized);
  EXPECT_EQ(ws.str(), "m128n128w8s2ws");
  EXPECT_NE(ws, BlockConfig::parse("m128n128w8s2g"));
  try {
    BlockConfig::parse("m128n128w8s2wx");
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "bad block config 'm128n128w8s2wx': unexpected 'wx' after the stages (e.g. m128n64w4s2, m128n128w8s2g "
                 "for the wgmma path, m128n128w8s2ws for the warp-specialised one, m16n128w8s3t for decoding through TMA)");
  }
  // Only the forward and the fast backward's dK/dV kernel have the path, with one or two consumer
  // warpgroups; per-sequence lengths on both (the dK/dV kernel's in the modes that sum dQ).
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::bwd_dq, 128), "m64n64w4s2ws"), "sm_90a"),
            "config m64n64w4s2ws: the warp-specialised path ('ws') exists for the forward and the fast backward's "
            "dK/dV kernel only; use 'g' for the wgmma path of bwd_dq");
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::fwd, 128), "m32n128w2s2ws"), "sm_90a"),
            "config m32n128w2s2ws: the wgmma path needs whole warpgroups (warps a multiple of 4) and block_m = 16 * "
            "warps = 32");
  KernelSpec lens = with(spec_of(Family::fwd, 128), "m128n128w8s2ws");
  lens.seq_lens = true;
  EXPECT_FALSE(tune::prune_reason(lens, "sm_90a").has_value());
  KernelSpec dkdv_lens = spec_of(Family::bwd_dkdv, 128);
  dkdv_lens.dq_accumulate = true;
  dkdv_lens.seq_lens = true;
  EXPECT_FALSE(tune::prune_reason(with(dkdv_lens, "m64n128w8s2ws"), "sm_90a").has_value());
  KernelSpec dkdv_lens_256 = spec_of(Family::bwd_dkdv, 256);
  dkdv_lens_256.dq_accumulate = true;
  dkdv_lens_256.seq_lens = true;
  EXPECT_FALSE(tune::prune_reason(with(dkdv_lens_256, "m64n64w8s2ws"), "sm_90a").has_value());
  KernelSpec dq_lens = with(spec_of(Family::bwd_dq, 128), "m64n64w4s2ws");
  dq_lens.seq_lens = true;
  EXPECT_TRUE(tune::prune_reason(dq_lens, "sm_90a").has_value());
  EXPECT_TRUE(tune::prune_reason(with(spec_of(Family::fwd, 128), "m128n128w8s2ws"), "sm_80").has_value());
}

// The fast backward's warp-specialised dK/dV kernel: the fast mode only, 64-query tiles with one or
// two consumer warpgroups, whole dK / dV rows (head dims up to 128).
TEST(ConfigSpace, WarpSpecializedDkdvTakesTheFastModeOnly) {
  KernelSpec fast = spec_of(Family::bwd_dkdv, 128);
  fast.dq_accumulate = true;
  EXPECT_FALSE(tune::prune_reason(with(fast, "m64n128w8s2ws"), "sm_90a").has_value());
  KernelSpec fast64 = spec_of(Family::bwd_dkdv, 64);
  fast64.dq_accumulate = true;
  EXPECT_FALSE(tune::prune_reason(with(fast64, "m64n64w4s2ws"), "sm_90a").has_value());
  EXPECT_FALSE(tune::prune_reason(with(fast64, "m64n128w8s2ws"), "sm_90a").has_value());
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::bwd_dkdv, 128), "m64n128w8s2ws"), "sm_90a"),
            "config m64n128w8s2ws: the warp-specialised dK/dV kernel also sums dQ, which this call leaves to the "
            "separate dQ kernel; run the fast mode (CallOptions::backward_mode, FLEXJIT_DETERMINISTIC=0, --bwd-mode "
            "fast) or the deterministic one with FLEXJIT_DETERMINISTIC_DQ=ordered (the default), or use m64n128w8s2g");
  // The deterministic mode's ordered sums: the warp-specialised kernel only.
  KernelSpec ordered = fast;
  ordered.dq_ordered = true;
  EXPECT_FALSE(tune::prune_reason(with(ordered, "m64n128w8s2ws"), "sm_90a").has_value());
  EXPECT_EQ(tune::prune_reason(with(ordered, "m64n128w8s2g"), "sm_90a"),
            "config m64n128w8s2g: the deterministic backward sums dQ in order only in the warp-specialised dK/dV "
            "kernel (m64n128w8s2ws, m64n128w8s3ws, m64n64w4s2ws); other configs run with the separate dQ kernel");
  EXPECT_EQ(tune::prune_reason(with(fast64, "m128n128w8s2ws"), "sm_90a"),
            "config m128n128w8s2ws: the warp-specialised dK/dV kernel takes 64-query tiles and one or two consumer "
            "warpgroups (m64n64w4s2ws, m64n128w8s2ws)");
  KernelSpec fast256 = spec_of(Family::bwd_dkdv, 256);
  fast256.dq_accumulate = true;
  EXPECT_TRUE(tune::prune_reason(with(fast256, "m64n128w8s2ws"), "sm_90a").has_value());
}

// The wide warp-specialised tiles (issue 12): three consumer warpgroups over 192 query rows
// (12 warps) and 176-key tiles. Their text, where they are accepted (no block mask, head dims up to
// 128) and the named errors elsewhere.
TEST(ConfigSpace, WideWarpSpecializedConfigs) {
  const BlockConfig m192 = BlockConfig::parse("m192n128w12s2ws");
  EXPECT_EQ(m192.block_m, 192);
  EXPECT_EQ(m192.block_n, 128);
  EXPECT_EQ(m192.num_warps, 12);
  EXPECT_TRUE(m192.warp_specialized);
  EXPECT_EQ(m192.str(), "m192n128w12s2ws");
  const BlockConfig n176 = BlockConfig::parse("m128n176w8s2ws");
  EXPECT_EQ(n176.block_n, 176);
  EXPECT_EQ(n176.str(), "m128n176w8s2ws");

  for (int d : {64, 128}) {
    EXPECT_FALSE(tune::prune_reason(with(spec_of(Family::fwd, d), "m192n128w12s2ws"), "sm_90a")) << d;
    EXPECT_FALSE(tune::prune_reason(with(spec_of(Family::fwd, d), "m128n176w8s2ws"), "sm_90a")) << d;
    // A mask_mod without a block mask visits every tile: the wide tiles take it.
    KernelSpec dense_mask = with(spec_of(Family::fwd, d), "m192n128w12s2ws");
    dense_mask.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
    EXPECT_FALSE(tune::prune_reason(dense_mask, "sm_90a")) << d;
  }
  KernelSpec masked = spec_of(Family::fwd, 128);
  masked.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  masked.has_block_mask = masked.has_full_blocks = true;
  EXPECT_EQ(tune::prune_reason(with(masked, "m192n128w12s2ws"), "sm_90a"),
            "config m192n128w12s2ws: its 192 x 128 tiles do not divide the block mask's 128 x 128 blocks; 192-row and "
            "176-key tiles take calls without a block mask — use m128n128w8s2ws");
  EXPECT_EQ(tune::prune_reason(with(masked, "m128n176w8s2ws"), "sm_90a"),
            "config m128n176w8s2ws: its 128 x 176 tiles do not divide the block mask's 128 x 128 blocks; 192-row and "
            "176-key tiles take calls without a block mask — use m128n128w8s2ws");
  // Blocks the wide tiles do divide are fine.
  KernelSpec wide_blocks = with(masked, "m192n128w12s2ws");
  wide_blocks.sparse_q_block = 384;
  EXPECT_FALSE(tune::prune_reason(wide_blocks, "sm_90a"));
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::fwd, 256), "m192n64w12s2ws"), "sm_90a"),
            "config m192n64w12s2ws: three consumer warpgroups (12 warps) take head dims up to 128 (their 160 registers "
            "per thread hold no wider output), got d256/256 — use m128n64w8s2ws");
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::fwd, 64, 256), "m128n176w8s2ws"), "sm_90a"),
            "config m128n176w8s2ws: 176-key tiles take head dims up to 128 (the score and output accumulators of a "
            "wider one do not fit in registers), got d64/256 — use m128n64w8s2ws");
  // Only the warp-specialised forward has them.
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::fwd, 64), "m192n128w12s2g"), "sm_90a"),
            "config m192n128w12s2g: warps must be 1, 2, 4 or 8");
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::fwd, 64), "m128n176w8s2g"), "sm_90a"),
            "config m128n176w8s2g: block_n must be 16, 32, 64 or 128");
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::fwd, 64), "m192n128w8s2ws"), "sm_90a"),
            "config m192n128w8s2ws: block_m must be a multiple of 16 * warps = 128 (each warp owns whole 16-row mma "
            "tiles)");
  // w counts the consumer warps: 192 rows are w12 (w16 would be four consumer warpgroups).
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::fwd, 64), "m192n128w16s2ws"), "sm_90a"),
            "config m192n128w16s2ws: the warp-specialised forward takes 4, 8 or 12 warps (one, two or three consumer "
            "warpgroups of 64 query rows; the producer warpgroup is not counted, so m192n128w12s2ws runs 512 "
            "threads)");
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::fwd, 64), "m256n128w16s2ws"), "sm_90a"),
            "config m256n128w16s2ws: the warp-specialised forward takes 4, 8 or 12 warps (one, two or three consumer "
            "warpgroups of 64 query rows; the producer warpgroup is not counted, so m192n128w12s2ws runs 512 "
            "threads)");
  EXPECT_EQ(tune::prune_reason(with(spec_of(Family::fwd, 64), "m128n192w8s2ws"), "sm_90a"),
            "config m128n192w8s2ws: block_n must be 16, 32, 64 or 128");

  // The full space holds them for unmasked calls on sm_90a, not under a block mask.
  for (int d : {64, 128}) {
    const auto full = names(tune::candidate_configs(spec_of(Family::fwd, d), SearchSpace::full, "sm_90a"));
    for (const char* wide : {"m192n128w12s2ws", "m192n64w12s2ws", "m128n176w8s2ws", "m64n176w4s2ws"})
      EXPECT_NE(std::find(full.begin(), full.end(), wide), full.end()) << d << " " << wide;
  }
  for (const auto& c : tune::candidate_configs(masked, SearchSpace::full, "sm_90a")) {
    EXPECT_NE(c.block_m, 192) << c.str();
    EXPECT_NE(c.block_n, 176) << c.str();
  }
  const auto sm80 = tune::candidate_configs(spec_of(Family::fwd, 64), SearchSpace::full, "sm_80");
  for (const auto& c : sm80) EXPECT_FALSE(c.warp_specialized) << c.str();
  // The wide tiles' A/B on an H200 ("(zr)"): d64's unmodified, unmasked scores take 192 rows.
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 64), "sm_90a").str(), "m192n128w12s2ws");
  EXPECT_EQ(tune::default_for(spec_of(Family::fwd, 128), "sm_90a").str(), "m128n128w8s2ws");
}

}  // namespace
}  // namespace flexjit::test
