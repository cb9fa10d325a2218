// Backward attention on a GPU against the float64 CPU reference: every suite mod, odd lengths,
// Sq != Skv, GQA 8:1, fully masked rows, head dims, block configs; and bitwise determinism.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flexjit/error.hpp"
#include "jit/driver.hpp"
#include "support/attention_harness.hpp"
#include "support/diagonal_mods.hpp"
#include "support/random_draws.hpp"
#include "support/scoped.hpp"
#include "tune/autotune_cache.hpp"

namespace flexjit::test {
namespace {

void expect_close(const FwdProblem& p, const std::string& what, bool repeat = false) {
  const BwdOutcome r = run_backward_check(p, repeat);
  const double tol = tolerance(p.dtype);
  EXPECT_LT(r.dq_error, tol) << what << ": dq error, seed " << r.seed;
  EXPECT_LT(r.dk_error, tol) << what << ": dk error, seed " << r.seed;
  EXPECT_LT(r.dv_error, tol) << what << ": dv error, seed " << r.seed;
}

FwdProblem base(int S = 384, int D = 128) {
  FwdProblem p;
  p.B = 2;
  p.Hq = p.Hkv = 2;
  p.Sq = p.Skv = S;
  p.D = p.Dv = D;
  return p;
}

// The fast backward of `p` against the float64 reference, every failure named by `what` (an
// exception, such as a failed launch, names the case and then fails the test).
void expect_fast_backward_close(const FwdProblem& p, const std::string& what) {
  const BwdOutcome r = [&] {
    try {
      return run_backward_check(p);
    } catch (const std::exception&) {
      ADD_FAILURE() << what << ": threw";
      throw;
    }
  }();
  EXPECT_EQ(r.mode, "fast") << what << ": " << r.mode_reason;
  EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
  EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
  EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
}

// The backward of `p` (rows padded: FwdProblem::row_padding) against the float64 reference: every
// gradient within tolerance, no column past its head dim written, and on sm_90a the fast mode
// wherever it was asked (every head-dim pair has fast tiles there, codegen::tile_head_dims).
void expect_padded_backward_close(const FwdProblem& p, const std::string& what) {
  const BwdOutcome r = run_backward_check(p);
  const double tol = tolerance(p.dtype);
  EXPECT_LT(r.dq_error, tol) << what << ": dq error, seed " << r.seed;
  EXPECT_LT(r.dk_error, tol) << what << ": dk error, seed " << r.seed;
  EXPECT_LT(r.dv_error, tol) << what << ": dv error, seed " << r.seed;
  EXPECT_TRUE(r.padding_untouched) << what << ": a gradient's columns past its head dim were written";
  if (p.backward_mode == BackwardMode::fast && current_device().default_arch() == "sm_90a") {
    EXPECT_EQ(r.mode, "fast") << what << ": " << r.mode_reason;
  }
}

// The suite's mods at head dims 64 and 128 over S queries and keys, each named.
std::vector<std::pair<std::string, FwdProblem>> suite_mod_problems(int S, std::mt19937_64& rng) {
  struct Mod { const char* name; const char* score; const char* mask; };
  const Mod mods[] = {
      {"noop", "", ""},
      {"causal", "", "q_idx >= kv_idx"},
      {"sliding_window", "", "q_idx >= kv_idx && q_idx - kv_idx <= 150"},
      {"document_causal", "", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"},
      {"prefix_lm", "", "kv_idx <= 100 || q_idx >= kv_idx"},
      {"alibi_causal", "score + slope[h] * (kv_idx - q_idx)", "q_idx >= kv_idx"},
      {"softcap_causal", "30.0 * tanh(score / 30.0)", "q_idx >= kv_idx"},
      {"softcap_strong", "2.0 * tanh(score / 2.0)", ""},
  };
  std::vector<std::pair<std::string, FwdProblem>> problems;
  for (const Mod& m : mods) {
    for (int D : {64, 128}) {
      FwdProblem p = base(S, D);
      p.score_mod = m.score;
      p.mask_mod = m.mask;
      if (std::string(m.mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Skv, rng));
      if (std::string(m.score).find("slope") != std::string::npos) p.buffers.push_back(alibi_slopes(p.Hq));
      problems.emplace_back(std::string(m.name) + " d" + std::to_string(D) + " S=" + std::to_string(S), p);
    }
  }
  return problems;
}

TEST(BwdGpu, SuiteMods) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  for (const auto& [what, p] : suite_mod_problems(448, rng)) expect_close(p, what);
}

// The suite's mods over lengths the fast dK/dV kernel's tiles divide (512: 64-query and 128-key
// tiles), without GQA: at d64 the kernels that read their first LSE pairs ahead of Sᵀ's wait
// (codegen::dkdv_stats_ahead_tiles; SuiteMods' 448 gives the same at the other lengths).
// The default ws configs at d64 and d128, fast mode, against the float64 reference.
TEST(BwdGpu, FastModeOverLengthsTheTilesDivide) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the fast mode runs on sm_90a GPUs, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  for (auto& [what, p] : suite_mod_problems(512, rng)) {
    p.backward_mode = BackwardMode::fast;
    expect_fast_backward_close(p, what);
  }
}

// FwdGpu.ScoreModsWithConstantFactors through the backward, both modes: the derivative is emitted
// with the score_mod's prescale (one tanh for both), and the recomputed probabilities must match
// the forward's LSE.
TEST(BwdGpu, ScoreModsWithConstantFactors) {
  FLEXJIT_REQUIRE_GPU();
  for (const std::string& score : score_mods_with_constant_factors())
    for (int D : {64, 128})
      for (BackwardMode mode : {BackwardMode::fast, BackwardMode::deterministic}) {
        FwdProblem p = base(333, D);
        p.score_mod = score;
        p.mask_mod = "q_idx >= kv_idx";
        p.backward_mode = mode;
        if (score.find("slope") != std::string::npos) p.buffers.push_back(alibi_slopes(p.Hq));
        expect_close(p, score + " d" + std::to_string(D) +
                            (mode == BackwardMode::fast ? ", fast" : ", deterministic"));
      }
}

// The backward's buffer reads in both forms (FwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets):
// contiguous buffers (32-bit offsets) and reversed views (64-bit), in both backward modes. The
// dK/dV kernel that sums dQ takes the 32-bit form for a score_mod's tables, and for its other
// buffers beside a mask that reads none (codegen::kernel_takes_32_bit_reads): ALiBi beside
// documents keeps the 64-bit form there, the tables over one, two and three coordinates beside
// causal, sliding-window and documents masks take the 32-bit one, at head dims 128 and 64, with
// odd lengths and GQA 3:1.
TEST(BwdGpu, BufferReadsWithThirtyTwoAndSixtyFourBitOffsets) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  const auto table = [&](const std::string& name, std::vector<int64_t> shape) {
    return f32_buffer(name, shape, rng, -2.0, 2.0);
  };
  for (bool reversed : {false, true})
  for (BackwardMode mode : {BackwardMode::fast, BackwardMode::deterministic}) {
    const std::string form = std::string(reversed ? "reversed views" : "contiguous") +
                             (mode == BackwardMode::fast ? ", fast" : ", deterministic");
    FwdProblem p = base(333, 128);
    p.reversed_buffers = reversed;
    p.backward_mode = mode;
    p.buffers.push_back(document_ids(p.Skv, rng));
    p.buffers.push_back(alibi_slopes(p.Hq));
    p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
    p.mask_mod = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
    expect_close(p, "ALiBi and documents, " + form);
    for (int D : {128, 64}) {
      FwdProblem t = base(0, D);
      t.reversed_buffers = reversed;
      t.backward_mode = mode;
      t.B = 2, t.Hq = 6, t.Hkv = 2, t.Sq = 277, t.Skv = 301;
      const std::string d = " d" + std::to_string(D) + ", " + form;
      t.buffers = {table("rel", {2 * t.Skv - 1})};
      t.score_mod = "score + rel[kv_idx - q_idx + " + std::to_string(t.Skv - 1) + "]";
      t.mask_mod = "q_idx >= kv_idx";
      expect_close(t, "rel[kv_idx - q_idx] causal" + d);
      t.buffers = {table("rel", {t.Hq, 2 * t.Skv - 1})};
      t.score_mod = "score + rel[h][q_idx - kv_idx + " + std::to_string(t.Skv - 1) + "]";
      t.mask_mod = "q_idx - kv_idx <= 100 && kv_idx - q_idx <= 100";
      expect_close(t, "rel[h][q_idx - kv_idx] sliding window" + d);
      t.buffers = {table("bias", {t.Hq, t.Sq, t.Skv})};
      t.score_mod = "score + bias[h][q_idx][kv_idx]";
      t.mask_mod = "";
      expect_close(t, "bias[h][q_idx][kv_idx] unmasked" + d);
      t.buffers.push_back(document_ids(t.Skv, rng));
      t.mask_mod = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
      expect_close(t, "bias[h][q_idx][kv_idx] documents causal" + d);
    }
  }
}

TEST(BwdGpu, OddLengthsAndDifferentLengths) {
  FLEXJIT_REQUIRE_GPU();
  for (auto [sq, skv] : {std::pair{1, 1}, {17, 17}, {1000, 1000}, {300, 1000}, {1000, 77}, {129, 4097}}) {
    FwdProblem p = base();
    p.B = 1;
    p.Sq = sq;
    p.Skv = skv;
    expect_close(p, "noop " + std::to_string(sq) + "x" + std::to_string(skv));
    p.mask_mod = "kv_idx <= q_idx + (kv_len - q_len)";
    expect_close(p, "bottom-right causal " + std::to_string(sq) + "x" + std::to_string(skv));
  }
}

// Query tiles smaller than the tables' blocks: the dK/dV kernels leave out the tiles of a list's
// last block that start past the queries' end (TileWalk's TRIM: at 129 queries the 64-row tile of
// rows 192..255). Lengths that end in a block's first half and in its second (nothing to leave
// out), the last block listed partial (the diagonal) and full (the keys before it), GQA 3:1,
// Sq != Skv, documents, each way the kernels walk (the fast and ordered warp-specialised kernels,
// the dQ kernel's synchronous dK/dV one), and blocks of 192 queries, whose last drops up to two.
TEST(BwdGpu, QueryTilesPastTheQueriesEndAreLeftOut) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  for (const std::string way : {"fast", "ordered", "kernel"}) {
    const ScopedEnv dq_way("FLEXJIT_DETERMINISTIC_DQ", way == "fast" ? "" : way.c_str());
    for (auto [sq, skv] : {std::pair{129, 129}, {257, 257}, {65, 300}, {300, 190}, {200, 200}}) {
      FwdProblem p = base(sq);
      p.Skv = skv;
      p.Hq = 6;
      p.Hkv = 2;
      p.backward_mode = way == "fast" ? BackwardMode::fast : BackwardMode::deterministic;
      const std::string shape = way + " " + std::to_string(sq) + "x" + std::to_string(skv);
      p.mask_mod = "kv_idx <= q_idx + (kv_len - q_len)";
      expect_close(p, "bottom-right causal, " + shape);
      p.buffers.push_back(document_ids(std::max(sq, skv), rng));
      p.mask_mod = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
      expect_close(p, "documents causal, " + shape);
    }
  }
  for (int sq : {200, 257, 330}) {
    FwdProblem p = base(sq);
    p.q_block = 192;
    p.mask_mod = "q_idx >= kv_idx";
    expect_close(p, "causal, query blocks of 192, S=" + std::to_string(sq));
  }
}

TEST(BwdGpu, ShortSequencesWithAnOddGqaRatio) {
  // One and three tokens with 7 query heads per kv head (the shapes of a decode step run through
  // the training backward): every dq row is written and finite, dk/dv sum the group's 7 heads.
  FLEXJIT_REQUIRE_GPU();
  for (int S : {1, 3}) {
    FwdProblem p = base(S);
    p.Hq = 14;
    p.Hkv = 2;
    expect_close(p, "gqa 7:1 noop S=" + std::to_string(S));
    p.mask_mod = "q_idx >= kv_idx";
    expect_close(p, "gqa 7:1 causal S=" + std::to_string(S));
  }
}

TEST(BwdGpu, Gqa8To1AndBshd) {
  FLEXJIT_REQUIRE_GPU();
  FwdProblem p = base(320);
  p.Hq = 8;
  p.Hkv = 1;
  p.mask_mod = "q_idx >= kv_idx";
  expect_close(p, "gqa 8:1 causal");
  p.bshd = true;
  p.Hkv = 2;
  p.score_mod = "30.0 * tanh(score / 30.0)";
  expect_close(p, "gqa 4:1 softcap [B,S,H,D]");
}

