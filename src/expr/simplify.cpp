#include "expr/simplify.hpp"

#include <cmath>
#include <unordered_map>

#include "expr/semantics.hpp"

namespace flexjit::expr {
namespace {

bool is_literal(const NodePtr& node) { return node->kind == NodeKind::literal; }

double literal_value(const Node& node) {
  switch (node.type) {
    case ScalarType::boolean: return node.bool_value ? 1.0 : 0.0;
    case ScalarType::integer: return node.int_value;
    case ScalarType::floating: return node.float_value;
  }
  return 0.0;
}

bool is_constant(const NodePtr& node, double value) {
  return is_literal(node) && node->type != ScalarType::boolean && literal_value(*node) == value;
}
bool is_bool_constant(const NodePtr& node, bool value) {
  return is_literal(node) && node->type == ScalarType::boolean && node->bool_value == value;
}

NodePtr literal_of(ScalarType type, double value, SourceSpan span) {
  switch (type) {
    case ScalarType::boolean: return make_bool(value != 0.0, span);
    case ScalarType::integer: return make_int(static_cast<int32_t>(value), span);
    case ScalarType::floating: return make_float(value, span);
  }
  return nullptr;
}

// A float result that folding may produce (NaN is kept symbolic: `0.0 / 0.0` stays visible).
NodePtr float_result(double value, SourceSpan span) {
  return std::isnan(value) ? nullptr : make_float(value, span);
}

NodePtr fold_unary(const Node& node) {
  const Node& x = *node.operands[0];
  if (node.unary_op == UnaryOp::logical_not) return make_bool(!x.bool_value, node.span);
  if (x.type == ScalarType::integer) return make_int(semantics::neg(x.int_value), node.span);
  return make_float(-x.float_value, node.span);
}

NodePtr fold_binary(const Node& node) {
  const Node& a = *node.operands[0];
  const Node& b = *node.operands[1];
  const BinaryOp op = node.binary_op;
  if (is_logical(op)) {
    return make_bool(op == BinaryOp::logical_and ? (a.bool_value && b.bool_value)
                                                 : (a.bool_value || b.bool_value),
                     node.span);
  }
  if (is_comparison(op)) {
    const double x = literal_value(a), y = literal_value(b);
    bool result = false;
    switch (op) {
      case BinaryOp::eq: result = x == y; break;
      case BinaryOp::ne: result = x != y; break;
      case BinaryOp::lt: result = x < y; break;
      case BinaryOp::le: result = x <= y; break;
      case BinaryOp::gt: result = x > y; break;
      case BinaryOp::ge: result = x >= y; break;
      default: break;
    }
    return make_bool(result, node.span);
  }
  if (is_bitwise(op)) {
    if (node.type == ScalarType::boolean) {
      const bool x = a.bool_value, y = b.bool_value;
      return make_bool(op == BinaryOp::bit_and ? (x && y) : op == BinaryOp::bit_or ? (x || y) : (x != y),
                       node.span);
    }
    const auto x = static_cast<uint32_t>(a.int_value), y = static_cast<uint32_t>(b.int_value);
    const uint32_t r = op == BinaryOp::bit_and ? (x & y) : op == BinaryOp::bit_or ? (x | y) : (x ^ y);
    return make_int(semantics::wrap(r), node.span);
  }
  if (node.type == ScalarType::integer) {
    const int32_t x = a.int_value, y = b.int_value;
    switch (op) {
      case BinaryOp::add: return make_int(semantics::add(x, y), node.span);
      case BinaryOp::sub: return make_int(semantics::sub(x, y), node.span);
      case BinaryOp::mul: return make_int(semantics::mul(x, y), node.span);
      case BinaryOp::div: return make_int(semantics::div(x, y), node.span);
      case BinaryOp::mod: return make_int(semantics::mod(x, y), node.span);
      default: return nullptr;
    }
  }
  const double x = literal_value(a), y = literal_value(b);
  switch (op) {
    case BinaryOp::add: return float_result(x + y, node.span);
    case BinaryOp::sub: return float_result(x - y, node.span);
    case BinaryOp::mul: return float_result(x * y, node.span);
    case BinaryOp::div: return y == 0.0 ? nullptr : float_result(x / y, node.span);
    default: return nullptr;
  }
}

NodePtr fold_call(const Node& node) {
  const auto& args = node.operands;
  switch (node.function) {
    case Function::to_int:
      return make_int(args[0]->type == ScalarType::floating ? semantics::to_int(args[0]->float_value)
                                                             : static_cast<int32_t>(literal_value(*args[0])),
                      node.span);
    case Function::to_float: return make_float(literal_value(*args[0]), node.span);
    case Function::abs:
    case Function::min:
    case Function::max:
    case Function::clamp:
      if (node.type == ScalarType::integer) {
        const int32_t x = args[0]->int_value;
        if (node.function == Function::abs) return make_int(semantics::abs(x), node.span);
        if (node.function == Function::min) return make_int(semantics::min(x, args[1]->int_value), node.span);
        if (node.function == Function::max) return make_int(semantics::max(x, args[1]->int_value), node.span);
        return make_int(semantics::clamp(x, args[1]->int_value, args[2]->int_value), node.span);
      } else {
        const double x = literal_value(*args[0]);
        if (node.function == Function::abs) return float_result(std::fabs(x), node.span);
        if (node.function == Function::min)
          return float_result(semantics::fmin(x, literal_value(*args[1])), node.span);
        if (node.function == Function::max)
          return float_result(semantics::fmax(x, literal_value(*args[1])), node.span);
        return float_result(semantics::fclamp(x, literal_value(*args[1]), literal_value(*args[2])),
                            node.span);
      }
    case Function::pow:
      return float_result(std::pow(literal_value(*args[0]), literal_value(*args[1])), node.span);
    default: return float_result(semantics::apply_unary(node.function, literal_value(*args[0])), node.span);
  }
}

NodePtr rebuild(const Node& node, std::vector<NodePtr> operands) {
  switch (node.kind) {
    case NodeKind::buffer_read: {
      auto copy = std::make_shared<Node>(node);
      copy->operands = std::move(operands);
      return copy;
    }
    case NodeKind::unary: return make_unary(node.unary_op, std::move(operands[0]), node.span);
    case NodeKind::binary:
      return make_binary(node.binary_op, std::move(operands[0]), std::move(operands[1]), node.span);
    case NodeKind::select:
      return make_select(std::move(operands[0]), std::move(operands[1]), std::move(operands[2]), node.span);
    case NodeKind::call: return make_call(node.function, std::move(operands), node.span);
    default: return nullptr;
  }
}

NodePtr negate(const NodePtr& x) {
  if (is_literal(x)) {
    Node wrapper;
    wrapper.kind = NodeKind::unary;
    wrapper.type = x->type;
    wrapper.operands = {x};
    return fold_unary(wrapper);
  }
  if (x->kind == NodeKind::unary && x->unary_op == UnaryOp::negate) return x->operands[0];
  return make_unary(UnaryOp::negate, x);
}

// c1 * (c2 * x) and friends -> (c1 * c2) * x, so constant factors from the chain rule meet.
NodePtr merge_constant_factors(const NodePtr& node) {
  const auto& ops = node->operands;
  for (int outer = 0; outer < 2; ++outer) {
    const NodePtr& constant = ops[static_cast<size_t>(outer)];
    const NodePtr& product = ops[static_cast<size_t>(1 - outer)];
    if (!is_literal(constant) || product->kind != NodeKind::binary || product->binary_op != BinaryOp::mul ||
        product->type != ScalarType::floating)
      continue;
    for (int inner = 0; inner < 2; ++inner) {
      const NodePtr& factor = product->operands[static_cast<size_t>(inner)];
      if (!is_literal(factor)) continue;
      const double merged = literal_value(*constant) * literal_value(*factor);
      if (std::isnan(merged)) return node;
      const NodePtr& rest = product->operands[static_cast<size_t>(1 - inner)];
      if (merged == 1.0) return convert_to(rest, ScalarType::floating);
      return make_binary(BinaryOp::mul, make_float(merged), rest, node->span);
    }
  }
  return node;
}

// Rules beyond folding. `node` has simplified operands; returns `node` when nothing applies.
NodePtr rewrite(const NodePtr& node) {
  const auto& ops = node->operands;
  const ScalarType type = node->type;
  switch (node->kind) {
    case NodeKind::unary:
      if (node->unary_op == UnaryOp::negate && ops[0]->kind == NodeKind::unary &&
          ops[0]->unary_op == UnaryOp::negate)
        return ops[0]->operands[0];
      if (node->unary_op == UnaryOp::logical_not && ops[0]->kind == NodeKind::unary &&
          ops[0]->unary_op == UnaryOp::logical_not)
        return ops[0]->operands[0];
      return node;
    case NodeKind::binary:
      switch (node->binary_op) {
        case BinaryOp::add:
          if (is_constant(ops[1], 0)) return convert_to(ops[0], type);
          if (is_constant(ops[0], 0)) return convert_to(ops[1], type);
          return node;
        case BinaryOp::sub:
          if (is_constant(ops[1], 0)) return convert_to(ops[0], type);
          if (is_constant(ops[0], 0)) return negate(convert_to(ops[1], type));
          return node;
        case BinaryOp::mul:
          if (is_constant(ops[0], 0) || is_constant(ops[1], 0)) return literal_of(type, 0.0, node->span);
          if (is_constant(ops[1], 1)) return convert_to(ops[0], type);
          if (is_constant(ops[0], 1)) return convert_to(ops[1], type);
          if (is_constant(ops[1], -1)) return negate(convert_to(ops[0], type));
          if (is_constant(ops[0], -1)) return negate(convert_to(ops[1], type));
          if (type == ScalarType::floating) return merge_constant_factors(node);
          return node;
        case BinaryOp::div:
          if (is_constant(ops[1], 1)) return convert_to(ops[0], type);
          if (is_constant(ops[1], -1)) return negate(convert_to(ops[0], type));
          if (type == ScalarType::floating && is_constant(ops[0], 0) && !is_constant(ops[1], 0))
            return make_float(0.0, node->span);
          return node;
        case BinaryOp::logical_and:
          if (is_bool_constant(ops[0], true)) return ops[1];
          if (is_bool_constant(ops[1], true)) return ops[0];
          if (is_bool_constant(ops[0], false) || is_bool_constant(ops[1], false))
            return make_bool(false, node->span);
          return node;
        case BinaryOp::logical_or:
          if (is_bool_constant(ops[0], false)) return ops[1];
          if (is_bool_constant(ops[1], false)) return ops[0];
          if (is_bool_constant(ops[0], true) || is_bool_constant(ops[1], true))
            return make_bool(true, node->span);
          return node;
        default: return node;
      }
    case NodeKind::select:
      if (is_literal(ops[0])) return convert_to(ops[0]->bool_value ? ops[1] : ops[2], type);
      if (same_tree(*ops[1], *ops[2])) return convert_to(ops[1], type);
      if (ops[0]->kind == NodeKind::unary && ops[0]->unary_op == UnaryOp::logical_not)
        return make_select(ops[0]->operands[0], ops[2], ops[1], node->span);
      return node;
    case NodeKind::call:
      if (node->function == Function::pow && is_constant(ops[1], 1)) return convert_to(ops[0], type);
      if ((node->function == Function::to_float && ops[0]->type == ScalarType::floating) ||
          (node->function == Function::to_int && ops[0]->type == ScalarType::integer))
        return ops[0];
      return node;
    default: return node;
  }
}

}  // namespace

NodePtr convert_to(const NodePtr& node, ScalarType type) {
  if (node->type == type) return node;
  if (is_literal(node)) return literal_of(type, literal_value(*node), node->span);
  return make_call(type == ScalarType::floating ? Function::to_float : Function::to_int, {node}, node->span);
}

namespace {

// Derived trees share subtrees (the chain rule reuses the original node); each shared node is
// simplified once.
class Simplifier {
 public:
  NodePtr run(const NodePtr& node) {
    if (node->operands.empty()) return node;
    const auto known = done_.find(node.get());
    if (known != done_.end()) return known->second;
    NodePtr result = simplify_node(node);
    done_.emplace(node.get(), result);
    return result;
  }

