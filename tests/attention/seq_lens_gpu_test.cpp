// Per-sequence lengths in the forward and backward (CallOptions::seq_lens) on a GPU, against the
// float64 reference with the same lengths: ragged lengths with 0, 1 and odd ones, Sq != Skv, GQA,
// the causal mask written with the lengths, a mask reading a buffer indexed by another buffer,
// both tensor-core paths and the warp-specialised forward and dK/dV kernels; rows past a
// sequence's queries stay as they were (NaN here), gradients past its lengths are zero, the
// inputs' NaN padding reaches no result, and a second backward gives the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "flexjit/error.hpp"
#include "support/attention_harness.hpp"
#include "support/scoped.hpp"
#include "support/varlen_check.hpp"

namespace flexjit::test {
namespace {

// B = 6 ragged sequences: full, empty (no queries), no keys, one row and one key, odd lengths,
// more queries than keys (the first rows of the lengths-causal mask see nothing).
FwdProblem ragged(int Sq, int Skv, Lengths& lens) {
  FwdProblem p;
  p.B = 6;
  p.Hq = 4;
  p.Hkv = 2;
  p.Sq = Sq;
  p.Skv = Skv;
  p.D = p.Dv = 128;
  lens.q = {Sq, 0, 37, 1, Sq - 3, Sq / 2 + 1};
  lens.kv = {Skv, 19, 0, 1, Skv - 58, Sq / 3};
  return p;
}

// ids[i] in [0, 8) and group[id] in [0, 3): the mask reads a buffer at another buffer's value.
void add_indirect_buffers(FwdProblem& p, std::mt19937_64& rng) {
  const int n = std::max(p.Sq, p.Skv);
  TestBuffer ids{BufferDecl{"ids", DType::i32, {n}}, {}}, group{BufferDecl{"group", DType::i32, {8}}, {}};
  std::uniform_int_distribution<int> id(0, 7), g(0, 2);
  for (int i = 0; i < n; ++i) ids.values.push_back(id(rng));
  for (int i = 0; i < 8; ++i) group.values.push_back(g(rng));
  p.buffers = {ids, group};
}

const char* kCausalByLengths = "q_idx + kv_len - q_len >= kv_idx";
const char* kIndirect = "group[ids[q_idx]] == group[ids[kv_idx]] || kv_idx == 0";

struct Mods {
  const char* score;
  const char* mask;
  Tables tables;
};

// One mod under each kind of tables (none, built with the lengths, of the padded lengths:
// unmodified scores, soft-capping causal by lengths, a key-length bias under the indirect mask),
// then `more`.
std::vector<Mods> every_table_kind(std::vector<Mods> more = {}) {
  std::vector<Mods> mods = {{"", "", Tables::none},
                            {"30.0 * tanh(score / 30.0)", kCausalByLengths, Tables::with_lengths},
                            {"score - 0.01 * (kv_len - kv_idx)", kIndirect, Tables::padded}};
  mods.insert(mods.end(), more.begin(), more.end());
  return mods;
}

void run_mods(const char* fwd_config, const char* dq_config, const char* dkdv_config, const std::string& path,
              const std::vector<Mods>& mods, int head_dim = 128) {
  std::mt19937_64 rng(fresh_seed());
  for (const Mods& m : mods) {
    Lengths lens;
    FwdProblem p = ragged(200, 300, lens);
    p.D = p.Dv = head_dim;
    p.score_mod = m.score;
    p.mask_mod = m.mask;
    if (std::string(m.mask) == kIndirect) add_indirect_buffers(p, rng);
    p.config = BlockConfig::parse(fwd_config);
    p.dq_config = BlockConfig::parse(dq_config);
    p.dkdv_config = BlockConfig::parse(dkdv_config);
    const char* tables[] = {"no block mask", "tables of the padded lengths", "tables built with the lengths"};
    check_varlen(p, lens, path + " score '" + m.score + "' mask '" + m.mask + "', " + tables[int(m.tables)],
                 /*backward=*/true, /*repeat=*/true, /*host_copies=*/true, m.tables);
  }
}

TEST(SeqLensGpu, MmaSyncNoMaskAndCausalByLengths) {
  FLEXJIT_REQUIRE_GPU();
  run_mods("m64n64w4s2", "m64n64w4s2", "m64n64w4s2", "mma.sync",
           {{"", "", Tables::none},
            {"", kCausalByLengths, Tables::none},
            {"30.0 * tanh(score / 30.0)", kCausalByLengths, Tables::with_lengths}});
}

TEST(SeqLensGpu, MmaSyncIndirectBufferMask) {
  FLEXJIT_REQUIRE_GPU();
  run_mods("m64n64w4s2", "m64n64w4s2", "m64n64w4s2", "mma.sync",
           {{"score - 0.01 * (kv_len - kv_idx)", kIndirect, Tables::padded},
            {"", kIndirect, Tables::none},
            {"", kIndirect, Tables::with_lengths}});
}

TEST(SeqLensGpu, WgmmaLargeTiles) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the wgmma path needs an sm_90a GPU, this is " << current_device().name;
  run_mods("m128n128w8s2g", "m64n64w4s2g", "m64n128w8s2g", "wgmma",
           every_table_kind());
}

// Head dim 64's synchronous wgmma forward, two CTAs per SM (128 registers, a few spilled; the
// per-sequence-length kernels are those a d64 ragged call takes on Hopper).
TEST(SeqLensGpu, WgmmaHeadDim64) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the wgmma path needs an sm_90a GPU, this is " << current_device().name;
  run_mods("m128n128w8s2g", "m64n64w4s2g", "m64n128w8s2g", "wgmma d64",
           every_table_kind(),
           64);
}

