// Forward attention on a GPU against the float64 CPU reference: every suite mod, odd lengths,
// Sq != Skv, GQA, [B,S,H,D] strides, fully masked rows, both dtypes, several head dims and block
// configs. Fresh random inputs each run (seed printed on failure), outputs poisoned with NaN.
#include <gtest/gtest.h>

#include <iterator>
#include <numeric>

#include "flexjit/error.hpp"
#include "support/attention_harness.hpp"
#include "support/diagonal_mods.hpp"

namespace flexjit::test {
namespace {

// Out and LSE against the reference; with FwdProblem::row_padding, out's columns past Dv untouched.
void expect_close(const FwdProblem& p, const std::string& what) {
  const FwdOutcome r = run_forward_check(p);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << what << ": output error, seed " << r.seed;
  EXPECT_LT(r.lse_error, tolerance(p.dtype)) << what << ": LSE error, seed " << r.seed;
  EXPECT_TRUE(r.padding_untouched) << what << ": out's columns past Dv were written";
}

FwdProblem base(int S = 512, int D = 128) {
  FwdProblem p;
  p.B = 2;
  p.Hq = p.Hkv = 3;
  p.Sq = p.Skv = S;
  p.D = p.Dv = D;
  return p;
}

TEST(FwdGpu, SuiteMods) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  struct Mod { const char* name; const char* score; const char* mask; };
  const Mod mods[] = {
      {"noop", "", ""},
      {"causal", "", "q_idx >= kv_idx"},
      {"sliding_window", "", "q_idx >= kv_idx && q_idx - kv_idx <= 200"},
      {"document_causal", "", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"},
      {"prefix_lm", "", "kv_idx <= 100 || q_idx >= kv_idx"},
      {"alibi_causal", "score + slope[h] * (kv_idx - q_idx)", "q_idx >= kv_idx"},
      {"softcap_causal", "30.0 * tanh(score / 30.0)", "q_idx >= kv_idx"},
  };
  for (const Mod& m : mods) {
    for (int D : {64, 128}) {
      FwdProblem p = base(640, D);
      p.score_mod = m.score;
      p.mask_mod = m.mask;
      if (std::string(m.mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Skv, rng));
      if (std::string(m.score).find("slope") != std::string::npos) p.buffers.push_back(alibi_slopes(p.Hq));
      expect_close(p, std::string(m.name) + " d" + std::to_string(D));
    }
  }
}

// score_mods whose constants the kernels fold into the softmax scale and log2(e), at both head
// dims of the forward's paths.
TEST(FwdGpu, ScoreModsWithConstantFactors) {
  FLEXJIT_REQUIRE_GPU();
  for (const std::string& score : score_mods_with_constant_factors())
    for (int D : {64, 128}) {
      FwdProblem p = base(333, D);
      p.score_mod = score;
      p.mask_mod = "q_idx >= kv_idx";
      if (score.find("slope") != std::string::npos) p.buffers.push_back(alibi_slopes(p.Hq));
      expect_close(p, score + " d" + std::to_string(D));
    }
}

// score_mods affine in kv_idx (Expr::kv_affine_form), which the forward evaluates once per row
// of a tile and then in two FFMAs per score on tiles that cross no key end: ALiBi under each kind
// of mask (documents take the mask's column values), with odd and unequal lengths (tiles that
// cross the ends keep the per-score form), GQA, a score factor, a row-dependent slope and the
// decode suite's form with the lengths in it.
TEST(FwdGpu, ScoreModsAffineInKeys) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  const char* alibi = "score + slope[h] * (kv_idx - q_idx)";
  struct Case {
    const char* score;
    const char* mask;
    int sq, skv, hq, hkv;
  };
  const Case cases[] = {
      {alibi, "", 640, 640, 3, 3},
      {alibi, "q_idx >= kv_idx", 1000, 1000, 4, 2},
      {alibi, "q_idx >= kv_idx && q_idx - kv_idx <= 200", 777, 777, 3, 3},
      {alibi, "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", 640, 640, 3, 3},
      {alibi, "kv_idx <= 100 || q_idx >= kv_idx", 300, 1000, 3, 1},
      {"score * 0.5 - (q_idx - kv_idx + 7) * slope[h]", "q_idx >= kv_idx", 513, 513, 3, 3},
      {"-(score + float(kv_idx) * 0.01) / 2.0", "", 257, 385, 2, 2},
      {"score + float(q_idx) * 0.0001 * float(kv_idx) + slope[h]", "q_idx >= kv_idx", 640, 640, 3, 3},
      {"score + slope[h] * (kv_idx - q_idx - kv_len + q_len)", "kv_idx <= q_idx + (kv_len - q_len)", 200, 1100, 4, 4},
  };
  for (const Case& c : cases)
    for (int D : {64, 128}) {
      FwdProblem p = base(c.sq, D);
      p.Sq = c.sq;
      p.Skv = c.skv;
      p.Hq = c.hq;
      p.Hkv = c.hkv;
      p.score_mod = c.score;
      p.mask_mod = c.mask;
      if (std::string(c.mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Skv, rng));
      if (std::string(c.score).find("slope") != std::string::npos) p.buffers.push_back(alibi_slopes(p.Hq));
      expect_close(p, std::string(c.score) + " | " + c.mask + " " + std::to_string(c.sq) + "x" +
                          std::to_string(c.skv) + " d" + std::to_string(D));
    }
}

// Scores that pass a row's running max later in the walk, by little and by far: the forward's
// lazy rescale keeps the max while a tile stays within 2^8 of it (base 2) and takes the eager
// form, which moves the max and rescales O, where any row of a warp passes that. Climbing scores
// (every few tiles pass), a jump of 150 per 256 keys (past 2^128 against the old max: an exp2
// there would overflow), rows that climb beside rows that do not (mixed warps), falling scores
// (the max stays far above the later tiles), and a row whose first keys are all masked.
struct RunningMaxCase {
  const char* score;
  const char* mask;
};
const RunningMaxCase kRunningMaxCases[] = {
    {"score + float(kv_idx) * 0.03", ""},
    {"score + float(kv_idx) * 0.03", "q_idx >= kv_idx"},
    {"score + float(kv_idx / 256) * 150.0", ""},
    {"score + float(q_idx % 3 == 1) * 0.05 * float(kv_idx)", ""},
    {"score - float(kv_idx) * 0.05", ""},
    {"score + float(kv_idx) * 0.04", "kv_idx >= 300 || q_idx % 2 == 0"},
};

// The cases under the forward's default tiles at both head dims, odd lengths and f16.
TEST(FwdGpu, ScoresThatPassTheRunningMaxLater) {
  FLEXJIT_REQUIRE_GPU();
  for (const RunningMaxCase& c : kRunningMaxCases)
    for (int D : {64, 128})
      for (DType dtype : {DType::bf16, DType::f16}) {
        FwdProblem p = base(333, D);
        p.Skv = 901;
        p.dtype = dtype;
        p.score_mod = c.score;
        p.mask_mod = c.mask;
        expect_close(p, std::string(c.score) + " | " + c.mask + " d" + std::to_string(D) +
                            (dtype == DType::f16 ? " f16" : " bf16"));
      }
}

// An infinite slope (hostile input) under a strict causal mask: every kept score of its head is
// -inf, so its rows are empty (output 0, LSE -inf) as the mod evaluated per score gives them; the
// affine pass would meet -inf + inf there, so such rows take the per-score form. The other heads
// stay exact.
TEST(FwdGpu, AffineScoreModWithAnInfiniteSlopeGivesEmptyRows) {
  FLEXJIT_REQUIRE_GPU();
  for (int D : {64, 128}) {
    FwdProblem p = base(640, D);
    p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
    p.mask_mod = "q_idx > kv_idx";
    TestBuffer slopes = alibi_slopes(p.Hq);
    slopes.values[1] = INFINITY;
    p.buffers.push_back(slopes);
    const FwdOutcome r = run_forward_check(p);
    EXPECT_LT(r.out_error, tolerance(p.dtype)) << "d" << D << ", seed " << r.seed;
    for (int b = 0; b < p.B; ++b)
      for (int i = 0; i < p.Sq; ++i) {
        const size_t row = (size_t(b) * p.Hq + 1) * p.Sq + i;
        ASSERT_EQ(r.lse[row], -INFINITY) << "d" << D << " batch " << b << " row " << i;
        for (int d = 0; d < p.Dv; ++d) ASSERT_EQ(r.out[row * p.Dv + d], 0.0) << "d" << D << " batch " << b << " row " << i;
      }
  }
}

TEST(FwdGpu, GqaCausal) {
  FLEXJIT_REQUIRE_GPU();
  FwdProblem p = base(512);
  p.Hq = 8;
  p.Hkv = 1;  // 8:1
  p.mask_mod = "q_idx >= kv_idx";
  expect_close(p, "gqa 8:1 causal");
  p.Hq = 8;
  p.Hkv = 2;
  p.score_mod = "30.0 * tanh(score / 30.0)";
  expect_close(p, "gqa 4:1 softcap causal");
}

TEST(FwdGpu, OddLengths) {
  FLEXJIT_REQUIRE_GPU();
  for (int S : {1, 17, 1000, 4097}) {
    FwdProblem p = base(S);
    p.B = 1;
    p.Hq = p.Hkv = 2;
    expect_close(p, "noop S=" + std::to_string(S));
    p.mask_mod = "q_idx >= kv_idx";
    expect_close(p, "causal S=" + std::to_string(S));
  }
}

TEST(FwdGpu, DifferentQueryAndKeyLengths) {
  FLEXJIT_REQUIRE_GPU();
  for (auto [sq, skv] : {std::pair{300, 1000}, {1000, 300}, {128, 4096}, {77, 129}}) {
    FwdProblem p = base();
    p.Sq = sq;
    p.Skv = skv;
    expect_close(p, "noop " + std::to_string(sq) + "x" + std::to_string(skv));
    p.mask_mod = "kv_idx <= q_idx + (kv_len - q_len)";  // causal aligned at the end
    expect_close(p, "bottom-right causal " + std::to_string(sq) + "x" + std::to_string(skv));
  }
}

TEST(FwdGpu, BshdStrides) {
  FLEXJIT_REQUIRE_GPU();
  FwdProblem p = base(333);
  p.bshd = true;
  p.Hq = 4;
  p.Hkv = 2;
  p.mask_mod = "q_idx >= kv_idx";
  expect_close(p, "[B,S,H,D] causal gqa");
}

TEST(FwdGpu, FullyMaskedRowsGiveZeroAndMinusInfinity) {
  FLEXJIT_REQUIRE_GPU();
  for (bool block_mask : {true, false}) {
    FwdProblem p = base(300);
    p.mask_mod = "q_idx % 7 != 0 && kv_idx <= q_idx";  // rows 0, 7, 14, ... see nothing
    p.use_block_mask = block_mask;
    const FwdOutcome r = run_forward_check(p);
    EXPECT_LT(r.out_error, tolerance(p.dtype)) << "seed " << r.seed;
    for (int row = 0; row < p.B * p.Hq * p.Sq; ++row) {
      if ((row % p.Sq) % 7 != 0) continue;
      EXPECT_EQ(r.lse[row], -INFINITY) << "row " << row;
      for (int d = 0; d < p.Dv; ++d) ASSERT_EQ(r.out[size_t(row) * p.Dv + d], 0.0) << "row " << row;
    }
  }
  FwdProblem p = base(256);
  p.score_mod = "where(q_idx >= kv_idx + 50, score, -inf)";  // score_mod masking: rows < 50 empty
  const FwdOutcome r = run_forward_check(p);
  EXPECT_LT(r.out_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_EQ(r.lse[0], -INFINITY);
}

TEST(FwdGpu, WithoutBlockMaskEvaluatesTheMaskEverywhere) {
  FLEXJIT_REQUIRE_GPU();
  FwdProblem p = base(700);
  p.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx <= 100";
  p.use_block_mask = false;
  expect_close(p, "sliding window, no block mask");
}

TEST(FwdGpu, HalfPrecisionAndHeadDims) {
  FLEXJIT_REQUIRE_GPU();
  for (DType dtype : {DType::f16, DType::bf16})
    for (auto [d, dv] : {std::pair{64, 64}, {128, 128}, {256, 256}, {128, 64}, {64, 256}, {192, 128}}) {
      FwdProblem p = base(384);
      p.dtype = dtype;
      p.D = d;
      p.Dv = dv;
      p.mask_mod = "q_idx >= kv_idx";
      expect_close(p, std::string(dtype_name(dtype)) + " D=" + std::to_string(d) + " Dv=" + std::to_string(dv));
    }
}

// Head dims that are no multiple of 64 (the kernels' tiles pad them: KernelSpec::set_head_dims):
// every tensor's rows carry 8 more columns, NaN in the inputs (a kernel that reads them gives NaN)
// and poisoned in out (a kernel that writes them is caught), on the default path (warp-specialised
// on sm_90a), the synchronous wgmma one and mma.sync; odd lengths, GQA, both layouts and dtypes.
TEST(FwdGpu, HeadDimsThatAreNoMultipleOf64) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  struct Case { int d, dv; const char* config; };
  const Case cases[] = {{96, 96, nullptr},  {80, 80, nullptr},  {32, 32, nullptr},    {160, 160, nullptr},
                        {8, 8, nullptr},    {96, 64, nullptr},  {64, 40, nullptr},    {200, 136, nullptr},
                        {248, 248, nullptr}, {176, 120, nullptr}, {96, 96, "m128n128w8s2g"}, {80, 112, "m128n64w4s2"}};
  int i = 0;
  for (const Case& c : cases) {
    FwdProblem p = base(i % 2 == 0 ? 640 : 333, c.d);
    p.Dv = c.dv;
    p.Hq = 4, p.Hkv = i % 3 == 0 ? 2 : 4;
    p.Skv = i % 2 == 0 ? 640 : 517;
    p.dtype = i % 2 == 0 ? DType::bf16 : DType::f16;
    p.bshd = i % 4 == 1;
    p.row_padding = 8;
    if (c.config) p.config = BlockConfig::parse(c.config);
    p.mask_mod = i % 3 == 2 ? "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx" : "q_idx >= kv_idx";
    if (i % 3 == 2) p.buffers.push_back(document_ids(std::max(p.Sq, p.Skv), rng));
    if (i % 2 == 1) {
      p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
      p.buffers.push_back(alibi_slopes(p.Hq));
    }
    const std::string what = "D=" + std::to_string(c.d) + " Dv=" + std::to_string(c.dv) +
                             (c.config ? std::string(" ") + c.config : std::string(" default config"));
    expect_close(p, what);
    ++i;
  }
}

// P V spans V's own columns rounded to 16, not the tile's: at each Dv below, that width ends inside
// one of V's 64-column slabs (16 to 56 in the first, 72 to 120 in the second, 136 and 184 in the
// third, 232 in the fourth), so the wgmma reads across slabs and the epilogue stores part of a
// staged slab. The default (warp-specialised) kernel, and the synchronous wgmma ('g') and mma.sync
// kernels at the last three. Out's columns past Dv are poisoned and must stay so.
// One test per case, so that a sanitizer run (racecheck takes minutes per case) can spread them
// over processes.
struct OutputGemmCase {
  int dv;
  const char* config;
};
const OutputGemmCase kOutputGemmCases[] = {{16, nullptr},  {24, nullptr},  {56, nullptr},  {72, nullptr},
                                           {88, nullptr},  {104, nullptr}, {120, nullptr}, {136, nullptr},
                                           {184, nullptr}, {232, nullptr}, {80, "m128n128w8s2g"},
                                           {104, "m128n64w4s2"}, {40, "m64n64w4s2"}};

class OutputGemmSpansOnlyVsColumns : public ::testing::TestWithParam<int> {};

TEST_P(OutputGemmSpansOnlyVsColumns, Case) {
  FLEXJIT_REQUIRE_GPU();
  const int i = GetParam();
  const OutputGemmCase& c = kOutputGemmCases[i];
  FwdProblem p = base(i % 2 == 0 ? 333 : 200, i % 3 == 0 ? 64 : 128);
  p.Dv = c.dv;
  if (c.config) p.config = BlockConfig::parse(c.config);
  p.Skv = i % 2 == 0 ? 517 : 200;
  p.Hq = 4, p.Hkv = i % 2 == 0 ? 2 : 4;
  p.dtype = i % 2 == 0 ? DType::bf16 : DType::f16;
  p.bshd = i % 4 >= 2;
  p.out_bshd = i % 3 == 1;
  p.row_padding = 8;
  if (i % 3 == 0) p.mask_mod = "q_idx >= kv_idx";
  if (i % 3 == 1) {
    p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
    p.buffers.push_back(alibi_slopes(p.Hq));
  }
  const std::string what = "D=" + std::to_string(p.D) + " Dv=" + std::to_string(c.dv) +
                           (c.config ? std::string(" ") + c.config : std::string(" default config"));
  expect_close(p, what);
}

INSTANTIATE_TEST_SUITE_P(FwdGpu, OutputGemmSpansOnlyVsColumns,
                         ::testing::Range(0, static_cast<int>(std::size(kOutputGemmCases))));

TEST(FwdGpu, EveryBlockConfigShape) {
  FLEXJIT_REQUIRE_GPU();
  const char* configs[] = {"m128n32w4s2", "m128n64w4s2", "m64n64w4s2", "m64n32w4s3", "m128n128w8s2",
                           "m128n64w8s3", "m64n128w4s2", "m32n64w2s2", "m16n16w1s2", "m128n64w4s4"};
  for (const char* c : configs) {
    FwdProblem p = base(520);
    p.config = BlockConfig::parse(c);
    p.mask_mod = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
    std::mt19937_64 rng(fresh_seed());
    p.buffers.push_back(document_ids(p.Skv, rng));
    p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
    p.buffers.push_back(alibi_slopes(p.Hq));
    expect_close(p, std::string("config ") + c);
  }
}

TEST(FwdGpu, ParametersChangeWithoutRecompiling) {
  FLEXJIT_REQUIRE_GPU();
  for (double cap : {5.0, 50.0}) {
    FwdProblem p = base(256);
    p.param_decls = {ParamDecl{"cap", ScalarType::floating}, ParamDecl{"window", ScalarType::integer}};
    p.params = {{"cap", cap}, {"window", 64}};
    p.score_mod = "cap * tanh(score / cap)";
    p.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx <= window";
    p.scale = 0.2f;
    expect_close(p, "params cap=" + std::to_string(cap));
  }
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

bool is_hopper() { return no_gpu_reason().empty() && current_device().default_arch() == "sm_90a"; }

TEST(FwdGpu, HopperWgmmaPath) {
  FLEXJIT_REQUIRE_GPU();
  if (!is_hopper()) GTEST_SKIP() << "the wgmma path needs an sm_90a GPU, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  for (const char* c : {"m128n128w8s2g", "m64n64w4s2g", "m128n64w8s3g", "m64n128w4s2g", "m128n32w8s2g"}) {
    for (const char* mask : {"", "q_idx >= kv_idx", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"}) {
      FwdProblem p;
      p.B = 2;
      p.Hq = 4;
      p.Hkv = 2;
      p.Sq = p.Skv = 600;
      p.config = BlockConfig::parse(c);
      p.mask_mod = mask;
      if (std::string(mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Skv, rng));
      p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
      p.buffers.push_back(alibi_slopes(p.Hq));
      expect_close(p, std::string("wgmma ") + c + " mask '" + mask + "'");
    }
  }
  for (DType dtype : {DType::bf16, DType::f16})
    for (auto [d, dv] : {std::pair{64, 64}, {256, 256}, {128, 64}, {64, 256}, {192, 128}})
      for (int S : {1, 77, 1000}) {
        FwdProblem p;
        p.B = 1;
        p.Hq = p.Hkv = 2;
        p.Sq = p.Skv = S;
        p.D = d;
        p.Dv = dv;
        p.dtype = dtype;
        p.mask_mod = "q_idx >= kv_idx";
        p.config = BlockConfig::parse(d + dv > 384 ? "m64n64w4s2g" : "m128n64w8s2g");
        expect_close(p, std::string("wgmma ") + std::string(dtype_name(dtype)) + " D=" + std::to_string(d) + " Dv=" +
                            std::to_string(dv) + " S=" + std::to_string(S));
      }
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

// && evaluates both sides on the GPU, but a read its left side guards is never reported: the
// guard keeps `doc[q_idx + 10]` for the last 10 queries out of the result and out of the errors.
TEST(FwdGpu, GuardedBufferReadsAreNotReported) {
  FLEXJIT_REQUIRE_GPU();
  check_buffer_errors();
  std::mt19937_64 rng(fresh_seed());
  for (const char* config : {"m128n64w4s2", "m128n128w8s2ws"}) {
    if (std::string(config).find("ws") != std::string::npos &&
        (!no_gpu_reason().empty() || current_device().default_arch() != "sm_90a"))
      continue;
    FwdProblem p = base(300);
    p.config = BlockConfig::parse(config);
    p.buffers.push_back(document_ids(p.Skv, rng));
    p.mask_mod = "q_idx + 10 < q_len && doc[q_idx + 10] == doc[kv_idx] || q_idx + 10 >= q_len && q_idx >= kv_idx";
    expect_close(p, std::string("guarded reads ") + config);
    EXPECT_NO_THROW(check_buffer_errors()) << config;
  }
}

// Buffer reads take 32-bit offsets where every buffer of the call fits them
// (KernelSpec::buffer_offsets_32) and 64-bit ones otherwise: the same mods, once with the buffers
// contiguous and once as reversed views (negative strides), on both Hopper and synchronous
// configs: a mask reading one buffer twice per score, a score_mod reading a 2-d table by a
// difference of positions (the relative-position bias), and reads whose index comes from another
// buffer.
TEST(FwdGpu, BufferReadsWithThirtyTwoAndSixtyFourBitOffsets) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  std::vector<const char*> configs = {"m128n64w4s2"};
  if (current_device().default_arch() == "sm_90a") configs.push_back("m128n128w8s2ws");
  for (const char* config : configs) {
    for (bool reversed : {false, true}) {
      const std::string name = std::string(config) + (reversed ? " reversed views" : " contiguous");
      FwdProblem p = base(333);
      p.config = BlockConfig::parse(config);
      p.reversed_buffers = reversed;
      p.buffers.push_back(document_ids(p.Skv, rng));
      TestBuffer rel;
      rel.decl = BufferDecl{"rel", DType::f32, {p.Hq, 2 * p.Skv - 1}};
      std::normal_distribution<double> normal(0.0, 1.0);
      for (int i = 0; i < p.Hq * (2 * p.Skv - 1); ++i) rel.values.push_back(normal(rng));
      p.buffers.push_back(rel);
      p.score_mod = "score + rel[h][q_idx - kv_idx + " + std::to_string(p.Skv - 1) + "]";
      p.mask_mod = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
      expect_close(p, "documents and relative bias, " + name);
      TestBuffer start;
      start.decl = BufferDecl{"start", DType::i32, {p.Skv}};
      for (int i = 0; i < p.Skv; ++i) start.values.push_back(i % 7 == 0 ? i : i - i % 7);
      p.buffers.push_back(start);
      p.score_mod = "";
      p.mask_mod = "doc[q_idx] == doc[kv_idx] && q_idx - start[q_idx] >= kv_idx - start[kv_idx]";
      expect_close(p, "nested reads, " + name);
    }
  }
  EXPECT_NO_THROW(check_buffer_errors());
}

TEST(FwdGpu, OutOfBoundsReadsThroughReversedViewsAreReported) {
  FLEXJIT_REQUIRE_GPU();
  check_buffer_errors();
  std::mt19937_64 rng(fresh_seed());
  FwdProblem p = base(300);
  p.reversed_buffers = true;  // the 64-bit reads (the contiguous case: OutOfBoundsBufferReadsAreReported)
  p.buffers.push_back(document_ids(p.Skv, rng));
  p.mask_mod = "doc[q_idx + 10] == doc[kv_idx]";
  try {
    run_forward_check(p);
    ADD_FAILURE() << "expected a ShapeError for the out-of-bounds reads";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("indexed a buffer out of bounds"), std::string::npos) << e.what();
  }
  check_buffer_errors();
}

TEST(FwdGpu, OutOfBoundsBufferReadsAreReported) {
  FLEXJIT_REQUIRE_GPU();
  check_buffer_errors();  // start clean
  std::mt19937_64 rng(fresh_seed());
  FwdProblem p = base(300);
  p.buffers.push_back(document_ids(p.Skv, rng));
  p.mask_mod = "doc[q_idx + 10] == doc[kv_idx]";  // reads past the end for the last 10 queries
  try {
    run_forward_check(p);
    ADD_FAILURE() << "expected a ShapeError for the out-of-bounds reads";
  } catch (const ShapeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("indexed a buffer out of bounds"), std::string::npos) << what;
    EXPECT_NE(what.find("mask_mod=doc[q_idx + 10] == doc[kv_idx]"), std::string::npos) << what;
  }
  check_buffer_errors();  // the record was cleared: no second report
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

// The warp-specialised TMA path ("ws" configs) on every case the synchronous paths are tested on:
// every suite mod, odd lengths, Sq != Skv, GQA 8:1 and 3:1, [B,S,H,D] strides, fully masked rows,
// D != Dv, f16 and bf16, head dims 64 to 256, with and without block-sparse tables.
#define FLEXJIT_REQUIRE_HOPPER()                                                                           \
  FLEXJIT_REQUIRE_GPU();                                                                                    \
  if (!is_hopper()) GTEST_SKIP() << "the warp-specialised path needs an sm_90a GPU, this is " << current_device().name

// ScoresThatPassTheRunningMaxLater's scores on the tiles other than the default two consumer
// warpgroups: three (192 query rows, d64; unmasked scores take the lazy rescale there, masked ones
// the eager form, over no tables and over 192-row tables), one (the short-sequence tiles at d64 and
// d128, which take the lazy rescale under every mod), and the synchronous kernels (the wgmma 'g'
// twin, eager, and mma.sync, lazy).
TEST(FwdGpu, ScoresThatPassTheRunningMaxLaterOnOtherTiles) {
  FLEXJIT_REQUIRE_HOPPER();
  struct Shape {
    int D;
    const char* config;
    bool tables;
  };
  const Shape shapes[] = {{64, "m192n128w12s2ws", false}, {64, "m192n128w12s2ws", true}, {64, "m64n128w4s2ws", false},
                          {64, "m64n128w4s2ws", true},     {128, "m64n64w4s2ws", true},     {128, "m64n128w4s2ws", false},
                          {64, "m128n128w8s2g", true},     {128, "m128n64w8s2g", false},    {128, "m128n64w4s2", true},
                          {64, "m128n64w4s2", false}};
  for (const Shape& shape : shapes)
    for (const RunningMaxCase& c : kRunningMaxCases)
      for (DType dtype : {DType::bf16, DType::f16}) {
        if (!*c.mask && shape.tables) continue;  // an unmasked problem has no tables
        FwdProblem p = base(333, shape.D);
        p.Skv = 901;
        p.Hq = 6;  // GQA 2:1 over base's 3 kv heads
        p.dtype = dtype;
        p.score_mod = c.score;
        p.mask_mod = c.mask;
        p.config = BlockConfig::parse(shape.config);
        p.use_block_mask = shape.tables;
        if (p.config->block_m == 192) p.q_block = 192;
        expect_close(p, std::string(c.score) + " | " + c.mask + " " + shape.config + (shape.tables ? " tables" : "") +
                            (dtype == DType::f16 ? " f16" : " bf16"));
      }
}

void check_warp_specialized_mods(const char* c, std::initializer_list<int> head_dims = {64, 128}) {
  std::mt19937_64 rng(fresh_seed());
  struct Mod { const char* name; const char* score; const char* mask; };
  const Mod mods[] = {
      {"noop", "", ""},
      {"causal", "", "q_idx >= kv_idx"},
      {"sliding_window", "", "q_idx >= kv_idx && q_idx - kv_idx <= 200"},
      {"document_causal", "", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"},
      {"prefix_lm", "", "kv_idx <= 100 || q_idx >= kv_idx"},
      {"alibi_causal", "score + slope[h] * (kv_idx - q_idx)", "q_idx >= kv_idx"},
      {"softcap_causal", "30.0 * tanh(score / 30.0)", "q_idx >= kv_idx"},
      {"nested_buffers", "", "doc[q_idx] == doc[kv_idx] && kv_idx - start[doc[kv_idx]] <= q_idx - start[doc[q_idx]]"},
  };
  {
    for (const Mod& m : mods) {
      for (int D : head_dims) {
        FwdProblem p = base(640, D);
        p.config = BlockConfig::parse(c);
        p.score_mod = m.score;
        p.mask_mod = m.mask;
        if (std::string(m.mask).find("doc") != std::string::npos) {
          TestBuffer doc = document_ids(p.Skv, rng);
          if (std::string(m.mask).find("start") != std::string::npos) p.buffers.push_back(document_starts(doc));
          p.buffers.push_back(doc);
        }
        if (std::string(m.score).find("slope") != std::string::npos) p.buffers.push_back(alibi_slopes(p.Hq));
        expect_close(p, std::string("ws ") + c + " " + m.name + " d" + std::to_string(D));
      }
    }
  }
}

TEST(FwdGpu, WarpSpecializedModsTwoConsumers) {
  FLEXJIT_REQUIRE_HOPPER();
  check_warp_specialized_mods("m128n128w8s2ws");
}
TEST(FwdGpu, WarpSpecializedModsThreeStages) {
  FLEXJIT_REQUIRE_HOPPER();
  check_warp_specialized_mods("m128n64w8s3ws");
}
// Head dim 256's tiles, where the kernel has a full form (S(t) overlapped with P(t-1) V(t-1))
// and a lean one, taken where the full one spills: which one each mod gets is ptxas's call, so
// every mod runs (compile_matrix_test checks the choice).
TEST(FwdGpu, WarpSpecializedModsHeadDim256) {
  FLEXJIT_REQUIRE_HOPPER();
  check_warp_specialized_mods("m128n64w8s2ws", {256});
}
TEST(FwdGpu, WarpSpecializedModsOneConsumer) {
  FLEXJIT_REQUIRE_HOPPER();
  check_warp_specialized_mods("m64n128w4s2ws");
}

// Three batches of hq query heads over hkv kv heads at head dims 128 and 64, under each mask: many
// more work tiles than resident CTAs, so each CTA of the persistent grid runs several.
void check_many_tiles_per_cta(const char* config, int hq, int hkv, int sq, int skv,
                              std::initializer_list<const char*> masks) {
  for (int d : {128, 64})
    for (const char* mask : masks) {
      FwdProblem p;
      p.B = 3;
      p.Hq = hq;
      p.Hkv = hkv;
      p.Sq = sq;
      p.Skv = skv;
      p.D = p.Dv = d;
      p.mask_mod = mask;
      p.config = BlockConfig::parse(config);
      expect_close(p, std::string("ws many tiles per CTA ") + config + " d" + std::to_string(d) + " mask '" + mask + "'");
    }
}

// One consumer warpgroup in 64 x 64 tiles fits two CTAs per SM at head dims 64 and 128
// (codegen's min_ctas_per_sm): 128 registers a thread at launch, split 40 / 216 by setmaxnreg, and
// a persistent grid of twice the SMs. Every mod; then many short work tiles per CTA (GQA 5:1,
// odd lengths, 3 x 60 x 4 = 720 of them), striding unmasked and by ticket masked.
TEST(FwdGpu, WarpSpecializedModsTwoCtasPerSm) {
  FLEXJIT_REQUIRE_HOPPER();
  check_warp_specialized_mods("m64n64w4s2ws");
}
TEST(FwdGpu, WarpSpecializedTwoCtasPerSmManyTilesPerCta) {
  FLEXJIT_REQUIRE_HOPPER();
  check_many_tiles_per_cta("m64n64w4s2ws", 60, 12, 201, 201,
                           {"", "q_idx >= kv_idx", "q_idx + 37 >= kv_idx && q_idx - kv_idx <= 90"});
}

// Both forward kernels compute a mask's column values (`doc[kv_idx]`, `w[h][kv_idx] * 3.0`,
// `tab[kv_idx] > 0.25`) once per key of a masked tile and share them among the tile's rows
// (codegen::forward_mask_column_values): int, float and bool values, one or two per mask, a value
// per query head, tails on both sides, Sq != Skv, GQA 3:1, and each tile shape the kernels take:
// warp-specialised (64-, 128- and 176-key tiles; one, two and three consumer warpgroups) and
// synchronous (mma.sync with one and two 16-row tiles per warp, and wgmma).
std::vector<const char*> column_value_configs() {
  std::vector<const char*> configs = {"m128n64w4s2", "m64n64w4s2", "m128n32w4s2"};
  if (is_hopper())
    for (const char* c : {"m128n128w8s2g", "m128n128w8s2ws", "m128n64w8s2ws", "m64n128w4s2ws", "m192n128w12s2ws",
                          "m128n176w8s2ws"})
      configs.push_back(c);
  return configs;
}

// The column-value tests' problem: tails on both sides, Sq != Skv, GQA 3:1, head dim D.
FwdProblem column_value_problem(const char* config, int D) {
  FwdProblem p;
  p.B = 2;
  p.Hq = 6;
  p.Hkv = 2;
  p.Sq = 333;
  p.Skv = 517;
  p.D = p.Dv = D;
  p.config = BlockConfig::parse(config);
  // 192-row and 176-key tiles take calls without a block mask.
  p.use_block_mask = p.config->block_m != 192 && p.config->block_n != 176;
  return p;
}

TEST(FwdGpu, MaskColumnValues) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  struct Mask { const char* name; const char* text; };
  const Mask masks[] = {
      {"documents", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"},
      {"nested", "doc[q_idx] == doc[kv_idx] && kv_idx - start[doc[kv_idx]] <= q_idx - start[doc[q_idx]]"},
      {"float and bool per head", "w[h][kv_idx] * 3.0 < q_idx * 0.01 + 1.5 || tab[kv_idx] > 0.25 && q_idx >= kv_idx"},
  };
  for (const char* config : column_value_configs()) {
    for (int D : {64, 128})
      for (const Mask& m : masks) {
        FwdProblem p = column_value_problem(config, D);
        p.mask_mod = m.text;
        TestBuffer doc = document_ids(p.Skv, rng);
        const TestBuffer start = document_starts(doc);
        TestBuffer w;
        w.decl = BufferDecl{"w", DType::f32, {p.Hq, p.Skv}};
        std::normal_distribution<double> normal(0.0, 1.0);
        for (int i = 0; i < p.Hq * p.Skv; ++i) w.values.push_back(normal(rng));
        TestBuffer tab;
        tab.decl = BufferDecl{"tab", DType::f32, {p.Skv}};
        std::uniform_real_distribution<double> uniform(0.0, 1.0);
        for (int i = 0; i < p.Skv; ++i) tab.values.push_back(uniform(rng));
        p.buffers = {doc, start, w, tab};
        expect_close(p, std::string("column values ") + config + " d" + std::to_string(D) + " " + m.name);
      }
  }
  EXPECT_NO_THROW(check_buffer_errors());
}

// The forward of `p`, whose mods read a buffer out of bounds, throws the ShapeError that says so
// (and leaves no error word set behind it).
void expect_out_of_bounds_reported(const FwdProblem& p, const std::string& config) {
  try {
    run_forward_check(p);
    ADD_FAILURE() << config << ": expected a ShapeError for the out-of-bounds reads";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("indexed a buffer out of bounds"), std::string::npos) << e.what();
  }
  check_buffer_errors();
}

// A column value read out of bounds: reported where the mask needs the value, silent where a
// guard keeps it out of the result (the tile then counts each value's errors where the mask's
// && / || would, not once per key).
TEST(FwdGpu, MaskColumnValuesOutOfBounds) {
  FLEXJIT_REQUIRE_GPU();
  check_buffer_errors();
  std::mt19937_64 rng(fresh_seed());
  std::vector<const char*> configs = {"m128n64w4s2"};
  if (is_hopper())
    for (const char* c : {"m128n128w8s2g", "m128n128w8s2ws", "m128n64w8s2ws"}) configs.push_back(c);
  for (const char* config : configs) {
    FwdProblem p = base(300, 64);
    p.config = BlockConfig::parse(config);
    p.buffers.push_back(document_ids(p.Skv, rng));
    p.buffers.push_back(document_ids(250, rng, "short_doc"));
    p.mask_mod = "kv_idx < 250 && short_doc[kv_idx] == doc[q_idx] || kv_idx >= 250 && q_idx >= kv_idx";
    expect_close(p, std::string("guarded column value ") + config);
    EXPECT_NO_THROW(check_buffer_errors()) << config;
    p.mask_mod = "short_doc[kv_idx] == doc[q_idx] || q_idx >= kv_idx";  // keys 250.. read past the end
    expect_out_of_bounds_reported(p, config);
  }
}

// The configs the staged score values are tested on: the synchronous kernel (which reads per
// score), and on Hopper the warp-specialised one with one, two and three consumer warpgroups and
// 64-, 128- and 176-key tiles.
std::vector<const char*> staged_value_configs() {
  std::vector<const char*> configs = {"m128n64w4s2"};
  if (is_hopper())
    for (const char* c : {"m128n128w8s2ws", "m128n64w8s2ws", "m64n128w4s2ws", "m192n128w12s2ws", "m128n176w8s2ws"})
      configs.push_back(c);
  return configs;
}

// The warp-specialised forward computes a score_mod's column values (`kb[b][kv_idx]`,
// `w[h][kv_idx]`, `bias_doc[doc[kv_idx]]`) once per key of every tile and each score reads its
// key's from shared memory (codegen::forward_score_column_values): one and two values, per batch,
// per head and nested, with and without a mask, tails on both sides, Sq != Skv, GQA 3:1, one, two
// and three consumer warpgroups and 64-, 128- and 176-key tiles; and the synchronous kernels, which
// read per score, on the same mods.
TEST(FwdGpu, ScoreColumnValues) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  struct Mod { const char* name; const char* score; const char* mask; };
  const Mod mods[] = {
      {"per-key bias, causal", "score + kb[b][kv_idx]", "q_idx >= kv_idx"},
      {"per-key bias", "score + kb[b][kv_idx]", ""},
      {"two values per head", "score * w[h][kv_idx] + tab[kv_idx] * 2.0", "q_idx + 40 >= kv_idx"},
      {"nested per document", "where(doc[q_idx] == doc[kv_idx], score + bias_doc[doc[kv_idx]], score - 1.0)", ""},
  };
  for (const char* config : staged_value_configs()) {
    for (int D : {64, 128})
      for (const Mod& m : mods) {
        FwdProblem p = column_value_problem(config, D);
        p.score_mod = m.score;
        p.mask_mod = m.mask;
        std::normal_distribution<double> normal(0.0, 1.0);
        std::uniform_real_distribution<double> uniform(0.5, 1.5);
        TestBuffer kb;
        kb.decl = BufferDecl{"kb", DType::f32, {p.B, p.Skv}};
        for (int i = 0; i < p.B * p.Skv; ++i) kb.values.push_back(2.0 * normal(rng));
        TestBuffer w;
        w.decl = BufferDecl{"w", DType::f32, {p.Hq, p.Skv}};
        for (int i = 0; i < p.Hq * p.Skv; ++i) w.values.push_back(uniform(rng));
        TestBuffer tab;
        tab.decl = BufferDecl{"tab", DType::f32, {p.Skv}};
        for (int i = 0; i < p.Skv; ++i) tab.values.push_back(normal(rng));
        const TestBuffer doc = document_ids(p.Skv, rng);
        int documents = 0;
        for (double id : doc.values) documents = std::max(documents, static_cast<int>(id) + 1);
        TestBuffer bias_doc;
        bias_doc.decl = BufferDecl{"bias_doc", DType::f32, {documents}};
        for (int i = 0; i < documents; ++i) bias_doc.values.push_back(3.0 * normal(rng));
        p.buffers = {kb, w, tab, doc, bias_doc};
        expect_close(p, std::string("score column values ") + config + " d" + std::to_string(D) + " " + m.name);
      }
  }
  EXPECT_NO_THROW(check_buffer_errors());
}

