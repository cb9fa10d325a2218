#pragma once
// Symbolic d/d(score) of a typed score_mod tree.
//
// Chain rule through every built-in; `where` / `?:` differentiate branchwise (the condition is
// kept); comparisons, bools, ints, `int(x)`, `floor`, `ceil` have derivative 0. At kinks the
// derivative of the branch the forward pass takes is used: abs'(0) = 1, min/max ties take the
// first argument, clamp takes x on the boundary.
#include "expr/ast.hpp"

namespace flexjit::expr {

/// The simplified derivative (a float-typed tree, possibly the literal 0.0 or 1.0).
NodePtr differentiate_by_score(const NodePtr& node);
/// The simplified derivative with respect to one buffer read (a float `buffer_read` node): every
/// structurally equal read in `node` is that variable; other reads, `score` and ints are constants.
NodePtr differentiate_by_read(const NodePtr& node, const Node& read);

}  // namespace flexjit::expr
