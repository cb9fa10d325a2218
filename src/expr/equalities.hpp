#pragma once
// Equality propagation for the emitted code: in `A && B`, where A has an integer equality `x == y`
// among its conjuncts, B only matters when x equals y, so B may read x wherever it reads y. The
// rewrite replaces the side that depends on kv_idx by the one that does not: a mask such as
// `doc[q_idx] == doc[kv_idx] && q_idx - start[doc[q_idx]] >= kv_idx - start[doc[kv_idx]]` then
// reads `start[doc[q_idx]]`, a row's value, instead of a dependent load per key. Exact: B's value
// and its out-of-bounds reads can only differ where A is false, and there the result is false
// and B's errors are not reported (the emitter's eager `&&`). The checker, the interpreter and
// the canonical text keep the tree as written.
#include "expr/ast.hpp"

namespace flexjit::expr {

/// The tree with every `&&`'s right side rewritten by the integer equalities of its left side.
NodePtr propagate_equalities(const NodePtr& node);

}  // namespace flexjit::expr
