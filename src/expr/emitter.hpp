#pragma once
// Writes CUDA for a typed tree. Every identifier in the output comes from the emitter's own
// tables or from the validated declaration table, and every number is re-printed from its parsed
// value: no user text is copied into generated code.
#include <string>
#include <vector>

#include "expr/ast.hpp"

namespace flexjit::expr {

/// The `__device__ __forceinline__` function for a checked mod (see Expr::emit_cuda).
std::string emit_cuda_function(const Node& root, ModKind kind, const std::string& function_name,
                               const std::string& line_file);
/// A mask's column values: its largest subexpressions that read a buffer and depend on kv_idx but
/// not on q_idx (`doc[kv_idx]`, `start[doc[kv_idx]]`), one per distinct tree, in the order they
/// first appear. A kernel can compute them once per key and share them among a tile's rows.
std::vector<NodePtr> mask_column_values(const NodePtr& root);
/// For a mask with column values: the function that computes one key's values and their reads'
/// error bits, and the mask with the values read from those arrays (Expr::emit_cuda_columns).
std::string emit_cuda_column_functions(const Node& root, const std::string& values_name, const std::string& mask_name);
/// The expression alone, fully parenthesised, of the node's own type.
std::string emit_cuda_expression(const Node& node);
/// A float as CUDA source that denotes exactly the float nearest to `value`.
std::string emit_float_constant(double value);

}  // namespace flexjit::expr