// NaN in, NaN out: a NaN row of dO reaches every gradient that reads it and no other batch or
// head. Under a causal mask, query nq's dO row (batch nb, query head nh of kv head nh / 2) is read
// by dQ's row nq and by the dK and dV rows of keys 0..nq of that kv head, every column: those are
// NaN. dQ's other rows and dK's other rows are finite and match the float64 reference (dS is
// selected to 0 where the mask drops a score). dV = Pᵀ·dO is a matrix product in which a dropped
// score's P is an exact 0, and IEEE 0·NaN is NaN, as in PyTorch's eager math (which spreads the NaN
// over the whole head's dK and dV): so dV rows of that kv head that the NaN row does not read may
// be NaN (keys past nq in a tile the query's row visits, so below 256: no backward kv tile is wider
// than 128); where finite they match the reference, and keys 256.. are finite.
// Both modes, with soft-capping (whose derivative the d128 warp-specialised kernel folds into Pᵀ,
// with -0 marking a kept score) and without.
TEST(BwdGpu, NanInDoReachesOnlyTheGradientsThatReadIt) {
  FLEXJIT_REQUIRE_GPU();
  const int nb = 1, nh = 3, nq = 200;
  for (BackwardMode mode : {BackwardMode::fast, BackwardMode::deterministic})
    for (const char* score : {"", "30.0 * tanh(score / 30.0)"})
      for (int D : {64, 128}) {
        FwdProblem p = base(384, D);
        p.Hq = 4;
        p.Hkv = 2;
        p.mask_mod = "q_idx >= kv_idx";
        p.score_mod = score;
        p.backward_mode = mode;
        p.nan_dout_row = std::array<int, 3>{nb, nh, nq};
        const std::string what = std::string(mode == BackwardMode::fast ? "fast" : "deterministic") + " d" +
                                 std::to_string(D) + " score '" + score + "'";
        const BwdOutcome r = run_backward_check(p);
        // rows: [B][heads][S] rows of `width` values; nan_row(b, h, i) says which are NaN.
        // may_be_nan(b, h, i): a row outside the NaN's reach that IEEE 0·NaN may still reach.
        const auto check = [&](const std::vector<double>& got, const std::vector<double>& ref, int heads, int len,
                               int width, const auto& nan_row, const auto& may_be_nan, const char* name) {
          double err2 = 0, ref2 = 0;
          int wrong_nan = 0, wrong_finite = 0;
          for (int b = 0; b < p.B; ++b)
            for (int h = 0; h < heads; ++h)
              for (int i = 0; i < len; ++i) {
                const size_t row = ((size_t(b) * heads + h) * len + i) * width;
                const bool expect_nan = nan_row(b, h, i), nan_allowed = may_be_nan(b, h, i);
                for (int c = 0; c < width; ++c) {
                  const double g = got[row + c], e = ref[row + c];
                  if (expect_nan) {
                    wrong_finite += !std::isnan(g);
                  } else if (nan_allowed && std::isnan(g)) {
                    continue;
                  } else if (!std::isfinite(g)) {
                    ++wrong_nan;
                  } else {
                    err2 += (g - e) * (g - e);
                    ref2 += e * e;
                  }
                }
              }
          EXPECT_EQ(wrong_finite, 0) << what << ": " << name << " values the NaN row reaches that are not NaN, seed "
                                     << r.seed;
          EXPECT_EQ(wrong_nan, 0) << what << ": " << name << " values the NaN row never reaches that are not finite, seed "
                                  << r.seed;
          EXPECT_LT(std::sqrt(err2 / ref2), tolerance(p.dtype)) << what << ": " << name << " error, seed " << r.seed;
        };
        const auto never = [](int, int, int) { return false; };
        check(r.dq, r.ref_dq, p.Hq, p.Sq, p.D, [&](int b, int h, int i) { return b == nb && h == nh && i == nq; },
              never, "dq");
        const auto reached_key = [&](int b, int kvh, int j) { return b == nb && kvh == nh / 2 && j <= nq; };
        const auto shares_a_kv_tile = [&](int b, int kvh, int j) { return b == nb && kvh == nh / 2 && j < 256; };
        check(r.dk, r.ref_dk, p.Hkv, p.Skv, p.D, reached_key, never, "dk");
        check(r.dv, r.ref_dv, p.Hkv, p.Skv, p.Dv, reached_key, shares_a_kv_tile, "dv");
      }
}

