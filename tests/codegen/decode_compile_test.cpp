// NVRTC compiles the decode and decode_combine families (no GPU needed) for sm_80 and sm_90a:
// contiguous and paged, with and without mods, GQA ratios that are not powers of two, both dtypes
// and every head dim. The default configs of head dims up to 128 must not spill.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "codegen/families/decode.hpp"
#include "codegen/kernel_spec.hpp"
#include "codegen/kernel_store.hpp"
#include "flexjit/error.hpp"
#include "nvrtc_log.hpp"

namespace flexjit::codegen {
namespace {

KernelSpec decode_spec(int d, int gqa, bool paged, const std::string& score, const std::string& mask,
                       DType dtype = DType::bf16, const std::string& arch = "sm_90a") {
  KernelSpec s;
  s.family = Family::decode;
  s.dtype = dtype;
  s.head_dim = s.head_dim_v = d;
  s.gqa_group = gqa;
  s.paged = paged;
  if (!score.empty()) s.score_mod = Expr::parse(ModKind::score, score);
  if (!mask.empty()) s.mask_mod = Expr::parse(ModKind::mask, mask);
  // The tiles a call with aligned tensors (pages of 64) takes.
  DecodeCacheFacts cache;
  cache.paged = paged;
  cache.tma_reads_cache = true;
  cache.page_size = paged ? 64 : 0;
  s.config = decode_default_config(Family::decode, d, d, gqa, arch, cache);
  return s;
}

TEST(DecodeCompile, EveryVariantCompilesForAmpereAndHopper) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    for (int d : {64, 128, 256})
      for (bool paged : {false, true}) {
        const KernelSpec s = decode_spec(d, 7, paged, "30.0 * tanh(score / 30.0)", "q_idx + kv_len - q_len >= kv_idx",
                                         d == 64 ? DType::f16 : DType::bf16, arch);
        const jit::CompiledKernel c = compile_kernel(s, arch).kernel;
        EXPECT_FALSE(nvrtc_warned(c.log)) << arch << " " << s.describe() << ":\n" << c.log;
        ASSERT_EQ(c.resources.count(kernel_name(Family::decode)), 1u) << s.describe();
        ASSERT_EQ(c.resources.count(kernel_name(Family::decode, 1)), 1u) << s.describe();
        EXPECT_EQ(kernel_name(Family::decode, 1), "flexjit_attention_decode_classify");
        EXPECT_EQ(c.resources.at(kernel_name(Family::decode, 1)).spill_store_bytes, 0) << arch << " " << s.describe();
        if (d <= 128) {
          EXPECT_EQ(c.resources.at(kernel_name(Family::decode)).spill_store_bytes, 0) << arch << " " << s.describe();
        }
        // The same mask classified in the kernel by its tile bounds.
        KernelSpec bounded = s;
        bounded.decode_tile_bounds = true;
        const jit::CompiledKernel cb = compile_kernel(bounded, arch).kernel;
        EXPECT_NE(bounded.describe().find("tile_bounds=1"), std::string::npos);
        if (d <= 128) {
          EXPECT_EQ(cb.resources.at(kernel_name(Family::decode)).spill_store_bytes, 0) << arch << " " << bounded.describe();
        }
      }
    const KernelSpec plain = decode_spec(128, 4, true, "", "", DType::bf16, arch);
    const jit::CompiledKernel c = compile_kernel(plain, arch).kernel;
    EXPECT_EQ(c.resources.at(kernel_name(Family::decode)).spill_store_bytes, 0) << arch << " " << plain.describe();
    KernelSpec combine;
    combine.family = Family::decode_combine;
    combine.head_dim = combine.head_dim_v = 128;
    combine.config = decode_default_config(Family::decode_combine, 128, 128);
    EXPECT_EQ(compile_kernel(combine, arch).kernel.resources.count(kernel_name(Family::decode_combine)), 1u);
  }
}

