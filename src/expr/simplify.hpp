#pragma once
// Algebraic simplification of a typed tree: constant folding (with the interpreter's semantics),
// neutral elements, `--x`, `!!x`, `where` with a constant condition or equal branches.
//
// Rules that are not exact in IEEE arithmetic and are accepted deliberately (they only ever meet
// finite values in attention, and the derivatives that need them would be NaN otherwise):
//   x * 0 -> 0   (false for x = inf or NaN)       x + 0 -> x   (false for x = -0.0)
// Folding never produces NaN: an operation whose constant result would be NaN is left as it is.
#include "expr/ast.hpp"

namespace flexjit::expr {

/// The simplified tree; it has the same type as `node` (an int simplified under a float operator
/// is wrapped in `float(...)`).
NodePtr simplify(const NodePtr& node);
/// `node` converted to `type` (int -> float only): unchanged, a folded literal, or `float(node)`.
NodePtr convert_to(const NodePtr& node, ScalarType type);
/// Replaces every read of `variable` by the literal `value` (int variables: truncated).
NodePtr substitute_variable(const NodePtr& node, Variable variable, double value);

}  // namespace flexjit::expr
