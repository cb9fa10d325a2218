// Problems drawn at random, forward and backward against the float64 reference: the shapes a user
// brings that no fixed test names (odd and unequal lengths from 1 to about 1200 tokens, GQA ratios
// from 1 to 8 over 1-3 kv heads, head dims 64-256 with Dv != D, both layouts and dtypes, with and
// without block masks, both backward modes, ragged batches), each with a mod drawn from a list that
// includes masks and scores reading buffers at other buffers' values. Every draw comes from one
// seed, printed with each failure: FLEXJIT_TEST_SEED=<seed> repeats a run, FLEXJIT_RANDOM_PROBLEMS=<n>
// sets how many problems each test draws (default 6).
//
// Besides the harness's whole-tensor relative error, every row (one query's output, one key's dK or
// dV) is held to its own bound, so one wrong row among thousands fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "flexjit/error.hpp"
#include "support/attention_harness.hpp"
#include "support/random_draws.hpp"
#include "support/row_errors.hpp"
#include "support/varlen_check.hpp"

namespace flexjit::test {
namespace {

// A sequence length: a third short (a single partial tile or less), the rest up to ~10 tiles.
int draw_length(std::mt19937_64& rng) {
  const double r = std::uniform_real_distribution<double>(0, 1)(rng);
  if (r < 0.35) return uniform(rng, 1, 64);
  if (r < 0.75) return uniform(rng, 65, 400);
  return uniform(rng, 401, 1200);
}

// Fills the mods of `p` (shapes already drawn) with one of the list; returns its description.
std::string draw_mods(FwdProblem& p, std::mt19937_64& rng) {
  const int positions = std::max(p.Sq, p.Skv);
  auto with_documents = [&] {
    p.buffers.push_back(document_ids(positions, rng));
    return static_cast<int>(p.buffers.back().values.back()) + 1;  // how many documents
  };
  switch (uniform(rng, 0, 14)) {
    case 0: return "noop";
    case 1: p.mask_mod = "q_idx >= kv_idx"; return "causal";
    case 2: p.mask_mod = "kv_idx <= q_idx + (kv_len - q_len)"; return "bottom-right causal";
    case 3: {
      p.param_decls.push_back(ParamDecl::parse("window:int"));
      p.params["window"] = uniform(rng, 0, 300);
      p.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx <= window";
      return "sliding window " + std::to_string(static_cast<int>(p.params["window"]));
    }
    case 4: with_documents(); p.mask_mod = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"; return "documents causal";
    case 5: {
      // A prefix of each document seen by all of its queries: start[] read at doc[]'s value.
      with_documents();
      p.buffers.push_back(document_starts(p.buffers.back()));
      const int prefix = uniform(rng, 1, 20);
      p.mask_mod = "doc[q_idx] == doc[kv_idx] && (kv_idx < start[doc[kv_idx]] + " + std::to_string(prefix) +
                   " || q_idx >= kv_idx)";
      return "per-document prefix LM " + std::to_string(prefix);
    }
    case 6: {
      const int prefix = uniform(rng, 0, positions);
      p.mask_mod = "kv_idx <= " + std::to_string(prefix) + " || q_idx >= kv_idx";
      return "prefix LM " + std::to_string(prefix);
    }
    case 7:
      p.buffers.push_back(alibi_slopes(p.Hq));
      p.score_mod = "score + slope[h] * (kv_idx - q_idx)";
      p.mask_mod = "q_idx >= kv_idx";
      return "ALiBi causal";
    case 8: {
      const bool strong = chance(rng, 0.5);
      p.score_mod = strong ? "2.0 * tanh(score / 2.0)" : "30.0 * tanh(score / 30.0)";
      if (chance(rng, 0.5)) p.mask_mod = "q_idx >= kv_idx";
      return std::string(strong ? "soft-capping 2" : "soft-capping 30") + (p.mask_mod.empty() ? "" : " causal");
    }
    case 9: {
      // A bias per document, read at the key's document id; documents attend only to themselves.
      const int documents = with_documents();
      p.buffers.push_back(f32_buffer("bias", documents, rng, -2.0, 2.0));
      p.score_mod = "score + bias[doc[kv_idx]]";
      p.mask_mod = "doc[q_idx] == doc[kv_idx]";
      return "documents with a per-document bias";
    }
    case 10: p.mask_mod = "h % 3 == 0 || q_idx >= kv_idx"; return "every third head unmasked, the others causal";
    case 11: {
      // Per-batch key lengths in a buffer, some of them 0: wholly masked rows.
      TestBuffer len{BufferDecl{"len", DType::i32, {p.B}}, {}};
      for (int b = 0; b < p.B; ++b) len.values.push_back(chance(rng, 0.25) ? 0 : uniform(rng, 1, p.Skv));
      p.buffers.push_back(len);
      p.mask_mod = "kv_idx < len[b]";
      return "keys up to len[b]";
    }
    case 12: p.mask_mod = "(q_idx - kv_idx) % 3 == 0"; return "every third diagonal";
    case 13:
      // Relative positions through a table of Sq + Skv - 1 entries.
      p.buffers.push_back(f32_buffer("rel", p.Sq + p.Skv - 1, rng, -1.0, 1.0));
      p.score_mod = "score + rel[q_idx - kv_idx + kv_len - 1]";
      if (chance(rng, 0.5)) p.mask_mod = "q_idx >= kv_idx";
      return std::string("relative-position table") + (p.mask_mod.empty() ? "" : " causal");
    default:
      p.buffers.push_back(f32_buffer("temp", p.Hq, rng, 0.5, 2.0));
      p.score_mod = "score * temp[h]";
      p.mask_mod = "q_idx >= kv_idx || kv_idx == 0";
      return "per-head temperature, causal with a sink";
  }
}

// The shapes: 1-3 batches, 1-3 kv heads with 1-8 query heads each, head dims 64-256 (Dv != D one
// time in four), lengths drawn apart one time in two; shrunk so the reference stays quick.
FwdProblem draw_shapes(std::mt19937_64& rng) {
  FwdProblem p;
  p.B = uniform(rng, 1, 3);
  p.Hkv = uniform(rng, 1, 3);
  p.Hq = p.Hkv * pick<int>(rng, {1, 1, 2, 3, 4, 5, 6, 7, 8});
  p.D = pick<int>(rng, {64, 64, 128, 128, 128, 192, 256});
  p.Dv = chance(rng, 0.25) ? pick<int>(rng, {64, 128, 256}) : p.D;
  p.Sq = draw_length(rng);
  p.Skv = chance(rng, 0.5) ? p.Sq : draw_length(rng);
  while (double(p.B) * p.Hq * p.Sq * p.Skv > 3e6) {
    if (p.Sq >= p.Skv)
      p.Sq = (p.Sq + 1) / 2;
    else
      p.Skv = (p.Skv + 1) / 2;
  }
  p.dtype = chance(rng, 0.3) ? DType::f16 : DType::bf16;
  p.bshd = chance(rng, 0.4);
  p.use_block_mask = chance(rng, 0.85);
  p.backward_mode = chance(rng, 0.5) ? BackwardMode::fast : BackwardMode::deterministic;
  return p;
}

// The padded test's call options, from a generator of their own (seeded by the problem's draw), so
// that the shapes and mods a seed draws stay those of runs before these options were drawn.
void draw_call_options(FwdProblem& p, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x6a09e667f3bcc908ull);
  if (chance(rng, 0.2)) p.scale = std::uniform_real_distribution<double>(0.02, 0.3)(rng);
  p.reversed_buffers = chance(rng, 0.2);  // the mods' buffers through negative strides: 64-bit reads
  if (chance(rng, 0.2)) p.out_bshd = !p.bshd;  // the forward's out in the other layout
}

std::string describe(const FwdProblem& p, const std::string& mods) {
  std::ostringstream s;
  s << mods << ", B=" << p.B << " Hq=" << p.Hq << " Hkv=" << p.Hkv << " Sq=" << p.Sq << " Skv=" << p.Skv
    << " D=" << p.D << " Dv=" << p.Dv << " " << dtype_name(p.dtype) << (p.bshd ? " [B,S,H,D]" : " [B,H,S,D]")
    << (p.use_block_mask ? "" : ", no block mask") << (p.scale ? ", scale " + std::to_string(*p.scale) : "")
    << (p.reversed_buffers ? ", buffers reversed" : "") << (p.out_bshd ? ", forward out in the other layout" : "")
    << (p.row_padding ? ", rows padded by " + std::to_string(p.row_padding) : "")
    << (p.backward_mode == BackwardMode::deterministic ? ", deterministic" : ", fast");
  return s.str();
}

// Runs the forward and the backward of one drawn problem against the float64 reference, the whole
// tensors and every row, and prints one line of margins.
void check_problem(const FwdProblem& p, const std::string& what, uint64_t inputs_seed) {
  SCOPED_TRACE(what);
  const double tol = tolerance(p.dtype), row_tol = kRowTolerance * tol;
  const double gradient_row_tol = kScoreGradientRowTolerance * tol;
  try {
    const FwdOutcome f = run_forward_check(p, inputs_seed);
    EXPECT_LT(f.out_error, tol) << "out";
    const RowError out_row = worst_row_error(f.out, f.ref_out, p.Dv);
    EXPECT_LT(out_row.error, row_tol) << "out, worst row " << out_row;
    EXPECT_LT(worst_lse_error(f.lse, f.ref_lse), 0.02) << "lse, worst entry";
    EXPECT_TRUE(f.padding_untouched) << "out: a column past Dv was written";
    const BwdOutcome g = run_backward_check(p, /*repeat=*/true, inputs_seed + 1);
    EXPECT_LT(g.dq_error, tol) << "dq";
    EXPECT_LT(g.dk_error, tol) << "dk";
    EXPECT_LT(g.dv_error, tol) << "dv";
    EXPECT_TRUE(g.padding_untouched) << "a gradient column past D / Dv was written";
    const RowError dq_row = worst_row_error(g.dq, g.ref_dq, p.D);
    EXPECT_LT(dq_row.error, gradient_row_tol) << "dq, worst row " << dq_row;
    const RowError dk_row = worst_row_error(g.dk, g.ref_dk, p.D);
    EXPECT_LT(dk_row.error, gradient_row_tol) << "dk, worst row " << dk_row;
    const RowError dv_row = worst_row_error(g.dv, g.ref_dv, p.Dv);
    EXPECT_LT(dv_row.error, row_tol) << "dv, worst row " << dv_row;
    // One line per problem, so a run's margins can be read without a failure.
    std::cout << "[ problem  ] " << what << "\n             out " << f.out_error << " / " << out_row << "; dq "
              << g.dq_error << " / " << dq_row << "; dk " << g.dk_error << " / " << dk_row << "; dv " << g.dv_error
              << " / " << dv_row << "; dK/dV kernel " << g.mode << " (" << g.dq_path << ")" << std::endl;
    if (p.backward_mode == BackwardMode::deterministic) {
      EXPECT_EQ(g.mode, "deterministic");
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw: " << e.what();
  }
}

// Draws `count` problems from one fresh seed and checks each: the shapes (then `redraw`, which may
// change them with draws of its own), the mods and the call options.
void check_drawn_problems(const std::function<void(FwdProblem&, std::mt19937_64&)>& redraw) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (int i = 0, count = random_problem_count(6); i < count; ++i) {
    FwdProblem p = draw_shapes(rng);
    redraw(p, rng);
    const std::string mods = draw_mods(p, rng);
    const uint64_t inputs_seed = rng();
    draw_call_options(p, inputs_seed);
    check_problem(p, "problem " + std::to_string(i) + " of seed " + std::to_string(seed) + ": " + describe(p, mods),
                  inputs_seed);
  }
}

TEST(RandomProblemsGpu, PaddedBatchesForwardAndBackward) {
  FLEXJIT_REQUIRE_GPU();
  check_drawn_problems([](FwdProblem&, std::mt19937_64&) {});
}

// Head dims a model may have that are no multiple of 64 (any multiple of 8 up to 256, Dv drawn
// apart one time in three: MLA's 192/128 among them), on the tiles of the next multiple of 64 (and
// on sm_90a the backward's tiles of tile_head_dims). Half the problems give every tensor's rows
// 8 to 64 columns past the head dim, NaN in the inputs' and poison in the outputs' (the harness's
// row_padding), so a kernel that reads or writes a column past the head dim fails.
TEST(RandomProblemsGpu, AnyHeadDimForwardAndBackward) {
  FLEXJIT_REQUIRE_GPU();
  check_drawn_problems([](FwdProblem& p, std::mt19937_64& rng) {
    p.D = 8 * uniform(rng, 1, 32);
    p.Dv = chance(rng, 1.0 / 3) ? 8 * uniform(rng, 1, 32) : p.D;
    if (chance(rng, 0.15)) p.D = 192, p.Dv = 128;  // MLA's prefill
    if (chance(rng, 0.5)) p.row_padding = 8 * uniform(rng, 1, 8);
  });
}

TEST(RandomProblemsGpu, RaggedBatchesForwardAndBackward) {
  FLEXJIT_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (int i = 0, count = random_problem_count(6); i < count; ++i) {
    FwdProblem p = draw_shapes(rng);
    p.B = uniform(rng, 2, 5);
    while (double(p.B) * p.Hq * p.Sq * p.Skv > 3e6) p.Sq = (p.Sq + 1) / 2, p.Skv = (p.Skv + 1) / 2;
    const std::string mods = draw_mods(p, rng);
    // Per-sequence lengths: empty, single and full ones among them.
    Lengths lens;
    for (int b = 0; b < p.B; ++b) {
      auto length = [&](int padded) {
        const int kind = uniform(rng, 0, 5);
        return kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? padded : uniform(rng, 0, padded);
      };
      lens.q.push_back(length(p.Sq));
      lens.kv.push_back(length(p.Skv));
    }
    Tables tables = pick<Tables>(rng, {Tables::none, Tables::padded, Tables::with_lengths});
    // Tables of the padded lengths are refused for a mask that reads the lengths (SeqLensGpu tests that).
    if (tables == Tables::padded && p.mask_mod.find("_len") != std::string::npos) tables = Tables::with_lengths;
    p.use_block_mask = tables != Tables::none;  // what describe() reports; check_varlen takes `tables`
    const bool host_copies = chance(rng, 0.5);
    std::ostringstream l;
    for (int b = 0; b < p.B; ++b) l << (b ? "," : "") << lens.q[b] << "/" << lens.kv[b];
    const char* table_names[] = {"", ", tables of the padded lengths", ", tables built with the lengths"};
    const std::string what = "ragged problem " + std::to_string(i) + " of seed " + std::to_string(seed) + ": " +
                             describe(p, mods) + ", q/kv lengths " + l.str() + table_names[static_cast<int>(tables)] +
                             (host_copies ? "" : ", no host lengths");
    SCOPED_TRACE(what);
    try {
      check_varlen(p, lens, what, /*backward=*/true, /*repeat=*/true, host_copies, tables, rng());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
  }
}

}  // namespace
}  // namespace flexjit::test
