#pragma once
// The canonical text of a typed tree: minimal parentheses by C precedence, one space around binary
// operators, `c ? a : b` printed as `where(c, a, b)`, floats printed to re-parse to the same double.
#include <string>

#include "expr/ast.hpp"

namespace flexjit::expr {

std::string print_canonical(const Node& node);
/// Shortest decimal text that parses back to `value` and reads as a float ("30.0", "1e-07",
/// "inf", "-inf"); NaN prints as "nan" (never produced by parsing).
std::string format_float_literal(double value);

}  // namespace flexjit::expr