TEST(BwdGpu, FullyMaskedRowsGiveZeroGradients) {
  FLEXJIT_REQUIRE_GPU();
  FwdProblem p = base(300);
  p.mask_mod = "q_idx % 7 != 0 && kv_idx <= q_idx";
  const BwdOutcome r = run_backward_check(p);
  EXPECT_LT(r.dq_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_LT(r.dk_error, tolerance(p.dtype)) << "seed " << r.seed;
  EXPECT_LT(r.dv_error, tolerance(p.dtype)) << "seed " << r.seed;
  for (int row = 0; row < p.B * p.Hq * p.Sq; ++row) {
    if ((row % p.Sq) % 7 != 0) continue;
    for (int d = 0; d < p.D; ++d) ASSERT_EQ(r.dq[size_t(row) * p.D + d], 0.0) << "row " << row;
  }
}

TEST(BwdGpu, HeadDimsAndHalfPrecision) {
  FLEXJIT_REQUIRE_GPU();
  for (DType dtype : {DType::bf16, DType::f16})
    for (auto [d, dv] : {std::pair{64, 64}, {128, 128}, {256, 256}, {128, 64}, {192, 128}, {64, 256}}) {
      FwdProblem p = base(256);
      p.dtype = dtype;
      p.D = d;
      p.Dv = dv;
      p.mask_mod = "q_idx >= kv_idx";
      expect_close(p, std::string(dtype_name(dtype)) + " D=" + std::to_string(d) + " Dv=" + std::to_string(dv));
    }
}

// Head dims that are no multiple of 64 (the tiles pad them: KernelSpec::set_head_dims), both
// modes: the rows of every tensor carry 8 more columns, NaN in the inputs (O and dO included) and
// poisoned in the gradients, which must stay so; odd lengths, GQA, both layouts and dtypes.
TEST(BwdGpu, HeadDimsThatAreNoMultipleOf64) {
  FLEXJIT_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  const std::pair<int, int> dims[] = {{96, 96}, {80, 80}, {32, 32}, {160, 160}, {96, 64}, {40, 72}, {8, 24}};
  int i = 0;
  for (auto [d, dv] : dims)
    for (BackwardMode mode : {BackwardMode::fast, BackwardMode::deterministic}) {
      FwdProblem p = base(i % 2 == 0 ? 384 : 333, d);
      p.Dv = dv;
      p.Hq = 4, p.Hkv = i % 3 == 0 ? 2 : 4;
      p.Skv = i % 2 == 0 ? 384 : 271;
      p.dtype = i % 4 < 2 ? DType::bf16 : DType::f16;
      p.bshd = i % 4 == 1;
      p.row_padding = 8;
      p.backward_mode = mode;
      p.mask_mod = i % 3 == 2 ? "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx" : "q_idx >= kv_idx";
      if (i % 3 == 2) p.buffers.push_back(document_ids(std::max(p.Sq, p.Skv), rng));
      if (i % 2 == 1) p.score_mod = "30.0 * tanh(score / 30.0)";
      const std::string what = "D=" + std::to_string(d) + " Dv=" + std::to_string(dv) +
                               (mode == BackwardMode::fast ? " fast" : " deterministic");
      expect_padded_backward_close(p, what);  // (D=160's backward takes 256 columns on sm_90a)
      ++i;
    }
}

// The warp-specialised dK/dV kernel with one column slice runs dV += Pᵀ dO and dK += dSᵀ Q over
// the tensors' own columns rounded to 16, not the tile's: each pair below ends its dK or dV columns
// inside a 64-column slab (the wgmma reads Q or dO across slabs; the epilogue stages and stores
// part of a slab). Both modes, GQA 8:1 over one kv head (whose group the fast mode may split over
// CTAs that store fp32 partial sums), rows padded with NaN, odd lengths, masks and score_mods.
// One test per head-dim pair and mode, so that a sanitizer run can spread them over processes.
const std::pair<int, int> kGradientGemmDims[] = {{72, 72}, {88, 120}, {104, 56}, {56, 104}, {24, 88}, {112, 40}};

class GradientGemmsSpanOnlyTheTensorsColumns : public ::testing::TestWithParam<int> {};

TEST_P(GradientGemmsSpanOnlyTheTensorsColumns, Case) {
  FLEXJIT_REQUIRE_GPU();
  const int i = GetParam();
  const auto [d, dv] = kGradientGemmDims[i / 2];
  const BackwardMode mode = i % 2 == 0 ? BackwardMode::fast : BackwardMode::deterministic;
  FwdProblem p = base(i % 2 == 0 ? 333 : 200, d);
  p.Dv = dv;
  if (i % 4 == 0) {
    p.Hq = 8, p.Hkv = 1;
  } else {
    p.Hq = 4, p.Hkv = i % 3 == 0 ? 2 : 4;
  }
  p.Skv = i % 2 == 0 ? 271 : 517;
  p.dtype = i % 4 < 2 ? DType::bf16 : DType::f16;
  p.bshd = i % 3 == 1;
  p.row_padding = 8;
  p.backward_mode = mode;
  if (i % 3 != 1) p.mask_mod = "q_idx >= kv_idx";
  if (i % 2 == 1) {
    p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
    p.buffers.push_back(alibi_slopes(p.Hq));
  }
  const std::string what = "D=" + std::to_string(d) + " Dv=" + std::to_string(dv) + " Hq=" + std::to_string(p.Hq) +
                           " Hkv=" + std::to_string(p.Hkv) + (mode == BackwardMode::fast ? " fast" : " deterministic");
  expect_padded_backward_close(p, what);
}

INSTANTIATE_TEST_SUITE_P(BwdGpu, GradientGemmsSpanOnlyTheTensorsColumns,
                         ::testing::Range(0, 2 * static_cast<int>(std::size(kGradientGemmDims))));

// At head dims 72 to 96 (128-column tiles, the tensors' columns ending in the second slab's first
// half) the fast mode's warp-specialised kernel takes dQ by turns: tile t's whole share, over the
// tensors' columns rounded to 16, by warpgroup t % 2; the staging buffer's columns past them hold
// zeros. Masks with tile bounds (none, causal) and without (documents), GQA 5:1 and 8:1 over one
// kv head (split over CTAs), odd lengths, rows padded with NaN.
// Three stages, the default where the turns fit, leave room for one staging buffer, which the
// warpgroups then take by turns; cases 6 and 7 force them, case 9 forces two stages (a buffer per
// warpgroup). Cases 2 and 5 (documents at 88, V wider than Q and K) are where the turns do not fit
// (dq_plan): the columns split there. The last case is one CTA (one kv tile, one head): a
// sanitizer's reports on it cannot come from CTAs that followed each other on an SM.
struct DqTurnCase {
  int d, dv, hq, hkv;
  const char* mask;
  int b, sq, skv;
  const char* dkdv = nullptr;
};
const DqTurnCase kDqTurnCases[] = {{80, 80, 4, 4, nullptr, 2, 333, 517},
                                   {72, 72, 5, 1, "q_idx >= kv_idx", 2, 517, 271},
                                   {88, 88, 4, 2, "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", 2, 333, 517},
                                   {96, 96, 8, 1, nullptr, 2, 517, 271},
                                   {80, 40, 4, 4, "doc[q_idx] == doc[kv_idx]", 2, 333, 517},
                                   {96, 112, 4, 2, "q_idx >= kv_idx", 2, 517, 271},
                                   {80, 80, 4, 2, "q_idx >= kv_idx", 2, 777, 517, "m64n128w8s3ws"},
                                   {96, 96, 3, 1, nullptr, 1, 1000, 1000, "m64n128w8s3ws"},
                                   {80, 80, 4, 2, "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", 2, 333, 517},
                                   {96, 80, 4, 2, "q_idx >= kv_idx", 2, 517, 271, "m64n128w8s2ws"},
                                   {80, 80, 1, 1, nullptr, 1, 333, 100}};

class DqByTurnsOverTheTensorsColumns : public ::testing::TestWithParam<int> {};

TEST_P(DqByTurnsOverTheTensorsColumns, Case) {
  FLEXJIT_REQUIRE_GPU();
  const int i = GetParam();
  const DqTurnCase& c = kDqTurnCases[i];
  std::mt19937_64 rng(fresh_seed());
  FwdProblem p = base(c.sq, c.d);
  p.Dv = c.dv;
  p.B = c.b;
  p.Hq = c.hq, p.Hkv = c.hkv;
  p.Skv = c.skv;
  p.dtype = i % 3 == 2 ? DType::f16 : DType::bf16;
  p.bshd = i % 2 == 1;
  p.row_padding = 8;
  p.backward_mode = BackwardMode::fast;
  if (c.mask) {
    p.mask_mod = c.mask;
    if (std::string(c.mask).find("doc") != std::string::npos)
      p.buffers.push_back(document_ids(std::max(p.Sq, p.Skv), rng));
  }
  if (i % 3 == 1) {
    p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
    p.buffers.push_back(alibi_slopes(p.Hq));
  }
  if (c.dkdv) p.dkdv_config = BlockConfig::parse(c.dkdv);
  const std::string what = "D=" + std::to_string(c.d) + " Dv=" + std::to_string(c.dv) + " Hq=" + std::to_string(c.hq) +
                           " Hkv=" + std::to_string(c.hkv) + " mask " + (c.mask ? c.mask : "none") + " dK/dV config " +
                           (c.dkdv ? c.dkdv : "default");
  expect_padded_backward_close(p, what);
}

INSTANTIATE_TEST_SUITE_P(BwdGpu, DqByTurnsOverTheTensorsColumns,
                         ::testing::Range(0, static_cast<int>(std::size(kDqTurnCases))));

// The synchronous dK/dV kernels (mma.sync, sm_80's path; wgmma 'g', with and without the fast
// mode's dQ sums) and the dQ kernel span dK's, dV's and dQ's columns rounded to 16 as the
// warp-specialised one does: each pair ends its columns inside a 64-column slab.
// One test per head-dim pair and way, so that a sanitizer run can spread them over processes.
struct SynchronousWay {
  const char* dq;
  const char* dkdv;
  BackwardMode mode;
};
const std::pair<int, int> kSynchronousDims[] = {{80, 80}, {104, 56}, {24, 88}, {112, 40}};
const SynchronousWay kSynchronousWays[] = {{"m64n64w4s2", "m64n64w4s2", BackwardMode::deterministic},
                                           {"m64n64w4s2g", "m64n128w8s2g", BackwardMode::deterministic},
                                           {"m64n64w4s2g", "m64n128w8s2g", BackwardMode::fast}};

class SynchronousKernelsSpanOnlyTheTensorsColumns : public ::testing::TestWithParam<int> {};

TEST_P(SynchronousKernelsSpanOnlyTheTensorsColumns, Case) {
  FLEXJIT_REQUIRE_GPU();
  const int i = GetParam();
  const auto [d, dv] = kSynchronousDims[i / std::size(kSynchronousWays)];
  const SynchronousWay& way = kSynchronousWays[i % std::size(kSynchronousWays)];
  FwdProblem p = base(i % 2 == 0 ? 333 : 200, d);
  p.Dv = dv;
  p.Hq = 4, p.Hkv = i % 3 == 0 ? 2 : 4;
  p.Skv = i % 2 == 0 ? 271 : 517;
  p.dtype = i % 4 < 2 ? DType::bf16 : DType::f16;
  p.bshd = i % 3 == 1;
  p.row_padding = 8;
  p.backward_mode = way.mode;
  p.dq_config = BlockConfig::parse(way.dq);
  p.dkdv_config = BlockConfig::parse(way.dkdv);
  if (i % 3 != 1) p.mask_mod = "q_idx >= kv_idx";
  if (i % 2 == 1) p.score_mod = "30.0 * tanh(score / 30.0)";
  const std::string what = "D=" + std::to_string(d) + " Dv=" + std::to_string(dv) + " dq " + way.dq + " dkdv " +
                           way.dkdv + (way.mode == BackwardMode::fast ? " fast" : " deterministic");
  expect_padded_backward_close(p, what);
}

INSTANTIATE_TEST_SUITE_P(BwdGpu, SynchronousKernelsSpanOnlyTheTensorsColumns,
                         ::testing::Range(0, static_cast<int>(std::size(kSynchronousDims) *
                                                              std::size(kSynchronousWays))));

// Head dims whose backward tiles hold a whole 64-column slab past the tensor's columns (64 beside
// 256 on 128 columns, 192/64 with V on 128; MLA's 192/128, on 256-column tiles until session (zy),
// now takes the dK/dV kernel's 192-column ones): a dQ piece wholly past the columns is neither
// staged nor added. GQA 8:1 and 2:1; rows padded with NaN, odd lengths, a mask and a score_mod.
TEST(BwdGpu, TilesWithAWholeSlabPastTheHeadDim) {
  FLEXJIT_REQUIRE_GPU();
  const std::pair<int, int> dims[] = {{192, 128}, {64, 256}, {192, 64}};
  int i = 0;
  for (auto [d, dv] : dims)
    for (int hkv : {1, 2})
      for (BackwardMode mode : {BackwardMode::fast, BackwardMode::deterministic}) {
        FwdProblem p = base(i % 2 == 0 ? 333 : 256, d);
        p.Dv = dv;
        p.Hq = 8 * hkv, p.Hkv = hkv;  // 8:1
        if (hkv == 2 && d == 192 && dv == 128) p.Hq = 4;  // 2:1 beside it
        p.Skv = i % 2 == 0 ? 271 : 384;
        p.dtype = i % 4 < 2 ? DType::bf16 : DType::f16;
        p.bshd = i % 3 == 1;
        p.row_padding = 16;
        p.backward_mode = mode;
        p.mask_mod = "q_idx >= kv_idx";
        if (i % 2 == 1) p.score_mod = "30.0 * tanh(score / 30.0)";
        const std::string what = "D=" + std::to_string(d) + " Dv=" + std::to_string(dv) + " Hq=" + std::to_string(p.Hq) +
                                 " Hkv=" + std::to_string(hkv) + (mode == BackwardMode::fast ? " fast" : " deterministic");
        expect_padded_backward_close(p, what);
        ++i;
      }
}

// Head dims of 129 to 192 beside a v of 65 to 192: the fast and ordered dK/dV kernel on
// 192-column tiles (codegen::set_dkdv_half_slab_tiles), each consumer warpgroup a slice of 96
// columns (wgmmas of 64 and 32), both warpgroups' 32-column dQ pieces added from one buffer. MLA's
// 192/128, 160/128, 192/192, 136/72 and 176/96; GQA 1:1, 3:1 and 8:1; both modes (the
// deterministic one run twice for its bits; its ordered sums keep 256 columns without a mask,
// tables or a score_mod), both layouts and dtypes, odd lengths, rows padded with NaN, four masks
// (none: no tables) and a score_mod.
TEST(BwdGpu, HalfSlabSlicesAtHeadDimsAbove128) {
  FLEXJIT_REQUIRE_GPU();
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");  // also where the dQ kernel is faster
  std::mt19937_64 rng(fresh_seed());
  const std::pair<int, int> dims[] = {{192, 128}, {160, 128}, {192, 192}, {136, 72}, {176, 96}};
  const char* const masks[] = {"q_idx >= kv_idx", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx",
                               "q_idx >= kv_idx && q_idx - kv_idx <= 100", ""};
  const int groups[] = {1, 3, 8};
  int i = 0;
  for (auto [d, dv] : dims)
    for (BackwardMode mode : {BackwardMode::fast, BackwardMode::deterministic}) {
      FwdProblem p = base(i % 2 == 0 ? 333 : 256, d);
      p.Dv = dv;
      p.Hkv = i % 2 == 0 ? 1 : 2;
      p.Hq = groups[i % 3] * p.Hkv;
      p.Skv = i % 2 == 0 ? 271 : 384;
      p.dtype = i % 4 < 2 ? DType::bf16 : DType::f16;
      p.bshd = i % 3 == 1;
      p.row_padding = 8;
      p.backward_mode = mode;
      p.mask_mod = masks[i % 4];
      p.use_block_mask = !p.mask_mod.empty();  // without a mask, no tables either
      if (i % 4 == 1) p.buffers.push_back(document_ids(std::max(p.Sq, p.Skv), rng));
      if (i % 3 == 2) p.score_mod = "30.0 * tanh(score / 30.0)";
      const bool fast = mode == BackwardMode::fast;
      const std::string what = "D=" + std::to_string(d) + " Dv=" + std::to_string(dv) + " Hq=" + std::to_string(p.Hq) +
                               " Hkv=" + std::to_string(p.Hkv) + " mask '" + p.mask_mod + "'" +
                               (fast ? " fast" : " deterministic");
      const BwdOutcome r = run_backward_check(p, /*repeat=*/!fast);
      const double tol = tolerance(p.dtype);
      EXPECT_LT(r.dq_error, tol) << what << ": dq error, seed " << r.seed;
      EXPECT_LT(r.dk_error, tol) << what << ": dk error, seed " << r.seed;
      EXPECT_LT(r.dv_error, tol) << what << ": dv error, seed " << r.seed;
      EXPECT_TRUE(r.padding_untouched) << what << ": a gradient's columns past its head dim were written";
      if (current_device().default_arch() == "sm_90a") {
        EXPECT_EQ(r.dq_path, fast ? "reductions" : "ordered reductions") << what << ": " << r.mode_reason;
        // (The ordered sums without a mask, tables or a score_mod keep the call's 256 columns.)
        const bool plain_ordered = !fast && p.mask_mod.empty() && p.score_mod.empty();
        EXPECT_EQ(r.dkdv_tile_d, plain_ordered ? 256 : 192) << what;
        EXPECT_EQ(r.dkdv_tile_dv, plain_ordered ? (dv <= 128 ? 128 : 256) : (dv <= 128 ? 128 : 192)) << what;
      }
      ++i;
    }
}

TEST(BwdGpu, BlockConfigs) {
  FLEXJIT_REQUIRE_GPU();
  const char* dq_configs[] = {"m64n64w4s2", "m64n32w4s3", "m128n64w8s2", "m32n64w2s2", "m16n16w1s2"};
  const char* dkdv_configs[] = {"m64n64w4s2", "m32n64w4s3", "m64n128w8s2", "m32n32w2s2", "m16n16w1s2"};
  for (int i = 0; i < 5; ++i) {
    FwdProblem p = base(333);
    p.Hq = 4;
    p.Hkv = 2;
    p.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx <= 200";
    p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
    p.buffers.push_back(alibi_slopes(p.Hq));
    p.dq_config = BlockConfig::parse(dq_configs[i]);
    p.dkdv_config = BlockConfig::parse(dkdv_configs[i]);
    expect_close(p, std::string("dq ") + dq_configs[i] + " dkdv " + dkdv_configs[i]);
  }
}

TEST(BwdGpu, TwoRunsOnTheSameInputsGiveTheSameBits) {
  FLEXJIT_REQUIRE_GPU();
  FwdProblem p = base(1024);
  p.Hq = 8;
  p.Hkv = 2;
  p.mask_mod = "q_idx >= kv_idx";
  p.score_mod = "30.0 * tanh(score / 30.0)";
  p.backward_mode = BackwardMode::deterministic;
  expect_close(p, "determinism", /*repeat=*/true);
}

// dQ runs on a side stream concurrently with dK/dV; work queued on the caller's stream after the
// backward must still see every gradient. The caller's stream is non-blocking, so only the
// backward's own join orders the copies after the dQ kernel (a synchronous copy would not test
// it: the legacy stream does not wait for non-blocking streams). The shape makes dQ the long
// kernel: one query tile per head walks 512 kv tiles, while dK/dV spreads over 512 CTAs, so a
// copy not ordered after dQ reads it half written (checked: without the join this test fails).
TEST(BwdGpu, LaterWorkOnTheCallersStreamSeesEveryGradient) {
  FLEXJIT_REQUIRE_GPU();
  FwdProblem p = base();
  p.B = 1;
  p.Hq = p.Hkv = 2;
  p.Sq = 64;
  p.Skv = 32768;
  // The fast mode adds dQ in whatever order its CTAs run: checked against the float64 reference
  // there, bit for bit in the deterministic mode.
  for (BackwardMode mode : {BackwardMode::deterministic, BackwardMode::fast}) {
  p.backward_mode = mode;
  const BwdOutcome reference = run_backward_check(p);  // legacy stream, synchronised
  ASSERT_LT(reference.dq_error, tolerance(p.dtype)) << "seed " << reference.seed;

  const OwnedStream caller;
  const CUstream stream = caller.stream;
  for (int round = 0; round < 3; ++round) {
    const BwdOutcome again = run_backward_check(p, /*repeat=*/false, reference.seed, stream);
    if (mode == BackwardMode::deterministic)
      EXPECT_EQ(again.dq, reference.dq) << "dq read on the caller's stream, round " << round;
    else
      EXPECT_LT(again.dq_error, tolerance(p.dtype)) << "fast dq read on the caller's stream, round " << round;
    EXPECT_EQ(again.dk, reference.dk) << "dk read on the caller's stream, round " << round;
    EXPECT_EQ(again.dv, reference.dv) << "dv read on the caller's stream, round " << round;
  }
  }
}

// The fast mode's early conversion (FlexjitBwdParams::dq_done): the convert kernel converts a kv
// head's query heads once every dK/dV CTA of that kv head has counted its dQ shares landed, while
// the dK/dV grid may still run. Over more kv tiles than one wave, with GQA, with kv tiles whose
// walks are empty (causal, Sq < Skv: they count too) and at both tile head dims, on a caller's
// stream whose copies queued after the backward read dQ, dK and dV: each against the float64
// reference.
TEST(BwdGpu, FastModeConvertsDqAsEachKvHeadLands) {
  FLEXJIT_REQUIRE_GPU();
  const OwnedStream caller;
  for (const char* mask : {"", "q_idx >= kv_idx"})
    for (int d : {64, 128}) {
      FwdProblem p = base(300, d);
      p.Hq = 16;
      p.Hkv = 8;
      p.Skv = 1100;  // 9 kv tiles of 128: 144 dK/dV CTAs, more than one wave
      p.mask_mod = mask;
      p.backward_mode = BackwardMode::fast;
      const std::string what = std::string("mask '") + mask + "' d" + std::to_string(d);
      const BwdOutcome r = run_backward_check(p, /*repeat=*/false, fresh_seed(), caller.stream);
      EXPECT_EQ(r.mode, "fast") << what << ": " << r.mode_reason;
      EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
      EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
      EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
    }
}

// A backward captured into a CUDA graph (global capture mode: any call that is not allowed during
// capture fails it) and replayed gives the bits of a direct call: the fork onto the side stream
// and the join back are captured as graph edges. The variant's first call (which compiles, may
// tune and creates the side stream) happens before the capture.
TEST(BwdGpu, CapturedInAGraphAndReplayedGivesTheSameGradients) {
  FLEXJIT_REQUIRE_GPU();
  if (!GraphReplay::available()) GTEST_SKIP() << "this driver has no stream capture entry points";
  FwdProblem p = base();
  p.B = 1;
  p.Hq = p.Hkv = 2;
  p.Sq = 64;
  p.Skv = 32768;  // dQ is the long kernel, as in the stream test above
  // This may be the process's first GPU call (a shard that runs only this test): the stream needs
  // a current context before any flexjit call has made one current.
  const OwnedStream captured;
  const CUstream stream = captured.stream;
  // The deterministic mode both ways (this shape's default is the dQ kernel; the ordered sums'
  // counters are zeroed by captured memsets and left zero by each launch), then the fast mode.
  for (const char* way : {"kernel", "ordered", "fast"}) {
  const ScopedEnv dq_way("FLEXJIT_DETERMINISTIC_DQ", std::string(way) == "fast" ? "" : way);
  const BackwardMode mode = std::string(way) == "fast" ? BackwardMode::fast : BackwardMode::deterministic;
  p.backward_mode = mode;
  const BwdOutcome direct = run_backward_check(p, /*repeat=*/false, fresh_seed(), stream);
  ASSERT_LT(direct.dq_error, tolerance(p.dtype)) << way << ", seed " << direct.seed;
  if (std::string(way) == "ordered") {
    EXPECT_EQ(direct.dq_path, "ordered reductions");
  }

  GraphReplay graph(stream);
  const BwdOutcome replayed = run_backward_check(p, /*repeat=*/false, direct.seed, stream,
                                                 [&](const auto& backward) { graph.replay(backward); });
  if (mode == BackwardMode::deterministic)
    EXPECT_EQ(replayed.dq, direct.dq) << way;
  else
    EXPECT_LT(replayed.dq_error, tolerance(p.dtype)) << "fast mode replayed, seed " << replayed.seed;
  EXPECT_EQ(replayed.dk, direct.dk) << way;
  EXPECT_EQ(replayed.dv, direct.dv) << way;
  }
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

TEST(BwdGpu, HopperWgmmaPath) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the wgmma path needs an sm_90a GPU, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  const std::pair<const char*, const char*> configs[] = {
      {"m64n64w4s2g", "m64n64w4s2g"}, {"m128n64w8s2g", "m64n128w8s2g"}, {"m64n64w4s3g", "m32n64w4s2g"}};
  for (auto [dq, dkdv] : configs)
    for (const char* mask : {"", "q_idx >= kv_idx", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"}) {
      FwdProblem p = base(500);
      p.Hq = 4;
      p.Hkv = 2;
      p.dq_config = BlockConfig::parse(dq);
      p.dkdv_config = BlockConfig::parse(dkdv);
      p.mask_mod = mask;
      if (std::string(mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Skv, rng));
      p.score_mod = "30.0 * tanh(score / 30.0)";
      expect_close(p, std::string("wgmma dq ") + dq + " dkdv " + dkdv + " mask '" + mask + "'");
    }
  for (auto [d, dv] : {std::pair{64, 64}, {256, 256}, {128, 64}})
    for (int S : {1, 129}) {
      FwdProblem p = base(S);
      p.D = d;
      p.Dv = dv;
      p.mask_mod = "q_idx >= kv_idx";
      p.dq_config = BlockConfig::parse("m64n64w4s2g");
      for (const char* dkdv : {"m64n64w4s2g", "m64n128w8s2g"}) {
        if (d > 128 && std::string(dkdv) == "m64n128w8s2g") continue;  // over the register budget
        p.dkdv_config = BlockConfig::parse(dkdv);
        expect_close(p, "wgmma D=" + std::to_string(d) + " Dv=" + std::to_string(dv) + " S=" + std::to_string(S) +
                            " dkdv " + dkdv);
      }
    }
  // The kernels carry each tile's last MMAs into the next tile: the same bits every run still.
  for (auto [dq, dkdv] : {std::pair{"m64n64w4s2g", "m64n64w4s2g"}, {"m128n64w8s2g", "m64n128w8s2g"}}) {
    FwdProblem p = base(1024);
    p.mask_mod = "q_idx >= kv_idx";
    p.score_mod = "score + 0.01 * (kv_idx - q_idx)";
    p.dq_config = BlockConfig::parse(dq);
    p.dkdv_config = BlockConfig::parse(dkdv);
    p.backward_mode = BackwardMode::deterministic;
    expect_close(p, std::string("wgmma determinism dq ") + dq + " dkdv " + dkdv, /*repeat=*/true);
  }
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

// Mods like the suite's, for the tests of the fast backward: one of each kind (none, a mask, a
// buffer-indexed mask, a score_mod reading a buffer, a score_mod with a non-trivial derivative).
struct SuiteLikeMod { const char* name; const char* score; const char* mask; };
const SuiteLikeMod kSuiteLikeMods[] = {
    {"noop", "", ""},
    {"causal", "", "q_idx >= kv_idx"},
    {"document_causal", "", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"},
    {"alibi_causal", "score + slope[h] * (kv_idx - q_idx)", "q_idx >= kv_idx"},
    {"softcap", "30.0 * tanh(score / 30.0)", ""},
};

// The two backward modes (issue 13). Fast: dQ summed in fp32 by the dK/dV kernel, no dQ kernel;
// deterministic: the separate dQ kernel, the same bits every run. Both against the float64
// reference on the shapes that stress the fast kernel's dQ shares: GQA groups whose heads add into
// different dQ rows, lengths that cross tiles, [B,S,H,D], D != Dv, masks with and without tables.
TEST(BwdGpu, FastAndDeterministicModes) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the fast mode runs on sm_90a GPUs, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  for (const SuiteLikeMod& m : kSuiteLikeMods)
    for (int D : {64, 128})
      for (BackwardMode mode : {BackwardMode::fast, BackwardMode::deterministic}) {
        FwdProblem p = base(700, D);
        p.Sq = 1000, p.Skv = 777;
        p.Hq = 6, p.Hkv = 2;
        p.score_mod = m.score, p.mask_mod = m.mask;
        p.backward_mode = mode;
        // doc[] is read at query and at key positions: as long as the longer of the two.
        if (std::string(m.mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Sq, rng));
        if (std::string(m.score).find("slope") != std::string::npos) p.buffers.push_back(alibi_slopes(p.Hq));
        const bool fast = mode == BackwardMode::fast;
        const std::string what = std::string(m.name) + " d" + std::to_string(D) + (fast ? " fast" : " deterministic");
        const BwdOutcome r = run_backward_check(p, /*repeat=*/!fast);
        EXPECT_EQ(r.mode, fast ? "fast" : "deterministic") << what << ": " << r.mode_reason;
        EXPECT_EQ(r.mode_reason, "") << what;
        EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
        EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
        EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
      }
  // GQA 8:1 in [B,S,H,D], f16, D != Dv, a mask_mod on every tile (no tables), one query row, and
  // the one-warpgroup tiles at d64: fast throughout.
  struct Shape { int hq, hkv, sq, skv, d, dv; DType dtype; bool bshd, tables; const char* dkdv; };
  const Shape shapes[] = {
      {8, 1, 333, 513, 128, 128, DType::bf16, true, true, nullptr},
      {4, 2, 129, 200, 128, 64, DType::f16, false, true, nullptr},
      {4, 2, 129, 200, 64, 128, DType::bf16, false, false, nullptr},
      {2, 2, 1, 300, 128, 128, DType::bf16, false, true, nullptr},
      {6, 3, 250, 250, 64, 64, DType::f16, true, false, "m64n64w4s2g"},
  };
  for (const Shape& s : shapes) {
    FwdProblem p = base();
    p.Hq = s.hq, p.Hkv = s.hkv, p.Sq = s.sq, p.Skv = s.skv, p.D = s.d, p.Dv = s.dv;
    p.dtype = s.dtype, p.bshd = s.bshd, p.use_block_mask = s.tables;
    p.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx <= 180";
    p.backward_mode = BackwardMode::fast;
    if (s.dkdv) p.dkdv_config = BlockConfig::parse(s.dkdv);
    const std::string what = "fast " + std::to_string(s.hq) + ":" + std::to_string(s.hkv) + " " +
                             std::to_string(s.sq) + "x" + std::to_string(s.skv) + " d" + std::to_string(s.d) + "/" +
                             std::to_string(s.dv) + (s.bshd ? " bshd" : "") + (s.tables ? "" : " no tables");
    const BwdOutcome r = run_backward_check(p);
    EXPECT_EQ(r.mode, "fast") << what << ": " << r.mode_reason;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
    EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
  }
}

// The warp-specialised dK/dV kernel of the fast mode ('ws': Q, K, V and dO by TMA from a producer
// warp, dQ staged in shared memory and added by a writer warp's bulk reductions) against the
// float64 reference: every suite-like mod at both head dims; GQA 8:1 in [B,S,H,D]; D != Dv; f16;
// a mask_mod on every tile (no tables); one consumer warpgroup at d64; more keys than queries
// under a causal mask (kv tiles no query sees: dK = dV = 0); lengths that cross tiles everywhere.
TEST(BwdGpu, WarpSpecializedFastDkdv) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised backward runs on sm_90a GPUs, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  for (const SuiteLikeMod& m : kSuiteLikeMods)
    for (int D : {64, 128, 256}) {
      FwdProblem p = base(700, D);
      p.Sq = 1000, p.Skv = 777;
      p.Hq = 6, p.Hkv = 2;
      p.score_mod = m.score, p.mask_mod = m.mask;
      p.backward_mode = BackwardMode::fast;
      // Above head dim 128: one column slice of dK, dV and dQ per consumer warpgroup.
      p.dkdv_config = BlockConfig::parse(D > 128 ? "m64n64w8s2ws" : "m64n128w8s2ws");
      if (std::string(m.mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Sq, rng));
      if (std::string(m.score).find("slope") != std::string::npos) p.buffers.push_back(alibi_slopes(p.Hq));
      const std::string what = std::string(m.name) + " d" + std::to_string(D) + " ws";
      expect_fast_backward_close(p, what);
    }
  struct Shape { int hq, hkv, sq, skv, d, dv; DType dtype; bool bshd, tables; const char* mask; const char* dkdv; };
  const Shape shapes[] = {
      {8, 1, 333, 513, 128, 128, DType::bf16, true, true, "q_idx >= kv_idx && q_idx - kv_idx <= 180", "m64n128w8s2ws"},
      {4, 2, 129, 200, 128, 64, DType::f16, false, true, "q_idx >= kv_idx && q_idx - kv_idx <= 180", "m64n128w8s2ws"},
      {4, 2, 129, 200, 64, 128, DType::bf16, false, false, "q_idx >= kv_idx && q_idx - kv_idx <= 180", "m64n128w8s2ws"},
      {6, 3, 250, 250, 64, 64, DType::f16, true, false, "q_idx >= kv_idx && q_idx - kv_idx <= 180", "m64n64w4s2ws"},
      {3, 3, 300, 700, 128, 128, DType::bf16, false, true, "q_idx >= kv_idx", "m64n128w8s2ws"},
      {7, 7, 64, 128, 128, 128, DType::bf16, true, true, "", "m64n128w8s2ws"},
      // Column slices per warpgroup (head dims above 128): GQA 8:1, D != Dv both ways, f16, no
      // tables, more keys than queries, the shortest lengths TMA takes.
      {8, 1, 333, 513, 256, 256, DType::bf16, true, true, "q_idx >= kv_idx && q_idx - kv_idx <= 180", "m64n64w8s2ws"},
      {4, 2, 129, 200, 256, 128, DType::f16, false, true, "q_idx >= kv_idx && q_idx - kv_idx <= 180", "m64n64w8s2ws"},
      {4, 2, 129, 200, 128, 256, DType::bf16, false, false, "q_idx >= kv_idx && q_idx - kv_idx <= 180", "m64n64w8s2ws"},
      {3, 3, 300, 700, 256, 256, DType::bf16, false, true, "q_idx >= kv_idx", "m64n64w8s2ws"},
      {7, 7, 64, 128, 256, 256, DType::bf16, true, true, "", "m64n64w8s2ws"},
  };
  for (const Shape& s : shapes) {
    FwdProblem p = base();
    p.Hq = s.hq, p.Hkv = s.hkv, p.Sq = s.sq, p.Skv = s.skv, p.D = s.d, p.Dv = s.dv;
    p.dtype = s.dtype, p.bshd = s.bshd, p.use_block_mask = s.tables;
    p.mask_mod = s.mask;
    p.backward_mode = BackwardMode::fast;
    p.dkdv_config = BlockConfig::parse(s.dkdv);
    const std::string what = std::string(s.dkdv) + " " + std::to_string(s.hq) + ":" + std::to_string(s.hkv) + " " +
                             std::to_string(s.sq) + "x" + std::to_string(s.skv) + " d" + std::to_string(s.d) + "/" +
                             std::to_string(s.dv) + (s.bshd ? " bshd" : "") + (s.tables ? "" : " no tables");
    expect_fast_backward_close(p, what);
  }
}

// The warp-specialised dK/dV kernel computes a score_mod's diagonal values (relative tables, a T5
// bucket: support/diagonal_mods.hpp) once per diagonal of each warpgroup's tile into shared
// memory, and each recomputed score reads its diagonal's (codegen::dkdv_score_diagonal_values);
// one value from the call's table, whose pairs seed Sᵀ where the score_mod is `score + V`, and
// whose raw words the scores read where it is not (the prescaled score, the last mod here).
// Tails on both sides (333 queries, 517 keys: the last query tile and the last kv tile's second
// warpgroup clamp their positions), GQA 3:1, the fast mode on two and one consumer warpgroups and
// on three stages, the deterministic mode's ordered sums (the same bits twice), head dims 64, 96
// and 128 (the 128-column tiles beside one dQ buffer), all against the float64 reference.
TEST(BwdGpu, ScoreDiagonalValues) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised backward runs on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");  // the deterministic cases' dK/dV kernel
  std::mt19937_64 rng(fresh_seed());
  struct Case { int d; const char* dkdv; BackwardMode mode; };
  const Case cases[] = {
      {64, "m64n128w8s2ws", BackwardMode::fast},          {64, "m64n128w8s3ws", BackwardMode::fast},
      {64, "m64n64w4s2ws", BackwardMode::fast},           {64, nullptr, BackwardMode::deterministic},
      {96, "m64n128w8s2ws", BackwardMode::fast},          {128, "m64n128w8s2ws", BackwardMode::fast},
      {128, nullptr, BackwardMode::deterministic},
  };
  std::vector<DiagonalMod> mods(std::begin(kDiagonalMods), std::end(kDiagonalMods));
  mods.push_back({"prescaled score, per-head relative table, causal", "score * 0.5 + relh[h][kv_idx - q_idx + 332]",
                  "q_idx >= kv_idx"});
  for (const Case& c : cases)
    for (const DiagonalMod& m : mods) {
      FwdProblem p = base(kDiagonalSq, c.d);
      p.Hq = 6, p.Hkv = 2, p.Sq = kDiagonalSq, p.Skv = kDiagonalSkv;
      p.score_mod = m.score, p.mask_mod = m.mask;
      p.buffers = diagonal_mod_buffers(p.Hq, rng);
      p.backward_mode = c.mode;
      if (c.dkdv) p.dkdv_config = BlockConfig::parse(c.dkdv);
      const bool deterministic = c.mode == BackwardMode::deterministic;
      const std::string what = std::string(m.name) + " d" + std::to_string(c.d) + " " +
                               (deterministic ? "deterministic" : c.dkdv);
      const BwdOutcome r = run_backward_check(p, /*repeat=*/deterministic);
      EXPECT_EQ(r.mode, deterministic ? "deterministic" : "fast") << what << ": " << r.mode_reason;
      if (deterministic) {
        EXPECT_EQ(r.dq_path, "ordered reductions") << what << ": " << r.mode_reason;
      }
      EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
      EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
      EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
    }
  EXPECT_NO_THROW(check_buffer_errors());
}

// A diagonal value read out of bounds in the dK/dV kernel: reported under the kernel's name where
// the score_mod reads it (the scores then read their values' error bits), silent where a guard
// keeps the read out, against float64; without a mask and under one, head dim 64 (staged) and
// 128 (read per score).
TEST(BwdGpu, ScoreDiagonalValuesOutOfBounds) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised backward runs on sm_90a GPUs, this is " << current_device().name;
  check_buffer_errors();  // start clean
  std::mt19937_64 rng(fresh_seed());
  for (int D : {64, 128}) {
    FwdProblem p = base(300, D);
    p.Hq = 4, p.Hkv = 2;
    p.backward_mode = BackwardMode::fast;
    p.dkdv_config = BlockConfig::parse("m64n128w8s2ws");
    TestBuffer few;
    few.decl = BufferDecl{"few", DType::f32, {250}};
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int i = 0; i < 250; ++i) few.values.push_back(normal(rng));
    p.buffers = {few};
    const std::string d = "d" + std::to_string(D);
    p.score_mod = "where(kv_idx <= q_idx && q_idx - kv_idx < 250, score + few[q_idx - kv_idx], score * 0.5)";
    expect_fast_backward_close(p, "guarded " + d);
    EXPECT_NO_THROW(check_buffer_errors()) << d;
    // Keys past the query, and those 250 behind it, read out of bounds; under the mask only the latter.
    p.score_mod = "score + few[q_idx - kv_idx]";
    for (const char* mask : {"", "q_idx >= kv_idx"}) {
      p.mask_mod = mask;
      try {
        run_backward_check(p);
        ADD_FAILURE() << d << " '" << mask << "': expected a ShapeError for the out-of-bounds reads";
      } catch (const ShapeError& e) {
        const std::string text = e.what();
        EXPECT_NE(text.find("indexed a buffer out of bounds"), std::string::npos) << text;
        EXPECT_NE(text.find("\n  bwd_dkdv"), std::string::npos) << d << " '" << mask << "': " << text;
      }
      EXPECT_NO_THROW(check_buffer_errors()) << d << ": the report was not cleared";
    }
  }
}