// The out-of-bounds test of a score_mod's staged values (column or diagonal): on each config (the
// synchronous kernel, then `ws_configs` on Hopper), a 250-value f32 buffer `few` beside a
// 300-row problem; `guarded` keeps its reads inside and runs silent against float64, and
// `unguarded` reads past the end and is reported, without a mask and under `mask`.
void check_staged_values_out_of_bounds(const char* guarded, const char* unguarded, const char* mask,
                                       std::initializer_list<const char*> ws_configs) {
  check_buffer_errors();
  std::mt19937_64 rng(fresh_seed());
  std::vector<const char*> configs = {"m128n64w4s2"};
  if (is_hopper()) configs.insert(configs.end(), ws_configs);
  for (const char* config : configs) {
    FwdProblem p = base(300, 64);
    p.config = BlockConfig::parse(config);
    p.use_block_mask = p.config->block_m != 192;  // 192-row tiles take calls without a block mask
    TestBuffer few;
    few.decl = BufferDecl{"few", DType::f32, {250}};
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int i = 0; i < 250; ++i) few.values.push_back(normal(rng));
    p.buffers.push_back(few);
    p.score_mod = guarded;
    expect_close(p, std::string("guarded staged values ") + config);
    EXPECT_NO_THROW(check_buffer_errors()) << config;
    p.score_mod = unguarded;
    expect_out_of_bounds_reported(p, config);
    p.mask_mod = mask;
    expect_out_of_bounds_reported(p, std::string(config) + " under " + mask);
  }
}

