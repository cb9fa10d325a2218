#pragma once
// Interval bounds of a mask_mod over a tile of positions: emits `flexjit_mask_mod_bounds`, which
// takes the ranges of h, q_idx and kv_idx a tile covers and answers 0 (no position kept),
// 2 (every position kept) or 1 (some, or cannot tell), from the helpers in
// templates/flexjit_tile_bounds.cuh. The decode kernel classifies its own key tiles with it.
#include <string>

#include "expr/ast.hpp"

namespace flexjit::expr {

/// True when the bounds can decide tiles of this mask: every node is an int or a bool (a float
/// anywhere has no bounds here), and no buffer is indexed by kv_idx (such a read is unbounded
/// across a key tile, so nearly every tile would be "cannot tell").
bool has_tile_bounds(const Node& root);

/// Why `root` has no tile bounds, naming the first sub-expression in the way ("it computes in
/// float: 2.5 * q_idx", "it indexes a buffer by kv_idx: doc[kv_idx]"), or "" when it has them.
std::string tile_bounds_obstacle(const Node& root);

/// `__device__ __forceinline__ int NAME(int b, FlexjitRange h, FlexjitRange q_idx,
/// FlexjitRange kv_idx, int q_len, int kv_len, const FlexjitModArgs& args)`. Throws UsageError
/// when has_tile_bounds(root) is false or NAME is not an identifier.
std::string emit_tile_bounds_function(const Node& root, const std::string& function_name);

}  // namespace flexjit::expr