// One small call per head dim (64, 128) whose forward and dK/dV kernels read the call's diagonal
// table (codegen::forward_diagonal_table; dkdv_diagonal_seed's pairs at 64, the raw words at
// 128): GQA 3:1, odd lengths, causal, against float64. Small enough for compute-sanitizer's
// racecheck (README, testing).
TEST(BwdGpu, DiagonalTableOnePerHeadDim) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised backward runs on sm_90a GPUs, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  for (int D : {64, 128}) {
    FwdProblem p = base(kDiagonalSq, D);
    p.B = 1, p.Hq = 3, p.Hkv = 1, p.Sq = kDiagonalSq, p.Skv = kDiagonalSkv;
    p.score_mod = "score + relh[h][kv_idx - q_idx + 332]";
    p.mask_mod = "q_idx >= kv_idx";
    p.buffers = diagonal_mod_buffers(p.Hq, rng);
    p.backward_mode = BackwardMode::fast;
    expect_fast_backward_close(p, "diagonal table d" + std::to_string(D));
  }
  EXPECT_NO_THROW(check_buffer_errors());
}

// Where the dK/dV kernel seeds Sᵀ from the table's pairs (codegen::dkdv_diagonal_seed), a pair
// that holds a value at 2^126 (here 1e38 on diagonal -5 of head 0: its product with
// 1 / (score_scale log2 e) passes the float range) sends the call to its exact path
// (FLEXJIT_DIAGONAL_TABLE_HELD). The forward reads per score here (the 'g' kernel, no table), so
// its lse is the exact one, and each row of head 0 from query 5 on has probability 1 on that
// diagonal: seeded from the held pair, the kernel would give it 0, and dV of those keys would miss
// their rows' dO. Head dims 64 (seeded) and 128 (the raw table: V's bits, exact as well), GQA
// 3:1, against float64.
TEST(BwdGpu, ScoreDiagonalSeedHeldValueTakesTheExactPath) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised backward runs on sm_90a GPUs, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  for (int D : {64, 128}) {
    FwdProblem p = base(kDiagonalSq, D);
    p.Hq = 6, p.Hkv = 2, p.Sq = kDiagonalSq, p.Skv = kDiagonalSkv;
    p.score_mod = "score + relh[h][kv_idx - q_idx + 332]";
    p.buffers = diagonal_mod_buffers(p.Hq, rng);
    ASSERT_EQ(p.buffers[0].decl.name, "relh");
    p.buffers[0].values[327] = 1e38;  // head 0, diagonal -5
    p.config = BlockConfig::parse("m128n128w8s2g");
    p.backward_mode = BackwardMode::fast;
    p.dkdv_config = BlockConfig::parse("m64n128w8s2ws");
    expect_fast_backward_close(p, "held value d" + std::to_string(D));
  }
  EXPECT_NO_THROW(check_buffer_errors());
}

