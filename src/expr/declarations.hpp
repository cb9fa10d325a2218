#pragma once
// Validation of the declaration table an expression is checked against.
#include "flexjit/expr.hpp"

namespace flexjit::expr {

/// Largest buffer rank.
inline constexpr size_t kMaxBufferRank = 8;

/// Throws UsageError for an invalid name, a duplicate, a rank outside 1..8, an extent that is
/// neither positive nor -1, or a bool parameter.
void validate_declarations(const Declarations& declarations);

}  // namespace flexjit::expr