// A score_mod's column value read out of bounds: reported where the score_mod reads it, silent
// where a guard keeps the read out (the tile then takes the per-score pass, whose reads count
// their errors exactly where they are made).
TEST(FwdGpu, ScoreColumnValuesOutOfBounds) {
  FLEXJIT_REQUIRE_GPU();
  check_staged_values_out_of_bounds("where(kv_idx < 250, score + few[kv_idx], score * 0.5)",
                                    "score + few[kv_idx]",  // keys 250.. read past the end
                                    "q_idx + 20 >= kv_idx", {"m128n128w8s2ws", "m128n64w8s2ws"});
}

// The warp-specialised forward computes a score_mod's diagonal values (`relh[h][kv_idx - q_idx +
// c]`, a T5 bucket's table read: whatever depends on the positions only through kv_idx - q_idx)
// once per diagonal of every tile, and each score reads its diagonal's from shared memory
// (codegen::forward_score_diagonal_values): one and two values, per head and shared, the
// difference either way round, a bucket of comparisons, abs and log, with and without a mask,
// tails on both sides (the rows past q_len clamp their diagonals), Sq != Skv, GQA 3:1, one, two
// and three consumer warpgroups and 64-, 128- and 176-key tiles; and the synchronous kernel, which
// reads per score, on the same mods. The tables are exactly as long as the diagonals need, so a
// diagonal read off by one reads another value (or out of bounds, which is reported).
TEST(FwdGpu, ScoreDiagonalValues) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  for (const char* config : staged_value_configs()) {
    for (int D : {64, 128})
      for (const DiagonalMod& m : kDiagonalMods) {
        FwdProblem p = column_value_problem(config, D);
        p.score_mod = m.score;
        p.mask_mod = m.mask;
        ASSERT_EQ(p.Sq, kDiagonalSq);
        ASSERT_EQ(p.Skv, kDiagonalSkv);
        p.buffers = diagonal_mod_buffers(p.Hq, rng);
        expect_close(p, std::string("score diagonal values ") + config + " d" + std::to_string(D) + " " + m.name);
      }
  }
  EXPECT_NO_THROW(check_buffer_errors());
}