// The fast mode's warp-specialised dK/dV kernel with many more CTAs than SMs (288 at d128: 6 kv
// tiles x 24 kv heads x 2 batches; 528 with 64-key tiles), in the launch groups of masked kernels
// and the plain order without a mask: kv tiles whose walks are empty (kv tiles 0-1 and 4-5 under
// the window mask: their dK and dV must come out zero), a tail kv tile (651 keys) after whole
// ones, both dQ plans (split columns at d128, turns at d64) and the one-warpgroup kernel; GQA
// 2:1 and 3:1, odd lengths, tables on and off, a document buffer. Under documents the groups are of about
// 1024 CTAs (codegen::dkdv_launch_group_ctas): the last case's 1056 (11 kv tiles x 96 pairs) make
// a group of 93 pairs and a last one of 3. (Session (x) ran its persistent and
// reordered forms against it: notes/perf.md.)
TEST(BwdGpu, WarpSpecializedFastDkdvManyKvTiles) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised backward runs on sm_90a GPUs, this is " << current_device().name;
  std::mt19937_64 rng(fresh_seed());
  const char* window = "kv_idx >= 256 && q_idx + 100 >= kv_idx && q_idx - kv_idx < 300";
  const char* documents = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
  // GQA 2:1, and without GQA (kv_heads 48): the d128 kernel stores each query tile's first dQ
  // share (codegen::dkdv_first_stores) under every mask without GQA, and under documents with it.
  struct Case { int d; const char* config; const char* mask; bool tables; int kv_heads = 24; };
  const Case cases[] = {
      {128, "m64n128w8s2ws", "", true},          {128, "m64n128w8s2ws", window, true},
      {128, "m64n128w8s2ws", window, false},     {128, "m64n128w8s2ws", documents, true},
      {128, "m64n128w8s2ws", window, true, 48},  {128, "m64n128w8s2ws", documents, true, 48},
      {128, "m64n128w8s2ws", documents, true, 6}, {128, "m64n128w8s2ws", documents, false},
      {64, "m64n128w8s3ws", documents, true},    {64, "m64n128w8s3ws", "", true},
      {64, "m64n64w4s2ws", "q_idx >= kv_idx", true},     {64, "m64n64w4s2ws", documents, true, 48},
      // GQA 3:1 (kv_heads 16), a group no power of two: one table for every head, a table per
      // head (the mask reads h), and no tables.
      {128, "m64n128w8s2ws", "q_idx >= kv_idx", true, 16},
      {128, "m64n128w8s2ws", "q_idx >= kv_idx + 64 * (h % 3)", true, 16},
      {64, "m64n128w8s3ws", "q_idx >= kv_idx", false, 16},
  };
  for (const Case& c : cases) {
    FwdProblem p = base();
    p.Hq = 48, p.Hkv = c.kv_heads, p.Sq = 333, p.Skv = 651, p.D = p.Dv = c.d;
    p.mask_mod = c.mask, p.use_block_mask = c.tables;
    if (c.mask == documents) p.buffers.push_back(document_ids(p.Skv, rng));
    p.backward_mode = BackwardMode::fast;
    p.dkdv_config = BlockConfig::parse(c.config);
    const std::string what = std::string(c.config) + " d" + std::to_string(c.d) + " Hkv " + std::to_string(c.kv_heads) +
                             " mask '" + c.mask + "'" +
                             (c.tables ? "" : " no tables");
    expect_fast_backward_close(p, what);
  }
}

// Query tiles that no kv tile reaches (the block tables list no key block for their rows, so no
// dK/dV CTA adds to their dQ): dq comes out exactly zero over the harness's NaN. Masks that leave
// the first 256 rows (two query blocks) without keys, or a head-dependent number of them (tables
// per head, GQA 3:1), at 128-key and 64-key tiles, odd lengths. The fast mode zeroes the fp32
// sums first; the ordered sums store each chain's first share and mark it, and the conversion
// reads only marked tiles. (Session (zb)'s dQ conversion inside the dK/dV kernel had to write
// these rows itself: notes/perf.md "(zb)".)
void expect_keyless_query_tiles_zero(BackwardMode mode) {
  // kv_heads 6: no GQA, where the fast d128 kernel stores each query tile's first share (a tile no
  // kv tile reaches has no share, and its word stays 0).
  struct Case { int d; const char* config; const char* mask; int keyless_rows_per_head[6]; int kv_heads = 2; };
  const Case cases[] = {
      {128, "m64n128w8s2ws", "q_idx >= 256 && kv_idx <= q_idx", {256, 256, 256, 256, 256, 256}},
      {128, "m64n128w8s2ws", "q_idx >= 256 && kv_idx <= q_idx", {256, 256, 256, 256, 256, 256}, 6},
      {64, "m64n128w8s3ws", "q_idx >= 256 && kv_idx <= q_idx", {256, 256, 256, 256, 256, 256}},
      {64, "m64n64w4s2ws", "q_idx >= 256 && kv_idx <= q_idx", {256, 256, 256, 256, 256, 256}},
      {128, "m64n128w8s2ws", "q_idx >= 128 * (h % 3) && kv_idx + 40 <= q_idx", {0, 128, 256, 0, 128, 256}},
      {128, "m64n128w8s2ws", "q_idx >= 128 * (h % 3) && kv_idx + 40 <= q_idx", {0, 128, 256, 0, 128, 256}, 6},
      {64, "m64n64w4s2ws", "q_idx >= 128 * (h % 3) && kv_idx + 40 <= q_idx", {0, 128, 256, 0, 128, 256}},
  };
  const bool fast = mode == BackwardMode::fast;
  for (const Case& c : cases) {
    FwdProblem p = base();
    p.B = 2, p.Hq = 6, p.Hkv = c.kv_heads, p.Sq = 701, p.Skv = 555, p.D = p.Dv = c.d;
    p.mask_mod = c.mask;
    p.backward_mode = mode;
    p.dkdv_config = BlockConfig::parse(c.config);
    const std::string what = std::string(c.config) + " d" + std::to_string(c.d) + " Hkv " + std::to_string(c.kv_heads) +
                             " mask '" + c.mask + "'" +
                             (fast ? ", fast" : ", ordered");
    const BwdOutcome r = run_backward_check(p);
    EXPECT_EQ(r.mode, fast ? "fast" : "deterministic") << what << ": " << r.mode_reason;
    EXPECT_EQ(r.dq_path, fast ? "reductions" : "ordered reductions") << what;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
    EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
    // [B, Hq, Sq, D] as the harness returns it: the rows without keys are exactly zero.
    for (int b = 0; b < p.B; ++b)
      for (int h = 0; h < p.Hq; ++h)
        for (int row = 0; row < c.keyless_rows_per_head[h]; ++row)
          for (int d = 0; d < p.D; ++d)
            ASSERT_EQ(r.dq[((size_t(b) * p.Hq + h) * p.Sq + row) * p.D + d], 0.0)
                << what << ": b " << b << " h " << h << " row " << row;
  }
}

TEST(BwdGpu, FastModeWritesDqOfQueryTilesNoKeyReaches) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the fast mode runs on sm_90a GPUs, this is " << current_device().name;
  expect_keyless_query_tiles_zero(BackwardMode::fast);
}

TEST(BwdGpu, OrderedModeWritesDqOfQueryTilesNoKeyReaches) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");  // also where the dQ kernel is faster
  expect_keyless_query_tiles_zero(BackwardMode::deterministic);
}

// Where the dK/dV kernel sums dQ, the preprocess kernel zeroes the fp32 sums; a call that tunes
// the dK/dV configs first (autotuning on, an empty cache) launches candidates that add into them,
// and the call's own launch must still start from zero: both modes, checked against the reference.
TEST(BwdGpu, TuningLaunchesLeaveNoDqBehind) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the dK/dV kernel sums dQ on sm_90a GPUs, this is " << current_device().name;
  for (const BackwardMode mode : {BackwardMode::fast, BackwardMode::deterministic}) {
    const TempDir cache;
    const ScopedEnv autotune("FLEXJIT_AUTOTUNE", "on");
    const ScopedEnv cache_dir("FLEXJIT_CACHE_DIR", cache.path().c_str());
    const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");  // the dK/dV kernel's sums, not a dQ kernel
    FwdProblem p = base(300);
    p.Sq = 300, p.Skv = 420;
    p.mask_mod = "q_idx + 120 >= kv_idx";
    p.backward_mode = mode;
    const std::string what = mode == BackwardMode::fast ? "fast" : "deterministic";
    const BwdOutcome r = run_backward_check(p);
    EXPECT_NE(r.dq_path, "dq kernel") << what << ": " << r.mode_reason;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
    EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
  }
}

