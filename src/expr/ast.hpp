#pragma once
// The typed AST of a checked expression. Built only by the checker (from user text) and by the
// node builders below (simplifier, differentiator, substitution), so every tree obeys the typing
// rules: an operand whose type differs from what its operator computes in (int where float is
// needed) is converted implicitly by every consumer, see `operand_type`.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flexjit/expr.hpp"

namespace flexjit::expr {

/// The built-in variables, in the order of the emitted function's parameters.
enum class Variable : uint8_t { score, b, h, q_idx, kv_idx, q_len, kv_len };
inline constexpr int kVariableCount = 7;

enum class UnaryOp : uint8_t { negate, logical_not };

enum class BinaryOp : uint8_t {
  logical_or, logical_and, bit_or, bit_xor, bit_and,
  eq, ne, lt, le, gt, ge,
  add, sub, mul, div, mod,
};

/// Built-in functions. `where(c, a, b)` and `c ? a : b` both become NodeKind::select.
enum class Function : uint8_t {
  abs, min, max, clamp, exp, exp2, log, log2, sqrt, rsqrt, tanh, sigmoid, sin, cos, floor, ceil,
  pow, to_int, to_float,
};

enum class NodeKind : uint8_t { literal, variable, parameter, buffer_read, unary, binary, select, call };

/// Byte range of the source text a node came from (for messages). Derived nodes have length 0.
struct SourceSpan {
  uint32_t offset = 0;
  uint32_t length = 0;
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  NodeKind kind = NodeKind::literal;
  ScalarType type = ScalarType::integer;
  SourceSpan span;
  Variable variable = Variable::score;      // kind == variable
  UnaryOp unary_op = UnaryOp::negate;       // kind == unary
  BinaryOp binary_op = BinaryOp::add;       // kind == binary
  Function function = Function::abs;        // kind == call
  int32_t int_value = 0;                    // literal of type int
  double float_value = 0.0;                 // literal of type float
  bool bool_value = false;                  // literal of type bool
  std::string name;                         // parameter / buffer: the declared name
  std::vector<NodePtr> operands;            // children (select: condition, then, else)
};

// ---- names ----
std::string_view variable_name(Variable variable) noexcept;
std::string_view function_name(Function function) noexcept;  // "int"/"float" for conversions
std::string_view binary_op_text(BinaryOp op) noexcept;
std::string_view unary_op_text(UnaryOp op) noexcept;
/// C precedence of a binary operator (higher binds tighter): `||` 1 ... `* / %` 10.
int binary_precedence(BinaryOp op) noexcept;

// ---- typing rules shared by the checker and the builders ----
bool is_number(ScalarType type) noexcept;
/// int,int -> int; any float -> float (callers make sure neither is bool).
ScalarType promote(ScalarType a, ScalarType b) noexcept;
/// The type operand `index` of `node` is converted to before the operator uses it.
ScalarType operand_type(const Node& node, size_t index) noexcept;
bool is_comparison(BinaryOp op) noexcept;
bool is_logical(BinaryOp op) noexcept;
bool is_bitwise(BinaryOp op) noexcept;
bool is_arithmetic(BinaryOp op) noexcept;
/// Functions that compute in float whatever their argument types (exp, log, ..., pow).
bool is_float_function(Function function) noexcept;

// ---- builders: each computes the node's type from its operands (operands already typed) ----
NodePtr make_int(int32_t value, SourceSpan span = {});
NodePtr make_float(double value, SourceSpan span = {});
NodePtr make_bool(bool value, SourceSpan span = {});
NodePtr make_variable(Variable variable, SourceSpan span = {});
NodePtr make_parameter(const ParamDecl& param, SourceSpan span = {});
NodePtr make_buffer_read(const BufferDecl& buffer, std::vector<NodePtr> indices, SourceSpan span = {});
NodePtr make_unary(UnaryOp op, NodePtr operand, SourceSpan span = {});
NodePtr make_binary(BinaryOp op, NodePtr lhs, NodePtr rhs, SourceSpan span = {});
NodePtr make_select(NodePtr condition, NodePtr if_true, NodePtr if_false, SourceSpan span = {});
NodePtr make_call(Function function, std::vector<NodePtr> args, SourceSpan span = {});

/// Structural equality (ignores spans).
bool same_tree(const Node& a, const Node& b) noexcept;
/// A number literal's value (int or float); nullopt for a bool literal or any other node.
std::optional<double> number_literal(const Node& node) noexcept;
/// True when the tree reads `variable` anywhere.
bool tree_uses(const Node& node, Variable variable) noexcept;

}  // namespace flexjit::expr