// The bias form (codegen::forward_diagonal_bias_form: `score + V`, two consumer warpgroups): the
// diagonal values go into S's accumulators divided by the scale, and a finite value past 2^126
// there (a stand-in for an infinity: -1e38, +1e38) is held at 2^126, ranking below or above every
// ordinary score. Rows whose largest score is an ordinary one stay exact against float64 (-1e38
// below the 12th diagonal, no mask); a row whose largest score is a stand-in (every kept key at
// -1e38, or a band at +1e38) is reported, naming what is not exact and what to use. Scales below
// 2^-20 add the values per score (KernelSpec::small_scale), a negative scale too; 2^-19 takes the
// bias form. d64 and d128, two configs.
TEST(FwdGpu, DiagonalBiasStandInsAndScales) {
  FLEXJIT_REQUIRE_HOPPER();
  check_buffer_errors();
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<double> normal(0.0, 1.0);
  const auto expect_stand_in_reported = [](const FwdProblem& p, const std::string& label) {
    try {
      run_forward_check(p);
      ADD_FAILURE() << label << ": expected a ShapeError for the stand-in rows";
    } catch (const ShapeError& e) {
      EXPECT_NE(std::string(e.what()).find("the forward met a row whose largest score came from a finite score_mod "
                                           "value beyond 2^126 times the scale"),
                std::string::npos)
          << label << ": " << e.what();
    }
    check_buffer_errors();
  };
  for (const char* config : {"m128n128w8s2ws", "m128n64w8s2ws"})
    for (int D : {64, 128}) {
      FwdProblem p = column_value_problem(config, D);
      const int diagonals = p.Sq + p.Skv - 1;  // k = kv_idx - q_idx + 332
      TestBuffer plain, low, high;
      plain.decl = low.decl = high.decl = BufferDecl{"relf", DType::f32, {p.Hq, diagonals}};
      for (int h = 0; h < p.Hq; ++h)
        for (int k = 0; k < diagonals; ++k) {
          const double value = normal(rng);
          plain.values.push_back(value);
          low.values.push_back(k <= 320 ? -1e38 : value);               // kv_idx - q_idx <= -12
          high.values.push_back(k >= 300 && k <= 320 ? 1e38 : value);  // kv_idx - q_idx in [-32, -12]
        }
      p.score_mod = "score + relf[h][kv_idx - q_idx + 332]";
      const std::string label = std::string("diagonal bias ") + config + " d" + std::to_string(D);
      p.buffers = {low};
      expect_close(p, label + ", -1e38 below the 12th diagonal");
      EXPECT_NO_THROW(check_buffer_errors()) << label;
      p.mask_mod = "q_idx - kv_idx >= 12";  // every kept key at -1e38
      expect_stand_in_reported(p, label + ", -1e38 on every kept key");
      p.buffers = {high};
      p.mask_mod = "";
      expect_stand_in_reported(p, label + ", a band at +1e38");
      p.buffers = {plain};
      for (float scale : {0x1p-19f, 1e-30f, 3e-39f, -0.3f}) {
        p.scale = scale;
        for (const char* mask : {"", "q_idx >= kv_idx"}) {
          p.mask_mod = mask;
          expect_close(p, label + ", scale " + std::to_string(scale) + ", mask '" + mask + "'");
        }
      }
    }
  EXPECT_NO_THROW(check_buffer_errors());
}