// Which calls classify by tile bounds: masks that have them, caches of at most
// kDecodeBoundsMaxTiles tiles, lists that fit beside the tiles, unless FLEXJIT_DECODE_CLASSIFY=kernel.
TEST(DecodeCompile, TileBoundsWhereTheMaskHasThemAndTheListFits) {
  const KernelSpec window = decode_spec(128, 4, false, "", "q_idx + kv_len - q_len - kv_idx < 4096");
  ASSERT_EQ(window.config.block_n, 64);  // the contiguous default these counts are made for
  EXPECT_TRUE(decode_classifies_by_bounds(window, 0, "sm_90a"));
  EXPECT_TRUE(decode_classifies_by_bounds(window, 64 * 1024, "sm_90a"));       // 1024 tiles
  EXPECT_FALSE(decode_classifies_by_bounds(window, 64 * 1024 + 1, "sm_90a"));  // 1025 tiles
  EXPECT_FALSE(decode_classifies_by_bounds(decode_spec(128, 4, false, "", ""), 100, "sm_90a"));  // no mask
  EXPECT_FALSE(decode_classifies_by_bounds(decode_spec(128, 4, false, "", "kv_idx < 2.5 * q_idx"), 100, "sm_90a"));
  // d64 on sm_86 (99 KiB): six stages of 64 keys take 98 KiB + the 2 KiB Q tile, which leaves no
  // room for the 4 KiB list; five stages do.
  KernelSpec big = decode_spec(64, 4, false, "", "q_idx + kv_len - q_len - kv_idx < 4096", DType::bf16, "sm_86");
  big.config = BlockConfig::parse("m16n64w4s6");
  EXPECT_FALSE(decode_classifies_by_bounds(big, 100, "sm_86"));
  big.config = BlockConfig::parse("m16n64w4s5");
  EXPECT_TRUE(decode_classifies_by_bounds(big, 100, "sm_86"));
  setenv("FLEXJIT_DECODE_CLASSIFY", "kernel", 1);
  EXPECT_FALSE(decode_classifies_by_bounds(window, 100, "sm_90a"));
  setenv("FLEXJIT_DECODE_CLASSIFY", "bounds", 1);
  EXPECT_TRUE(decode_classifies_by_bounds(window, 100, "sm_90a"));
  setenv("FLEXJIT_DECODE_CLASSIFY", "yes", 1);
  try {
    decode_classifies_by_bounds(window, 100, "sm_90a");
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("FLEXJIT_DECODE_CLASSIFY='yes' is not a classification"), std::string::npos)
        << e.what();
  }
  unsetenv("FLEXJIT_DECODE_CLASSIFY");
}

TEST(DecodeCompile, ConfigsOutsideTheFamilyAreNamed) {
  KernelSpec s = decode_spec(128, 4, false, "", "");
  s.config = BlockConfig::parse("m48n64w4s3");
  try {
    s.validate();
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "decode config m48n64w4s3: block_m (packed query rows) must be 16, 32 or 64");
  }
  s.config = BlockConfig::parse("m16n32w4s3");
  try {
    s.validate();
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "decode config m16n32w4s3: block_n must be a power of two up to 256 and a multiple of "
                           "16 * warps = 64 (each warp owns 16-key slices)");
  }
  s.config = BlockConfig::parse("m64n64w4s3");  // 4 x (64 + 32) accumulator and Q registers
  EXPECT_THROW(s.validate(), UsageError);
  EXPECT_EQ(parse_family("decode"), Family::decode);
  EXPECT_EQ(parse_family("decode_combine"), Family::decode_combine);
}

TEST(DecodeCompile, SharedMemoryCountsRingAndQueryTile) {
  KernelSpec s = decode_spec(128, 4, false, "", "");
  s.config = BlockConfig::parse("m16n64w4s3");
  // Q 16x128x2 + 3 stages x 64 x (128 + 128) x 2; the merge (4 x 16 x 130 x 4) fits in the ring.
  EXPECT_EQ(s.shared_memory_bytes(), 4096u + 98304u);
  // A mask_mod adds nothing: the kept-tile lists live in global memory (the classification kernel's).
  s.mask_mod = Expr::parse(ModKind::mask, "kv_idx < 10");
  EXPECT_EQ(s.shared_memory_bytes(), 4096u + 98304u);
}

