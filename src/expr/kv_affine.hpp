#pragma once
// A score_mod's affine form in kv_idx: `g * score + P`, where g is a literal and P moves by a fixed
// amount per key (slope) along a row, e.g. ALiBi's `score + slope[h] * (kv_idx - q_idx)`. A kernel
// then computes P once per row of its tile and each score in two FFMAs (acc * g' + (base + slope *
// column offset)) instead of evaluating the whole mod per score.
#include <optional>

#include "expr/ast.hpp"

namespace flexjit::expr {

/// The pieces of the affine form (see kv_affine_form).
struct KvAffineParts {
  double score_factor = 0.0;  ///< g: d(score_mod)/d(score), a nonzero literal
  NodePtr kv_slope;           ///< d(P)/d(kv_idx): a tree without `score` or `kv_idx` (may read q_idx, b, h, buffers)
  int max_len = 0;            ///< below or at this length no integer sum that carries kv_idx can overflow
};

/// The affine form of a typed score_mod tree, or nullopt when it has none. Rules: `score` appears
/// only through +, -, negation, and products and quotients by score-free factors (so the mod is
/// exactly g * score + P); the derivative by score is a nonzero literal; kv_idx appears only
/// through +, -, negation, products by kv_idx-free factors, quotients by kv_idx-free float
/// divisors, and int-to-float conversions of int sums; an int sum that carries kv_idx holds
/// nothing but the positions (q_idx, kv_idx, q_len, kv_len) and int literals, joined by +, - and
/// negation, so that its magnitude is bounded by the lengths (max_len).
std::optional<KvAffineParts> kv_affine_form(const NodePtr& root);

}  // namespace flexjit::expr