// A score_mod's diagonal value read out of bounds: reported where the score_mod reads it, silent
// where a guard keeps the read out (the tile then takes the pass that counts each value's errors
// where the score_mod reads it).
TEST(FwdGpu, ScoreDiagonalValuesOutOfBounds) {
  FLEXJIT_REQUIRE_GPU();
  check_staged_values_out_of_bounds(
      "where(kv_idx <= q_idx && q_idx - kv_idx < 250, score + few[q_idx - kv_idx], score * 0.5)",
      "score + few[q_idx - kv_idx]",  // keys past the query, and those 250 behind it, read out of bounds
      "q_idx >= kv_idx",                // only those 250 behind
      {"m128n128w8s2ws", "m128n64w8s2ws", "m192n128w12s2ws"});
}

// The bias form's table (codegen::forward_diagonal_table) holds every diagonal of the call and
// each one's error bits, and a forward counts them only where its tiles' scores read them: with
// `near` read in bounds on every diagonal that the tiles of a causal window of 256 meet (q_idx -
// kv_idx in [-127, 383] on the 128 x 128 blocks the block mask keeps, [-318, 573] on the 192-row
// tiles that the mask's bounds walk keeps), and out of bounds on most of the table's others, the
// call is silent and right against float64; a window of 600 reaches them and is reported. Rows and
// keys past 1000 (the tails), d64 and d128, two and three consumer warpgroups (the table form with
// three at d64: the loop overlaps, its scores plain); and beside it `q_len` in V, which keeps the
// bias form's staging (the table has no row per length).
TEST(FwdGpu, DiagonalTableErrorsCountWhereTilesReadThem) {
  FLEXJIT_REQUIRE_HOPPER();
  check_buffer_errors();
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const char* config : {"m128n128w8s2ws", "m128n64w8s2ws", "m192n128w12s2ws"})
    for (int D : {64, 128}) {
      FwdProblem p = base(1000, D);
      p.config = BlockConfig::parse(config);
      p.use_block_mask = p.config->block_m != 192;  // 192-row tiles walk by the mask's bounds
      TestBuffer near;
      near.decl = BufferDecl{"near", DType::f32, {1024}};
      for (int i = 0; i < 1024; ++i) near.values.push_back(2.0 * normal(rng));
      p.buffers = {near};
      const std::string label = std::string("diagonal table ") + config + " d" + std::to_string(D);
      p.score_mod = "score + near[q_idx - kv_idx + 320]";
      p.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx < 256";
      expect_close(p, label + ", window 256");
      EXPECT_NO_THROW(check_buffer_errors()) << label;
      p.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx < 600";
      expect_out_of_bounds_reported(p, label + ", window 600");
      p.score_mod = "score + near[q_idx - kv_idx + 320 + (q_len - 1000)]";  // (the staging)
      p.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx < 256";
      expect_close(p, label + ", window 256, q_len in V");
      EXPECT_NO_THROW(check_buffer_errors()) << label;
    }
  EXPECT_NO_THROW(check_buffer_errors());
}