// TMA configs ('t'): compile for sm_90a, contiguous and paged, masked and not, every head dim and
// D != Dv, without spills at head dims up to 128; the shared memory adds 1024 alignment bytes and
// one mbarrier per stage; other targets and families are named errors.
TEST(DecodeCompile, TmaConfigsCompileForHopperOnly) {
  for (int d : {64, 128, 256})
    for (bool paged : {false, true}) {
      KernelSpec s = decode_spec(d, 7, paged, "score - 0.5 * float(kv_len - kv_idx)", paged ? "kv_len - kv_idx < 4096" : "",
                                 d == 64 ? DType::f16 : DType::bf16);
      s.config = BlockConfig::parse(d == 256 ? "m16n64w4s3t" : "m16n128w8s3t");
      const jit::CompiledKernel c = compile_kernel(s, "sm_90a").kernel;
      ASSERT_EQ(c.resources.count(kernel_name(Family::decode)), 1u) << s.describe();
      if (d <= 128) {
        EXPECT_EQ(c.resources.at(kernel_name(Family::decode)).spill_store_bytes, 0) << s.describe();
      }
      // Rows of whole 64-column slabs: one 5-D copy per box takes all of them.
      const std::string ptx = c.ptx;
      EXPECT_NE(ptx.find("cp.async.bulk.tensor.5d"), std::string::npos) << s.describe();
      EXPECT_EQ(ptx.find("cp.async.bulk.tensor.4d"), std::string::npos) << s.describe();
      EXPECT_NE(ptx.find("cp.async.mbarrier.arrive.noinc"), std::string::npos) << s.describe();
    }
  KernelSpec unequal = decode_spec(64, 4, true, "", "");
  unequal.head_dim_v = 128;
  unequal.config = BlockConfig::parse("m16n64w4s3t");
  EXPECT_EQ(compile_kernel(unequal, "sm_90a").kernel.resources.count(kernel_name(Family::decode)), 1u);

  KernelSpec s = decode_spec(128, 4, true, "", "");
  s.config = BlockConfig::parse("m16n64w4s3t");
  EXPECT_EQ(s.config.str(), "m16n64w4s3t");
  EXPECT_TRUE(s.config.tma);
  EXPECT_NE(s.config, BlockConfig::parse("m16n64w4s3"));
  // Q 16x128x2 + 3 stages x 64 x (128 + 128) x 2 + 1024 + 3 x 8.
  EXPECT_EQ(s.shared_memory_bytes(), 4096u + 98304u + 1024u + 24u);
  try {
    check_shared_memory(s, "sm_80");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "decode config m16n64w4s3t loads through TMA, which needs the sm_90a target (Hopper); the "
                           "target is sm_80 — drop the trailing 't' for the cp.async loads");
  }
  KernelSpec fwd;
  fwd.family = Family::fwd;
  fwd.head_dim = fwd.head_dim_v = 128;
  fwd.config = BlockConfig::parse("m128n64w4s2t");
  try {
    fwd.validate();
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "config m128n64w4s2t: TMA loads ('t') exist for the decode family only; fwd takes 'g' or "
                           "'ws' for its Hopper paths");
  }
}