// The warp-specialised forward with lengths: the producer skips the work tiles past a sequence's
// queries, V rows past its keys are cleared before P V (the padding is NaN), a warpgroup whose
// rows cross the end stores O row by row. Two consumer warpgroups on 128- and 176-key tiles, three
// on 192 rows at d64 (the wide tiles take no block mask), 64-key tiles at d256.
TEST(SeqLensGpu, WarpSpecializedForward) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised path needs an sm_90a GPU, this is " << current_device().name;
  // The last: an affine score_mod whose slope reads a buffer by the query (the affine pass's
  // slope is read per row, never for the empty sequence's).
  run_mods("m128n128w8s2ws", "m64n64w4s2g", "m64n128w8s2g", "ws",
           every_table_kind({{"", kCausalByLengths, Tables::none},
                             {"score + float(ids[q_idx]) * 0.01 * float(kv_idx)", kIndirect, Tables::with_lengths}}));
  run_mods("m128n176w8s2ws", "m64n64w4s2g", "m64n128w8s2g", "ws n176",
           {{"", "", Tables::none}, {"score - 0.01 * (kv_len - kv_idx)", kCausalByLengths, Tables::none}});
  run_mods("m192n128w12s2ws", "m64n64w4s2g", "m64n128w8s2g", "ws m192 d64",
           {{"", "", Tables::none}, {"", kCausalByLengths, Tables::none}}, 64);
  run_mods("m128n128w8s2ws", "m64n64w4s2g", "m64n128w8s2g", "ws d64",
           {{"30.0 * tanh(score / 30.0)", kCausalByLengths, Tables::with_lengths}, {"", kIndirect, Tables::none}}, 64);
  // One consumer warpgroup, two CTAs per SM (the tuner's short-sequence shapes).
  run_mods("m64n64w4s2ws", "m64n64w4s2g", "m64n128w8s2g", "ws m64n64 two CTAs",
           {{"", kCausalByLengths, Tables::with_lengths}, {"", kIndirect, Tables::none}});
  run_mods("m64n128w4s2ws", "m64n64w4s2g", "m64n128w8s2g", "ws m64n128 d64 two CTAs",
           {{"30.0 * tanh(score / 30.0)", kCausalByLengths, Tables::none}}, 64);
  // Head dim 256: 64-key tiles, one GEMM at a time per warpgroup (no overlap); the backward on its
  // default kernels.
  Lengths lens;
  FwdProblem p = ragged(200, 300, lens);
  p.D = p.Dv = 256;
  p.score_mod = "30.0 * tanh(score / 30.0)";
  p.mask_mod = kCausalByLengths;
  p.config = BlockConfig::parse("m128n64w8s2ws");
  // (The fast mode asked for runs: its dK/dV kernel's column slices take lengths.)
  p.backward_mode = BackwardMode::fast;
  std::string reason = "unset";
  check_varlen(p, lens, "ws d256 soft-capping, causal by lengths, tables built with the lengths", true, false, true,
               Tables::with_lengths, fresh_seed(), &reason);
  EXPECT_EQ(reason, "") << "the fast mode was asked for";
}

