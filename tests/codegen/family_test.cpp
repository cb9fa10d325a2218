// Family descriptors: the registry knows every family by enum and by name, and each family's
// launch geometry for a call is what its kernel expects (values written out by hand).
#include <gtest/gtest.h>

#include <string>

#include "codegen/families/bwd_dkdv.hpp"
#include "codegen/families/fwd.hpp"
#include "codegen/family.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen {
namespace {

KernelSpec spec(Family family, int d, const char* config) {
  KernelSpec s;
  s.family = family;
  s.head_dim = s.head_dim_v = d;
  s.config = BlockConfig::parse(config);
  return s;
}

CallShape call(int batch, int heads, int kv_heads, int q_len, int kv_len) {
  CallShape c;
  c.batch = batch, c.heads = heads, c.kv_heads = kv_heads, c.q_len = q_len, c.kv_len = kv_len;
  return c;
}

// The value of the template constant `name` in the render context of `s` ("missing" if absent).
std::string template_constant(const KernelSpec& s, const std::string& name) {
  const nlohmann::json context = template_context(s);
  for (const auto& k : context["constants"])
    if (k["name"] == name) return k["value"].get<std::string>();
  return "missing";
}

void expect_dim(const jit::Dim3& d, unsigned x, unsigned y, unsigned z, const char* what) {
  EXPECT_EQ(d.x, x) << what;
  EXPECT_EQ(d.y, y) << what;
  EXPECT_EQ(d.z, z) << what;
}

TEST(FamilyRegistry, EveryFamilyByEnumAndName) {
  const std::vector<std::string> names = {"fwd",        "bwd_preprocess", "bwd_dq",  "bwd_dkdv",
                                          "bwd_buffer_grad", "decode",   "decode_combine", "block_mask",
                                          "diagonal_table",  "builtin"};
  ASSERT_EQ(all_families().size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(all_families()[i]->name, names[i]);
    EXPECT_EQ(find_descriptor(names[i]), all_families()[i]);
    EXPECT_EQ(&descriptor(all_families()[i]->family), all_families()[i]);
  }
  EXPECT_EQ(find_descriptor("decoder"), nullptr);
  EXPECT_EQ(descriptor(Family::bwd_dq).template_name, "attention_bwd_dq.cu.j2");
  EXPECT_EQ(descriptor(Family::block_mask).kernel_names,
            (std::vector<std::string>{"flexjit_block_mask_classify", "flexjit_block_mask_compact"}));
  // Tuned families are exactly the tiled attention kernels.
  for (const FamilyDescriptor* f : all_families())
    EXPECT_EQ(f->has_tuning(), f->name == "fwd" || f->name == "bwd_dq" || f->name == "bwd_dkdv") << f->name;
}

TEST(FamilyGeometry, ForwardAndDqWalkQueryTiles) {
  // 1000 queries in tiles of 128: 8 tiles (the last one partial); 8 warps.
  const KernelSpec fwd = spec(Family::fwd, 128, "m128n128w8s2g");
  const LaunchGeometry g = descriptor(Family::fwd).geometry(fwd, call(2, 16, 4, 1000, 3000), 0);
  expect_dim(g.grid, 8, 16, 2, "fwd grid");
  expect_dim(g.block, 256, 1, 1, "fwd block");
  EXPECT_EQ(g.tiles, 8);
  EXPECT_EQ(g.dynamic_smem, 128u * 128 * 2 + 2u * 128 * 256 * 2 + 1024);  // Q, 2 K/V stages, alignment
  const KernelSpec dq = spec(Family::bwd_dq, 64, "m64n64w4s2");
  const LaunchGeometry q = descriptor(Family::bwd_dq).geometry(dq, call(1, 3, 1, 65, 65), 0);
  expect_dim(q.grid, 2, 3, 1, "dq grid");
  expect_dim(q.block, 128, 1, 1, "dq block");
  EXPECT_EQ(q.dynamic_smem, 64u * 128 * 2 + 2u * 64 * 128 * 2);  // Q + dO, 2 K/V stages
}

// The backward's programmatic dependent launches (sm_90+): the warp-specialised dK/dV kernel after
// the preprocess (it waits in its template after issuing K and V), and the dQ conversion after the
// dK/dV kernel; the preprocess itself, the synchronous dK/dV kernel and the dK/dV sums start as
// usual.
TEST(FamilyGeometry, BackwardProgrammaticLaunches) {
  const CallShape c = call(2, 16, 4, 1000, 1000);
  EXPECT_TRUE(descriptor(Family::bwd_dkdv).geometry(spec(Family::bwd_dkdv, 128, "m64n128w8s2ws"), c, 0).programmatic);
  EXPECT_FALSE(descriptor(Family::bwd_dkdv).geometry(spec(Family::bwd_dkdv, 128, "m64n128w8s2g"), c, 0).programmatic);
  KernelSpec pre = spec(Family::bwd_dkdv, 128, "m64n128w8s2ws");
  pre.family = Family::bwd_preprocess;
  pre.config = descriptor(Family::bwd_preprocess).default_config(128, 128);
  EXPECT_FALSE(descriptor(Family::bwd_preprocess).geometry(pre, c, 0).programmatic);  // delta
  EXPECT_TRUE(descriptor(Family::bwd_preprocess).geometry(pre, c, 1).programmatic);   // dQ conversion
  EXPECT_FALSE(descriptor(Family::bwd_preprocess).geometry(pre, c, 2).programmatic);  // dK/dV sums
}

TEST(FamilyGeometry, WideWarpSpecializedForward) {
  // Three consumer warpgroups and the producer: 512 threads. 1000 queries in tiles of 192: 6 tiles,
  // x 16 heads x 2 batches = 192 work tiles on a persistent grid of 132 CTAs.
  const KernelSpec m192 = spec(Family::fwd, 64, "m192n128w12s2ws");
  CallShape c = call(2, 16, 4, 1000, 3000);
  c.sm_count = 132;
  const LaunchGeometry g = descriptor(Family::fwd).geometry(m192, c, 0);
  expect_dim(g.grid, 132, 1, 1, "m192 grid");
  expect_dim(g.block, 512, 1, 1, "m192 block");
  EXPECT_EQ(g.tiles, 6);
  // Q 192 x 64, 2 stages of K and V 128 x 64, the three warpgroups' O staging (64 x 64 each),
  // alignment, 128 bytes of mbarriers and the tile slot.
  EXPECT_EQ(g.dynamic_smem, 192u * 64 * 2 + 2u * 128 * 128 * 2 + 3u * 64 * 64 * 2 + 1024 + 128);
  // 176-key tiles: two consumer warpgroups; 8 query tiles x 16 x 2 = 256 work tiles, 132 CTAs.
  const KernelSpec n176 = spec(Family::fwd, 128, "m128n176w8s2ws");
  const LaunchGeometry h = descriptor(Family::fwd).geometry(n176, c, 0);
  expect_dim(h.grid, 132, 1, 1, "n176 grid");
  expect_dim(h.block, 384, 1, 1, "n176 block");
  EXPECT_EQ(h.tiles, 8);
  // Two 64 x 128 O staging buffers do not fit beside 2 x 176 keys: two of 64 x 64 (O in two turns).
  EXPECT_EQ(h.dynamic_smem, 128u * 128 * 2 + 2u * 176 * 256 * 2 + 2u * 64 * 64 * 2 + 1024 + 128);
}

TEST(FamilyGeometry, OneConsumerWarpgroupTakesTwoCtasPerSmWhereTheyFit) {
  // m64n64 at d128 with one consumer warpgroup: Q 64 x 128, two stages of K and V 64 x 128, one
  // 64 x 128 O staging buffer, alignment and barriers: 97 KiB + 128 B; two fit in 228 KiB with
  // 256 threads each. 300 queries: 5 tiles x 16 heads x 2 batches = 160 work tiles, more than
  // 66 SMs x 2 CTAs.
  const KernelSpec one = spec(Family::fwd, 128, "m64n64w4s2ws");
  CallShape c = call(2, 16, 4, 300, 300);
  c.sm_count = 66;
  const LaunchGeometry g = descriptor(Family::fwd).geometry(one, c, 0);
  EXPECT_EQ(g.dynamic_smem, 64u * 128 * 2 + 2u * 64 * 256 * 2 + 64u * 128 * 2 + 1024 + 128);
  expect_dim(g.grid, 132, 1, 1, "two CTAs per SM");
  expect_dim(g.block, 256, 1, 1, "producer and one consumer warpgroup");
  // Fewer work tiles than resident CTAs: one CTA each.
  c.sm_count = 132;
  expect_dim(descriptor(Family::fwd).geometry(one, c, 0).grid, 160, 1, 1, "one CTA per work tile");
  // d256's m64n64 (Q 32 KiB, stages 128 KiB) fits one, and so do two consumer warpgroups.
  c.sm_count = 66;
  expect_dim(descriptor(Family::fwd).geometry(spec(Family::fwd, 256, "m64n64w4s2ws"), c, 0).grid, 66, 1, 1, "d256");
  expect_dim(descriptor(Family::fwd).geometry(spec(Family::fwd, 128, "m128n64w8s2ws"), c, 0).grid, 66, 1, 1,
             "two consumer warpgroups");
}

// The persistent forward's sections of (batch, head) pairs: by ticket, the heads whose K and V
// fit in 8 MiB together, and at least 4 work tiles per CTA, then evened out so that the last
// section is not a small remainder; striding, one head.
TEST(FamilyGeometry, ForwardTileSections) {
  // Causal d256, B=2 H=16 S=4096 on 132 CTAs: a head's K and V are 4 MiB (1 fits beside the
  // +1 byte of rounding), 4 x 132 tiles need ceil(528 / 32) = 17 heads; 32 heads in two
  // sections of 16.
  EXPECT_EQ(forward_tile_section(spec(Family::fwd, 256, "m128n64w8s2ws"), 32, 32, 4096, 132, true), 16);
  // Causal d128, B=4 H=16: 2 MiB heads (3 fit), 17 for the balance: 17, 17, 17, 13 become four
  // sections of 16.
  EXPECT_EQ(forward_tile_section(spec(Family::fwd, 128, "m128n128w8s2ws"), 64, 32, 4096, 132, true), 16);
  // GQA 4:1 at d64, B=2 H=32: a query head's share of its K and V is 256 KiB: 31 fit in L2;
  // 31, 31, 2 become three sections of 22 (the last 20).
  KernelSpec gqa = spec(Family::fwd, 64, "m128n128w8s2ws");
  gqa.gqa_group = 4;
  EXPECT_EQ(forward_tile_section(gqa, 64, 32, 4096, 132, true), 22);
  // B=1 H=16 S=16384 at d128 (an 8 MiB head, 128 tiles each): 5 heads for the balance left the
  // last section one head (5, 5, 5, 1); four sections of 4 instead.
  EXPECT_EQ(forward_tile_section(spec(Family::fwd, 128, "m128n128w8s2ws"), 16, 128, 16384, 132, true), 4);
  // 17 such heads: four sections would be 5, 5, 5, 2; three of 6 leave 5 for the last.
  EXPECT_EQ(forward_tile_section(spec(Family::fwd, 128, "m128n128w8s2ws"), 17, 128, 16384, 132, true), 6);
  // 13 heads of 512 tiles (S=65536: 32 MiB heads, 2 for the balance): sections of 2, 3 or 4
  // leave the last one head, and 5 is more than twice 2, so the sections stay 2.
  EXPECT_EQ(forward_tile_section(spec(Family::fwd, 128, "m128n128w8s2ws"), 13, 512, 65536, 132, true), 2);
  // Never more than the call's heads; one head when the CTAs stride over equal tiles.
  EXPECT_EQ(forward_tile_section(spec(Family::fwd, 128, "m128n128w8s2ws"), 3, 2, 200, 6, true), 3);
  EXPECT_EQ(forward_tile_section(spec(Family::fwd, 256, "m128n64w8s2ws"), 32, 32, 4096, 132, false), 1);
}

TEST(FamilyGeometry, DkdvWalksKvTilesTimesColumnSlicesPerKvHead) {
  // d256 splits dK/dV into 2 column slices: 3000 kv rows / 64 = 47 tiles, x2 CTAs, 4 kv heads.
  const KernelSpec dkdv = spec(Family::bwd_dkdv, 256, "m32n64w4s2");
  const LaunchGeometry g = descriptor(Family::bwd_dkdv).geometry(dkdv, call(2, 16, 4, 1000, 3000), 0);
  expect_dim(g.grid, 94, 4, 2, "dkdv grid");
  expect_dim(g.block, 128, 1, 1, "dkdv block");
  EXPECT_EQ(g.tiles, 47);
}

// The fast backward's first dQ stores (FlexjitBwdParams::dq_first): the warp-specialised dK/dV
// kernel at head dim 128 under a mask, without GQA or under a mask without tile bounds; every
// other kernel has dq_accum zeroed.
TEST(FamilyFacts, FirstStoresOnlyInMaskedHeadDim128FastKernels) {
  const auto fast = [](int d, const char* config, bool masked, bool block_mask, int gqa) {
    KernelSpec s = spec(Family::bwd_dkdv, d, config);
    s.dq_accumulate = true;
    s.gqa_group = gqa;
    s.has_block_mask = block_mask;
    if (masked) s.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
    return s;
  };
  EXPECT_TRUE(dkdv_first_stores(fast(128, "m64n128w8s2ws", true, true, 1)));
  EXPECT_TRUE(dkdv_first_stores(fast(128, "m64n128w8s2ws", false, true, 1))) << "block mask alone";
  EXPECT_TRUE(dkdv_first_stores(fast(128, "m64n128w8s2ws", true, false, 1))) << "mask_mod alone";
  EXPECT_TRUE(dkdv_first_stores(fast(128, "m64n64w4s2ws", true, true, 1))) << "one warpgroup";
  EXPECT_FALSE(dkdv_first_stores(fast(128, "m64n128w8s2ws", false, false, 1))) << "no mask";
  EXPECT_FALSE(dkdv_first_stores(fast(128, "m64n128w8s2ws", true, true, 4))) << "GQA under a mask with bounds";
  KernelSpec documents = fast(128, "m64n128w8s2ws", true, true, 4);
  documents.declarations.buffers.push_back(BufferDecl::parse("doc:i32:?"));
  documents.mask_mod = Expr::parse(ModKind::mask, "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", documents.declarations);
  EXPECT_TRUE(dkdv_first_stores(documents)) << "GQA under a mask that data cuts";
  documents.gqa_group = 8;
  EXPECT_TRUE(dkdv_first_stores(documents)) << "GQA 8:1 under a mask that data cuts";
  documents.head_dim = documents.head_dim_v = 64;
  documents.config = BlockConfig::parse("m64n128w8s3ws");
  EXPECT_FALSE(dkdv_first_stores(documents)) << "GQA documents at head dim 64 (dQ by turns)";
  EXPECT_FALSE(dkdv_first_stores(fast(64, "m64n128w8s3ws", true, true, 1))) << "head dim 64 (dQ by turns)";
  EXPECT_FALSE(dkdv_first_stores(fast(256, "m64n64w8s2ws", true, true, 1))) << "column slices";
  EXPECT_FALSE(dkdv_first_stores(fast(128, "m64n128w8s2g", true, true, 1))) << "synchronous kernel";
  KernelSpec ordered = fast(128, "m64n128w8s2ws", true, true, 1);
  ordered.dq_ordered = true;
  EXPECT_FALSE(dkdv_first_stores(ordered)) << "the ordered sums store first their own way";
  KernelSpec no_dq = fast(128, "m64n128w8s2ws", true, true, 1);
  no_dq.dq_accumulate = false;
  EXPECT_FALSE(dkdv_first_stores(no_dq)) << "dQ by its own kernel";
}

// The fast mode's early conversion (FlexjitBwdParams::dq_done): the warp-specialised kernels whose
// single writer lands every dQ share of a CTA and whose CTAs walk whole GQA groups count their
// landed CTAs, with GQA and outside the documents' launch groups (where it measured faster); the
// ordered sums, column slices, split groups and per-sequence lengths do not.
TEST(FamilyFacts, LandedCtaCountOnlyInSingleWriterFastGqaKernels) {
  const auto fast = [](int d, const char* config, int gqa) {
    KernelSpec s = spec(Family::bwd_dkdv, d, config);
    s.dq_accumulate = true;
    s.gqa_group = gqa;
    return s;
  };
  EXPECT_TRUE(dkdv_counts_landed_ctas(fast(128, "m64n128w8s2ws", 4)));
  EXPECT_TRUE(dkdv_counts_landed_ctas(fast(64, "m64n128w8s3ws", 2))) << "head dim 64";
  EXPECT_TRUE(dkdv_counts_landed_ctas(fast(128, "m64n128w8s2ws", 3))) << "GQA 3:1";
  EXPECT_FALSE(dkdv_counts_landed_ctas(fast(128, "m64n128w8s2ws", 1))) << "without GQA";
  KernelSpec causal = fast(128, "m64n128w8s2ws", 4);
  causal.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  causal.has_block_mask = true;
  EXPECT_TRUE(dkdv_counts_landed_ctas(causal)) << "under causal (launch groups of 128 CTAs)";
  KernelSpec documents = fast(128, "m64n128w8s2ws", 4);
  documents.declarations.buffers.push_back(BufferDecl::parse("doc:i32:?"));
  documents.mask_mod = Expr::parse(ModKind::mask, "doc[q_idx] == doc[kv_idx]", documents.declarations);
  documents.has_block_mask = true;
  EXPECT_FALSE(dkdv_counts_landed_ctas(documents)) << "documents (launch groups of 1024 CTAs)";
  EXPECT_FALSE(dkdv_counts_landed_ctas(fast(256, "m64n64w8s2ws", 4))) << "column slices";
  EXPECT_FALSE(dkdv_counts_landed_ctas(fast(192, "m64n64w8s2ws", 4))) << "half-slab slices";
  EXPECT_FALSE(dkdv_counts_landed_ctas(fast(128, "m64n128w8s2g", 4))) << "synchronous kernel";
  KernelSpec ordered = fast(128, "m64n128w8s2ws", 4);
  ordered.dq_ordered = true;
  EXPECT_FALSE(dkdv_counts_landed_ctas(ordered)) << "the ordered sums";
  KernelSpec split = fast(128, "m64n128w8s2ws", 4);
  split.dkdv_head_splits = true;
  EXPECT_FALSE(dkdv_counts_landed_ctas(split)) << "split GQA groups";
  KernelSpec lengths = fast(128, "m64n128w8s2ws", 4);
  lengths.seq_lens = true;
  EXPECT_FALSE(dkdv_counts_landed_ctas(lengths)) << "per-sequence lengths";
  KernelSpec no_dq = fast(128, "m64n128w8s2ws", 4);
  no_dq.dq_accumulate = false;
  EXPECT_FALSE(dkdv_counts_landed_ctas(no_dq)) << "dQ by its own kernel";
}

// The warp-specialised dK/dV kernel's launch groups (LAUNCH_GROUP_CTAS): the plain order without a
// mask, one wave's worth of CTAs under causal-like masks, 1024 CTAs where data at the query
// positions cuts the walks (documents) in the fast mode with tables; the deterministic mode,
// kernels without tables and masks that read buffers at key positions alone keep 128.
TEST(FamilyFacts, LaunchGroupsOfAThousandCtasUnderDocumentsInTheFastMode) {
  const auto group = [](const char* mask, bool block_mask, bool ordered) {
    KernelSpec s = spec(Family::bwd_dkdv, 128, "m64n128w8s2ws");
    s.dq_accumulate = true;
    s.dq_ordered = ordered;
    s.has_block_mask = block_mask;
    s.declarations.buffers.push_back(BufferDecl::parse("doc:i32:?"));
    s.declarations.buffers.push_back(BufferDecl::parse("valid:i32:?"));
    if (*mask != '\0') s.mask_mod = Expr::parse(ModKind::mask, mask, s.declarations);
    return template_constant(s, "LAUNCH_GROUP_CTAS");
  };
  const char* documents = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
  EXPECT_EQ(group("", false, false), "0") << "no mask";
  EXPECT_EQ(group("", true, false), "0") << "tables alone";
  EXPECT_EQ(group("q_idx >= kv_idx", true, false), "128");
  EXPECT_EQ(group("q_idx >= kv_idx && q_idx - kv_idx <= 1024", true, false), "128") << "sliding window";
  EXPECT_EQ(group(documents, true, false), "1024");
  EXPECT_EQ(group("doc[q_idx] == doc[kv_idx]", true, false), "1024") << "bidirectional documents";
  EXPECT_EQ(group("valid[kv_idx] != 0 && q_idx >= kv_idx", true, false), "128") << "key padding: causal's walks";
  EXPECT_EQ(group(documents, true, true), "128") << "the deterministic mode";
  EXPECT_EQ(group(documents, false, false), "128") << "no tables: every walk whole";
  EXPECT_EQ(group("q_idx >= kv_idx", true, true), "128");
}

// Which dK/dV kernels read the row statistics as 8-byte pairs: the warp-specialised fast kernel at
// head dims up to 64 under a mask, tables or a score_mod, and at 128 with a score_mod whose
// derivative is not folded and whose buffers have one dimension (measured faster there; no faster
// on the plain kernel, on mask-only kernels at 128, on soft-capping or on a [h][q][kv] bias).
TEST(FamilyFacts, StatisticsPairsWhereTheyMeasuredFaster) {
  const auto dkdv = [](int d, const char* config, int io_dim = 0, const char* score = "score") {
    KernelSpec s = spec(Family::bwd_dkdv, d, config);
    s.io_head_dim = s.io_head_dim_v = io_dim;
    s.dq_accumulate = true;
    s.declarations.buffers.push_back(BufferDecl::parse("slope:f32:?"));
    s.declarations.buffers.push_back(BufferDecl::parse("rel:f32:8192"));
    s.declarations.buffers.push_back(BufferDecl::parse("bias:f32:?x?x?"));
    s.declarations.buffers.push_back(BufferDecl::parse("row:f32:?x?"));
    s.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx", s.declarations);
    s.score_mod = Expr::parse(ModKind::score, score, s.declarations);
    return template_context(s)["stats_pairs"].get<bool>();
  };
  EXPECT_TRUE(dkdv(64, "m64n128w8s3ws"));
  EXPECT_TRUE(dkdv(64, "m64n128w8s3ws", 48));
  EXPECT_TRUE(dkdv(64, "m64n128w8s3ws", 32)) << "causal d32 measured 1.024x";
  EXPECT_FALSE(dkdv(96, "m64n128w8s2ws"));
  EXPECT_FALSE(dkdv(128, "m64n128w8s2ws")) << "mask-only d128 measured level or slower";
  EXPECT_FALSE(dkdv(64, "m64n128w8s2g")) << "synchronous kernel";
  const char* alibi = "score + slope[h] * (kv_idx - q_idx)";
  EXPECT_TRUE(dkdv(128, "m64n128w8s2ws", 0, alibi)) << "ALiBi causal d128 measured 1.026x";
  EXPECT_TRUE(dkdv(128, "m64n128w8s2ws", 112, alibi)) << "ALiBi causal d112 measured 1.027x";
  EXPECT_TRUE(dkdv(128, "m64n128w8s2ws", 0, "score + rel[kv_idx - q_idx + 4096]")) << "measured 1.083x";
  EXPECT_TRUE(dkdv(128, "m64n128w8s2ws", 0, "score + 0.001 * q_idx")) << "a derivative of 1, no buffer";
  EXPECT_FALSE(dkdv(128, "m64n128w8s2ws", 0, "30.0 * tanh(score / 30.0)")) << "folded derivative, 0.995x";
  EXPECT_FALSE(dkdv(128, "m64n128w8s2ws", 0, "score + bias[h][q_idx][kv_idx]")) << "rank-3 table, 0.978x";
  EXPECT_FALSE(dkdv(128, "m64n128w8s2ws", 0, "score + row[h][kv_idx]")) << "rank 2, not measured";
  EXPECT_FALSE(dkdv(256, "m64n128w8s2ws", 0, alibi)) << "not measured above 128";
  KernelSpec plain = spec(Family::bwd_dkdv, 64, "m64n128w8s3ws");
  plain.dq_accumulate = true;
  EXPECT_FALSE(template_context(plain)["stats_pairs"].get<bool>()) << "no mask, no score_mod";
  plain.has_block_mask = true;
  EXPECT_TRUE(template_context(plain)["stats_pairs"].get<bool>()) << "tables alone";
  plain.has_block_mask = false;
  plain.score_mod = Expr::parse(ModKind::score, "30.0 * tanh(score / 30.0)");
  EXPECT_TRUE(template_context(plain)["stats_pairs"].get<bool>()) << "a score_mod alone";
  KernelSpec ordered = spec(Family::bwd_dkdv, 64, "m64n128w8s3ws");
  ordered.dq_accumulate = ordered.dq_ordered = true;
  EXPECT_FALSE(template_context(ordered)["stats_pairs"].get<bool>()) << "the ordered kernel";
  ordered.head_dim = ordered.head_dim_v = 128;
  ordered.config = BlockConfig::parse("m64n128w8s2ws");
  ordered.declarations.buffers.push_back(BufferDecl::parse("slope:f32:?"));
  ordered.score_mod = Expr::parse(ModKind::score, alibi, ordered.declarations);
  EXPECT_FALSE(template_context(ordered)["stats_pairs"].get<bool>()) << "the ordered kernel at 128";
}

// Which dK/dV kernels read two LSE pairs into registers ahead of Sᵀ's wait, and two of delta's
// ahead of dPᵀ's: the warp-specialised fast kernel at head dims up to 64, without per-sequence
// lengths or GQA under a mask without tile bounds (there the pairs' registers pushed ptxas into
// spilling; at d128 they cost more than the waits they saved).
TEST(FamilyFacts, LseReadAheadOnlyWhereTheFullFormKeepsItsRegisters) {
  const auto ahead = [](const KernelSpec& s) { return template_context(s)["stats_ahead_tiles"].get<int>(); };
  KernelSpec fast = spec(Family::bwd_dkdv, 64, "m64n128w8s3ws");
  fast.dq_accumulate = true;
  fast.is_divisible = true;
  fast.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  EXPECT_EQ(ahead(fast), 2);
  KernelSpec other = fast;
  other.head_dim = other.head_dim_v = 128;
  other.config = BlockConfig::parse("m64n128w8s2ws");
  EXPECT_EQ(ahead(other), 0) << "head dim 128";
  other.head_dim = 64;
  EXPECT_EQ(ahead(other), 0) << "value head dim 128";
  other = fast;
  other.is_divisible = false;
  EXPECT_EQ(ahead(other), 2) << "lengths the tiles do not divide";
  other.gqa_group = 4;
  EXPECT_EQ(ahead(other), 2) << "GQA";
  other.declarations.buffers.push_back(BufferDecl::parse("doc:i32:?"));
  other.mask_mod = Expr::parse(ModKind::mask, "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", other.declarations);
  EXPECT_EQ(ahead(other), 0) << "GQA under a mask without tile bounds (its lean form spilled)";
  other.gqa_group = 1;
  EXPECT_EQ(ahead(other), 2) << "the same mask without GQA";
  other = fast;
  other.seq_lens = true;
  EXPECT_EQ(ahead(other), 0) << "per-sequence lengths";
  other = fast;
  other.dq_ordered = true;
  EXPECT_EQ(ahead(other), 0) << "the ordered kernel";
  other = fast;
  other.dq_accumulate = false;
  EXPECT_EQ(ahead(other), 0) << "the dK/dV kernel without dQ sums";
  other = fast;
  other.config = BlockConfig::parse("m64n128w8s2g");
  EXPECT_EQ(ahead(other), 0) << "the synchronous kernel";
  const std::string text = render(fast).text;
  EXPECT_NE(text.find("const auto lse_ahead = read_stats_ahead<2>(stats, t4);"), std::string::npos);
  EXPECT_NE(text.find("const auto delta_ahead = read_stats_ahead<2>(stats + BLOCK_M, t4);"), std::string::npos);
  EXPECT_NE(text.find("tile_score_gradient(acc_dp, acc_s, grad, delta_ahead, t4);"), std::string::npos);
  EXPECT_EQ(render(other).text.find("StatsAhead"), std::string::npos) << "the text of other kernels is as before";
}

// Which kernels fold the score_mod's derivative into Pᵀ: the warp-specialised ones between head
// dims 64 and 128 whose derivative is not a constant.
TEST(FamilyFacts, ScoreGradientFoldedOnlyWhereItSpilled) {
  const auto ws = [](int head_dim, const std::string& score, const char* config = "m64n128w8s2ws") {
    KernelSpec s;
    s.family = Family::bwd_dkdv;
    s.head_dim = s.head_dim_v = head_dim;
    s.config = BlockConfig::parse(config);
    s.declarations.buffers.push_back(BufferDecl::parse("slope:f32:?"));
    s.declarations.buffers.push_back(BufferDecl::parse("rel:f32:?"));
    s.score_mod = Expr::parse(ModKind::score, score, s.declarations);
    s.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
    s.has_block_mask = s.has_full_blocks = true;
    s.dq_accumulate = true;
    return s;
  };
  const std::string softcap = "30.0 * tanh(score / 30.0)";
  EXPECT_TRUE(dkdv_folds_score_gradient(ws(128, softcap)));
  EXPECT_TRUE(dkdv_folds_score_gradient(ws(96, softcap)));
  EXPECT_TRUE(dkdv_folds_score_gradient(ws(128, "score * slope[h]")));  // the derivative reads a buffer
  EXPECT_TRUE(dkdv_folds_score_gradient(ws(128, "score * score")));
  EXPECT_FALSE(dkdv_folds_score_gradient(ws(128, "score")));
  EXPECT_FALSE(dkdv_folds_score_gradient(ws(128, "score + slope[h] * (kv_idx - q_idx)")));  // derivative 1
  EXPECT_FALSE(dkdv_folds_score_gradient(ws(128, "score + rel[q_idx - kv_idx + 4095]")));
  EXPECT_FALSE(dkdv_folds_score_gradient(ws(128, "2.0 * score")));  // derivative 2
  EXPECT_FALSE(dkdv_folds_score_gradient(ws(64, softcap, "m64n128w8s3ws")));
  EXPECT_FALSE(dkdv_folds_score_gradient(ws(256, softcap, "m64n64w8s2ws")));
  EXPECT_FALSE(dkdv_folds_score_gradient(ws(128, softcap, "m64n128w8s2g")));  // not warp-specialised
}

// Which score_mods have a constant derivative, so that the dK/dV kernel may take dSᵀ without its
// select on tiles that drop no score (see WholeTilesDropTheSelectOnlyUnderMasksWithTileBounds).
TEST(FamilyFacts, ScoreGradientIsConstantOnlyWithoutFreeVariablesOrReads) {
  const auto spec = [](const std::string& score) {
    KernelSpec s;
    s.family = Family::bwd_dkdv;
    s.declarations.buffers.push_back(BufferDecl::parse("slope:f32:?"));
    s.declarations.buffers.push_back(BufferDecl::parse("rel:f32:?"));
    s.declarations.params.push_back(ParamDecl::parse("temperature:float"));
    s.score_mod = Expr::parse(ModKind::score, score, s.declarations);
    return s;
  };
  EXPECT_TRUE(score_gradient_is_constant(spec("score")));
  EXPECT_TRUE(score_gradient_is_constant(spec("score + slope[h] * (kv_idx - q_idx)")));  // 1
  EXPECT_TRUE(score_gradient_is_constant(spec("score + rel[q_idx - kv_idx + 4095]")));  // 1
  EXPECT_TRUE(score_gradient_is_constant(spec("2.0 * score - 1.0")));                   // 2
  EXPECT_FALSE(score_gradient_is_constant(spec("30.0 * tanh(score / 30.0)")));
  EXPECT_FALSE(score_gradient_is_constant(spec("score * slope[h]")));      // reads a buffer
  EXPECT_FALSE(score_gradient_is_constant(spec("score * temperature")));   // reads a parameter
  EXPECT_FALSE(score_gradient_is_constant(spec("score * (kv_idx - q_idx)")));  // positions
  EXPECT_FALSE(score_gradient_is_constant(spec("score * score")));
}

// Which dK/dV kernels take dSᵀ without its select on whole tiles: a constant derivative, and a mask
// with tile bounds or none (the template's WHOLE_TILES_WITHOUT_SELECT).
TEST(FamilyFacts, WholeTilesDropTheSelectOnlyUnderMasksWithTileBounds) {
  const auto spec = [](const std::string& score, const std::string& mask) {
    KernelSpec s;
    s.family = Family::bwd_dkdv;
    s.declarations.buffers.push_back(BufferDecl::parse("slope:f32:?"));
    s.declarations.buffers.push_back(BufferDecl::parse("doc:i32:?"));
    s.score_mod = Expr::parse(ModKind::score, score, s.declarations);
    s.mask_mod = Expr::parse(ModKind::mask, mask, s.declarations);
    return s;
  };
  EXPECT_TRUE(dkdv_whole_tiles_without_select(spec("score", "q_idx >= kv_idx")));
  EXPECT_TRUE(dkdv_whole_tiles_without_select(spec("score", "q_idx >= kv_idx && q_idx - kv_idx <= 1024")));
  EXPECT_TRUE(dkdv_whole_tiles_without_select(spec("score", "kv_idx <= 512 || q_idx >= kv_idx")));
  EXPECT_TRUE(dkdv_whole_tiles_without_select(spec("score + slope[h] * (kv_idx - q_idx)", "q_idx >= kv_idx")));
  EXPECT_TRUE(dkdv_whole_tiles_without_select(spec("score", "true")));
  EXPECT_FALSE(dkdv_whole_tiles_without_select(spec("score", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx")));
  EXPECT_FALSE(dkdv_whole_tiles_without_select(spec("30.0 * tanh(score / 30.0)", "q_idx >= kv_idx")));
}

// The forward's affine pass (forward_kv_affine): ALiBi-like score_mods at head dims up to 128,
// in the forward only; the variant header then holds the slope function and the render the pass.
TEST(FamilyFacts, ForwardTakesTheAffineScorePassUpToHeadDim128) {
  const auto fwd = [](Family family, int head_dim, const std::string& score, const char* config) {
    KernelSpec s;
    s.family = family;
    s.head_dim = s.head_dim_v = head_dim;
    s.config = BlockConfig::parse(config);
    s.declarations.buffers.push_back(BufferDecl::parse("slope:f32:?"));
    s.score_mod = Expr::parse(ModKind::score, score, s.declarations);
    s.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
    s.has_block_mask = s.has_full_blocks = true;
    return s;
  };
  const std::string alibi = "score + slope[h] * (kv_idx - q_idx)";
  EXPECT_TRUE(forward_kv_affine(fwd(Family::fwd, 128, alibi, "m128n128w8s2ws")));
  EXPECT_TRUE(forward_kv_affine(fwd(Family::fwd, 64, alibi, "m192n128w12s2ws")));
  EXPECT_TRUE(forward_kv_affine(fwd(Family::fwd, 128, alibi, "m128n32w4s2")));  // the synchronous kernel too
  EXPECT_FALSE(forward_kv_affine(fwd(Family::fwd, 256, alibi, "m128n64w8s2ws")));
  EXPECT_FALSE(forward_kv_affine(fwd(Family::fwd, 128, "30.0 * tanh(score / 30.0)", "m128n128w8s2ws")));
  EXPECT_FALSE(forward_kv_affine(fwd(Family::fwd, 128, "score", "m128n128w8s2ws")));
  EXPECT_FALSE(forward_kv_affine(fwd(Family::decode, 128, alibi, "m16n64w4s3")));
  const KernelSpec on = fwd(Family::fwd, 128, alibi, "m128n128w8s2ws");
  EXPECT_NE(variant_header(on).find("flexjit_score_mod_log2_kv_slope"), std::string::npos);
  EXPECT_NE(render(on).text.find("apply_tile_mods_affine<"), std::string::npos);
  const KernelSpec off = fwd(Family::fwd, 256, alibi, "m128n64w8s2ws");
  EXPECT_EQ(variant_header(off).find("flexjit_score_mod_log2_kv_slope"), std::string::npos);
  EXPECT_EQ(render(off).text.find("apply_tile_mods_affine"), std::string::npos);
}

TEST(FamilyGeometry, PreprocessRowsPerCtaFromTheValueHeadDim) {
  // Dv 128: 16 chunks of 16 bytes, 16 lanes a row, 256 threads: 16 rows a CTA. The grid covers the
  // rows up to whole 64-row tiles (the row statistics' padding): 1000 -> 1024 rows, 64 CTAs.
  KernelSpec pre;
  pre.family = Family::bwd_preprocess;
  pre.head_dim = pre.head_dim_v = 128;
  pre.config.num_warps = 8;
  LaunchGeometry g = descriptor(Family::bwd_preprocess).geometry(pre, call(2, 5, 5, 1000, 1000), 0);
  expect_dim(g.grid, 64, 5, 2, "preprocess grid d128");
  expect_dim(g.block, 256, 1, 1, "preprocess block");
  EXPECT_EQ(g.dynamic_smem, 0u);
  // Dv 192: 24 chunks, 32 lanes a row: 8 rows a CTA, 1024 rows.
  pre.head_dim_v = 192;
  g = descriptor(Family::bwd_preprocess).geometry(pre, call(2, 5, 5, 1000, 1000), 0);
  expect_dim(g.grid, 128, 5, 2, "preprocess grid d192");
  // ... and the template receives the same numbers as constants.
  const nlohmann::json ctx = template_context(pre);
  const auto constant = [&](const std::string& name) {
    for (const auto& c : ctx["constants"])
      if (c["name"] == name) return c["value"].get<std::string>();
    return std::string("(missing)");
  };
  EXPECT_EQ(constant("THREADS_PER_ROW"), "32");
  EXPECT_EQ(constant("ROWS_PER_CTA"), "8");
  EXPECT_EQ(constant("DV"), "192");
  EXPECT_EQ(constant("DV_IO"), "192");  // the tensors' own columns: as many as the tiles'
}

TEST(FamilyGeometry, BlockMaskClassifiesThenCompacts) {
  KernelSpec bm;
  bm.family = Family::block_mask;
  bm.sparse_q_block = 128, bm.sparse_kv_block = 64;
  CallShape c = call(1, 8, 8, 1000, 300);  // a mask that ignores b: table batch 1, 8 heads
  const LaunchGeometry classify = descriptor(Family::block_mask).geometry(bm, c, 0);
  expect_dim(classify.grid, 5, 8, 8, "classify grid");  // 5 kv blocks, 8 q blocks, 8 table rows
  expect_dim(classify.block, 256, 1, 1, "classify block");
  const LaunchGeometry compact = descriptor(Family::block_mask).geometry(bm, c, 1);
  expect_dim(compact.grid, 13, 8, 1, "compact grid");  // one warp per table row: 8 + 5 rows
  expect_dim(compact.block, 32, 1, 1, "compact block");
}

TEST(FamilyGeometry, DecodePacksTheGroupAndSplitsTheKeys) {
  // Hq 28 / Hkv 4: 7 query heads a kv head; Sq 3 gives 21 packed rows, two 16-row tiles. The split
  // count is the host's choice per call and lands on grid.y.
  KernelSpec dec = spec(Family::decode, 128, "m16n64w4s3");
  dec.gqa_group = 7;
  CallShape c = call(5, 28, 4, 3, 1000);
  c.splits = 9;
  const LaunchGeometry g = descriptor(Family::decode).geometry(dec, c, 0);
  expect_dim(g.grid, 20, 9, 2, "decode grid");  // 5 x 4 (b, kv head), 9 splits, 2 row tiles
  expect_dim(g.block, 128, 1, 1, "decode block");
  // Q tile, then the larger of the 3-stage K/V ring and the 4 warps' merge buffers.
  EXPECT_EQ(g.dynamic_smem, 16u * 128 * 2 + 3u * 64 * 256 * 2);
  // Kernel 1 classifies a mask_mod's tiles: CTAs of 16 warps per (sequence, row tile, part) when
  // the mask reads no h (the kv heads share the list), per (sequence, kv head, row tile, part)
  // when it does.
  dec.mask_mod = Expr::parse(ModKind::mask, "q_idx + kv_len - q_len >= kv_idx");
  c.classify_parts = 3;  // three CTAs share each list's tiles
  const LaunchGeometry k1 = descriptor(Family::decode).geometry(dec, c, 1);
  expect_dim(k1.grid, 5, 2, 3, "classify grid");
  expect_dim(k1.block, 512, 1, 1, "classify block");
  EXPECT_EQ(k1.dynamic_smem, 0u);
  dec.mask_mod = Expr::parse(ModKind::mask, "kv_idx < 100 + h");
  expect_dim(descriptor(Family::decode).geometry(dec, c, 1).grid, 20, 2, 3, "classify grid reading h");
  // The template learns which rows the classification may collapse: h read or not, q_idx read or not.
  EXPECT_EQ(template_constant(dec, "MASK_USES_H"), "true");
  EXPECT_EQ(template_constant(dec, "MASK_USES_Q"), "false");
  dec.mask_mod = Expr::parse(ModKind::mask, "q_idx + kv_len - q_len >= kv_idx");
  EXPECT_EQ(template_constant(dec, "MASK_USES_H"), "false");
  EXPECT_EQ(template_constant(dec, "MASK_USES_Q"), "true");
  KernelSpec combine;
  combine.family = Family::decode_combine;
  combine.head_dim = combine.head_dim_v = 128;
  combine.config.num_warps = 4;
  const LaunchGeometry m = descriptor(Family::decode_combine).geometry(combine, c, 0);
  expect_dim(m.grid, 105, 1, 1, "combine grid");  // 5 x 28 x 3 = 420 rows, one warp each, 4 warps a CTA
  expect_dim(m.block, 128, 1, 1, "combine block");
}

// The synchronous wgmma forward asks ptxas for two CTAs per SM where two fit (d64's 128 x 128
// tiles: 81 KiB of shared memory and 256 threads each; d128's 128 x 64 ones, 97 KiB), one
// elsewhere: d128's 128 x 128 tiles (161 KiB), the warp-specialised kernel (persistent, one CTA
// per SM), mma.sync, and head dims above 128 (not measured).
TEST(FamilyFacts, SynchronousWgmmaForwardAsksForTwoCtasPerSmWhereTheyFit) {
  auto min_ctas = [](int d, const char* config) {
    return template_constant(spec(Family::fwd, d, config), "MIN_CTAS_PER_SM");
  };
  EXPECT_EQ(min_ctas(64, "m128n128w8s2g"), "2");
  EXPECT_EQ(min_ctas(64, "m64n128w4s2g"), "2");
  EXPECT_EQ(min_ctas(128, "m128n128w8s2g"), "1");
  EXPECT_EQ(min_ctas(128, "m128n64w8s2g"), "2");
  EXPECT_EQ(min_ctas(256, "m64n64w4s2g"), "1");
  EXPECT_EQ(min_ctas(64, "m128n128w8s2ws"), "1");
  EXPECT_EQ(min_ctas(64, "m192n128w12s2ws"), "1");
  EXPECT_EQ(min_ctas(64, "m128n64w4s2"), "1");
}

TEST(FamilyGeometry, BuiltinOneThreadPerElement) {
  KernelSpec axpy;
  axpy.family = Family::builtin_axpy;
  axpy.config.num_warps = 8;
  CallShape c;
  c.elements = 1000;
  const LaunchGeometry g = descriptor(Family::builtin_axpy).geometry(axpy, c, 0);
  expect_dim(g.grid, 4, 1, 1, "axpy grid");
  expect_dim(g.block, 256, 1, 1, "axpy block");
}

TEST(FamilyErrors, ParseFamilyListsTheRegistry) {
  try {
    parse_family("decoder");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown kernel family 'decoder' (known: fwd, bwd_preprocess, bwd_dq, bwd_dkdv, "
                           "bwd_buffer_grad, decode, decode_combine, block_mask, diagonal_table, builtin)");
  }
}

}  // namespace
}  // namespace flexjit::codegen