// One small fast backward per head dim with a causal mask and GQA (at d128 also without, the
// first dQ stores): what compute-sanitizer runs on
// (memcheck, racecheck, synccheck; README, "Testing"). Its forward takes the synchronous wgmma
// kernel: racecheck reports the persistent forward's published tile slot, which it cannot see
// through the mbarrier (design-changes.md, "Persistent grid"), and that is not this test's subject.
// The fast mode's GQA groups split over CTAs (attention/bwd_head_splits.hpp): each of `splits`
// CTAs per (kv tile, kv head) walks group / splits query heads and stores its dK (times scale) and
// dV in fp32, and the preprocess family's third kernel adds them in order. Forced through
// FLEXJIT_BWD_HEAD_SPLITS over every kind of warp-specialised tiles: d128 and d64, 96 columns in
// 128-column tiles, column slices at d256, half-slab slices at 192 beside a Dv of 128; odd and
// unequal lengths, both layouts, f16, a mask, a score_mod, padded rows (no column past the head dim
// written); each split of a group of 8 and of 6, and counts that do not divide the group (8 in 3:
// 2, 3 and 3 heads; 6 in 4 and 5; 6 in 5 with a mask and a score_mod). Then the call's own choice where one kv head's
// CTAs are too few for the GPU: it must split, and match the reference, twice with the same bits.
TEST(BwdGpu, FastModeSplitsGqaGroupsOverCtas) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the warp-specialised dK/dV kernel needs an sm_90a GPU, this is " << current_device().name;
  struct Case {
    int Hq, Hkv, Sq, Skv, D, Dv;
    const char* mask;
    const char* score;
    bool bshd;
    DType dtype;
    int row_padding;
    std::vector<int> splits;
    const char* config;  // the warp-specialised kernel (tuning could take a 'g' one for these small problems)
  };
  const std::vector<Case> cases = {
      {8, 1, 333, 333, 128, 128, "q_idx >= kv_idx", "", false, DType::bf16, 0, {2, 3, 4, 8}, "m64n128w8s2ws"},
      {6, 1, 200, 517, 64, 64, "", "", true, DType::bf16, 0, {2, 3, 4, 6}, "m64n128w8s3ws"},
      {12, 2, 300, 300, 96, 96, "q_idx >= kv_idx && q_idx - kv_idx <= 100", "30.0 * tanh(score / 30.0)", false,
       DType::f16, 8, {3, 5}, "m64n128w8s2ws"},
      {4, 1, 256, 256, 256, 256, "q_idx >= kv_idx", "", false, DType::bf16, 0, {2, 4}, "m64n64w8s2ws"},
      {8, 2, 257, 257, 192, 128, "", "", true, DType::bf16, 0, {2}, "m64n64w8s2ws"},
  };
  for (const Case& c : cases)
    for (int splits : c.splits) {
      FwdProblem p = base(c.Sq, c.D);
      p.Hq = c.Hq, p.Hkv = c.Hkv, p.Skv = c.Skv, p.Dv = c.Dv;
      p.mask_mod = c.mask, p.score_mod = c.score, p.bshd = c.bshd, p.dtype = c.dtype, p.row_padding = c.row_padding;
      p.backward_mode = BackwardMode::fast;
      p.dkdv_config = BlockConfig::parse(c.config);
      const std::string what = "GQA " + std::to_string(c.Hq / c.Hkv) + ":1 d" + std::to_string(c.D) + "/" +
                               std::to_string(c.Dv) + " " + std::to_string(c.Sq) + "x" + std::to_string(c.Skv) +
                               " mask '" + c.mask + "' score '" + c.score + "', " + std::to_string(splits) + " splits";
      const ScopedEnv forced("FLEXJIT_BWD_HEAD_SPLITS", std::to_string(splits).c_str());
      const BwdOutcome r = run_backward_check(p);
      EXPECT_EQ(r.mode, "fast") << what << ": " << r.mode_reason;
      EXPECT_EQ(r.kv_head_splits, splits) << what;
      EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
      EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
      EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
      EXPECT_TRUE(r.padding_untouched) << what << ": a gradient's columns past its head dim were written";
    }
  // Captured into a graph and replayed: the partial sums' scratch and the sum kernel are
  // stream-ordered, and the splits' dK and dV are the same bits as a direct call's.
  if (GraphReplay::available()) {
    FwdProblem p = base(300);
    p.Hq = 8, p.Hkv = 2;
    p.mask_mod = "q_idx >= kv_idx";
    p.backward_mode = BackwardMode::fast;
    p.dkdv_config = BlockConfig::parse("m64n128w8s2ws");
    const ScopedEnv forced("FLEXJIT_BWD_HEAD_SPLITS", "4");
    const OwnedStream captured;
    const BwdOutcome direct = run_backward_check(p, /*repeat=*/false, fresh_seed(), captured.stream);
    EXPECT_EQ(direct.kv_head_splits, 4);
    GraphReplay graph(captured.stream);
    const BwdOutcome replayed = run_backward_check(p, /*repeat=*/false, direct.seed, captured.stream,
                                                   [&](const auto& backward) { graph.replay(backward); });
    EXPECT_EQ(replayed.dk, direct.dk) << "graph-replayed splits, seed " << direct.seed;
    EXPECT_EQ(replayed.dv, direct.dv) << "graph-replayed splits, seed " << direct.seed;
    EXPECT_LT(replayed.dq_error, tolerance(p.dtype)) << "graph-replayed splits, seed " << direct.seed;
  }
  // The knob may not exceed the group.
  {
    FwdProblem p = base(256);
    p.Hq = 6, p.Hkv = 2;
    p.backward_mode = BackwardMode::fast;
    p.dkdv_config = BlockConfig::parse("m64n128w8s2ws");
    const ScopedEnv forced("FLEXJIT_BWD_HEAD_SPLITS", "4");
    EXPECT_THROW(run_backward_check(p), UsageError);
  }
  // One kv head of 8 query heads, 1024 keys: 8 kv tiles, 8 CTAs unsplit.
  const ScopedEnv unset("FLEXJIT_BWD_HEAD_SPLITS", nullptr);
  FwdProblem p = base(1024);
  p.B = 1, p.Hq = 8, p.Hkv = 1;
  p.mask_mod = "q_idx >= kv_idx";
  p.backward_mode = BackwardMode::fast;
  p.dkdv_config = BlockConfig::parse("m64n128w8s2ws");
  const BwdOutcome r = run_backward_check(p, /*repeat=*/true);
  EXPECT_GT(r.kv_head_splits, 1) << "8 CTAs on a GPU of " << current_device().sm_count << " SMs";
  EXPECT_LT(r.dq_error, tolerance(p.dtype)) << "chosen splits: dq, seed " << r.seed;
  EXPECT_LT(r.dk_error, tolerance(p.dtype)) << "chosen splits: dk, seed " << r.seed;
  EXPECT_LT(r.dv_error, tolerance(p.dtype)) << "chosen splits: dv, seed " << r.seed;
}

TEST(BwdGpu, FastModeOnePerHeadDim) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the fast mode runs on sm_90a GPUs, this is " << current_device().name;
  const auto check = [](int D, const char* dkdv, int q_heads, int kv_heads) {
    FwdProblem p = base(200, D);
    p.Dv = D == 192 ? 128 : D;  // MLA's
    p.B = 1, p.Hq = q_heads, p.Hkv = kv_heads, p.Sq = 200, p.Skv = 150;
    p.mask_mod = "q_idx >= kv_idx";
    p.config = BlockConfig::parse(D > 128 ? "m128n64w8s2g" : "m128n128w8s2g");
    p.backward_mode = BackwardMode::fast;
    p.dkdv_config = BlockConfig::parse(dkdv);
    const std::string what = "d" + std::to_string(D) + " " + dkdv + " Hq " + std::to_string(q_heads) + " Hkv " +
                             std::to_string(kv_heads);
    const BwdOutcome r = run_backward_check(p);
    EXPECT_EQ(r.mode, "fast") << what << ": " << r.mode_reason;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
    EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
  };
  for (int D : {64, 128, 256})
    for (const char* dkdv : {"m64n128w8s2g", "m64n128w8s2ws"}) {  // the synchronous and the ws fast kernels
      // No synchronous fast kernel at d256: the ws one twice, the second time with GQA 8:1.
      const bool gqa8 = D > 128 && std::string(dkdv) == "m64n128w8s2ws";
      check(D, D > 128 ? "m64n64w8s2ws" : dkdv, gqa8 ? 8 : 4, gqa8 ? 1 : 2);
    }
  // Without GQA the ws kernel at d128 stores each query tile's first dQ share instead of adding it
  // to zeroed sums (codegen::dkdv_first_stores).
  check(128, "m64n128w8s2ws", 4, 4);
  // MLA's 192 / 128: 192-column tiles, slices of 96 columns (codegen::set_dkdv_half_slab_tiles).
  check(192, "m64n64w8s2ws", 4, 2);
}

// The deterministic mode's ordered dQ sums, small problems per head dim: the sanitizers' test
// (README). Masked: several kv tiles add to each query tile, a table with partial and full blocks.
// Unmasked (whose consumers read each tile's name at its top): Sq = 140, a 64-query tile wholly
// past the end in the last 128-query block. Documents without GQA. Four (batch, kv head) pairs of
// 3 kv tiles all lie in the last wave, so every sum here descends (the ascending pairs:
// OrderedModeAscendingPairsBesideADescendingTail).
TEST(BwdGpu, OrderedModeOnePerHeadDim) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");  // also where the dQ kernel is faster
  std::mt19937_64 rng(fresh_seed());
  for (int D : {64, 128, 192, 256})
    for (const char* kind : {"masked", "unmasked", "documents"}) {
      const std::string k = kind;
      FwdProblem p = base(200, D);
      p.Dv = D == 192 ? 128 : D;  // MLA's (192-column tiles, slices of 96 columns)
      p.B = 1, p.Hq = 4, p.Hkv = k == "documents" ? 4 : 2, p.Sq = k == "unmasked" ? 140 : 200, p.Skv = 330;
      p.mask_mod = k == "masked"      ? "kv_idx <= q_idx + (kv_len - q_len)"
                   : k == "documents" ? "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"
                                      : "";
      if (k == "documents") {
        p.Sq = p.Skv;  // the mask reads doc[] at queries and keys
        p.buffers.push_back(document_ids(p.Skv, rng));
      }
      p.backward_mode = BackwardMode::deterministic;
      const BwdOutcome r = run_backward_check(p, /*repeat=*/true);
      const std::string name = "d" + std::to_string(D) + " " + k;
      EXPECT_EQ(r.dq_path, "ordered reductions") << name << ": " << r.mode_reason;
      EXPECT_LT(r.dq_error, tolerance(p.dtype)) << name << " dq, seed " << r.seed;
      EXPECT_LT(r.dk_error, tolerance(p.dtype)) << name << " dk, seed " << r.seed;
      EXPECT_LT(r.dv_error, tolerance(p.dtype)) << name << " dv, seed " << r.seed;
    }
}

// Where the fast mode cannot run, a call that asked for it through FLEXJIT_DETERMINISTIC=0 runs
// deterministically and says why; one that asked in CallOptions gets the config's error (or, for
// the defaults of a head dim without fast tiles, the reason).
TEST(BwdGpu, FastModeFallsBackOnlyWhereItMustAndSaysWhy) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the fast mode runs on sm_90a GPUs, this is " << current_device().name;
  {  // head dims 64/256: fast on 128/256 tiles (codegen::tile_head_dims; 64/256 would split into
     // 32-column slices, no whole 64-column slabs), and 256/40 on 256/128 ones
    for (auto [d, dv] : {std::pair{64, 256}, std::pair{256, 40}}) {
      FwdProblem p = base(200, d);
      p.Dv = dv;
      p.mask_mod = "q_idx >= kv_idx";
      p.backward_mode = BackwardMode::fast;
      const BwdOutcome r = run_backward_check(p);
      EXPECT_EQ(r.mode, "fast") << d << "/" << dv << ": " << r.mode_reason;
      EXPECT_LT(r.dq_error, tolerance(p.dtype)) << d << "/" << dv << ", seed " << r.seed;
      EXPECT_LT(r.dk_error, tolerance(p.dtype)) << d << "/" << dv << ", seed " << r.seed;
      EXPECT_LT(r.dv_error, tolerance(p.dtype)) << d << "/" << dv << ", seed " << r.seed;
    }
  }
  {  // head dim 192: the backward's tiles are 256 columns wide on sm_90a (codegen::tile_head_dims),
     // where the fast kernel has tiles; at 192 it has none
    FwdProblem p = base(200, 192);
    p.mask_mod = "q_idx >= kv_idx";
    p.backward_mode = BackwardMode::fast;
    const BwdOutcome r = run_backward_check(p);
    EXPECT_EQ(r.mode, "fast") << r.mode_reason;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << "seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << "seed " << r.seed;
    EXPECT_LT(r.dv_error, tolerance(p.dtype)) << "seed " << r.seed;
  }
  {  // head dim 256: fast tiles on the warp-specialised kernel only, and fewer keys than its TMA box
    FwdProblem p = base(200, 256);
    p.Skv = 100;
    p.mask_mod = "q_idx >= kv_idx";
    p.backward_mode = BackwardMode::fast;
    const BwdOutcome r = run_backward_check(p);
    EXPECT_EQ(r.mode, "deterministic");
    EXPECT_EQ(r.mode_reason,
              "head dims 256/256 have fast dK/dV tiles on the warp-specialised kernel only, which this call cannot "
              "take (its lengths or tensors are not ones the kernel's TMA boxes read: at least 64 queries and 128 "
              "keys, 16-byte aligned first elements and strides)");
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << "seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << "seed " << r.seed;
    p.Skv = 200;  // ... and with enough keys, the fast mode
    const BwdOutcome fast = run_backward_check(p);
    EXPECT_EQ(fast.mode, "fast") << fast.mode_reason;
    EXPECT_LT(fast.dq_error, tolerance(p.dtype)) << "seed " << fast.seed;
    EXPECT_LT(fast.dk_error, tolerance(p.dtype)) << "seed " << fast.seed;
    EXPECT_LT(fast.dv_error, tolerance(p.dtype)) << "seed " << fast.seed;
  }
  {  // a fixed mma.sync config, the fast mode asked for by FLEXJIT_DETERMINISTIC=0
    FwdProblem p = base(200, 128);
    p.dkdv_config = BlockConfig::parse("m64n64w4s2");
    ::setenv("FLEXJIT_DETERMINISTIC", "0", 1);
    const BwdOutcome r = run_backward_check(p);
    ::unsetenv("FLEXJIT_DETERMINISTIC");
    EXPECT_EQ(r.mode, "deterministic");
    EXPECT_EQ(r.mode_reason.rfind("the fixed dK/dV config has no fast form: config m64n64w4s2: the fast backward "
                                  "computes dQ in the dK/dV kernel with wgmma; use a config ending in 'g'", 0),
              0u)
        << r.mode_reason;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << "seed " << r.seed;
    // ... and with the fast mode asked for by name: the config's error.
    p.backward_mode = BackwardMode::fast;
    try {
      run_backward_check(p);
      ADD_FAILURE() << "a fixed mma.sync dK/dV config ran the fast mode";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("or run the deterministic mode (CallOptions::backward_mode, "
                                           "FLEXJIT_DETERMINISTIC=1, --bwd-mode deterministic)"),
                std::string::npos)
          << e.what();
    }
  }
  {  // a fixed warp-specialised config (fast only) without a fast form at this head dim, the mode
     // left to the default: the config's own error, not a deterministic fallback
    FwdProblem p = base(200, 128);
    p.dkdv_config = BlockConfig::parse("m64n64w4s2ws");
    try {
      run_backward_check(p);
      ADD_FAILURE() << "m64n64w4s2ws at d128 ran";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("config m64n64w4s2ws: in the fast backward each warpgroup of the dK/dV "
                                            "kernel would hold 128 dQ columns",
                                            0),
                0u)
          << e.what();
    }
  }
  {  // one warpgroup holding 128 dQ columns
    FwdProblem p = base(200, 128);
    p.dkdv_config = BlockConfig::parse("m64n64w4s2g");
    p.backward_mode = BackwardMode::fast;
    try {
      run_backward_check(p);
      ADD_FAILURE() << "m64n64w4s2g at d128 ran the fast mode";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("config m64n64w4s2g: in the fast backward each warpgroup of the dK/dV "
                                            "kernel would hold 128 dQ columns, which spill beside dK and dV (at most "
                                            "64); use more warpgroups per 64 queries",
                                            0),
                0u)
          << e.what();
    }
  }
  {  // FLEXJIT_DETERMINISTIC=1 when CallOptions leaves the mode unset; then unset: fast
    ::setenv("FLEXJIT_DETERMINISTIC", "1", 1);
    FwdProblem p = base(300, 64);
    p.mask_mod = "q_idx >= kv_idx";
    const BwdOutcome d = run_backward_check(p, /*repeat=*/true);
    ::unsetenv("FLEXJIT_DETERMINISTIC");
    EXPECT_EQ(d.mode, "deterministic");
    EXPECT_EQ(d.mode_reason, "");
    const BwdOutcome r = run_backward_check(p);
    EXPECT_EQ(r.mode, "fast") << r.mode_reason;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << "seed " << r.seed;
  }
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

