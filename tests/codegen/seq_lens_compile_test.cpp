// The per-sequence-lengths variants (KernelSpec::seq_lens) render and compile with NVRTC (no GPU
// needed): forward, dQ and dK/dV on both tensor-core paths, the warp-specialised forward and
// dK/dV kernels, and the block-mask builder. Their
// kernels take a FlexjitSeqLens parameter before the error word; kernels without lengths do not.
#include <gtest/gtest.h>

#include <string>

#include "codegen/kernel_spec.hpp"
#include "codegen/kernel_store.hpp"
#include "flexjit/error.hpp"
#include "nvrtc_log.hpp"

namespace flexjit::codegen {
namespace {

KernelSpec attention(Family family, const char* config, bool seq_lens) {
  KernelSpec s;
  s.family = family;
  s.head_dim = s.head_dim_v = 128;
  s.gqa_group = 2;
  s.mask_mod = Expr::parse(ModKind::mask, "q_idx + kv_len - q_len >= kv_idx");
  s.score_mod = Expr::parse(ModKind::score, "30.0 * tanh(score / 30.0)");
  s.config = BlockConfig::parse(config);
  s.has_block_mask = s.has_full_blocks = true;
  s.seq_lens = seq_lens;
  return s;
}

TEST(SeqLensCompile, ForwardAndBackwardVariantsCompileOnBothPaths) {
  const struct {
    Family family;
    const char* mma_sync;
    const char* wgmma;
  } cases[] = {{Family::fwd, "m64n64w4s2", "m128n128w8s2g"},
               {Family::bwd_dq, "m64n64w4s2", "m64n64w4s2g"},
               {Family::bwd_dkdv, "m64n64w4s2", "m64n128w8s2g"}};
  for (const auto& c : cases)
    for (const auto& [arch, config] : {std::pair{"sm_80", c.mma_sync}, std::pair{"sm_90a", c.wgmma}}) {
      const KernelSpec s = attention(c.family, config, true);
      const std::string text = render(s).text;
      EXPECT_NE(text.find("const FlexjitSeqLens lens,"), std::string::npos) << s.describe();
      EXPECT_NE(s.describe().find(" seq_lens=1"), std::string::npos) << s.describe();
      EXPECT_EQ(render(attention(c.family, config, false)).text.find("FlexjitSeqLens"), std::string::npos);
      const jit::CompiledKernel k = compile_kernel(s, arch).kernel;
      EXPECT_EQ(k.resources.count(kernel_name(c.family)), 1u) << arch << " " << s.describe();
      EXPECT_FALSE(nvrtc_warned(k.log)) << arch << " " << s.describe() << ":\n" << k.log;
    }
}

// The warp-specialised forward with lengths: the lengths come between the mod arguments and the
// TMA maps, and the kernels compile without spills (128-key tiles with the call's tables, the wide
// 192-row d64 and 176-key tiles without, d256's 64-key tiles).
TEST(SeqLensCompile, WarpSpecializedForwardVariantsCompileWithoutSpills) {
  const struct {
    const char* config;
    int head_dim;
    bool tables;
    const char* score;
  } cases[] = {{"m128n128w8s2ws", 128, true, "30.0 * tanh(score / 30.0)"},
               {"m128n128w8s2ws", 64, true, "30.0 * tanh(score / 30.0)"},
               {"m192n128w12s2ws", 64, false, "score"},
               {"m128n176w8s2ws", 64, false, "score"},
               {"m128n64w8s2ws", 256, true, "30.0 * tanh(score / 30.0)"}};
  for (const auto& c : cases) {
    KernelSpec s = attention(Family::fwd, c.config, true);
    s.head_dim = s.head_dim_v = c.head_dim;
    s.has_block_mask = s.has_full_blocks = c.tables;
    s.score_mod = Expr::parse(ModKind::score, c.score);
    s.validate();
    const std::string text = render(s).text;
    EXPECT_NE(text.find("const FlexjitSeqLens lens,\n                  const __grid_constant__ FlexjitFwdTma tma"),
              std::string::npos) << s.describe();
    EXPECT_NE(text.find("clear_v_rows_past_end("), std::string::npos) << s.describe();
    KernelSpec without = s;
    without.seq_lens = false;
    EXPECT_EQ(render(without).text.find("clear_v_rows_past_end"), std::string::npos) << s.describe();
    const jit::CompiledKernel k = compile_kernel(s, "sm_90a").kernel;
    ASSERT_EQ(k.resources.count(kernel_name(Family::fwd)), 1u) << s.describe();
    EXPECT_EQ(k.resources.at(kernel_name(Family::fwd)).spill_store_bytes, 0) << s.describe();
  }
}

// The warp-specialised dK/dV kernel with lengths: the lengths
// come between the mod arguments and the TMA maps, K's rows past the keys and each crossing tile's
// Q and dO rows past the queries are cleared, and the kernels compile with at most 32 bytes spilled
// (the unmodified d64 kernel spills 16 without lengths); the deterministic mode's ordered sums and
// the column slices of head dim 256 take them too.
TEST(SeqLensCompile, WarpSpecializedDkdvVariantsCompile) {
  const struct {
    const char* config;
    int head_dim;
    bool tables;
    const char* score;
    const char* mask;
  } cases[] = {{"m64n128w8s2ws", 128, true, "30.0 * tanh(score / 30.0)", "q_idx + kv_len - q_len >= kv_idx"},
               {"m64n128w8s2ws", 128, false, "score", ""},
               {"m64n128w8s3ws", 64, true, "30.0 * tanh(score / 30.0)", "q_idx + kv_len - q_len >= kv_idx"},
               {"m64n128w8s3ws", 64, false, "score", ""}};
  for (const auto& c : cases) {
    KernelSpec s = attention(Family::bwd_dkdv, c.config, true);
    s.head_dim = s.head_dim_v = c.head_dim;
    s.dq_accumulate = true;
    s.has_block_mask = s.has_full_blocks = c.tables;
    s.score_mod = Expr::parse(ModKind::score, c.score);
    s.mask_mod = *c.mask ? Expr::parse(ModKind::mask, c.mask) : KernelSpec{}.mask_mod;
    s.validate();
    const std::string text = render(s).text;
    EXPECT_NE(text.find("const FlexjitSeqLens lens,\n                  const __grid_constant__ FlexjitBwdTma tma"),
              std::string::npos) << s.describe();
    EXPECT_NE(text.find("clear_tile_rows<BLOCK_N, D / 64>(smem_k"), std::string::npos) << s.describe();
    EXPECT_NE(text.find("clear_tile_rows<BLOCK_M, DV / 64>(smem_do"), std::string::npos) << s.describe();
    KernelSpec without = s;
    without.seq_lens = false;
    EXPECT_EQ(render(without).text.find("clear_tile_rows<"), std::string::npos) << s.describe();
    const jit::CompiledKernel k = compile_kernel(s, "sm_90a").kernel;
    ASSERT_EQ(k.resources.count(kernel_name(Family::bwd_dkdv)), 1u) << s.describe();
    EXPECT_LE(k.resources.at(kernel_name(Family::bwd_dkdv)).spill_store_bytes, 32) << s.describe();
  }
  KernelSpec ordered = attention(Family::bwd_dkdv, "m64n128w8s2ws", true);
  ordered.dq_accumulate = ordered.dq_ordered = true;
  ordered.validate();  // the deterministic mode's ordered sums take lengths too
  const jit::CompiledKernel k = compile_kernel(ordered, "sm_90a").kernel;
  ASSERT_EQ(k.resources.count(kernel_name(Family::bwd_dkdv)), 1u) << ordered.describe();
  // (The ordered kernels spill a few dozen bytes without lengths too: 80 for this one's mods.)
  EXPECT_LE(k.resources.at(kernel_name(Family::bwd_dkdv)).spill_store_bytes, 96) << ordered.describe();
  // Head dim 256: one column slice per warpgroup, with score halves, GQA 2:1 and 8:1.
  for (int gqa : {2, 8}) {
    KernelSpec slices = attention(Family::bwd_dkdv, "m64n64w8s2ws", true);
    slices.head_dim = slices.head_dim_v = 256;
    slices.gqa_group = gqa;
    slices.dq_accumulate = true;
    slices.validate();
    const jit::CompiledKernel ks = compile_kernel(slices, "sm_90a").kernel;
    ASSERT_EQ(ks.resources.count(kernel_name(Family::bwd_dkdv)), 1u) << slices.describe();
    EXPECT_LE(ks.resources.at(kernel_name(Family::bwd_dkdv)).spill_store_bytes, 32)
        << slices.describe();
  }
}

TEST(SeqLensCompile, BlockMaskBuilderVariantCompiles) {
  const Expr mask = Expr::parse(ModKind::mask, "q_idx + kv_len - q_len >= kv_idx");
  const KernelSpec s = block_mask_kernel_spec(mask, 128, 128, true);
  EXPECT_EQ(s.describe(), "block_mask blocks 128x128 mask_mod=" + mask.canonical() + " seq_lens=1");
  EXPECT_NE(render(s).text.find("const FlexjitSeqLens lens,"), std::string::npos);
  EXPECT_EQ(render(block_mask_kernel_spec(mask, 128, 128)).text.find("FlexjitSeqLens"), std::string::npos);
  const jit::CompiledKernel k = compile_kernel(s, "sm_80").kernel;
  EXPECT_EQ(k.resources.count(kernel_name(Family::block_mask, 0)), 1u);
}

TEST(SeqLensCompile, DivisibleLengthsAreNotASeqLensVariant) {
  KernelSpec s = attention(Family::fwd, "m64n64w4s2", true);
  s.is_divisible = true;
  try {
    s.validate();
    FAIL() << "a divisible kernel with per-sequence lengths was accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "a kernel with per-sequence lengths (seq_lens) takes any length: is_divisible must be false");
  }
}

}  // namespace
}  // namespace flexjit::codegen