// Pages that cut the key tiles: boxes of 8, 16 and 32 rows compile without spills, named in the
// description; tensors narrower than their tiles (96 and 72 columns in 128-column tiles) take one
// 4-D copy per slab beside the other tensor's 5-D copies. Box rows that are no power of two from 8
// below block_n, or without a paged TMA config, are named.
TEST(DecodeCompile, TmaBoxesOfPageRowsCompile) {
  for (const char* config : {"m16n64w4s3t", "m16n128w4s3t"})
    for (int rows : {8, 16, 32}) {
      KernelSpec s = decode_spec(128, 4, true, "", "");
      s.config = BlockConfig::parse(config);
      s.decode_box_rows = rows;
      EXPECT_NE(s.describe().find(" box_rows=" + std::to_string(rows)), std::string::npos) << s.describe();
      const jit::CompiledKernel c = compile_kernel(s, "sm_90a").kernel;
      EXPECT_EQ(c.resources.at(kernel_name(Family::decode)).spill_store_bytes, 0) << s.describe();
      EXPECT_NE(c.ptx.find("cp.async.bulk.tensor.5d"), std::string::npos) << s.describe();
    }
  KernelSpec narrow = decode_spec(128, 4, true, "", "");
  narrow.config = BlockConfig::parse("m16n64w4s3t");
  narrow.decode_box_rows = 16;
  narrow.io_head_dim = 96;
  narrow.io_head_dim_v = 72;
  const std::string ptx = compile_kernel(narrow, "sm_90a").kernel.ptx;
  EXPECT_NE(ptx.find("cp.async.bulk.tensor.4d"), std::string::npos);
  EXPECT_EQ(ptx.find("cp.async.bulk.tensor.5d"), std::string::npos);
  narrow.io_head_dim_v = 0;  // V as wide as its tile again
  const std::string mixed = compile_kernel(narrow, "sm_90a").kernel.ptx;
  EXPECT_NE(mixed.find("cp.async.bulk.tensor.4d"), std::string::npos);
  EXPECT_NE(mixed.find("cp.async.bulk.tensor.5d"), std::string::npos);

  KernelSpec s = decode_spec(128, 4, true, "", "");
  s.config = BlockConfig::parse("m16n64w4s3t");
  const auto error_of = [&](int rows, bool paged, const char* config) {
    KernelSpec t = s;
    t.decode_box_rows = rows;
    t.paged = paged;
    t.config = BlockConfig::parse(config);
    try {
      t.validate();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(24, true, "m16n64w4s3t"),
            "decode config m16n64w4s3t: TMA boxes of 24 rows (decode_box_rows) are for a paged pool read through TMA "
            "('t'), a power of two from 8 below block_n = 64 (0: boxes of whole tiles)");
  EXPECT_EQ(error_of(64, true, "m16n64w4s3t"),
            "decode config m16n64w4s3t: TMA boxes of 64 rows (decode_box_rows) are for a paged pool read through TMA "
            "('t'), a power of two from 8 below block_n = 64 (0: boxes of whole tiles)");
  EXPECT_EQ(error_of(16, false, "m16n64w4s3t"),
            "decode config m16n64w4s3t: TMA boxes of 16 rows (decode_box_rows) are for a paged pool read through TMA "
            "('t'), a power of two from 8 below block_n = 64 (0: boxes of whole tiles)");
  EXPECT_EQ(error_of(16, true, "m16n64w4s3"),
            "decode config m16n64w4s3: TMA boxes of 16 rows (decode_box_rows) are for a paged pool read through TMA "
            "('t'), a power of two from 8 below block_n = 64 (0: boxes of whole tiles)");
  EXPECT_EQ(error_of(4, true, "m16n64w4s3t"),
            "decode config m16n64w4s3t: TMA boxes of 4 rows (decode_box_rows) are for a paged pool read through TMA "
            "('t'), a power of two from 8 below block_n = 64 (0: boxes of whole tiles)");
  EXPECT_EQ(error_of(32, true, "m16n64w4s3t"), "no error");
}

TEST(DecodeCompile, DefaultTilesFollowTheCacheAndTheArchitecture) {
  // The facts of a call: its cache (paged or not, whether TMA can describe it, the page size), and
  // its lengths (short sequences in waves, the longest one).
  auto facts = [](bool paged, bool tma, int page, bool short_waves = false, int64_t longest = 0) {
    DecodeCacheFacts f;
    f.paged = paged;
    f.tma_reads_cache = tma;
    f.page_size = page;
    f.short_waves = short_waves;
    f.longest_keys = longest;
    return f;
  };
  auto config = [&](int d, bool paged, const char* arch) {
    return decode_default_config(Family::decode, d, d, 4, arch, facts(paged, false, 0)).str();
  };
  // Hopper: a paged cache takes 8 warps over 128 keys (196 KiB), a contiguous one 4 over 64.
  EXPECT_EQ(config(128, true, "sm_90a"), "m16n128w8s3");
  // ... and 4 warps over 128 keys through TMA when the pools and the page size allow it: boxes
  // of gcd(page, 128) rows, whole 8-row swizzle atoms.
  auto paged_with = [&](int page, const char* arch) {
    return decode_default_config(Family::decode, 128, 128, 4, arch, facts(true, true, page)).str();
  };
  EXPECT_EQ(paged_with(64, "sm_90a"), "m16n128w4s3t");
  EXPECT_EQ(paged_with(16, "sm_90a"), "m16n128w4s3t");
  EXPECT_EQ(paged_with(24, "sm_90a"), "m16n128w4s3t");
  EXPECT_EQ(paged_with(256, "sm_90a"), "m16n128w4s3t");
  EXPECT_EQ(paged_with(20, "sm_90a"), "m16n128w8s3");
  EXPECT_EQ(paged_with(12, "sm_90a"), "m16n128w8s3");
  EXPECT_EQ(paged_with(64, "sm_80"), "m16n64w4s3");
  // Short sequences in waves of CTAs: 64 keys through TMA (two CTAs per SM) where the pages make
  // whole atoms of 64-key boxes; the page sizes TMA cannot box keep the cp.async tiles.
  auto short_waves = [&](int page, const char* arch) {
    return decode_default_config(Family::decode, 128, 128, 4, arch, facts(true, true, page, true)).str();
  };
  EXPECT_EQ(short_waves(16, "sm_90a"), "m16n64w4s3t");
  EXPECT_EQ(short_waves(64, "sm_90a"), "m16n64w4s3t");
  EXPECT_EQ(short_waves(24, "sm_90a"), "m16n64w4s3t");
  EXPECT_EQ(short_waves(256, "sm_90a"), "m16n64w4s3t");
  EXPECT_EQ(short_waves(20, "sm_90a"), "m16n128w8s3");
  EXPECT_EQ(short_waves(64, "sm_80"), "m16n64w4s3");
  // Pools TMA cannot describe (a stride of 0, a base off 16 bytes) keep the cp.async tiles.
  EXPECT_EQ(decode_default_config(Family::decode, 128, 128, 4, "sm_90a", facts(true, false, 64)).str(), "m16n128w8s3");
  // A contiguous cache TMA can describe: the same 64-key tiles through TMA on Hopper, at head dims
  // 65-128 and up to 16 packed rows; elsewhere, or when TMA cannot describe it, by cp.async.
  auto contiguous_tma = [&](int d, int rows, const char* arch) {
    return decode_default_config(Family::decode, d, d, rows, arch, facts(false, true, 0)).str();
  };
  EXPECT_EQ(contiguous_tma(128, 4, "sm_90a"), "m16n64w4s3t");
  EXPECT_EQ(contiguous_tma(96, 16, "sm_90a"), "m16n64w4s3t");
  EXPECT_EQ(contiguous_tma(128, 17, "sm_90a"), "m32n64w4s3");
  EXPECT_EQ(contiguous_tma(64, 4, "sm_90a"), "m16n128w4s3");
  EXPECT_EQ(contiguous_tma(256, 4, "sm_90a"), "m16n32w2s3");
  EXPECT_EQ(contiguous_tma(128, 4, "sm_80"), "m16n64w4s3");
  EXPECT_EQ(decode_default_config(Family::decode, 128, 128, 4, "sm_90a", facts(false, true, 64)).str(), "m16n64w4s3t");
  // ... when the longest sequence passes 16384 keys (or is unknown); shorter steps by cp.async.
  auto contiguous_of = [&](int64_t longest) {
    return decode_default_config(Family::decode, 128, 128, 4, "sm_90a", facts(false, true, 0, false, longest)).str();
  };
  EXPECT_EQ(contiguous_of(16385), "m16n64w4s3t");
  EXPECT_EQ(contiguous_of(65536), "m16n64w4s3t");
  EXPECT_EQ(contiguous_of(16384), "m16n64w4s3");
  EXPECT_EQ(contiguous_of(1), "m16n64w4s3");
  EXPECT_EQ(contiguous_of(0), "m16n64w4s3t");
  EXPECT_EQ(config(128, false, "sm_90a"), "m16n64w4s3");
  // sm_80 allows 163 KiB a block: the paged cache keeps the 100 KiB tiles.
  EXPECT_EQ(config(128, true, "sm_80"), "m16n64w4s3");
  // 99 KiB GPUs: two stages (100 KiB at three would not fit).
  EXPECT_EQ(config(128, false, "sm_86"), "m16n64w4s2");
  EXPECT_EQ(config(256, false, "sm_89"), "m16n32w2s2");
  EXPECT_EQ(config(64, false, "sm_120"), "m16n128w4s3");
  // Every default fits its architecture.
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_120"})
    for (int d : {64, 128, 192, 256})
      for (bool paged : {false, true}) {
        KernelSpec s = decode_spec(d, 4, paged, "", "", DType::bf16, arch);
        EXPECT_NO_THROW(check_shared_memory(s, arch)) << arch << " " << s.describe();
      }
}

}  // namespace
}  // namespace flexjit::codegen