// The fast backward's warp-specialised dK/dV kernel with lengths: a kv tile past its sequence's
// keys walks nothing and stores zeros, K's rows past the keys and each crossing tile's Q and dO
// rows past the queries are cleared before the GEMMs read them (the padding is NaN), the walk stops
// at each sequence's queries. Two consumer warpgroups at d128 (two stages) and d64 (three, K and V
// in registers, dQ by turns a tile late), under each kind of tables; at d256 the column slices with
// score halves, GQA 2:1 and 8:1; [B, S, H, D] with GQA 8:1 and Sq < Skv on the defaults (which
// take it).
TEST(SeqLensGpu, WarpSpecializedBackward) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised path needs an sm_90a GPU, this is " << current_device().name;
  run_mods("m128n128w8s2ws", "m64n64w4s2g", "m64n128w8s2ws", "ws dK/dV d128",
           every_table_kind({{"", kCausalByLengths, Tables::none}}));
  run_mods("m128n128w8s2ws", "m64n64w4s2g", "m64n128w8s3ws", "ws dK/dV d64",
           {{"", "", Tables::none},
            {"30.0 * tanh(score / 30.0)", kCausalByLengths, Tables::with_lengths},
            {"", kIndirect, Tables::none}},
           64);
  run_mods("m128n64w8s2ws", "m64n64w4s2g", "m64n64w8s2ws", "ws dK/dV d256 halves",
           {{"30.0 * tanh(score / 30.0)", kCausalByLengths, Tables::with_lengths}, {"", "", Tables::none}}, 256);
  for (Tables tables : {Tables::with_lengths, Tables::none}) {
    Lengths lens;
    FwdProblem p = ragged(200, 300, lens);
    p.D = p.Dv = 256;
    p.Hq = 8;
    p.Hkv = 1;
    p.mask_mod = kCausalByLengths;
    p.config = BlockConfig::parse("m128n64w8s2ws");
    p.dkdv_config = BlockConfig::parse("m64n64w8s2ws");
    check_varlen(p, lens, "ws dK/dV d256 GQA 8:1", true, true, true, tables);
  }
  Lengths lens;
  FwdProblem p = ragged(129, 517, lens);
  p.bshd = true;
  p.Hq = 8;
  p.Hkv = 1;
  p.mask_mod = kCausalByLengths;
  p.backward_mode = BackwardMode::fast;
  check_varlen(p, lens, "defaults bshd GQA 8:1, fast", /*backward=*/true, /*repeat=*/true, true, Tables::with_lengths);
  // The group split over CTAs (FLEXJIT_BWD_HEAD_SPLITS, 3: heads of 2, 3 and 3): each split stores
  // zeros past its sequence's keys, and the sums cover every padded row.
  p.dkdv_config = BlockConfig::parse("m64n128w8s2ws");
  for (const char* splits : {"2", "3", "8"}) {
    const ScopedEnv forced("FLEXJIT_BWD_HEAD_SPLITS", splits);
    check_varlen(p, lens, std::string("defaults bshd GQA 8:1, fast, heads in ") + splits + " splits", true, true, true,
                 Tables::with_lengths);
  }
}

