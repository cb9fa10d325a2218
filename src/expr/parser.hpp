#pragma once
// Recursive-descent parser with C precedence (precedence climbing for binary operators).
#include <vector>

#include "expr/diagnostics.hpp"
#include "expr/lexer.hpp"
#include "expr/syntax.hpp"

namespace flexjit::expr {

/// Largest nesting depth of an expression (height of its tree); deeper input is rejected before
/// any recursive pass could exhaust the stack.
inline constexpr int kMaxNestingDepth = 256;
/// Largest accepted source, in bytes.
inline constexpr size_t kMaxSourceBytes = 64 * 1024;

/// Reports unbalanced parentheses / brackets (each one once). Returns false if there were any.
bool check_brackets(const std::vector<Token>& tokens, DiagnosticSink& sink);

/// Parses the token list. Returns nullptr after a syntax error (reported to `sink`); mistakes
/// with an obvious intent (`=` for `==`, `**`, `and`) are reported and parsing goes on as if the
/// intended text had been written, so later errors are still found.
SyntaxPtr parse_tokens(const std::vector<Token>& tokens, DiagnosticSink& sink);

}  // namespace flexjit::expr
