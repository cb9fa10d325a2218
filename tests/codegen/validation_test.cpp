// KernelSpec validation and the shared-memory check: every message word for word, since users see
// them when they pass a bad --config or AttentionSpec. Also: the default configurations fit the
// shared memory of the architectures flexjit targets.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "codegen/kernel_spec.hpp"
#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"
#include "jit/source.hpp"

namespace flexjit::codegen {
namespace {

KernelSpec attention_spec(Family family, int head_dim = 128, int head_dim_v = 128) {
  KernelSpec s;
  s.family = family;
  s.head_dim = head_dim;
  s.head_dim_v = head_dim_v;
  s.config = default_config(family, head_dim, head_dim_v);
  return s;
}

// The UsageError message of validate(), or "" when the spec is valid.
std::string validation_error(const KernelSpec& spec) {
  try {
    spec.validate();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string shared_memory_error(const KernelSpec& spec, const std::string& arch) {
  try {
    check_shared_memory(spec, arch);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(KernelSpecValidation, DefaultsOfEveryFamilyAreValid) {
  for (Family f : {Family::fwd, Family::bwd_preprocess, Family::bwd_dq, Family::bwd_dkdv, Family::block_mask,
                   Family::builtin_axpy})
    for (auto [d, dv] : {std::pair{64, 64}, {128, 128}, {256, 256}, {128, 64}, {192, 128}})
      EXPECT_EQ(validation_error(attention_spec(f, d, dv)), "") << family_name(f) << " d" << d << "/" << dv;
}

TEST(KernelSpecValidation, BadDtype) {
  KernelSpec s = attention_spec(Family::fwd);
  s.dtype = DType::f32;
  EXPECT_EQ(validation_error(s), "attention kernels take bf16 or f16 inputs (got f32)");
  s.family = Family::bwd_preprocess;
  s.dtype = DType::i32;
  EXPECT_EQ(validation_error(s), "attention kernels take bf16 or f16 inputs (got i32)");
}

TEST(KernelSpecValidation, TheTilesPadHeadDimsToMultiplesOf64) {
  EXPECT_EQ(tile_head_dim(8), 64);
  EXPECT_EQ(tile_head_dim(64), 64);
  EXPECT_EQ(tile_head_dim(72), 128);
  EXPECT_EQ(tile_head_dim(96), 128);
  EXPECT_EQ(tile_head_dim(200), 256);
  EXPECT_EQ(tile_head_dim(256), 256);
  EXPECT_EQ(tile_head_dim(300), 300);  // out of range: left for validate to name
  EXPECT_EQ(tile_head_dim(0), 0);
  KernelSpec s = attention_spec(Family::fwd);
  s.set_head_dims(96, 40);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.head_dim_v, 64);
  EXPECT_EQ(s.memory_head_dim(), 96);
  EXPECT_EQ(s.memory_head_dim_v(), 40);
  s.config = default_config(Family::fwd, s.head_dim, s.head_dim_v);
  EXPECT_EQ(validation_error(s), "");
  // The kernel differs from d128/64's (it loads and stores fewer columns): its description, and so
  // its cache key, says so; a spec whose dims are the tiles' says nothing more than before.
  EXPECT_NE(s.describe().find(" io_dims=96/40"), std::string::npos) << s.describe();
  s.set_head_dims(128, 64);
  EXPECT_EQ(s.describe().find("io_dims"), std::string::npos) << s.describe();
}

// The warp-specialised dK/dV kernel of the fast and ordered modes takes 192-column tiles for head
// dims 129..192 beside a v of 65..192 on sm_90a (slices of 96 columns); every other kernel, config,
// mode or architecture keeps the call's tiles.
TEST(KernelSpecValidation, TheFastDkdvKernelTakes192ColumnTilesWhereItsSlicesAre96Columns) {
  const auto tiles = [](Family family, int d, int dv, const char* config, bool sums_dq, const char* arch,
                        bool ordered = false, const char* mask = "true") {
    KernelSpec s;
    s.family = family;
    s.dq_accumulate = sums_dq;
    s.dq_ordered = ordered;
    s.mask_mod = Expr::parse(ModKind::mask, mask);
    s.config = BlockConfig::parse(config);
    s.set_head_dims(d, dv, arch);
    set_dkdv_half_slab_tiles(s, d, dv, arch);
    return std::tuple<int, int, int, int>(s.head_dim, s.head_dim_v, s.io_head_dim, s.io_head_dim_v);
  };
  using Tiles = std::tuple<int, int, int, int>;
  EXPECT_EQ(tiles(Family::bwd_dkdv, 192, 128, "m64n64w8s2ws", true, "sm_90a"), Tiles(192, 128, 0, 0));
  EXPECT_EQ(tiles(Family::bwd_dkdv, 160, 128, "m64n64w8s3ws", true, "sm_90a"), Tiles(192, 128, 160, 0));
  EXPECT_EQ(tiles(Family::bwd_dkdv, 136, 72, "m64n64w8s2ws", true, "sm_90a"), Tiles(192, 128, 136, 72));
  EXPECT_EQ(tiles(Family::bwd_dkdv, 192, 192, "m64n64w8s2ws", true, "sm_90a"), Tiles(192, 192, 0, 0));
  // The ordered sums under a mask (or a score_mod, or tables) take them; without, 256 columns.
  EXPECT_EQ(tiles(Family::bwd_dkdv, 192, 128, "m64n64w8s2ws", true, "sm_90a", true, "q_idx >= kv_idx"),
            Tiles(192, 128, 0, 0));
  EXPECT_EQ(tiles(Family::bwd_dkdv, 192, 128, "m64n64w8s2ws", true, "sm_90a", true), Tiles(256, 128, 192, 0));
  // 192 / 64 splits into no slices (one warpgroup's 128 columns): the 256 / 128 tiles stay.
  EXPECT_EQ(tiles(Family::bwd_dkdv, 192, 64, "m64n64w8s2ws", true, "sm_90a"), Tiles(256, 128, 192, 64));
  // V above 192, or Q and K at most 128: the call's tiles.
  EXPECT_EQ(tiles(Family::bwd_dkdv, 192, 256, "m64n64w8s2ws", true, "sm_90a"), Tiles(256, 256, 192, 0));
  EXPECT_EQ(tiles(Family::bwd_dkdv, 128, 192, "m64n64w8s2ws", true, "sm_90a"), Tiles(128, 256, 0, 192));
  // Other configs, the dQ kernel's mode, other families and architectures.
  EXPECT_EQ(tiles(Family::bwd_dkdv, 192, 128, "m32n64w4s2g", true, "sm_90a"), Tiles(256, 128, 192, 0));
  EXPECT_EQ(tiles(Family::bwd_dkdv, 192, 128, "m64n64w8s2ws", false, "sm_90a"), Tiles(256, 128, 192, 0));
  EXPECT_EQ(tiles(Family::bwd_dq, 192, 128, "m64n64w8s2ws", true, "sm_90a"), Tiles(256, 128, 192, 0));
  EXPECT_EQ(tiles(Family::bwd_dkdv, 192, 128, "m64n64w8s2ws", true, "sm_80"), Tiles(192, 128, 0, 0));
}

TEST(KernelSpecValidation, TheBackwardOnHopperTakesTilesItHasFastSlicesFor) {
  using Dims = std::pair<int, int>;
  EXPECT_EQ(tile_head_dims(Family::bwd_dkdv, 160, 192, "sm_90a"), Dims(256, 256));
  EXPECT_EQ(tile_head_dims(Family::bwd_preprocess, 192, 96, "sm_90a"), Dims(256, 128));
  EXPECT_EQ(tile_head_dims(Family::bwd_dq, 136, 256, "sm_90a"), Dims(256, 256));
  // A 64-column tile beside a 256-column one takes 128 (slices of 32 columns are no whole slabs).
  EXPECT_EQ(tile_head_dims(Family::bwd_buffer_grad, 192, 64, "sm_90a"), Dims(256, 128));
  EXPECT_EQ(tile_head_dims(Family::bwd_dkdv, 40, 256, "sm_90a"), Dims(128, 256));
  EXPECT_EQ(tile_head_dims(Family::bwd_dq, 256, 8, "sm_90a"), Dims(256, 128));
  EXPECT_EQ(tile_head_dims(Family::bwd_dkdv, 64, 128, "sm_90a"), Dims(64, 128));
  EXPECT_EQ(tile_head_dims(Family::bwd_dkdv, 64, 256, "sm_80"), Dims(64, 256));
  EXPECT_EQ(tile_head_dims(Family::fwd, 64, 256, "sm_90a"), Dims(64, 256));
  // Not the forward, decoding, or other architectures (no fast dK/dV kernel there).
  EXPECT_EQ(tile_head_dims(Family::fwd, 160, 192, "sm_90a"), Dims(192, 192));
  EXPECT_EQ(tile_head_dims(Family::decode, 192, 192, "sm_90a"), Dims(192, 192));
  EXPECT_EQ(tile_head_dims(Family::bwd_dkdv, 192, 192, "sm_80"), Dims(192, 192));
  EXPECT_EQ(tile_head_dims(Family::bwd_dkdv, 96, 40, "sm_90a"), Dims(128, 64));
  KernelSpec s = attention_spec(Family::bwd_dkdv);
  s.set_head_dims(192, 192, "sm_90a");
  s.config = default_config(Family::bwd_dkdv, 256, 256);
  EXPECT_EQ(validation_error(s), "");
  EXPECT_EQ(s.memory_head_dim(), 192);
  s.head_dim = 128;  // tiles narrower than the tensors, set by hand (set_head_dims never does)
  EXPECT_EQ(validation_error(s), "the tiles' head dims 128/256 do not pad head dims 192/192 to multiples of 64 "
                                 "(KernelSpec::set_head_dims sets both)");
}

TEST(KernelSpecValidation, HeadDimsThatAreNoMultipleOf8OrAbove256) {
  KernelSpec s = attention_spec(Family::fwd);
  s.set_head_dims(100, 128);
  EXPECT_EQ(validation_error(s), "head_dim 100 is not supported: head dims are multiples of 8 from 8 to 256");
  s.set_head_dims(128, 320);
  EXPECT_EQ(validation_error(s), "head_dim_v 320 is not supported: head dims are multiples of 8 from 8 to 256");
  s.set_head_dims(0, 128);
  EXPECT_EQ(validation_error(s), "head_dim 0 is not supported: head dims are multiples of 8 from 8 to 256");
  s.family = Family::decode;
  s.set_head_dims(128, 4);
  EXPECT_EQ(validation_error(s), "decode: head_dim_v 4 is not supported: head dims are multiples of 8 from 8 to 256");
  // Tile dims set apart from the tensors' (not through set_head_dims) are a bug of the spec's maker.
  KernelSpec apart = attention_spec(Family::bwd_dq);
  apart.head_dim = 96;
  EXPECT_EQ(validation_error(apart), "the tiles' head dims 96/128 do not pad head dims 96/128 to multiples of 64 "
                                     "(KernelSpec::set_head_dims sets both)");
}

TEST(KernelSpecValidation, ThreeWarps) {
  KernelSpec s = attention_spec(Family::fwd);
  s.config = {128, 32, 3, 2};
  EXPECT_EQ(validation_error(s), "config m128n32w3s2: warps must be 1, 2, 4 or 8");
  KernelSpec pre = attention_spec(Family::bwd_preprocess);
  pre.config.num_warps = 33;
  EXPECT_EQ(validation_error(pre), "config m0n0w33s0: warps must be between 1 and 32");
}

TEST(KernelSpecValidation, BlockMNotAMultipleOfSixteenTimesWarps) {
  KernelSpec s = attention_spec(Family::fwd);
  s.config = {32, 32, 4, 2};
  EXPECT_EQ(validation_error(s),
            "config m32n32w4s2: block_m must be a multiple of 16 * warps = 64 (each warp owns whole 16-row mma tiles)");
  // dK/dV kernels split kv rows (block_n) over their warps.
  KernelSpec dkdv = attention_spec(Family::bwd_dkdv);
  dkdv.config = {64, 32, 4, 2};
  EXPECT_EQ(validation_error(dkdv),
            "config m64n32w4s2: block_n must be a multiple of 16 * warps = 64 (each warp owns whole 16-row mma tiles)");
}

TEST(KernelSpecValidation, OtherTileShapes) {
  KernelSpec s = attention_spec(Family::fwd);
  s.config = {128, 32, 2, 2};
  EXPECT_EQ(validation_error(s), "config m128n32w2s2: at most 32 rows per warp (block_m / warps = 64)");
  s.config = {128, 48, 4, 2};
  EXPECT_EQ(validation_error(s), "config m128n48w4s2: block_n must be 16, 32, 64 or 128");
  s.config = {256, 32, 8, 2};
  EXPECT_EQ(validation_error(s), "config m256n32w8s2: block_m must be a power of two up to 128");
  s.config = {0, 32, 4, 2};
  EXPECT_EQ(validation_error(s), "block config m0n32w4s2 has unset fields");
}

TEST(KernelSpecValidation, TilesMustDivideTheSparseBlocks) {
  KernelSpec s = attention_spec(Family::fwd);
  s.config = {128, 64, 4, 2};
  s.sparse_q_block = 64;
  EXPECT_EQ(validation_error(s), "config m128n64w4s2: tiles must divide the block-mask blocks (64 x 128)");
  s.sparse_q_block = 128;
  s.sparse_kv_block = 32;
  EXPECT_EQ(validation_error(s), "config m128n64w4s2: tiles must divide the block-mask blocks (128 x 32)");
}

TEST(KernelSpecValidation, OneStage) {
  KernelSpec s = attention_spec(Family::fwd);
  s.config = {128, 32, 4, 1};
  EXPECT_EQ(validation_error(s), "config m128n32w4s1: stages must be 2, 3 or 4");
  s.config.stages = 5;
  EXPECT_EQ(validation_error(s), "config m128n32w4s5: stages must be 2, 3 or 4");
}

TEST(KernelSpecValidation, FlagsAndGroups) {
  KernelSpec s = attention_spec(Family::fwd);
  s.has_full_blocks = true;
  EXPECT_EQ(validation_error(s), "has_full_blocks needs has_block_mask");
  s = attention_spec(Family::fwd);
  s.gqa_group = 0;
  EXPECT_EQ(validation_error(s), "gqa_group must be at least 1 (query heads per kv head), got 0");
}

TEST(KernelSpecValidation, BlockMaskBlockSizes) {
  KernelSpec s = attention_spec(Family::block_mask);
  s.sparse_q_block = 8;
  EXPECT_EQ(validation_error(s), "block-mask block size 8 is not supported: use a multiple of 16 between 16 and 1024");
  s.sparse_q_block = 128;
  s.sparse_kv_block = 2048;
  EXPECT_EQ(validation_error(s),
            "block-mask block size 2048 is not supported: use a multiple of 16 between 16 and 1024");
}

TEST(KernelSpecValidation, RenderValidatesFirst) {
  KernelSpec s = attention_spec(Family::fwd);
  s.config = {128, 32, 4, 1};
  try {
    render(s);
    FAIL() << "render accepted an invalid spec";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "config m128n32w4s1: stages must be 2, 3 or 4");
  }
}

TEST(KernelSpecValidation, SharedMemoryOverSm86Limit) {
  KernelSpec s = attention_spec(Family::fwd);
  s.config = {128, 64, 4, 3};  // 32 KiB of Q + 3 x 32 KiB of K/V
  ASSERT_EQ(validation_error(s), "");
  EXPECT_EQ(s.shared_memory_bytes(), 131072u);
  EXPECT_EQ(shared_memory_error(s, "sm_86"),
            "fwd config m128n64w4s3 needs 128 KiB of shared memory; sm_86 allows 99 KiB per block — use fewer "
            "stages or smaller tiles");
  EXPECT_EQ(shared_memory_error(s, "sm_80"), "");
  EXPECT_EQ(shared_memory_error(s, "sm_90a"), "");

  KernelSpec dkdv = attention_spec(Family::bwd_dkdv);
  dkdv.config.stages = 3;
  EXPECT_EQ(dkdv.shared_memory_bytes(), 132608u);
  EXPECT_EQ(shared_memory_error(dkdv, "sm_89"),
            "bwd_dkdv config m64n64w4s3 needs 129.5 KiB of shared memory; sm_89 allows 99 KiB per block — use fewer "
            "stages or smaller tiles");
}

// The warp-specialised forward stages each consumer warpgroup's O (64 rows) for its TMA store in
// the widest whole number of 64-column slabs that divides Dv and fits in 227 KiB.
TEST(KernelSpecValidation, WarpSpecializedForwardStagesItsOutput) {
  KernelSpec s = attention_spec(Family::fwd);
  s.config = BlockConfig::parse("m128n128w8s2ws");  // d128: Q 32 KiB, 2 x 64 KiB K/V, 2 x 16 KiB O
  EXPECT_EQ(s.shared_memory_bytes(), 32768u + 131072u + 32768u + 1024u + 128u);
  s.head_dim = s.head_dim_v = 256;
  s.config = BlockConfig::parse("m128n64w8s2ws");  // d256: 2 x 32 KiB of O do not fit; 2 x 16 KiB do
  EXPECT_EQ(s.shared_memory_bytes(), 65536u + 131072u + 32768u + 1024u + 128u);
  s.head_dim = s.head_dim_v = 128;
  s.config = BlockConfig::parse("m128n128w8s3ws");  // a third stage leaves no room: O from registers
  EXPECT_EQ(s.shared_memory_bytes(), 32768u + 196608u + 1024u + 128u);
  s.config = BlockConfig::parse("m128n128w8s2g");  // the synchronous kernel stages O in Q's place
  EXPECT_EQ(s.shared_memory_bytes(), 32768u + 131072u + 1024u);
}

// The fast backward's dK/dV kernel at d64 (dQ by turns) computes each tile's dQ a tile late where
// the mask is positional or absent (DQ_DEFERRED): it keeps STAGES + 1 dSᵀ tiles of 16 KiB instead
// of two. Masks that read a buffer by key, the deterministic mode's ordered sums and d128 keep
// two. Sizes by hand: K and V 32 KiB, three 16 KiB stages, 1 KiB of alignment slack, the dSᵀ
// tiles, the stages' LSE and delta rows (3 x 512 B), 128 B of mbarriers, two 16 KiB dQ buffers
// (the ordered form adds its 64 B ring of tile names).
TEST(KernelSpecValidation, FastD64BackwardKeepsADsTilePerTurnInFlight) {
  const auto dkdv = [](const char* mask, const char* config, bool ordered, int head_dim = 64) {
    KernelSpec s = attention_spec(Family::bwd_dkdv, head_dim, head_dim);
    s.config = BlockConfig::parse(config);
    s.dq_accumulate = true;
    s.dq_ordered = ordered;
    s.declarations.buffers.push_back(BufferDecl::parse("doc:i32:?"));
    if (*mask) {
      s.mask_mod = Expr::parse(ModKind::mask, mask, s.declarations);
      s.has_block_mask = true;
    }
    return s;
  };
  const auto deferred = [](const KernelSpec& s) {
    return render(s).text.find("constexpr bool DQ_DEFERRED = true;") != std::string::npos;
  };
  const size_t common = 32768u + 3u * 16384u + 1024u + 1536u + 128u + 2u * 16384u;
  const KernelSpec causal = dkdv("q_idx >= kv_idx", "m64n128w8s3ws", false);
  EXPECT_TRUE(deferred(causal));
  EXPECT_EQ(causal.shared_memory_bytes(), common + 4u * 16384u);
  const KernelSpec unmasked = dkdv("", "m64n128w8s3ws", false);
  EXPECT_TRUE(deferred(unmasked));
  EXPECT_EQ(unmasked.shared_memory_bytes(), common + 4u * 16384u);
  const KernelSpec two_stages = dkdv("q_idx >= kv_idx", "m64n128w8s2ws", false);
  EXPECT_TRUE(deferred(two_stages));
  EXPECT_EQ(two_stages.shared_memory_bytes(), common - 16384u - 512u + 3u * 16384u);
  const KernelSpec documents = dkdv("doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", "m64n128w8s3ws", false);
  EXPECT_FALSE(deferred(documents));
  EXPECT_EQ(documents.shared_memory_bytes(), common + 2u * 16384u);
  const KernelSpec ordered = dkdv("q_idx >= kv_idx", "m64n128w8s3ws", true);
  EXPECT_FALSE(deferred(ordered));
  EXPECT_EQ(ordered.shared_memory_bytes(), common + 2u * 16384u + 64u + 96u);  // names; their barriers
  EXPECT_FALSE(deferred(dkdv("q_idx >= kv_idx", "m64n128w8s2ws", false, 128)));
}

// A deterministic (ordered dQ sums) warp-specialised dK/dV spec: `mask` (none where empty) parsed
// with a buffer doc[] declared, block-mask tables or not.
KernelSpec ordered_dkdv_spec(const char* mask, int gqa_group, bool block_mask, int head_dim = 128) {
  KernelSpec s = attention_spec(Family::bwd_dkdv, head_dim, head_dim);
  s.config = BlockConfig::parse(head_dim > 128 ? "m64n64w8s2ws" : "m64n128w8s2ws");
  s.dq_accumulate = true;
  s.dq_ordered = true;
  s.gqa_group = gqa_group;
  s.declarations.buffers.push_back(BufferDecl{"doc", DType::i32, {-1}});
  if (*mask) s.mask_mod = Expr::parse(ModKind::mask, mask, s.declarations);
  s.has_block_mask = block_mask;
  return s;
}

// The deterministic mode's ordered dQ sums take two chains (two fp32 copies of dQ, kv tiles by
// parity) where they descend and a query tile's chain is long: without masks, under walks the data
// cuts (or tables alone) over 64 kv tiles or more, or at head dims above 128 (64-key kv tiles);
// never with GQA, never where they ascend (a mask_mod with tables, no GQA: one chain is a
// pipeline); and the kernel renders the count the host allocates for.
TEST(KernelSpecValidation, OrderedDqChainsWhereLongChainsDescend) {
  const auto dkdv = [](const char* mask, int gqa_group, bool block_mask) {
    return ordered_dkdv_spec(mask, gqa_group, block_mask);
  };
  const auto rendered = [](const KernelSpec& s) {
    const std::string text = render(s).text;
    for (int c : {1, 2, 4})
      if (text.find("constexpr int DQ_CHAINS = " + std::to_string(c) + ";") != std::string::npos) return c;
    return 0;
  };
  EXPECT_EQ(ordered_dq_chains(dkdv("", 1, false)), 2);
  EXPECT_EQ(rendered(dkdv("", 1, false)), 2);
  EXPECT_EQ(ordered_dq_chains(dkdv("", 4, false)), 1);
  EXPECT_EQ(rendered(dkdv("", 4, false)), 1);
  EXPECT_EQ(ordered_dq_chains(dkdv("q_idx >= kv_idx", 1, true)), 1);
  EXPECT_EQ(rendered(dkdv("q_idx >= kv_idx", 1, true)), 1);
  // Head dim 256 (column slices, 64-key kv tiles): two without a mask, and under a mask whose sums
  // descend (no tables); one under a mask with tables (ascending), and with GQA.
  KernelSpec wide = dkdv("", 1, false);
  wide.head_dim = wide.head_dim_v = 256;
  wide.config = BlockConfig::parse("m64n64w8s2ws");
  EXPECT_EQ(ordered_dq_chains(wide), 2);
  EXPECT_EQ(rendered(wide), 2);
  wide.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  EXPECT_EQ(ordered_dq_chains(wide), 2);  // no tables: every kv tile walks every query tile
  wide.has_block_mask = wide.has_full_blocks = true;
  EXPECT_TRUE(ordered_dq_ascending(wide));
  EXPECT_EQ(ordered_dq_chains(wide), 1);
  EXPECT_EQ(rendered(wide), 1);
  wide.gqa_group = 4;
  EXPECT_FALSE(ordered_dq_ascending(wide));
  EXPECT_EQ(ordered_dq_chains(wide), 1);
  EXPECT_EQ(rendered(wide), 1);
  // Tables alone (a mask that keeps every score, given a block mask) and a mask without tables.
  EXPECT_EQ(ordered_dq_chains(dkdv("", 1, true)), 1);
  EXPECT_EQ(ordered_dq_chains(dkdv("q_idx >= kv_idx", 1, false)), 1);
  // Walks the data cuts (no tile bounds; or tables alone) over 64 kv tiles of 128 keys or more,
  // where the sums descend: two chains (ordered_long_chains), not with GQA, not in the fast mode.
  const auto documents = [&](int gqa_group, bool ordered, bool tables = true) {
    KernelSpec s = dkdv("doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", gqa_group, tables);
    s.dq_ordered = ordered;
    return s;
  };
  EXPECT_FALSE(ordered_long_chains(documents(1, true, false), 8064));  // 63 kv tiles
  EXPECT_TRUE(ordered_long_chains(documents(1, true, false), 8065));
  EXPECT_FALSE(ordered_long_chains(documents(1, false, false), 16384));
  EXPECT_FALSE(ordered_long_chains(documents(1, true), 16384));  // with tables they ascend
  EXPECT_FALSE(ordered_long_chains(documents(4, true), 16384));  // and with GQA up to d128
  EXPECT_FALSE(ordered_long_chains(dkdv("q_idx >= kv_idx", 1, false), 16384));  // tile bounds: long walks
  EXPECT_FALSE(ordered_long_chains(dkdv("", 1, true), 8064));
  EXPECT_TRUE(ordered_long_chains(dkdv("", 1, true), 8065));                    // tables alone
  EXPECT_TRUE(ordered_long_chains(dkdv("", 4, true), 16384));
  KernelSpec long_tables = dkdv("", 1, true);
  long_tables.dq_long_chains = true;
  EXPECT_EQ(ordered_dq_chains(long_tables), 2);
  EXPECT_EQ(rendered(long_tables), 2);
  KernelSpec long_documents = documents(1, true, false);
  long_documents.dq_long_chains = true;
  EXPECT_EQ(ordered_dq_chains(long_documents), 2);
  EXPECT_EQ(rendered(long_documents), 2);
  EXPECT_EQ(ordered_dq_chains(documents(1, true)), 1);
  KernelSpec long_tables_gqa = dkdv("", 4, true);
  long_tables_gqa.dq_long_chains = true;
  EXPECT_EQ(ordered_dq_chains(long_tables_gqa), 1);
  EXPECT_EQ(rendered(long_tables_gqa), 1);
  // Long chains on sums that ascend are refused, with what to do instead.
  KernelSpec ascending = documents(1, true);
  ascending.dq_long_chains = true;
  EXPECT_EQ(validation_error(ascending),
            "the long chains of turns (KernelSpec::dq_long_chains, emit's --long-chains) are for ordered dQ "
            "sums that descend, and this kernel's ascend (codegen::ordered_dq_ascending: a mask_mod with "
            "tables, no GQA), where one chain is a pipeline: drop --long-chains, or emit the descending "
            "kernel (tables alone: no --mask; or --no-block-mask)");
  // The fast mode sums into one copy.
  KernelSpec fast = dkdv("", 1, false);
  fast.dq_ordered = false;
  EXPECT_EQ(rendered(fast), 1);
}

// The ordered dQ sums run from the last kv tile down (DQ_ASCENDING: ascending walks, units in
// reverse, the last wave's pairs descending) under any mask_mod without GQA, and under masks whose
// walks the data cuts (documents) with GQA up to head dim 128, in the deterministic mode only and
// with block tables; from kv tile 0 up without a mask, with tables alone, with a mask_mod but no
// tables, with GQA under masks with tile bounds and with GQA at head dim 256. The kernel renders what the rule says.
TEST(KernelSpecValidation, OrderedDqAscendsUnderMasksButGqaWithTileBoundsOrSlices) {
  const auto dkdv = [](const char* mask, int gqa_group, bool block_mask, bool ordered = true, int head_dim = 128) {
    KernelSpec s = ordered_dkdv_spec(mask, gqa_group, block_mask, head_dim);
    s.dq_ordered = ordered;
    return s;
  };
  const auto rendered = [](const KernelSpec& s) {
    const std::string text = render(s).text;
    const bool yes = text.find("constexpr bool DQ_ASCENDING = true;") != std::string::npos;
    const bool no = text.find("constexpr bool DQ_ASCENDING = false;") != std::string::npos;
    return yes && !no ? 1 : no && !yes ? 0 : -1;
  };
  const char* documents = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
  // Without GQA: any mask_mod, any head dim.
  EXPECT_TRUE(ordered_dq_ascending(dkdv(documents, 1, true)));
  EXPECT_EQ(rendered(dkdv(documents, 1, true)), 1);
  EXPECT_TRUE(ordered_dq_ascending(dkdv(documents, 1, true, true, 256)));
  EXPECT_EQ(rendered(dkdv(documents, 1, true, true, 256)), 1);
  EXPECT_TRUE(ordered_dq_ascending(dkdv("doc[kv_idx] != 2", 1, true)));  // keys only, still no tile bounds
  EXPECT_TRUE(ordered_dq_ascending(dkdv("q_idx >= kv_idx", 1, true)));
  EXPECT_EQ(rendered(dkdv("q_idx >= kv_idx", 1, true)), 1);
  EXPECT_TRUE(ordered_dq_ascending(dkdv("q_idx >= kv_idx", 1, true, true, 64)));
  EXPECT_TRUE(ordered_dq_ascending(dkdv("q_idx >= kv_idx", 1, true, true, 256)));
  EXPECT_TRUE(ordered_dq_ascending(dkdv("q_idx >= kv_idx && q_idx - kv_idx <= 256", 1, true)));
  EXPECT_TRUE(ordered_dq_ascending(dkdv("kv_idx <= 100 || q_idx >= kv_idx", 1, true)));
  // With GQA: documents up to head dim 128.
  EXPECT_TRUE(ordered_dq_ascending(dkdv(documents, 4, true)));
  EXPECT_EQ(rendered(dkdv(documents, 4, true)), 1);
  EXPECT_TRUE(ordered_dq_ascending(dkdv(documents, 8, true)));
  EXPECT_TRUE(ordered_dq_ascending(dkdv(documents, 3, true, true, 64)));
  // ... but not beside head dim 256's column slices, nor under masks with tile bounds.
  EXPECT_FALSE(ordered_dq_ascending(dkdv(documents, 4, true, true, 256)));
  EXPECT_EQ(rendered(dkdv(documents, 4, true, true, 256)), 0);
  EXPECT_FALSE(ordered_dq_ascending(dkdv("q_idx >= kv_idx", 4, true)));
  EXPECT_EQ(rendered(dkdv("q_idx >= kv_idx", 4, true)), 0);
  EXPECT_FALSE(ordered_dq_ascending(dkdv("q_idx >= kv_idx && q_idx - kv_idx <= 256", 2, true, true, 64)));
  // Tables alone, or a mask_mod without tables (dense walks; neither measured ascending), no mask.
  EXPECT_FALSE(ordered_dq_ascending(dkdv("", 1, true)));
  EXPECT_FALSE(ordered_dq_ascending(dkdv("q_idx >= kv_idx", 1, false)));
  EXPECT_EQ(rendered(dkdv("q_idx >= kv_idx", 1, false)), 0);
  EXPECT_FALSE(ordered_dq_ascending(dkdv(documents, 1, false)));
  EXPECT_FALSE(ordered_dq_ascending(dkdv("", 1, false)));
  EXPECT_EQ(rendered(dkdv("", 1, false)), 0);
  // The fast mode has no turns.
  EXPECT_FALSE(ordered_dq_ascending(dkdv(documents, 1, true, false)));
  EXPECT_EQ(rendered(dkdv(documents, 1, true, false)), 0);
  EXPECT_FALSE(ordered_dq_ascending(dkdv("q_idx >= kv_idx", 1, true, false)));
}

TEST(KernelSpecValidation, SharedMemoryLimitsByArch) {
  EXPECT_EQ(max_shared_memory_for_arch("sm_80"), 163u * 1024);
  EXPECT_EQ(max_shared_memory_for_arch("sm_86"), 99u * 1024);
  EXPECT_EQ(max_shared_memory_for_arch("sm_89"), 99u * 1024);
  EXPECT_EQ(max_shared_memory_for_arch("sm_90a"), 227u * 1024);
  EXPECT_EQ(max_shared_memory_for_arch("sm_120a"), 99u * 1024);
}

TEST(KernelSpecValidation, UnknownFamily) {
  try {
    parse_family("fwdd");
    FAIL() << "parse_family accepted 'fwdd'";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown kernel family 'fwdd' (known: fwd, bwd_preprocess, bwd_dq, bwd_dkdv, bwd_buffer_grad, decode, decode_combine, "
                 "block_mask, diagonal_table, builtin)");
  }
  for (Family f : {Family::fwd, Family::bwd_preprocess, Family::bwd_dq, Family::bwd_dkdv, Family::block_mask,
                   Family::builtin_axpy})
    EXPECT_EQ(parse_family(family_name(f)), f);
}

// What Attention uses when nobody chose a config must be launchable on the GPUs flexjit targets:
// sm_80 (A100, 163 KiB per block) and sm_90a (H100, 227 KiB).
TEST(KernelSpecValidation, DefaultConfigsFitSharedMemory) {
  for (const char* arch : {"sm_80", "sm_90a"})
    for (Family f : {Family::fwd, Family::bwd_dq, Family::bwd_dkdv})
      for (auto [d, dv] : {std::pair{64, 64}, {128, 128}, {256, 256}, {128, 64}, {192, 128}}) {
        const KernelSpec s = attention_spec(f, d, dv);
        EXPECT_EQ(shared_memory_error(s, arch), "") << family_name(f) << " d" << d << "/" << dv << " on " << arch;
      }
}

}  // namespace
}  // namespace flexjit::codegen