// The deterministic mode's ordered dQ sums with lengths: the chains count only the kv tiles before
// each sequence's end as adders (tables of the padded lengths list more), the first adder stores
// the tile's padded rows (zeros past the queries), and a second run gives the same bits for dq,
// dk and dv. Fixed to the warp-specialised kernel at d128, d64 and d256 (column slices, the ranker
// counting the ranks) with GQA 2:1, under each kind of tables; GQA 8:1 [B, S, H, D] on the
// defaults (there the dQ kernel's way: 517 keys make chains of five 128-key tiles, longer than a
// kv tile's walk over three 64-query tiles).
TEST(SeqLensGpu, WarpSpecializedOrderedBackward) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised path needs an sm_90a GPU, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  const struct {
    int head_dim;
    const char* dkdv;
    const char* score;
    const char* mask;
    Tables tables;
  } cases[] = {{128, "m64n128w8s2ws", "", "", Tables::none},
               {128, "m64n128w8s2ws", "30.0 * tanh(score / 30.0)", kCausalByLengths, Tables::with_lengths},
               {128, "m64n128w8s2ws", "score - 0.01 * (kv_len - kv_idx)", kIndirect, Tables::padded},
               {64, "m64n128w8s3ws", "", kCausalByLengths, Tables::none},
               {64, "m64n128w8s3ws", "", kIndirect, Tables::padded},
               {256, "m64n64w8s2ws", "30.0 * tanh(score / 30.0)", kCausalByLengths, Tables::with_lengths},
               {256, "m64n64w8s2ws", "", kIndirect, Tables::padded}};
  for (const auto& c : cases) {
    Lengths lens;
    FwdProblem p = ragged(200, 300, lens);
    p.D = p.Dv = c.head_dim;
    p.score_mod = c.score;
    p.mask_mod = c.mask;
    if (std::string(c.mask) == kIndirect) add_indirect_buffers(p, rng);
    p.dkdv_config = BlockConfig::parse(c.dkdv);
    p.backward_mode = BackwardMode::deterministic;
    check_varlen(p, lens, std::string("ordered ") + c.dkdv + " d" + std::to_string(c.head_dim) + " score '" + c.score +
                              "' mask '" + c.mask + "'",
                 /*backward=*/true, /*repeat=*/true, true, c.tables);
  }
  Lengths lens;
  FwdProblem p = ragged(129, 517, lens);
  p.bshd = true;
  p.Hq = 8;
  p.Hkv = 1;
  p.mask_mod = kCausalByLengths;
  p.backward_mode = BackwardMode::deterministic;
  check_varlen(p, lens, "defaults bshd GQA 8:1, deterministic", true, true, true, Tables::with_lengths);
}

