#pragma once
// Resolves names and types of a syntax tree; every problem found is reported to the sink.
#include "expr/ast.hpp"
#include "expr/diagnostics.hpp"
#include "expr/syntax.hpp"

namespace flexjit::expr {

/// The typed tree of `root`, or nullptr if any error was reported. Checks everything it can, so
/// independent mistakes are all reported; a sub-expression that failed does not produce further
/// errors in the expressions that contain it.
NodePtr check_syntax(const Syntax& root, ModKind kind, const Declarations& declarations,
                     DiagnosticSink& sink);

}  // namespace flexjit::expr
