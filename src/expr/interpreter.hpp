#pragma once
// Host evaluation: the typed tree is compiled once into a linear register program (buffers and
// parameters resolved to pointers and constants at bind time), which a switch loop runs per point
// without lookups or allocation.
#include <memory>
#include <string>

#include "expr/ast.hpp"

namespace flexjit::expr {

/// Compiles `root` against the inputs. Throws UsageError when an input the expression reads is
/// missing or does not match its declaration.
std::shared_ptr<const BoundEvaluator::State> bind_program(const NodePtr& root, ModKind kind,
                                                          const std::string& source,
                                                          const Declarations& declarations,
                                                          const EvalInputs& inputs);

/// "[16, 8191]" ("?" for a call-time extent).
std::string format_shape(const std::vector<int64_t>& shape);

}  // namespace flexjit::expr
