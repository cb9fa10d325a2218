#pragma once
// Writes CUDA for a typed tree. Every identifier in the output comes from the emitter's own
// tables or from the validated declaration table, and every number is re-printed from its parsed
// value: no user text is copied into generated code.
#include <string>

#include "expr/ast.hpp"

namespace flexjit::expr {

/// The `__device__ __forceinline__` function for a checked mod (see Expr::emit_cuda).
std::string emit_cuda_function(const Node& root, ModKind kind, const std::string& function_name,
                               const std::string& line_file);
/// The expression alone, fully parenthesised, of the node's own type.
std::string emit_cuda_expression(const Node& node);
/// A float as CUDA source that denotes exactly the float nearest to `value`.
std::string emit_float_constant(double value);

}  // namespace flexjit::expr