// A score_mod's diagonal values (staged once per diagonal of a tile) beside ragged lengths: a
// guarded read `few[q_idx - kv_idx]` of a table exactly as long as the guard lets through. Under
// tables of the padded lengths a short sequence walks key tiles wholly past its keys (64-key
// tiles in 128-key sparse blocks), whose scores are evaluated at key kv_len - 1: their window of
// diagonals must start there, or a score reads another diagonal's value and its read's error bits
// (once reported as an out-of-bounds read of a guarded index; m128n64w8s2ws, Skv 300). Forward on
// 64- and 128-key tiles, the dK/dV kernels that stage the values at d64 (three stages) and d128,
// fast and deterministic; check_varlen compares with float64 and fails on any reported error.
TEST(SeqLensGpu, ScoreDiagonalValuesOfShortSequences) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised path needs an sm_90a GPU, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  const char* guarded = "where(kv_idx <= q_idx && q_idx - kv_idx < 150, score + few[q_idx - kv_idx], score * 0.5)";
  // No buffer read by the key (a mask's column values would take the forward instead) and no
  // lengths (so tables of the padded lengths stay right for every sequence).
  const char* prefix = "kv_idx < 40 || q_idx + 20 >= kv_idx";
  const struct {
    int head_dim;
    const char* fwd;
    const char* dkdv;
    const char* mask;
    Tables tables;
    BackwardMode mode;
  } cases[] = {{64, "m128n64w8s2ws", "m64n128w8s3ws", prefix, Tables::padded, BackwardMode::fast},
               {64, "m128n64w8s2ws", "m64n128w8s3ws", "", Tables::none, BackwardMode::deterministic},
               {128, "m128n64w8s2ws", "m64n128w8s2ws", prefix, Tables::padded, BackwardMode::deterministic},
               {128, "m128n128w8s2ws", "m64n128w8s2ws", kCausalByLengths, Tables::with_lengths, BackwardMode::fast}};
  for (const auto& c : cases) {
    Lengths lens;
    FwdProblem p = ragged(200, 300, lens);
    p.D = p.Dv = c.head_dim;
    p.score_mod = guarded;
    p.mask_mod = c.mask;
    TestBuffer few{BufferDecl{"few", DType::f32, {150}}, {}};
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int i = 0; i < 150; ++i) few.values.push_back(2.0 * normal(rng));
    p.buffers.push_back(few);
    p.config = BlockConfig::parse(c.fwd);
    p.dkdv_config = BlockConfig::parse(c.dkdv);
    p.backward_mode = c.mode;
    check_varlen(p, lens,
                 std::string("diagonal values ") + c.fwd + " / " + c.dkdv + " d" + std::to_string(c.head_dim) +
                     " mask '" + c.mask + "'" + (c.mode == BackwardMode::fast ? " fast" : " deterministic"),
                 /*backward=*/true, /*repeat=*/c.mode == BackwardMode::deterministic, true, c.tables);
  }
}

// The dK/dV kernel seeding Sᵀ from the diagonal table's pairs (codegen::dkdv_diagonal_seed:
// `score + V`, head dim 64) beside ragged lengths, empty sequences among them. The table is the
// padded lengths' (V reads neither b nor the lengths); the rows and keys past a sequence's end read
// its pairs as any other and take probability 0. The forward reads the same kind of table. Fast
// and deterministic, without a mask and causal by lengths; check_varlen compares with float64 and
// fails on any reported error.
TEST(SeqLensGpu, ScoreDiagonalSeedOfShortSequences) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised path needs an sm_90a GPU, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  const struct {
    const char* mask;
    Tables tables;
    BackwardMode mode;
  } cases[] = {{"", Tables::none, BackwardMode::fast},
               {kCausalByLengths, Tables::with_lengths, BackwardMode::fast},
               {kCausalByLengths, Tables::with_lengths, BackwardMode::deterministic}};
  for (const auto& c : cases) {
    Lengths lens;
    FwdProblem p = ragged(200, 300, lens);
    p.D = p.Dv = 64;
    p.score_mod = "score + rel[h][kv_idx - q_idx + 199]";  // diagonals -199 .. 299 of the padded lengths
    p.mask_mod = c.mask;
    TestBuffer rel{BufferDecl{"rel", DType::f32, {p.Hq, 499}}, {}};
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int i = 0; i < p.Hq * 499; ++i) rel.values.push_back(2.0 * normal(rng));
    p.buffers.push_back(rel);
    p.backward_mode = c.mode;
    check_varlen(p, lens,
                 std::string("seeded diagonal values d64 mask '") + c.mask + "'" +
                     (c.mode == BackwardMode::fast ? " fast" : " deterministic"),
                 /*backward=*/true, /*repeat=*/c.mode == BackwardMode::deterministic, true, c.tables);
  }
}

TEST(SeqLensGpu, WgmmaSmallTiles) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the wgmma path needs an sm_90a GPU, this is " << current_device().name;
  run_mods("m64n64w4s2g", "m128n64w8s2g", "m64n64w4s2g", "wgmma",
           {{"", kCausalByLengths, Tables::none}, {"", kIndirect, Tables::with_lengths}});
}

