#pragma once
// Writes CUDA for a typed tree. Every identifier in the output comes from the emitter's own
// tables or from the validated declaration table, and every number is re-printed from its parsed
// value: no user text is copied into generated code.
#include <optional>
#include <string>
#include <vector>

#include "expr/ast.hpp"

namespace flexjit::expr {

/// The `__device__ __forceinline__` function for a checked mod (see Expr::emit_cuda).
std::string emit_cuda_function(const Node& root, ModKind kind, const std::string& function_name,
                               const std::string& line_file);
/// A mod's column values: its largest subexpressions that read a buffer and depend on kv_idx but
/// not on q_idx or score (`doc[kv_idx]`, `start[doc[kv_idx]]`, `bias[b][kv_idx]`), one per
/// distinct tree, in the order they first appear. A kernel can compute them once per key and
/// share them among a tile's rows.
std::vector<NodePtr> column_values(const NodePtr& root);
/// A score_mod's diagonal values: its largest subexpressions that read a buffer, use q_idx or
/// kv_idx but only through kv_idx - q_idx (every use inside a linear int subtree whose two
/// coefficients cancel), and do not read the score (`rel[h][kv_idx - q_idx + 4096]`, a T5
/// bucket's table read). A kernel can compute them once per diagonal of a tile.
std::vector<NodePtr> diagonal_values(const NodePtr& root);
/// Whether the score_mod `root` is `score + V` or `V + score`, V its one diagonal value (`values`,
/// diagonal_values(root)) and a float.
bool diagonal_value_is_added_to_score(const NodePtr& root, const std::vector<NodePtr>& values);
/// For a mask with column values: the function that computes one key's values and their reads'
/// error bits, and the mask with the values read from those arrays (Expr::emit_cuda_columns).
std::string emit_cuda_column_functions(const Node& root, const std::string& values_name, const std::string& mask_name);
/// For a score_mod with column values: the values function, and the prescaled score function (as
/// emit_cuda_prescaled_function's) with the values read from those arrays
/// (Expr::emit_cuda_prescaled_columns).
/// With `diagonal`, the same for the score_mod's diagonal values (diagonal_values): the values
/// function then takes kv_idx - q_idx in its kv_idx parameter.
std::string emit_cuda_prescaled_column_functions(const Node& root, double prescale, double output_factor,
                                                 const std::string& values_name, const std::string& score_name,
                                                 const std::string& line_file, bool diagonal = false);
/// The constant every `score` of the tree is multiplied by: the k of `score * k`, `k * score` and
/// `score / c` (k = 1/c), with k a literal and its magnitude within [2^-100, 2^100]; 1 for a bare
/// `score`, and also 1 for a tree that reads no score. Nullopt when two occurrences differ.
std::optional<double> uniform_score_factor(const Node& root);
/// A score_mod (or its derivative) evaluated at score = acc * scale and multiplied by
/// `output_factor`, as `float NAME(float flexjit_acc, float flexjit_score_scale, int b, int h, int
/// q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors)`,
/// where the caller passes score_scale = scale * prescale (a kernel parameter the host computes).
/// Every `score * prescale` (uniform_score_factor's forms) is then acc * score_scale, and the root's
/// own literal factors (`30 * tanh(..)`) are multiplied into output_factor: two multiplies per
/// score fewer for `30 * tanh(score / 30)` where the kernel multiplies by log2(e) anyway. Throws
/// UsageError when a `score` is not in the form `prescale` says (uniform_score_factor gives the
/// one that fits).
std::string emit_cuda_prescaled_function(const Node& root, double prescale, double output_factor,
                                         const std::string& function_name, const std::string& line_file);
/// The expression alone, fully parenthesised, of the node's own type.
std::string emit_cuda_expression(const Node& node);
/// A float as CUDA source that denotes exactly the float nearest to `value`.
std::string emit_float_constant(double value);

}  // namespace flexjit::expr
