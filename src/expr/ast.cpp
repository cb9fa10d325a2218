#include "expr/ast.hpp"

#include <cmath>

namespace flexjit::expr {

std::string_view variable_name(Variable variable) noexcept {
  switch (variable) {
    case Variable::score: return "score";
    case Variable::b: return "b";
    case Variable::h: return "h";
    case Variable::q_idx: return "q_idx";
    case Variable::kv_idx: return "kv_idx";
    case Variable::q_len: return "q_len";
    case Variable::kv_len: return "kv_len";
  }
  return "?";
}

std::string_view function_name(Function function) noexcept {
  switch (function) {
    case Function::abs: return "abs";
    case Function::min: return "min";
    case Function::max: return "max";
    case Function::clamp: return "clamp";
    case Function::exp: return "exp";
    case Function::exp2: return "exp2";
    case Function::log: return "log";
    case Function::log2: return "log2";
    case Function::sqrt: return "sqrt";
    case Function::rsqrt: return "rsqrt";
    case Function::tanh: return "tanh";
    case Function::sigmoid: return "sigmoid";
    case Function::sin: return "sin";
    case Function::cos: return "cos";
    case Function::floor: return "floor";
    case Function::ceil: return "ceil";
    case Function::pow: return "pow";
    case Function::to_int: return "int";
    case Function::to_float: return "float";
  }
  return "?";
}

std::string_view binary_op_text(BinaryOp op) noexcept {
  switch (op) {
    case BinaryOp::logical_or: return "||";
    case BinaryOp::logical_and: return "&&";
    case BinaryOp::bit_or: return "|";
    case BinaryOp::bit_xor: return "^";
    case BinaryOp::bit_and: return "&";
    case BinaryOp::eq: return "==";
    case BinaryOp::ne: return "!=";
    case BinaryOp::lt: return "<";
    case BinaryOp::le: return "<=";
    case BinaryOp::gt: return ">";
    case BinaryOp::ge: return ">=";
    case BinaryOp::add: return "+";
    case BinaryOp::sub: return "-";
    case BinaryOp::mul: return "*";
    case BinaryOp::div: return "/";
    case BinaryOp::mod: return "%";
  }
  return "?";
}

std::string_view unary_op_text(UnaryOp op) noexcept { return op == UnaryOp::negate ? "-" : "!"; }

int binary_precedence(BinaryOp op) noexcept {
  switch (op) {
    case BinaryOp::logical_or: return 1;
    case BinaryOp::logical_and: return 2;
    case BinaryOp::bit_or: return 3;
    case BinaryOp::bit_xor: return 4;
    case BinaryOp::bit_and: return 5;
    case BinaryOp::eq:
    case BinaryOp::ne: return 6;
    case BinaryOp::lt:
    case BinaryOp::le:
    case BinaryOp::gt:
    case BinaryOp::ge: return 7;
    case BinaryOp::add:
    case BinaryOp::sub: return 8;
    case BinaryOp::mul:
    case BinaryOp::div:
    case BinaryOp::mod: return 9;
  }
  return 0;
}

bool is_number(ScalarType type) noexcept { return type != ScalarType::boolean; }

ScalarType promote(ScalarType a, ScalarType b) noexcept {
  if (a == ScalarType::boolean && b == ScalarType::boolean) return ScalarType::boolean;
  return (a == ScalarType::floating || b == ScalarType::floating) ? ScalarType::floating
                                                                  : ScalarType::integer;
}

bool is_comparison(BinaryOp op) noexcept {
  return op == BinaryOp::eq || op == BinaryOp::ne || op == BinaryOp::lt || op == BinaryOp::le ||
         op == BinaryOp::gt || op == BinaryOp::ge;
}
bool is_logical(BinaryOp op) noexcept {
  return op == BinaryOp::logical_and || op == BinaryOp::logical_or;
}
bool is_bitwise(BinaryOp op) noexcept {
  return op == BinaryOp::bit_and || op == BinaryOp::bit_or || op == BinaryOp::bit_xor;
}
bool is_arithmetic(BinaryOp op) noexcept {
  return op == BinaryOp::add || op == BinaryOp::sub || op == BinaryOp::mul ||
         op == BinaryOp::div || op == BinaryOp::mod;
}

bool is_float_function(Function function) noexcept {
  switch (function) {
    case Function::abs:
    case Function::min:
    case Function::max:
    case Function::clamp:
    case Function::to_int:
    case Function::to_float: return false;
    default: return true;
  }
}

ScalarType operand_type(const Node& node, size_t index) noexcept {
  switch (node.kind) {
    case NodeKind::buffer_read: return ScalarType::integer;
    case NodeKind::unary:
      return node.unary_op == UnaryOp::logical_not ? ScalarType::boolean : node.type;
    case NodeKind::binary:
      if (is_comparison(node.binary_op))
        return promote(node.operands[0]->type, node.operands[1]->type);
      return node.type;
    case NodeKind::select: return index == 0 ? ScalarType::boolean : node.type;
    case NodeKind::call:
      if (is_float_function(node.function)) return ScalarType::floating;
      if (node.function == Function::to_int || node.function == Function::to_float)
        return node.operands[0]->type;
      return node.type;
    default: return node.type;
  }
}

namespace {

std::shared_ptr<Node> new_node(NodeKind kind, ScalarType type, SourceSpan span) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->type = type;
  node->span = span;
  return node;
}

}  // namespace