TEST(SeqLensGpu, DefaultConfigsBshdSqBelowSkvAndDeterminism) {
  FLEXJIT_REQUIRE_GPU();
  Lengths lens;
  FwdProblem p = ragged(129, 517, lens);
  p.bshd = true;
  p.mask_mod = kCausalByLengths;
  p.score_mod = "score + 0.01 * (kv_idx - q_idx)";
  for (BackwardMode mode : {BackwardMode::deterministic, BackwardMode::fast}) {
    p.backward_mode = mode;
    check_varlen(p, lens, mode == BackwardMode::fast ? "defaults bshd, fast" : "defaults bshd, deterministic",
                 /*backward=*/true, /*repeat=*/true, true, Tables::with_lengths);
  }
  p.backward_mode.reset();
  // Lengths without host copies (the device array only) and q_lens left out (every sequence Sq).
  FwdProblem d = ragged(64, 96, lens);
  d.dtype = DType::f16;
  d.Hq = 8;
  d.Hkv = 1;
  lens.q.assign(d.B, d.Sq);
  check_varlen(d, lens, "f16 GQA 8 device lengths only", true, true, /*host_copies=*/false);
}

// Head dims that are no multiple of 64 (padded tiles) with per-sequence lengths, on the defaults:
// d96 (128-column tiles) and d160 (192 in the forward, 256 in the backward on sm_90a), both modes,
// a mask by lengths and the indirect one.
TEST(SeqLensGpu, HeadDimsThatAreNoMultipleOf64) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  for (auto [d, dv] : {std::pair{96, 96}, {160, 120}})
    for (BackwardMode mode : {BackwardMode::fast, BackwardMode::deterministic}) {
      Lengths lens;
      FwdProblem p = ragged(200, 300, lens);
      p.D = d, p.Dv = dv;
      p.backward_mode = mode;
      const bool indirect = mode == BackwardMode::deterministic;
      p.mask_mod = indirect ? kIndirect : kCausalByLengths;
      if (indirect) add_indirect_buffers(p, rng);
      p.score_mod = "30.0 * tanh(score / 30.0)";
      check_varlen(p, lens,
                   "d" + std::to_string(d) + "/" + std::to_string(dv) + (indirect ? " indirect, deterministic" : " fast"),
                   /*backward=*/true, /*repeat=*/true, /*host_copies=*/true,
                   indirect ? Tables::padded : Tables::with_lengths);
    }
}

// Per-sequence lengths without a mask at head dims 72 and 80 take three stages in the fast mode
// since (zzo) (hopper_default: one dQ staging buffer taken by turns); the config is named here so
// that the kernel stays covered whatever the rule picks (ConfigSpace.DefaultsFitEveryDeviceClass
// tests the rule). Unmodified scores at 72 and soft-capping at 80, GQA 2:1.
TEST(SeqLensGpu, UnmaskedHeadDims72And80WithThreeStages) {
  FLEXJIT_REQUIRE_GPU();
  for (auto [d, score] : {std::pair{72, ""}, {80, "30.0 * tanh(score / 30.0)"}}) {
    Lengths lens;
    FwdProblem p = ragged(200, 300, lens);
    p.D = p.Dv = d;
    p.backward_mode = BackwardMode::fast;
    p.score_mod = score;
    p.dkdv_config = BlockConfig::parse("m64n128w8s3ws");
    check_varlen(p, lens, "d" + std::to_string(d) + (*score ? " soft-capping" : " unmodified") + ", three stages",
                 /*backward=*/true, /*repeat=*/true, /*host_copies=*/true, Tables::none);
  }
}