// A deterministic call through the ordered sums: against the float64 reference, the same bits on
// a second run (run_backward_check's repeat) and on `stream`.
void expect_ordered_sums_repeatable(const FwdProblem& p, const std::string& name, CUstream stream) {
  const BwdOutcome r = run_backward_check(p, /*repeat=*/true);
  const double tol = tolerance(p.dtype);
  EXPECT_EQ(r.dq_path, "ordered reductions") << name << ": " << r.mode_reason;
  EXPECT_LT(r.dq_error, tol) << name << ": dq, seed " << r.seed;
  EXPECT_LT(r.dk_error, tol) << name << ": dk, seed " << r.seed;
  EXPECT_LT(r.dv_error, tol) << name << ": dv, seed " << r.seed;
  const BwdOutcome on_stream = run_backward_check(p, /*repeat=*/false, r.seed, stream);
  EXPECT_EQ(on_stream.dq, r.dq) << name << ": dq on a second stream";
  EXPECT_EQ(on_stream.dk, r.dk) << name << ": dk on a second stream";
}

// The deterministic mode's ordered sums with GQA groups split over CTAs (FLEXJIT_BWD_HEAD_SPLITS):
// each split's CTAs walk their heads' query tiles in the ordered walk (heads inner over shared
// tables, one after another over tables per head), their dQ adds still take turns by kv tile, and
// dK and dV are the splits' fp32 sums added in order. Against the float64 reference, the same bits
// on a second run and on a second stream: shared tables with Sq != Skv, tables per head, documents
// (whose sums ascend), soft-capping at d64 (dQ by turns), d256 (column slices, the ranker); counts
// that do not divide the group (8 in 3, 4 in 3, 3 in 2).
TEST(BwdGpu, OrderedModeSplitsGqaGroupsOverCtas) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");
  std::mt19937_64 rng(fresh_seed());
  struct Case {
    const char* score;
    const char* mask;
    int hq, hkv, sq, skv, d;
    std::vector<int> splits;
    const char* config;
  };
  const Case cases[] = {
      {"", "q_idx >= kv_idx", 8, 1, 333, 1000, 128, {2, 3, 4, 8}, "m64n128w8s2ws"},
      {"", "q_idx >= kv_idx && (h % 2 == 0 || q_idx - kv_idx <= 200)", 4, 1, 900, 900, 128, {2, 3}, "m64n128w8s2ws"},
      {"", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", 4, 1, 1800, 1800, 128, {2, 4}, "m64n128w8s2ws"},
      {"30.0 * tanh(score / 30.0)", "", 6, 2, 777, 1333, 64, {3}, "m64n128w8s3ws"},
      {"", "q_idx >= kv_idx", 6, 2, 700, 777, 256, {3}, "m64n64w8s2ws"},
      {"", "q_idx >= kv_idx", 3, 1, 500, 500, 128, {2}, "m64n128w8s2ws"},
  };
  const OwnedStream second;
  for (const Case& c : cases)
    for (int splits : c.splits) {
      FwdProblem p;
      p.B = 1, p.Hq = c.hq, p.Hkv = c.hkv, p.Sq = c.sq, p.Skv = c.skv, p.D = p.Dv = c.d;
      p.score_mod = c.score, p.mask_mod = c.mask;
      if (std::string(c.mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Skv, rng));
      p.backward_mode = BackwardMode::deterministic;
      p.dkdv_config = BlockConfig::parse(c.config);
      const std::string what = std::string("GQA ") + std::to_string(c.hq / c.hkv) + ":1 d" + std::to_string(c.d) +
                               " mask '" + c.mask + "' score '" + c.score + "', " + std::to_string(splits) + " splits";
      const ScopedEnv forced("FLEXJIT_BWD_HEAD_SPLITS", std::to_string(splits).c_str());
      const BwdOutcome r = run_backward_check(p, /*repeat=*/true);
      EXPECT_EQ(r.dq_path, "ordered reductions") << what << ": " << r.mode_reason;
      EXPECT_EQ(r.kv_head_splits, splits) << what;
      EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
      EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
      EXPECT_LT(r.dv_error, tolerance(p.dtype)) << what << ": dv, seed " << r.seed;
      const BwdOutcome on_stream = run_backward_check(p, /*repeat=*/false, r.seed, second.stream);
      EXPECT_EQ(on_stream.dq, r.dq) << what << ": dq on a second stream";
      EXPECT_EQ(on_stream.dk, r.dk) << what << ": dk on a second stream";
      EXPECT_EQ(on_stream.dv, r.dv) << what << ": dv on a second stream";
    }
}

// The deterministic mode on sm_90a (issue 13): the warp-specialised dK/dV kernel's dQ adds take
// turns, each 64-row query tile's sum from kv tile 0 up. Against the float64 reference; the same
// bits on a second run and on a second stream; and FLEXJIT_DETERMINISTIC_DQ=kernel still takes the
// dQ kernel. The shapes give each query tile
// many adders (up to 16 kv tiles), tables with and without full blocks and with 256-key blocks
// (two CTAs per listed block), a query tile wholly past the end (Sq = 129), GQA, [B,S,H,D], f16,
// D != Dv.
TEST(BwdGpu, DeterministicModeSumsDqInOrder) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");  // also where the dQ kernel is faster
  std::mt19937_64 rng(fresh_seed());
  struct Case {
    const char* name;
    const char* score;
    const char* mask;
    int b, hq, hkv, sq, skv, d, dv, kv_block;
    DType dtype;
    bool bshd;
  };
  const Case cases[] = {
      {"noop", "", "", 2, 2, 2, 2048, 2048, 128, 128, 128, DType::bf16, false},
      {"gqa 4:1 causal", "", "q_idx >= kv_idx", 1, 8, 2, 1000, 1500, 128, 128, 128, DType::bf16, false},
      {"document causal d64", "", "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", 2, 2, 2, 1800, 1800, 64, 64, 128,
       DType::bf16, false},
      {"sliding window, 256-key blocks", "", "q_idx >= kv_idx && q_idx - kv_idx <= 300", 1, 3, 3, 1100, 1100, 128, 128,
       256, DType::bf16, false},
      {"prefix lm, Sq 129, Dv 64", "", "kv_idx <= 100 || q_idx + kv_len - q_len >= kv_idx", 1, 2, 1, 129, 2000, 128,
       64, 128, DType::bf16, false},
      {"softcap f16 bshd", "30.0 * tanh(score / 30.0)", "", 1, 6, 2, 777, 1333, 64, 64, 128, DType::f16, true},
      // Tables per head (the mask reads h): the group's heads walked one after another.
      {"per-head window, gqa 2:1", "", "q_idx >= kv_idx && (h % 2 == 0 || q_idx - kv_idx <= 200)", 2, 4, 2, 900, 900,
       128, 128, 128, DType::bf16, false},
      // Head dim 256: a column slice per consumer warpgroup, each slice's sums in their own order.
      {"causal d256, gqa 3:1", "", "q_idx >= kv_idx", 1, 6, 2, 700, 777, 256, 256, 128, DType::bf16, false},
      {"noop d256/128 f16 bshd", "", "", 2, 2, 2, 1000, 1000, 256, 128, 128, DType::f16, true},
  };
  const OwnedStream second;
  const CUstream stream = second.stream;
  for (const Case& c : cases) {
    FwdProblem p;
    p.B = c.b, p.Hq = c.hq, p.Hkv = c.hkv, p.Sq = c.sq, p.Skv = c.skv, p.D = c.d, p.Dv = c.dv;
    p.kv_block = c.kv_block;
    p.dtype = c.dtype;
    p.bshd = c.bshd;
    p.score_mod = c.score, p.mask_mod = c.mask;
    if (std::string(c.mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Skv, rng));
    p.backward_mode = BackwardMode::deterministic;
    const BwdOutcome r = run_backward_check(p, /*repeat=*/true);
    const double tol = tolerance(p.dtype);
    EXPECT_EQ(r.mode, "deterministic") << c.name;
    EXPECT_EQ(r.dq_path, "ordered reductions") << c.name;
    EXPECT_EQ(r.mode_reason, "") << c.name;
    EXPECT_LT(r.dq_error, tol) << c.name << ": dq, seed " << r.seed;
    EXPECT_LT(r.dk_error, tol) << c.name << ": dk, seed " << r.seed;
    EXPECT_LT(r.dv_error, tol) << c.name << ": dv, seed " << r.seed;

    const BwdOutcome on_stream = run_backward_check(p, /*repeat=*/false, r.seed, stream);
    EXPECT_EQ(on_stream.dq, r.dq) << c.name << ": dq on a second stream";
    EXPECT_EQ(on_stream.dk, r.dk) << c.name << ": dk on a second stream";
    const ScopedEnv kernel("FLEXJIT_DETERMINISTIC_DQ", "kernel");
    const BwdOutcome two_kernels = run_backward_check(p, /*repeat=*/false, r.seed);
    EXPECT_EQ(two_kernels.dq_path, "dq kernel") << c.name;
    EXPECT_LT(two_kernels.dq_error, tol) << c.name << ": dq of the dQ kernel, seed " << r.seed;
  }
}

// Document masks over 64 kv tiles or more: the ordered sums ascend in one chain per query tile
// (codegen::ordered_dq_ascending; before (zm) they descended in two chains), through the
// block-sparse tables: documents of up to 2000 keys (up to 16 adders per query tile at d128's
// 128-key kv tiles, 32 at d256's 64) beside short ones, and lengths off the tiles. Against the
// float64 reference, the same bits on a second run and on a second stream.
TEST(BwdGpu, OrderedModeLongDocuments) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");
  const OwnedStream second;
  const CUstream stream = second.stream;
  for (int D : {128, 256}) {
    FwdProblem p = base(200, D);
    p.B = 1, p.Hq = 2, p.Hkv = 2, p.Sq = 8201, p.Skv = 8201;
    p.mask_mod = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
    TestBuffer doc;
    doc.decl = BufferDecl{"doc", DType::i32, {p.Skv}};
    const int lengths[] = {1500, 128, 77, 1300, 2000, 1700};  // the rest of the keys: a seventh document
    int id = 0;
    for (int length : lengths) {
      for (int i = 0; i < length; ++i) doc.values.push_back(id);
      ++id;
    }
    while (static_cast<int>(doc.values.size()) < p.Skv) doc.values.push_back(id);
    p.buffers.push_back(doc);
    p.backward_mode = BackwardMode::deterministic;
    expect_ordered_sums_repeatable(p, "d" + std::to_string(D), stream);
  }
}

// Head dim 256 (column slices, 64-key kv tiles, so a query tile's chain of turns is twice as long
// as at d128): the ordered sums under a mask with tables ascend in one chain
// (codegen::ordered_dq_ascending, ordered_dq_chains); without a mask, and under a mask without
// tables, they descend in two chains (kv tiles by parity, each chain into its own copy of the fp32
// accumulator). Keys past the last query (Skv > Sq under a causal mask) leave kv tiles that no
// query reaches, so some query tiles' chains have adders of one parity only.
TEST(BwdGpu, OrderedModeChainsAtHeadDim256) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");
  const OwnedStream second;
  const CUstream stream = second.stream;
  struct Case {
    const char* name;
    const char* score;
    const char* mask;
    int sq, skv;
    DType dtype;
    bool bshd;
    bool tables;
  };
  const Case cases[] = {
      {"soft-capping causal, Skv > Sq (ascending, one chain)", "30.0 * tanh(score / 30.0)", "q_idx >= kv_idx", 900,
       1100, DType::bf16, false, true},
      {"prefix lm f16 bshd, odd lengths (ascending, one chain)", "", "kv_idx <= 100 || q_idx + kv_len - q_len >= kv_idx",
       777, 1333, DType::f16, true, true},
      {"causal without tables, Skv > Sq (descending, two chains)", "", "q_idx >= kv_idx", 700, 1001, DType::bf16,
       false, false},
      {"noop, odd lengths (descending, two chains)", "", "", 333, 1111, DType::bf16, true, true},
  };
  for (const Case& c : cases) {
    FwdProblem p = base(200, 256);
    p.B = 2, p.Hq = 2, p.Hkv = 2, p.Sq = c.sq, p.Skv = c.skv;
    p.dtype = c.dtype;
    p.bshd = c.bshd;
    p.score_mod = c.score, p.mask_mod = c.mask;
    p.use_block_mask = c.tables;
    p.backward_mode = BackwardMode::deterministic;
    expect_ordered_sums_repeatable(p, c.name, stream);
  }
}

// Tables alone (BlockMask::from_tables beside an empty mask_mod) over 64 kv tiles or more: the
// ordered sums descend and take two chains (codegen::ordered_long_chains), walking the tables by
// kv tile parity. The tables are those of documents whose ends fall on the 128-key blocks (every
// block full or empty, so the tables say exactly what the documents' mask does) but for the last
// document, cut by the length (8300 keys, 65 kv tiles); the float64 reference applies that mask.
TEST(BwdGpu, OrderedModeTablesAloneTakeTwoChains) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");
  const OwnedStream second;
  FwdProblem p = base(200, 128);
  p.B = 1, p.Hq = 2, p.Hkv = 2, p.Sq = 8300, p.Skv = 8300;
  TestBuffer doc;
  doc.decl = BufferDecl{"doc", DType::i32, {p.Skv}};
  const int blocks[] = {12, 1, 3, 20, 9, 16};  // documents' lengths in 128-key blocks; the rest: a seventh
  int id = 0;
  for (int length : blocks) {
    for (int i = 0; i < length * 128; ++i) doc.values.push_back(id);
    ++id;
  }
  while (static_cast<int>(doc.values.size()) < p.Skv) doc.values.push_back(id);
  p.buffers.push_back(doc);  // for the reference's mask and the tables' build; the kernels read none
  p.reference_mask_mod = "doc[q_idx] == doc[kv_idx]";
  std::vector<std::vector<unsigned char>> storage;
  const BlockMask documents =
      BlockMask::build_on_cpu(Expr::parse(ModKind::mask, p.reference_mask_mod, p.declarations()), p.B, p.Hq, p.Sq,
                              p.Skv, host_inputs(p.buffers, p.params, storage));
  p.given_tables = BlockMask::from_tables(documents.shape(), documents.host_tables());
  p.backward_mode = BackwardMode::deterministic;
  expect_ordered_sums_repeatable(p, "tables alone", second.stream);
}