NodePtr make_int(int32_t value, SourceSpan span) {
  auto node = new_node(NodeKind::literal, ScalarType::integer, span);
  node->int_value = value;
  return node;
}

NodePtr make_float(double value, SourceSpan span) {
  auto node = new_node(NodeKind::literal, ScalarType::floating, span);
  node->float_value = value;
  return node;
}

NodePtr make_bool(bool value, SourceSpan span) {
  auto node = new_node(NodeKind::literal, ScalarType::boolean, span);
  node->bool_value = value;
  return node;
}

NodePtr make_variable(Variable variable, SourceSpan span) {
  auto node = new_node(NodeKind::variable,
                       variable == Variable::score ? ScalarType::floating : ScalarType::integer, span);
  node->variable = variable;
  return node;
}

NodePtr make_parameter(const ParamDecl& param, SourceSpan span) {
  auto node = new_node(NodeKind::parameter, param.type, span);
  node->name = param.name;
  return node;
}

NodePtr make_buffer_read(const BufferDecl& buffer, std::vector<NodePtr> indices, SourceSpan span) {
  const bool reads_float =
      buffer.dtype == DType::f16 || buffer.dtype == DType::bf16 || buffer.dtype == DType::f32;
  auto node = new_node(NodeKind::buffer_read,
                       reads_float ? ScalarType::floating : ScalarType::integer, span);
  node->name = buffer.name;
  node->operands = std::move(indices);
  return node;
}

NodePtr make_unary(UnaryOp op, NodePtr operand, SourceSpan span) {
  auto node = new_node(NodeKind::unary,
                       op == UnaryOp::logical_not ? ScalarType::boolean : operand->type, span);
  node->unary_op = op;
  node->operands = {std::move(operand)};
  return node;
}

NodePtr make_binary(BinaryOp op, NodePtr lhs, NodePtr rhs, SourceSpan span) {
  ScalarType type;
  if (is_comparison(op) || is_logical(op))
    type = ScalarType::boolean;
  else
    type = promote(lhs->type, rhs->type);
  auto node = new_node(NodeKind::binary, type, span);
  node->binary_op = op;
  node->operands = {std::move(lhs), std::move(rhs)};
  return node;
}

NodePtr make_select(NodePtr condition, NodePtr if_true, NodePtr if_false, SourceSpan span) {
  auto node = new_node(NodeKind::select, promote(if_true->type, if_false->type), span);
  node->operands = {std::move(condition), std::move(if_true), std::move(if_false)};
  return node;
}

NodePtr make_call(Function function, std::vector<NodePtr> args, SourceSpan span) {
  ScalarType type;
  if (is_float_function(function) || function == Function::to_float)
    type = ScalarType::floating;
  else if (function == Function::to_int)
    type = ScalarType::integer;
  else {
    type = args[0]->type;
    for (const auto& arg : args) type = promote(type, arg->type);
  }
  auto node = new_node(NodeKind::call, type, span);
  node->function = function;
  node->operands = std::move(args);
  return node;
}

bool same_tree(const Node& a, const Node& b) noexcept {
  if (a.kind != b.kind || a.type != b.type || a.operands.size() != b.operands.size()) return false;
  switch (a.kind) {
    case NodeKind::literal:
      if (a.type == ScalarType::integer && a.int_value != b.int_value) return false;
      if (a.type == ScalarType::boolean && a.bool_value != b.bool_value) return false;
      if (a.type == ScalarType::floating) {
        // Bitwise comparison: -0.0 and 0.0 differ, NaN equals itself.
        if (std::signbit(a.float_value) != std::signbit(b.float_value)) return false;
        if (!(a.float_value == b.float_value) &&
            !(a.float_value != a.float_value && b.float_value != b.float_value))
          return false;
      }
      break;
    case NodeKind::variable:
      if (a.variable != b.variable) return false;
      break;
    case NodeKind::parameter:
    case NodeKind::buffer_read:
      if (a.name != b.name) return false;
      break;
    case NodeKind::unary:
      if (a.unary_op != b.unary_op) return false;
      break;
    case NodeKind::binary:
      if (a.binary_op != b.binary_op) return false;
      break;
    case NodeKind::call:
      if (a.function != b.function) return false;
      break;
    case NodeKind::select: break;
  }
  for (size_t i = 0; i < a.operands.size(); ++i)
    if (!same_tree(*a.operands[i], *b.operands[i])) return false;
  return true;
}

std::optional<double> number_literal(const Node& node) noexcept {
  if (node.kind != NodeKind::literal || node.type == ScalarType::boolean) return std::nullopt;
  return node.type == ScalarType::floating ? node.float_value : static_cast<double>(node.int_value);
}

bool tree_uses(const Node& node, Variable variable) noexcept {
  if (node.kind == NodeKind::variable && node.variable == variable) return true;
  for (const auto& operand : node.operands)
    if (tree_uses(*operand, variable)) return true;
  return false;
}

}  // namespace flexjit::expr