TEST(SeqLensGpu, LengthOutsideThePaddedLengthIsClampedAndReported) {
  FLEXJIT_REQUIRE_GPU();
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = 64;
  const Attention attention(spec);
  const int B = 2, S = 64;
  DeviceBuffer qkv = DeviceBuffer::allocate(size_t(B) * S * 64 * 2), out = DeviceBuffer::allocate(size_t(B) * S * 64 * 2);
  std::vector<uint16_t> ones(size_t(B) * S * 64, 0x3F80);  // bf16 1.0
  qkv.upload(ones.data(), ones.size() * 2);
  const TensorView view = TensorView::contiguous(qkv.data(), DType::bf16, {B, 1, S, 64});
  const TensorView out_view = TensorView::contiguous(out.data(), DType::bf16, {B, 1, S, 64});
  const int32_t device_lens[] = {S, S + 1000};  // no host copy: only the kernel sees it
  DeviceBuffer kv_lens = DeviceBuffer::allocate(sizeof device_lens);
  kv_lens.upload(device_lens, sizeof device_lens);
  CallOptions call;
  call.seq_lens.kv_lens = TensorView::contiguous(kv_lens.data(), DType::i32, {B});
  attention.forward(view, view, view, out_view, TensorView{}, nullptr, nullptr, call);
  synchronize();
  try {
    check_buffer_errors();
    FAIL() << "a length beyond the padded length went unreported";
  } catch (const ShapeError& e) {
    const std::string text = e.what();
    EXPECT_EQ(text.rfind("forward or backward got a per-sequence length (CallOptions::seq_lens) outside [0, Sq] or "
                         "[0, Skv] (it was clamped into range, so the results are wrong)", 0), 0u) << text;
    EXPECT_NE(text.find("seq_lens=1 [per-sequence length outside the padded length: clamped into range]"),
              std::string::npos) << text;
  }
}

TEST(SeqLensGpu, TablesBuiltWithLengthsNeedThoseLengths) {
  FLEXJIT_REQUIRE_GPU();
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = 64;
  spec.mask_mod = "q_idx >= kv_idx";  // ignores the lengths: padded tables would do, these do not
  const Attention attention(spec);
  const int B = 2, S = 256;
  DeviceBuffer qkv = DeviceBuffer::allocate(size_t(B) * S * 64 * 2);
  const TensorView view = TensorView::contiguous(qkv.data(), DType::bf16, {B, 1, S, 64});
  const int32_t lengths[] = {S, 100};
  DeviceBuffer built = DeviceBuffer::allocate(sizeof lengths), other = DeviceBuffer::allocate(sizeof lengths);
  built.upload(lengths, sizeof lengths);
  other.upload(lengths, sizeof lengths);
  SeqLens lens;
  lens.kv_lens = TensorView::contiguous(built.data(), DType::i32, {B});
  const BlockMask mask = attention.block_mask(B, 1, S, S, lens);
  EXPECT_EQ(mask.shape().batch, B);  // a row of tables per sequence, though the mask ignores b
  synchronize();
  const std::string refused =
      "forward: the block mask was built with per-sequence lengths other than this call's seq_lens (its tables "
      "have nothing past those lengths); pass the q_lens / kv_lens arrays it was built with, or build it for this "
      "call";
  for (bool with_other : {false, true}) {
    CallOptions call;
    if (with_other) call.seq_lens.kv_lens = TensorView::contiguous(other.data(), DType::i32, {B});
    try {
      attention.forward(view, view, view, view, TensorView{}, &mask, nullptr, call);
      FAIL() << "tables of other lengths were accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), refused);
    }
  }
  // Sequence 1 (100 keys): its kv blocks past 100 are empty, block 0 is listed for query block 1.
  const BlockMaskTables& t = mask.host_tables();
  const int nq = mask.shape().num_q_blocks(), nkv = mask.shape().num_kv_blocks();
  EXPECT_EQ(t.kv_num_blocks[size_t(1) * nq + 1] + t.full_kv_num_blocks[size_t(1) * nq + 1], 1);
  EXPECT_EQ(t.kv_num_blocks[1] + t.full_kv_num_blocks[1], 2);  // sequence 0, query block 1: both blocks
  EXPECT_EQ(nkv, 2);
}

}  // namespace
}  // namespace flexjit::test