// More kv tiles in one (kv head, batch) pair than the GPU holds CTAs at once (141 of 64 keys at
// head dim 256; 132 SMs on an H100 or H200, one CTA each): the pair's CTAs cannot all be resident,
// so the ordered sums finish only if every CTA waits on CTAs that started before it (the launch
// order). Without a mask (from kv tile 0 up: two chains of 71 and 70 adders, every kv tile walking
// every query tile) and under a mask of the keys' documents (codegen::ordered_dq_ascending: head
// 0's pair from the last kv tile down, its units launched in reverse; head 1's, the last wave,
// descending), whose third document of 1000 keys is masked out (empty walks, tiles cut at both
// its ends). Few queries, so the float64 reference stays small.
TEST(BwdGpu, OrderedModeMoreKvTilesThanResidentCtas) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");
  for (const char* mask : {"", "doc[kv_idx] != 2"}) {
    FwdProblem p = base(200, 256);
    p.B = 1, p.Hq = 2, p.Hkv = 2, p.Sq = 190, p.Skv = 9000;
    p.mask_mod = mask;
    if (*mask) {
      TestBuffer doc;
      doc.decl = BufferDecl{"doc", DType::i32, {p.Skv}};
      for (int i = 0; i < p.Skv; ++i) doc.values.push_back(i / 1000);
      p.buffers.push_back(doc);
    }
    p.backward_mode = BackwardMode::deterministic;
    const BwdOutcome r = run_backward_check(p, /*repeat=*/true);
    const std::string name = *mask ? "documents of keys" : "noop";
    EXPECT_EQ(r.dq_path, "ordered reductions") << name << ": " << r.mode_reason;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << name << " dq, seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << name << " dk, seed " << r.seed;
    EXPECT_LT(r.dv_error, tolerance(p.dtype)) << name << " dv, seed " << r.seed;
  }
}

// Many launches of problems whose CTAs walk up to 32 query tiles (so every ring of barriers laps
// many times): a writer warp whose lanes 1-31 polled a dQ buffer's barrier beside lane 0 could
// miss a phase and hang the launch, seen only after some 240 launches of suite-sized problems
// (notes/perf.md, "(zo)"). 600 launches of the ordered backward at each head dim: causal at d64,
// no mask at d128 and d256 (where a tile's two dQ pieces pass through one barrier: under a mask the
// second is staged apart); the last launch's gradients against the float64 reference.
TEST(BwdGpu, OrderedModeManyLaunchesOfProblemsWithLongWalks) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");
  for (int D : {64, 128, 256}) {
    FwdProblem p = base(2048, D);
    p.B = 1, p.Hq = 8, p.Hkv = 8;
    p.mask_mod = D == 64 ? "q_idx >= kv_idx" : "";
    p.backward_mode = BackwardMode::deterministic;
    const BwdOutcome r = run_backward_check(p, /*repeat=*/false, fresh_seed(), nullptr, [](const auto& backward) {
      for (int launch = 0; launch < 600; ++launch) backward();
    });
    const std::string name = "d" + std::to_string(D);
    EXPECT_EQ(r.dq_path, "ordered reductions") << name << ": " << r.mode_reason;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << name << " dq, seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << name << " dk, seed " << r.seed;
    EXPECT_LT(r.dv_error, tolerance(p.dtype)) << name << " dv, seed " << r.seed;
  }
}

// Where the ordered sums ascend (codegen::ordered_dq_ascending), the pairs of the last wave (about
// 128 units) keep the descending sums, so one launch runs both directions. Pairs of 5 kv tiles of
// 128 keys (Skv 601: 25 pairs in the tail) or 10 of 64 keys (head dim 256: 12 in the tail), so
// some pairs ascend in every case: documents at head dims 64 and 256; causal with Sq != Skv and a
// sliding window without GQA (masks with tile bounds); documents with GQA 4:1 at d128, 3:1 at d64
// in f16 and [B,S,H,D] (6 kv tiles: 21 pairs in the tail), and with tables per head (the mask
// reads h: the group's heads walked one after another). Odd lengths throughout.
TEST(BwdGpu, OrderedModeAscendingPairsBesideADescendingTail) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");
  const OwnedStream second;
  const CUstream stream = second.stream;
  std::mt19937_64 rng(fresh_seed());
  struct Case {
    const char* name;
    const char* mask;
    int b, hq, hkv, sq, skv, d;
    DType dtype;
    bool bshd;
  };
  const char* documents = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
  const Case cases[] = {
      {"documents d64", documents, 2, 16, 16, 601, 601, 64, DType::bf16, false},
      {"documents d256", documents, 1, 16, 16, 601, 601, 256, DType::bf16, false},
      {"causal d128 sq != skv", "kv_idx <= q_idx + (kv_len - q_len)", 2, 16, 16, 433, 601, 128, DType::bf16, false},
      {"sliding window d64", "kv_idx <= q_idx && q_idx - kv_idx < 150", 2, 16, 16, 601, 601, 64, DType::bf16, false},
      {"documents gqa 4:1 d128", documents, 2, 64, 16, 601, 601, 128, DType::bf16, false},
      {"documents gqa 3:1 d64 f16 bshd", documents, 2, 48, 16, 701, 701, 64, DType::f16, true},
      {"per-head documents gqa 2:1", "doc[q_idx] == doc[kv_idx] && (h % 2 == 0 || q_idx >= kv_idx)", 2, 32, 16, 601,
       601, 128, DType::bf16, false},
  };
  for (const Case& c : cases) {
    FwdProblem p = base(200, c.d);
    p.B = c.b, p.Hq = c.hq, p.Hkv = c.hkv, p.Sq = c.sq, p.Skv = c.skv;
    p.dtype = c.dtype;
    p.bshd = c.bshd;
    p.mask_mod = c.mask;
    if (std::string(c.mask).find("doc[") != std::string::npos) p.buffers.push_back(document_ids(p.Skv, rng));
    p.backward_mode = BackwardMode::deterministic;
    expect_ordered_sums_repeatable(p, c.name, stream);
  }
}

// The ordered mode's consumers read a tile's name (its query rows and head) only once the tile has
// landed. Read before, tile 0 could take a name left in shared memory by an earlier CTA: its
// stage's rows past the queries went without the range test and, where they lie wholly past the
// end (Sq = 777 under 128-query blocks: rows 832..895, whose statistics are never loaded), gave
// probabilities of 1e8, inf in f16 and NaN dK and dV in a whole warpgroup's rows in 15-50 % of
// runs (bf16 hid it: a finite P times dO's zero rows). Eight fresh draws of the shape that showed
// it in 2 to 4 of 10 to 14 runs (with B 4 and 4 kv heads, 12 draws on the old code all passed);
// racecheck on OrderedModeOnePerHeadDim reported the old read order (README).
TEST(BwdGpu, OrderedModeNamesEachTileAfterItLands) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");
  FwdProblem p;
  p.B = 1, p.Hq = 6, p.Hkv = 2, p.Sq = 777, p.Skv = 1333, p.D = 64, p.Dv = 64;
  p.kv_block = 128;
  p.dtype = DType::f16;
  p.bshd = true;
  p.score_mod = "30.0 * tanh(score / 30.0)";
  p.backward_mode = BackwardMode::deterministic;
  for (int run = 0; run < 8; ++run) {
    const BwdOutcome r = run_backward_check(p);
    ASSERT_EQ(r.dq_path, "ordered reductions");
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << "run " << run << ": dq, seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << "run " << run << ": dk, seed " << r.seed;
    EXPECT_LT(r.dv_error, tolerance(p.dtype)) << "run " << run << ": dv, seed " << r.seed;
  }
}

// FLEXJIT_DETERMINISTIC_DQ unset (auto): the ordered sums where they measured faster (no more
// 128-key tiles than 64-query tiles, whatever the mask: document masks took the dQ kernel until
// session (zh)), the dQ kernel elsewhere; both right, both the same bits on a second run.
TEST(BwdGpu, DeterministicModeTakesTheFasterWayPerCall) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const ScopedEnv automatic("FLEXJIT_DETERMINISTIC_DQ", "");
  const ScopedEnv rule("FLEXJIT_AUTOTUNE", "off");  // the rule; with tuning on the way is measured (below)
  struct Case {
    const char* mask;
    int sq, skv, d;
    const char* path;
  };
  const Case cases[] = {
      {"", 512, 512, 128, "ordered reductions"},
      {"", 256, 512, 128, "ordered reductions"},  // 4 kv tiles, 4 query tiles
      {"", 200, 513, 128, "dq kernel"},           // 5 kv tiles, 4 query tiles
      {"", 64, 1024, 128, "dq kernel"},
      {"", 512, 512, 64, "ordered reductions"},
      {"q_idx >= kv_idx", 512, 512, 128, "ordered reductions"},
      {"q_idx >= kv_idx && q_idx - kv_idx <= 200", 512, 512, 128, "ordered reductions"},
      {"q_idx >= kv_idx", 512, 512, 64, "ordered reductions"},
      {"doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", 512, 512, 64, "ordered reductions"},
      {"doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", 512, 512, 128, "ordered reductions"},
      {"doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", 200, 513, 128, "dq kernel"},  // 5 kv tiles, 4 query tiles
  };
  std::mt19937_64 rng(fresh_seed());
  for (const Case& c : cases) {
    FwdProblem p = base(c.sq, c.d);
    p.B = 1, p.Hq = 4, p.Hkv = 2, p.Sq = c.sq, p.Skv = c.skv;
    p.mask_mod = c.mask;
    p.use_block_mask = c.mask[0] != '\0';  // as a call without a mask_mod: no tables
    if (std::string(c.mask).find("doc") != std::string::npos) p.buffers.push_back(document_ids(p.Skv, rng));
    p.backward_mode = BackwardMode::deterministic;
    const std::string what = std::string("'") + c.mask + "' " + std::to_string(c.sq) + "x" + std::to_string(c.skv) +
                             " d" + std::to_string(c.d);
    const BwdOutcome r = run_backward_check(p, /*repeat=*/true);
    EXPECT_EQ(r.dq_path, c.path) << what;
    EXPECT_LT(r.dq_error, tolerance(p.dtype)) << what << ": dq, seed " << r.seed;
    EXPECT_LT(r.dk_error, tolerance(p.dtype)) << what << ": dk, seed " << r.seed;
  }
}

// With tuning on, a deterministic call where both ways can run times them on its own tensors and
// takes the faster (a document mask, whose way the rule above cannot know). The autotune
// cache keeps the choice: one "deterministic_dq" entry with both ways measured, whose winner is
// the way the call reports; the call's repeat and a second Attention take it from there, with the
// same bits.
TEST(BwdGpu, DeterministicModeMeasuresTheWayWhenTuning) {
  FLEXJIT_REQUIRE_GPU();
  if (current_device().default_arch() != "sm_90a")
    GTEST_SKIP() << "the ordered dQ sums run on sm_90a GPUs, this is " << current_device().name;
  const TempDir cache;
  const ScopedEnv autotune("FLEXJIT_AUTOTUNE", "on");
  const ScopedEnv cache_dir("FLEXJIT_CACHE_DIR", cache.path().c_str());
  const ScopedEnv automatic("FLEXJIT_DETERMINISTIC_DQ", "");
  std::mt19937_64 rng(fresh_seed());
  FwdProblem p = base(700, 128);
  p.B = 2, p.Hq = 6, p.Hkv = 2, p.Sq = 700, p.Skv = 700;  // GQA 3:1, lengths off the tiles
  p.mask_mod = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx";
  p.buffers.push_back(document_ids(p.Skv, rng));
  p.backward_mode = BackwardMode::deterministic;
  const BwdOutcome first = run_backward_check(p, /*repeat=*/true);
  EXPECT_LT(first.dq_error, tolerance(p.dtype)) << "dq, seed " << first.seed;
  EXPECT_LT(first.dk_error, tolerance(p.dtype)) << "dk, seed " << first.seed;
  EXPECT_LT(first.dv_error, tolerance(p.dtype)) << "dv, seed " << first.seed;

  std::vector<tune::AutotuneEntry> ways;
  for (const auto& [key, entry] : tune::AutotuneCache(cache.path()).entries())
    if (key.find("family=deterministic_dq;") != std::string::npos) ways.push_back(entry);
  ASSERT_EQ(ways.size(), 1u) << "one measured choice for the problem";
  const tune::AutotuneEntry way = ways.front();
  ASSERT_EQ(way.candidates.size(), 2u);
  EXPECT_TRUE(way.candidates[0].config.warp_specialized) << "first the ordered sums (the ws dK/dV kernel)";
  EXPECT_FALSE(way.candidates[1].config.warp_specialized) << "then the dQ kernel's way";
  ASSERT_TRUE(way.candidates[0].ms && way.candidates[1].ms);
  const bool ordered_faster = *way.candidates[0].ms <= *way.candidates[1].ms;
  EXPECT_EQ(way.winner.warp_specialized, ordered_faster);
  EXPECT_EQ(first.dq_path, ordered_faster ? "ordered reductions" : "dq kernel");

  // A second Attention (its own kernels and memo) reads the stored choice: the same path and,
  // on the same inputs, the same bits.
  const BwdOutcome second = run_backward_check(p, /*repeat=*/true, first.seed);
  EXPECT_EQ(second.dq_path, first.dq_path);
  EXPECT_TRUE(second.dq == first.dq && second.dk == first.dk && second.dv == first.dv) << "seed " << first.seed;
  int measured = 0;
  for (const auto& [key, entry] : tune::AutotuneCache(cache.path()).entries())
    if (key.find("family=deterministic_dq;") != std::string::npos) {
      ++measured;
      // Measured again, the medians would differ (and the stamp might).
      ASSERT_EQ(entry.candidates.size(), 2u);
      EXPECT_TRUE(entry.created == way.created && entry.candidates[0].ms == way.candidates[0].ms &&
                  entry.candidates[1].ms == way.candidates[1].ms)
          << "the second call measured the ways again instead of reading the cache";
    }
  EXPECT_EQ(measured, 1);

  // One Attention's later calls take the way from its memo: the third run's second backward,
  // with the cache moved to an empty folder, neither measures the ways nor stores a choice there.
  const TempDir moved;
  std::unique_ptr<ScopedEnv> moved_dir;
  int calls = 0;
  const BwdOutcome third =
      run_backward_check(p, /*repeat=*/true, first.seed, nullptr, [&](const std::function<void()>& backward) {
        if (++calls == 2) moved_dir = std::make_unique<ScopedEnv>("FLEXJIT_CACHE_DIR", moved.path().c_str());
        backward();
      });
  ASSERT_EQ(calls, 2);
  EXPECT_EQ(third.dq_path, first.dq_path);
  EXPECT_TRUE(third.dq == first.dq && third.dk == first.dk && third.dv == first.dv) << "seed " << first.seed;
  for (const auto& [key, entry] : tune::AutotuneCache(moved.path()).entries())
    EXPECT_EQ(key.find("family=deterministic_dq;"), std::string::npos)
        << "the repeat call measured the ways again instead of taking its Attention's memo: " << key;
}

}  // namespace
}  // namespace flexjit::test