 private:
  NodePtr simplify_node(const NodePtr& node) {
    std::vector<NodePtr> operands;
    operands.reserve(node->operands.size());
    bool all_literal = true;
    for (const auto& operand : node->operands) {
      operands.push_back(run(operand));
      all_literal = all_literal && is_literal(operands.back());
    }
    NodePtr rebuilt = rebuild(*node, std::move(operands));
    if (all_literal && rebuilt->kind != NodeKind::buffer_read) {
      NodePtr folded;
      if (rebuilt->kind == NodeKind::unary) folded = fold_unary(*rebuilt);
      else if (rebuilt->kind == NodeKind::binary) folded = fold_binary(*rebuilt);
      else if (rebuilt->kind == NodeKind::call) folded = fold_call(*rebuilt);
      if (folded) return convert_to(folded, node->type);
    }
    // A rewrite may expose another (`-(-x)` after a sign change, a swapped select).
    NodePtr result = rebuilt;
    for (int round = 0; round < 4; ++round) {
      NodePtr next = rewrite(result);
      if (next == result) break;
      result = std::move(next);
    }
    return convert_to(result, node->type);
  }

  std::unordered_map<const Node*, NodePtr> done_;
};

}  // namespace

NodePtr simplify(const NodePtr& node) { return Simplifier().run(node); }

NodePtr substitute_variable(const NodePtr& node, Variable variable, double value) {
  if (node->kind == NodeKind::variable && node->variable == variable) {
    return node->type == ScalarType::floating ? make_float(value, node->span)
                                              : make_int(semantics::to_int(value), node->span);
  }
  if (node->operands.empty()) return node;
  std::vector<NodePtr> operands;
  for (const auto& operand : node->operands) operands.push_back(substitute_variable(operand, variable, value));
  return rebuild(*node, std::move(operands));
}

}  // namespace flexjit::expr