// A score_mod's diagonal values beside a mask's column values (documents), staged together on
// the masked tiles of the warp-specialised forward: a mask's column value read out of bounds is
// reported where the mask needs it and silent where a guard keeps it out (the mask's own error
// pass), a diagonal value's likewise, and the values are right beside either guard. The scores'
// table `rel` is exactly as long as the 599 diagonals of Sq = Skv = 300.
TEST(FwdGpu, ScoreDiagonalValuesBesideMaskColumnsOutOfBounds) {
  FLEXJIT_REQUIRE_HOPPER();
  check_buffer_errors();
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const char* config : {"m128n128w8s2ws", "m128n64w8s2ws", "m64n128w4s2ws"}) {
    FwdProblem p = base(300, 64);
    p.config = BlockConfig::parse(config);
    TestBuffer rel, few;
    rel.decl = BufferDecl{"rel", DType::f32, {599}};
    for (int i = 0; i < 599; ++i) rel.values.push_back(normal(rng));
    few.decl = BufferDecl{"few", DType::f32, {250}};
    for (int i = 0; i < 250; ++i) few.values.push_back(normal(rng));
    p.buffers = {document_ids(p.Skv, rng), document_ids(250, rng, "short_doc"), rel, few};
    const std::string label = std::string("diagonals beside columns ") + config;
    p.score_mod = "score + rel[kv_idx - q_idx + 299]";
    p.mask_mod = "kv_idx < 250 && short_doc[kv_idx] == doc[q_idx] || kv_idx >= 250 && q_idx >= kv_idx";
    expect_close(p, label + ", guarded column");
    EXPECT_NO_THROW(check_buffer_errors()) << label;
    p.mask_mod = "short_doc[kv_idx] == doc[q_idx] || q_idx >= kv_idx";  // keys 250.. read past the end
    expect_out_of_bounds_reported(p, label + ", unguarded column");
    p.score_mod = "where(kv_idx <= q_idx && q_idx - kv_idx < 250, score + few[q_idx - kv_idx], score * 0.5)";
    p.mask_mod = "doc[q_idx] == doc[kv_idx]";
    expect_close(p, label + ", guarded diagonal");
    EXPECT_NO_THROW(check_buffer_errors()) << label;
    p.score_mod = "score + few[q_idx - kv_idx]";  // keys past the query read before the table
    expect_out_of_bounds_reported(p, label + ", unguarded diagonal");
  }
}

// config: empty for each head dim's two-warpgroup tiles, or one config for every pair of head dims.
void check_warp_specialized_shapes(DType dtype, const char* config = "") {
  {
    for (auto [d, dv] : {std::pair{64, 64}, {256, 256}, {128, 64}, {64, 256}, {192, 128}, {128, 128}})
      for (auto [sq, skv] : {std::pair{1, 1}, {77, 77}, {1000, 1000}, {130, 333}, {333, 130}}) {
        FwdProblem p;
        p.B = 2;
        p.Hq = 3;
        p.Hkv = 1;
        p.Sq = sq;
        p.Skv = skv;
        p.D = d;
        p.Dv = dv;
        p.dtype = dtype;
        p.bshd = sq == 77;
        p.mask_mod = "q_idx >= kv_idx";
        p.config = BlockConfig::parse(*config ? config : d + dv > 384 ? "m128n64w8s2ws" : "m128n128w8s2ws");
        expect_close(p, std::string("ws ") + p.config->str() + " " + std::string(dtype_name(dtype)) + " D=" + std::to_string(d) +
                            " Dv=" + std::to_string(dv) + " Sq=" + std::to_string(sq) + " Skv=" + std::to_string(skv));
      }
  }
}

TEST(FwdGpu, WarpSpecializedShapesBf16) {
  FLEXJIT_REQUIRE_HOPPER();
  check_warp_specialized_shapes(DType::bf16);
}
TEST(FwdGpu, WarpSpecializedShapesF16) {
  FLEXJIT_REQUIRE_HOPPER();
  check_warp_specialized_shapes(DType::f16);
}
// One consumer warpgroup over 64 x 64 tiles: two CTAs per SM up to head dim 128 (D != Dv too),
// one above.
TEST(FwdGpu, WarpSpecializedShapesOneConsumerWarpgroup) {
  FLEXJIT_REQUIRE_HOPPER();
  check_warp_specialized_shapes(DType::bf16, "m64n64w4s2ws");
  check_warp_specialized_shapes(DType::f16, "m64n64w4s2ws");
}

TEST(FwdGpu, WarpSpecializedFullyMaskedRows) {
  FLEXJIT_REQUIRE_HOPPER();
  // Fully masked rows (queries before any key of their window) and no block-sparse tables.
  for (bool tables : {true, false}) {
    FwdProblem p = base(300);
    p.Hq = 8;
    p.Hkv = 1;
    p.config = BlockConfig::parse("m128n128w8s2ws");
    p.mask_mod = "kv_idx >= 150 && q_idx >= kv_idx";
    p.use_block_mask = tables;
    expect_close(p, std::string("ws fully masked rows, tables ") + (tables ? "on" : "off"));
  }
}

// Many more work tiles than SMs (2 x 90 x 3 = 540 on 132 SMs): every CTA of the persistent grid
// runs four or five, so the Q buffer's barriers turn phase after phase, a tail tile (200 rows)
// follows a full one in the same CTA, and the masked problem takes its tiles by ticket where the
// unmasked one strides. GQA 6:1 at d128 and d64.
TEST(FwdGpu, WarpSpecializedManyTilesPerCta) {
  FLEXJIT_REQUIRE_HOPPER();
  check_many_tiles_per_cta("m128n128w8s2ws", 90, 15, 200, 333, {"", "q_idx + 133 >= kv_idx"});
}

// Every CTA of the persistent grid runs several work tiles whose (head, batch) differ from the one
// before, so each tile's walk and mods must be its own: some query tiles see no key block (rows
// before 156 see none under the mask; with tables their walk is empty and the producer publishes
// the next tile at once), some exactly one, and the ALiBi slope is read per head. GQA 7:1, odd
// lengths, block-sparse tables on and off.
TEST(FwdGpu, WarpSpecializedEmptyAndOneKeyTileWalks) {
  FLEXJIT_REQUIRE_HOPPER();
  for (int d : {128, 64})
    for (bool tables : {true, false}) {
      FwdProblem p;
      p.B = 3;
      p.Hq = 70;
      p.Hkv = 10;
      p.Sq = 651;
      p.Skv = 517;
      p.D = p.Dv = d;
      p.mask_mod = "kv_idx >= 256 && q_idx + 100 >= kv_idx && q_idx - kv_idx < 300";
      p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
      p.buffers.push_back(alibi_slopes(p.Hq));
      p.use_block_mask = tables;
      p.config = BlockConfig::parse("m128n128w8s2ws");
      expect_close(p, "ws empty and one-key-tile walks d" + std::to_string(d) + (tables ? " tables" : " no tables"));
    }
}

// Masks whose kept region changes at 64-key edges inside the warp-specialised kernel's 128 x 128
// tiles, where each consumer warpgroup owns 64 rows: 64 x 64 squares, which leave a warpgroup a
// tile's lower half of keys, its upper half, both or neither; a window narrower than a tile; a
// causal offset with Sq != Skv; a last tile whose upper half lies past the keys' end. Head dims
// 64 (Q in registers), 128 and 192 / 128, GQA 3:1, [B,S,H,D] for one case. (Written for a skip
// of the dead halves that measured slower and was not kept: notes/perf.md "(zzd)".)
TEST(FwdGpu, WarpSpecializedMasksChangingAt64KeyEdges) {
  FLEXJIT_REQUIRE_HOPPER();
  struct Case { const char* mask; int sq, skv; };
  const Case cases[] = {
      {"(q_idx / 64) % 3 == (kv_idx / 64) % 3", 640, 640},
      {"q_idx >= kv_idx && q_idx - kv_idx <= 100", 517, 517},
      {"q_idx + 37 >= kv_idx", 300, 333},
      {"q_idx >= kv_idx", 300, 300},
  };
  const std::pair<int, int> dims[] = {{64, 64}, {128, 128}, {192, 128}};
  for (const Case& c : cases)
    for (const auto& [d, dv] : dims) {
      FwdProblem p;
      p.B = 2;
      p.Hq = 6;
      p.Hkv = 2;
      p.Sq = c.sq;
      p.Skv = c.skv;
      p.D = d;
      p.Dv = dv;
      p.bshd = c.sq == 517;
      p.mask_mod = c.mask;
      p.config = BlockConfig::parse("m128n128w8s2ws");
      expect_close(p, std::string("ws 64-key edges '") + c.mask + "' d" + std::to_string(d) + "/" +
                          std::to_string(dv));
    }
}

