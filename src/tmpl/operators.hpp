#pragma once
// Jinja's (that is, Python's) operator semantics on JSON values. Failures throw ValueError.

#include "tmpl/ast.hpp"
#include "tmpl/value.hpp"

namespace flexjit::tmpl {

/// The operator as written in a template ("+", "//", "not in", ...).
const char* symbol(BinaryOp op);
const char* symbol(CompareOp op);

/// `left op right` for the arithmetic operators and `~` (not `and` / `or`, which short-circuit
/// in the renderer). `+` adds numbers and concatenates strings or lists; `/` always gives a
/// float; `//` and `%` round towards minus infinity like Python; int results are checked for
/// overflow.
Json apply_binary(BinaryOp op, const Json& left, const Json& right);

/// `-value` / `+value` on numbers.
Json apply_unary(UnaryOp op, const Json& value);

/// `left op right`: equality on any values (1 == 1.0), ordering on two numbers or two strings,
/// `in` on lists (membership), strings (substring) and objects (key).
bool apply_compare(CompareOp op, const Json& left, const Json& right);

}  // namespace flexjit::tmpl
