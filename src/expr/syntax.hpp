#pragma once
// The untyped syntax tree the parser builds; the checker resolves names and types from it.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "expr/ast.hpp"

namespace flexjit::expr {

enum class SyntaxKind : uint8_t {
  integer,      // value in `integer` (already range checked, may be negative after folding '-')
  floating,     // value in `floating` (inf literal included)
  boolean,      // value in `boolean`
  name,         // identifier in `text`
  unary,        // unary_op, operands[0]
  binary,       // binary_op, operands[0..1]
  conditional,  // c ? a : b
  call,         // callee name in `text`, arguments in operands
  index,        // operands[0] (the indexed expression) [operands[1]]
};

struct Syntax;
using SyntaxPtr = std::unique_ptr<Syntax>;

struct Syntax {
  SyntaxKind kind = SyntaxKind::integer;
  SourceSpan span;        // the whole sub-expression
  SourceSpan op_span;     // the operator / name / bracket token (where a caret points)
  int64_t integer = 0;
  double floating = 0.0;
  bool boolean = false;
  std::string_view text;  // name or callee
  UnaryOp unary_op = UnaryOp::negate;
  BinaryOp binary_op = BinaryOp::add;
  int depth = 1;          // height of this subtree
  std::vector<SyntaxPtr> operands;
};

}  // namespace flexjit::expr