// The kernel stores O through a TMA map of its own: out in the other layout than q, k and v,
// odd lengths (the store drops the tail tile's rows past Sq), GQA 3:1, head dims whose O goes
// out in one part (128, and 192 in three slabs) and in two through a half-width buffer (256).
TEST(FwdGpu, WarpSpecializedOutputInALayoutOfItsOwn) {
  FLEXJIT_REQUIRE_HOPPER();
  for (int d : {128, 192, 256})
    for (bool out_bshd : {true, false}) {
      FwdProblem p;
      p.B = 2;
      p.Hq = 6;
      p.Hkv = 2;
      p.Sq = 333;
      p.Skv = 270;
      p.D = p.Dv = d;
      p.bshd = !out_bshd;
      p.out_bshd = out_bshd;
      p.mask_mod = "q_idx + 40 >= kv_idx";
      p.config = BlockConfig::parse(d > 128 ? "m128n64w8s2ws" : "m128n128w8s2ws");
      expect_close(p, "ws out " + std::string(out_bshd ? "[B,S,H,D]" : "[B,H,S,D]") + " d" + std::to_string(d));
    }
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

// One small warp-specialised forward per head dim (odd lengths, GQA 3:1, causal): the case the
// README's compute-sanitizer commands run (memcheck, racecheck, synccheck).
TEST(FwdGpu, WarpSpecializedOnePerHeadDim) {
  FLEXJIT_REQUIRE_GPU();
  if (!no_gpu_reason().empty() || current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised path needs an sm_90a GPU, this is " << current_device().name;
  for (int d : {64, 128, 192, 256}) {
    FwdProblem p;
    p.B = 1;
    p.Hq = 3;
    p.Hkv = 1;
    p.Sq = 200;
    p.Skv = 333;
    p.D = p.Dv = d;
    p.mask_mod = "q_idx + 133 >= kv_idx";
    p.config = BlockConfig::parse(d > 128 ? "m128n64w8s2ws" : "m128n128w8s2ws");
    expect_close(p, "ws one per head dim, d" + std::to_string(d));
  }
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

// The wide warp-specialised tiles (issue 12): three consumer warpgroups over 192 query rows and
// 176-key tiles, on the problems they accept (no block mask): unmasked mods (none, softcap,
// ALiBi from a buffer), odd lengths, lengths the tiles divide (2112 = 11 x 192 = 12 x 176),
// Sq != Skv both ways, GQA 3:1, [B,S,H,D] strides, D != Dv, f16 and bf16; a mask_mod without a
// block mask (every tile visited); and the named error with a block mask.
constexpr const char* kWideConfigs[] = {"m192n128w12s2ws", "m128n176w8s2ws"};

void check_wide_warp_specialized_shapes(const char* config, DType dtype) {
  for (auto [d, dv] : {std::pair{64, 64}, {128, 128}, {128, 64}, {64, 128}})
    for (auto [sq, skv] : {std::pair{1, 1}, {77, 77}, {1000, 1000}, {130, 333}, {333, 130}, {193, 177}, {2112, 2112}}) {
      FwdProblem p;
      p.B = sq > 1000 ? 1 : 2;
      p.Hq = sq > 1000 ? 1 : 3;  // the float64 reference of 2112 x 2112 takes a while
      p.Hkv = sq == 1000 ? 3 : 1;
      p.Sq = sq;
      p.Skv = skv;
      p.D = d;
      p.Dv = dv;
      p.dtype = dtype;
      p.bshd = sq == 77 || sq == 193;
      p.use_block_mask = false;
      p.config = BlockConfig::parse(config);
      expect_close(p, std::string("wide ws ") + config + " " + std::string(dtype_name(dtype)) + " D=" +
                          std::to_string(d) + " Dv=" + std::to_string(dv) + " Sq=" + std::to_string(sq) +
                          " Skv=" + std::to_string(skv));
    }
}

// One test per shape and dtype, so gtest shards spread the compiles.
TEST(FwdGpu, WideWarpSpecializedShapesM192Bf16) {
  FLEXJIT_REQUIRE_HOPPER();
  check_wide_warp_specialized_shapes("m192n128w12s2ws", DType::bf16);
}
TEST(FwdGpu, WideWarpSpecializedShapesM192F16) {
  FLEXJIT_REQUIRE_HOPPER();
  check_wide_warp_specialized_shapes("m192n128w12s2ws", DType::f16);
}
TEST(FwdGpu, WideWarpSpecializedShapesN176Bf16) {
  FLEXJIT_REQUIRE_HOPPER();
  check_wide_warp_specialized_shapes("m128n176w8s2ws", DType::bf16);
}
TEST(FwdGpu, WideWarpSpecializedShapesN176F16) {
  FLEXJIT_REQUIRE_HOPPER();
  check_wide_warp_specialized_shapes("m128n176w8s2ws", DType::f16);
}

void check_wide_warp_specialized_mods(const char* config) {
  struct Mod { const char* name; const char* score; const char* mask; };
  const Mod mods[] = {
      {"noop", "", ""},
      {"softcap", "30.0 * tanh(score / 30.0)", ""},
      {"alibi", "score + slope[h] * (kv_idx - q_idx)", ""},
      {"causal without a block mask", "", "q_idx >= kv_idx"},
      {"sliding window without a block mask", "", "q_idx >= kv_idx && q_idx - kv_idx <= 200"},
  };
  for (const Mod& m : mods)
    for (int D : {64, 128}) {
      FwdProblem p = base(700, D);
      p.Hq = 4;
      p.Hkv = 2;
      p.use_block_mask = false;
      p.config = BlockConfig::parse(config);
      p.score_mod = m.score;
      p.mask_mod = m.mask;
      if (std::string(m.score).find("slope") != std::string::npos) p.buffers.push_back(alibi_slopes(p.Hq));
      expect_close(p, std::string("wide ws ") + config + " " + m.name + " d" + std::to_string(D));
    }
}

TEST(FwdGpu, WideWarpSpecializedModsM192) {
  FLEXJIT_REQUIRE_HOPPER();
  check_wide_warp_specialized_mods("m192n128w12s2ws");
}
TEST(FwdGpu, WideWarpSpecializedModsN176) {
  FLEXJIT_REQUIRE_HOPPER();
  check_wide_warp_specialized_mods("m128n176w8s2ws");
}

// (A mask the bounds cannot class: with one they can, the call walks by them instead, see
// WideWarpSpecializedWalksByTheBoundsOfItsOwnMask.)
TEST(FwdGpu, WideWarpSpecializedRejectsABlockMask) {
  FLEXJIT_REQUIRE_HOPPER();
  std::mt19937_64 rng(fresh_seed());
  for (const char* config : kWideConfigs) {
    FwdProblem p = base(256, 64);
    p.mask_mod = "doc[q_idx] == doc[kv_idx]";
    p.buffers.push_back(document_ids(p.Skv, rng));
    p.config = BlockConfig::parse(config);
    const BlockConfig c = *p.config;
    try {
      run_forward_check(p);
      ADD_FAILURE() << config << ": expected a UsageError";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "config " + c.str() + ": its " + std::to_string(c.block_m) + " x " + std::to_string(c.block_n) +
                    " tiles do not divide the block mask's 128 x 128 blocks; 192-row and 176-key tiles take calls "
                    "without a block mask — use m128n128w8s2ws");
    }
  }
}

// A query tile whose rows alone cross the queries' end (the keys' tiles all whole: Skv = 512)
// runs the interior tiles' pass with the mods' rows clamped, not the range test. Every mod here
// reads a buffer at q_idx sized exactly Sq (`qdoc`, `bias`), so a row past the end reaching a mod
// unclamped would read out of bounds and fail the call; the scores of the rows before the end
// must still see every mod. Each warp-specialised shape, one, two and three consumer warpgroups.
TEST(FwdGpu, WarpSpecializedRowsPastTheQueriesEnd) {
  FLEXJIT_REQUIRE_HOPPER();
  std::mt19937_64 rng(fresh_seed());
  struct Mod { const char* name; const char* score; const char* mask; };
  const Mod mods[] = {
      {"noop", "", ""},
      {"bias by query", "score + bias[q_idx][kv_idx]", ""},
      {"documents by query", "", "qdoc[q_idx] == kdoc[kv_idx]"},
      {"bias and documents", "score + bias[q_idx][kv_idx]", "qdoc[q_idx] == kdoc[kv_idx] && q_idx + 300 >= kv_idx"},
  };
  for (const char* config : {"m128n128w8s2ws", "m64n128w4s2ws", "m128n64w8s3ws", "m192n128w12s2ws"})
    for (const Mod& m : mods)
      for (int sq : {1, 77, 200, 333}) {
        FwdProblem p;
        p.B = 2;
        p.Hq = 2;
        p.Hkv = 1;
        p.Sq = sq;
        p.Skv = 512;
        p.D = p.Dv = 64;
        p.config = BlockConfig::parse(config);
        p.use_block_mask = std::string(config).find("m192") == std::string::npos;
        p.score_mod = m.score;
        p.mask_mod = m.mask;
        if (std::string(m.score).find("bias") != std::string::npos) {
          TestBuffer bias;
          bias.decl = BufferDecl{"bias", DType::f32, {sq, p.Skv}};
          bias.values = random_values(static_cast<size_t>(sq) * p.Skv, rng, DType::f32);
          p.buffers.push_back(bias);
        }
        if (std::string(m.mask).find("qdoc") != std::string::npos) {
          // Documents of the keys, and the queries' ids from the same range: rows keep some keys.
          TestBuffer kdoc = document_ids(p.Skv, rng, "kdoc");
          TestBuffer qdoc;
          qdoc.decl = BufferDecl{"qdoc", DType::i32, {sq}};
          for (int q = 0; q < sq; ++q) qdoc.values.push_back(kdoc.values[(q * 7) % p.Skv]);
          p.buffers.push_back(kdoc);
          p.buffers.push_back(qdoc);
        }
        expect_close(p, std::string("rows past the end ") + config + " " + m.name + " Sq=" + std::to_string(sq));
      }
}

// K and V shared by every head through a zero head stride, which TMA cannot describe: the call
// takes the synchronous wgmma kernel, and where its default is a wide warp-specialised tile (d64,
// unmodified scores: 192 rows) that kernel's nearest tiles, 128 rows over 128 keys.
TEST(FwdGpu, KeysBroadcastOverHeadsTakeTheSynchronousTwin) {
  FLEXJIT_REQUIRE_HOPPER();
  std::mt19937_64 rng(fresh_seed());
  const int B = 2, H = 3, S = 300, D = 64;
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = D;
  const Attention attention(spec);
  const auto q = random_values(size_t(B) * H * S * D, rng, DType::bf16);
  const auto k1 = random_values(size_t(B) * S * D, rng, DType::bf16);  // one head's keys per batch
  const auto v1 = random_values(size_t(B) * S * D, rng, DType::bf16);
  auto dq = DeviceOperand::allocate(B, H, S, D, DType::bf16, false);
  dq.upload(q);
  DeviceBuffer kbuf = DeviceBuffer::allocate(k1.size() * 2), vbuf = DeviceBuffer::allocate(v1.size() * 2);
  const auto kbytes = to_bytes(k1, DType::bf16), vbytes = to_bytes(v1, DType::bf16);
  kbuf.upload(kbytes.data(), kbytes.size());
  vbuf.upload(vbytes.data(), vbytes.size());
  const TensorView k = TensorView::strided(kbuf.data(), DType::bf16, {B, H, S, D}, {int64_t(S) * D, 0, D, 1});
  const TensorView v = TensorView::strided(vbuf.data(), DType::bf16, {B, H, S, D}, {int64_t(S) * D, 0, D, 1});
  auto out = DeviceOperand::allocate(B, H, S, D, DType::bf16, false);
  poison_with_nan(out.buffer, DType::bf16);
  DeviceBuffer lse = DeviceBuffer::allocate(size_t(B) * H * S * 4);
  poison_with_nan(lse, DType::f32);
  attention.forward(dq.view, k, v, out.view, TensorView::contiguous(lse.data(), DType::f32, {B, H, S}), nullptr);
  synchronize();
  const std::vector<KernelChoice> choices = attention.last_choices();
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0].default_config.str(), "m128n128w8s2g");
  // The tuner (on unless FLEXJIT_AUTOTUNE=off) may pick another tile, whose twin runs: never a
  // warp-specialised one.
  EXPECT_FALSE(choices[0].config.warp_specialized) << choices[0].config.str();
  if (choices[0].source == "defaults") {
    EXPECT_EQ(choices[0].config.str(), "m128n128w8s2g");
  }
  // The reference reads every head's keys from the shared ones.
  std::vector<double> k_all(size_t(B) * H * S * D), v_all(k_all.size());
  for (size_t i = 0; i < k_all.size(); ++i) {
    const size_t per_head = size_t(S) * D, b = i / (per_head * H);
    k_all[i] = k1[b * per_head + i % per_head];
    v_all[i] = v1[b * per_head + i % per_head];
  }
  const ReferenceForward ref = reference_forward(attention.score_mod(), attention.mask_mod(), EvalInputs{},
                                                 ReferenceShape{B, H, H, S, S, D, D}, q, k_all, v_all,
                                                 1.0 / std::sqrt(double(D)));
  EXPECT_LT(flexjit::relative_error(out.download(), ref.out), tolerance(DType::bf16));
  EXPECT_LT(flexjit::relative_error(from_bytes(lse.to_host<unsigned char>(), DType::f32), ref.lse),
            tolerance(DType::bf16));
}

