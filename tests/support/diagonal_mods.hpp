// Score_mods whose buffer reads depend on the positions only through kv_idx - q_idx (relative
// tables, a T5 bucket), and their buffers: the forward's and the backward's tests of the
// diagonal values (codegen::forward_score_diagonal_values, dkdv_score_diagonal_values) share them.
#pragma once

#include <random>
#include <vector>

#include "support/attention_harness.hpp"

namespace flexjit::test {

// The problem the mods are written for: kv_idx - q_idx runs over [-332, 516], so Sq - 1 = 332 is
// the tables' offset and Sq + Skv - 1 = 849 their length.
constexpr int kDiagonalSq = 333, kDiagonalSkv = 517;

struct DiagonalMod {
  const char* name;
  const char* score;
  const char* mask;
};

// One and two values, per head and shared, the difference either way round, a bucket of
// comparisons, abs and log; with and without a mask, and beside a mask that reads a buffer
// (documents: the forward's mask column values then keep the kernel's staging, and the score
// reads per score).
inline constexpr DiagonalMod kDiagonalMods[] = {
    {"per-head relative table, causal", "score + relh[h][kv_idx - q_idx + 332]", "q_idx >= kv_idx"},
    {"per-head relative table", "score + relh[h][kv_idx - q_idx + 332]", ""},
    {"two values, either way round", "score * 0.5 + rel[516 - (q_idx - kv_idx) - 184] * relh[h % 2][kv_idx - q_idx + 332]",
     "q_idx + 40 >= kv_idx"},
    {"T5 bucket", "score + t5[h][where(kv_idx - q_idx > 0, 16, 0) + where(abs(kv_idx - q_idx) < 8, "
                  "abs(kv_idx - q_idx), min(15, 8 + int(log(float(abs(kv_idx - q_idx)) / 8.0) / log(16.0) * 8.0)))]",
     ""},
    {"per-head relative table beside documents", "score + relh[h][kv_idx - q_idx + 332]",
     "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"},
};

// The mods' buffers for `hq` query heads, drawn from `rng`: relh [hq][849] bf16 and rel [849] f32,
// exactly as long as the diagonals need (a diagonal read off by one reads another value, or out of
// bounds, which is reported), t5 [hq][32] f32 and doc [517] (document ids of the keys and queries).
inline std::vector<TestBuffer> diagonal_mod_buffers(int hq, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  const int diagonals = kDiagonalSq + kDiagonalSkv - 1;
  TestBuffer relh;
  relh.decl = BufferDecl{"relh", DType::bf16, {hq, diagonals}};
  for (int i = 0; i < hq * diagonals; ++i) relh.values.push_back(2.0 * normal(rng));
  TestBuffer rel;
  rel.decl = BufferDecl{"rel", DType::f32, {diagonals}};
  for (int i = 0; i < diagonals; ++i) rel.values.push_back(normal(rng));
  TestBuffer t5;
  t5.decl = BufferDecl{"t5", DType::f32, {hq, 32}};
  for (int i = 0; i < hq * 32; ++i) t5.values.push_back(3.0 * normal(rng));
  return {relh, rel, t5, document_ids(kDiagonalSkv, rng)};
}

}  // namespace flexjit::test