// The tile-bounds walk: without a block mask, a mask_mod with interval bounds has the
// warp-specialised forward walk only the key tiles the bounds keep and skip mask_mod where they
// find a warp's rows fully kept. Positional masks (one reading h, one kv_len), a mask that keeps
// nothing (no tile walked: out 0, lse -inf), one that keeps the first rows only, Sq != Skv both
// ways and a single query, GQA 2:1, each consumer-warpgroup count and d256.
TEST(FwdGpu, WarpSpecializedTileBoundsWalk) {
  FLEXJIT_REQUIRE_HOPPER();
  const char* masks[] = {"q_idx >= kv_idx",
                         "q_idx >= kv_idx && q_idx - kv_idx <= 200",
                         "kv_idx <= 100 || q_idx >= kv_idx",
                         "q_idx + kv_len - q_len >= kv_idx",
                         "kv_idx < 300 + 64 * h",
                         "kv_idx > 100000",
                         "q_idx < 50"};
  for (auto [d, config] : {std::pair{64, "m192n128w12s2ws"}, {64, "m128n128w8s2ws"}, {128, "m64n128w4s2ws"},
                           {128, "m128n64w8s3ws"}, {256, "m128n64w8s2ws"}})
    for (const char* mask : masks)
      for (auto [sq, skv] : {std::pair{333, 517}, {640, 640}, {517, 333}, {1, 700}}) {
        FwdProblem p;
        p.B = 2;
        p.Hq = 4;
        p.Hkv = 2;
        p.Sq = sq;
        p.Skv = skv;
        p.D = p.Dv = d;
        p.mask_mod = mask;
        p.use_block_mask = false;
        p.config = BlockConfig::parse(config);
        expect_close(p, std::string("tile-bounds walk ") + config + " d" + std::to_string(d) + " '" + mask +
                            "' Sq=" + std::to_string(sq) + " Skv=" + std::to_string(skv));
      }
}

// Masks with tile bounds whose kv_idx-only part reads a buffer that kv_idx does not index (a column
// value beside bounds) without a block mask: the tile-bounds walk, the mask evaluated per score
// (codegen::forward_mask_column_values). RandomProblemsGpu found `kv_idx < len[b]` without a block
// mask failing to compile (session (zzzo)). Lengths per batch: past the keys, inside the first
// tile, mid-walk, 0 (fully masked rows).
TEST(FwdGpu, MasksWithBoundsAndColumnValuesWithoutBlockMask) {
  FLEXJIT_REQUIRE_HOPPER();
  const char* masks[] = {"kv_idx < len[b]", "kv_idx < len[b] && q_idx >= kv_idx", "kv_idx <= len[b] || q_idx >= kv_idx"};
  for (auto [d, config] : {std::pair{64, "m128n128w8s2ws"}, {88, "m128n128w8s2ws"}, {128, "m64n128w4s2ws"}})
    for (const char* mask : masks) {
      FwdProblem p;
      p.B = 4;
      p.Hq = 7;
      p.Hkv = 1;
      p.Sq = 360;
      p.Skv = 429;
      p.D = p.Dv = d;
      p.mask_mod = mask;
      p.use_block_mask = false;
      p.config = BlockConfig::parse(config);
      TestBuffer len;
      len.decl = BufferDecl{"len", DType::i32, {p.B}};
      len.values = {1000, 37, 301, 0};
      p.buffers.push_back(len);
      expect_close(p, std::string("tile-bounds walk beside column values ") + config + " d" + std::to_string(d) +
                          " '" + mask + "'");
    }
}

// A wide config fixed for a call whose block mask its own mask built: the forward walks by the
// mask's bounds instead of the 128-row tables it cannot read (a mask the bounds cannot class keeps
// the named error: WideWarpSpecializedRejectsABlockMask).
TEST(FwdGpu, WideWarpSpecializedWalksByTheBoundsOfItsOwnMask) {
  FLEXJIT_REQUIRE_HOPPER();
  for (const char* config : kWideConfigs) {
    FwdProblem p = base(700, 64);
    p.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx <= 300";
    p.config = BlockConfig::parse(config);
    p.use_block_mask = true;  // attention.block_mask(): built from the call's own mask
    expect_close(p, std::string("wide ws with its own mask's tables ") + config);
  }
}

// Three consumer warpgroups over tables of 192-row blocks (BlockMask::build_on_gpu's q_block): a
// mask that reads no buffer overlaps inside each warpgroup in the full form (causal, a sliding
// window; odd lengths, GQA 2:1), prefix LM takes the lean form (its full form spills).
TEST(FwdGpu, ThreeWarpgroupsOverTablesOf192RowBlocks) {
  FLEXJIT_REQUIRE_HOPPER();
  for (const char* mask : {"q_idx >= kv_idx", "q_idx >= kv_idx && q_idx - kv_idx <= 300", "kv_idx <= 100 || q_idx >= kv_idx"}) {
    FwdProblem p = base(700, 64);
    p.Sq = 637;
    p.Hq = 6;  // GQA 2:1 over base's 3 kv heads
    p.mask_mod = mask;
    p.config = BlockConfig::parse("m192n128w12s2ws");
    p.q_block = 192;
    expect_close(p, std::string("m192 over 192-row tables, mask ") + mask);
  }
}

// One small forward of each wide shape: what the GPU script runs under compute-sanitizer.
TEST(FwdGpu, WideWarpSpecializedOnePerShape) {
  FLEXJIT_REQUIRE_HOPPER();
  for (const char* config : kWideConfigs) {
    FwdProblem p;
    p.B = 1;
    p.Hq = 3;
    p.Hkv = 1;
    p.Sq = 400;
    p.Skv = 371;
    p.D = p.Dv = 128;
    p.use_block_mask = false;
    p.config = BlockConfig::parse(config);
    expect_close(p, std::string("wide ws one per shape ") + config);
  }
}

}  // namespace
}  // namespace flexjit::test
