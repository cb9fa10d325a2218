#include "expr/gradient.hpp"

#include "expr/simplify.hpp"

namespace flexjit::expr {
namespace {

constexpr double kLn2 = 0.69314718055994530942;

NodePtr num(double value) { return make_float(value); }
NodePtr add(NodePtr a, NodePtr b) { return make_binary(BinaryOp::add, std::move(a), std::move(b)); }
NodePtr sub(NodePtr a, NodePtr b) { return make_binary(BinaryOp::sub, std::move(a), std::move(b)); }
NodePtr mul(NodePtr a, NodePtr b) { return make_binary(BinaryOp::mul, std::move(a), std::move(b)); }
NodePtr div(NodePtr a, NodePtr b) { return make_binary(BinaryOp::div, std::move(a), std::move(b)); }
NodePtr neg(NodePtr a) { return make_unary(UnaryOp::negate, std::move(a)); }
NodePtr call(Function f, std::vector<NodePtr> args) { return make_call(f, std::move(args)); }
NodePtr compare(BinaryOp op, NodePtr a, NodePtr b) { return make_binary(op, std::move(a), std::move(b)); }
NodePtr select(NodePtr c, NodePtr a, NodePtr b) {
  return make_select(std::move(c), std::move(a), std::move(b));
}
// Arguments of float functions may be ints; the derivative formulas need them as floats.
NodePtr as_float(const NodePtr& node) { return convert_to(node, ScalarType::floating); }

// What is differentiated by: the variable `score`, or every occurrence of one buffer read (reads
// are compared structurally, so `rel[h][q_idx - kv_idx]` written twice is one variable).
struct Target {
  const Node* read = nullptr;  // nullptr: score

  bool is(const Node& node) const noexcept {
    if (!read) return node.kind == NodeKind::variable && node.variable == Variable::score;
    return node.kind == NodeKind::buffer_read && same_tree(node, *read);
  }
  bool occurs_in(const Node& node) const noexcept {
    if (!read) return tree_uses(node, Variable::score);
    if (is(node)) return true;
    for (const auto& operand : node.operands)
      if (occurs_in(*operand)) return true;
    return false;
  }
};

NodePtr derive_by(const NodePtr& node, const Target& target);

NodePtr derive_call(const NodePtr& node, const Target& target) {
  const auto derive = [&target](const NodePtr& operand) { return derive_by(operand, target); };
  const auto& a = node->operands;
  switch (node->function) {
    case Function::abs:
      // sign(x) * dx: the derivative of the argument appears once, so nested abs stays linear.
      return mul(select(compare(BinaryOp::lt, a[0], num(0.0)), num(-1.0), num(1.0)), derive(a[0]));
    case Function::min:
      return select(compare(BinaryOp::le, a[0], a[1]), derive(a[0]), derive(a[1]));
    case Function::max:
      return select(compare(BinaryOp::ge, a[0], a[1]), derive(a[0]), derive(a[1]));
    case Function::clamp:
      return select(compare(BinaryOp::lt, a[0], a[1]), derive(a[1]),
                    select(compare(BinaryOp::gt, a[0], a[2]), derive(a[2]), derive(a[0])));
    case Function::exp: return mul(node, derive(a[0]));
    case Function::exp2: return mul(mul(node, num(kLn2)), derive(a[0]));
    case Function::log: return div(derive(a[0]), as_float(a[0]));
    case Function::log2: return div(derive(a[0]), mul(as_float(a[0]), num(kLn2)));
    case Function::sqrt: return mul(mul(num(0.5), call(Function::rsqrt, {a[0]})), derive(a[0]));
    case Function::rsqrt: return mul(div(mul(num(-0.5), node), as_float(a[0])), derive(a[0]));
    case Function::tanh: return mul(sub(num(1.0), mul(node, node)), derive(a[0]));
    case Function::sigmoid: return mul(mul(node, sub(num(1.0), node)), derive(a[0]));
    case Function::sin: return mul(call(Function::cos, {a[0]}), derive(a[0]));
    case Function::cos: return mul(neg(call(Function::sin, {a[0]})), derive(a[0]));
    case Function::floor:
    case Function::ceil:
    case Function::to_int: return num(0.0);
    case Function::to_float: return derive(a[0]);
    case Function::pow: {
      const bool base_varies = target.occurs_in(*a[0]);
      const bool exponent_varies = target.occurs_in(*a[1]);
      if (!exponent_varies) {
        // d(x^c) = c * x^(c-1) * dx, with c - 1 folded when c is a literal.
        NodePtr lowered = call(Function::pow, {a[0], sub(as_float(a[1]), num(1.0))});
        return mul(mul(as_float(a[1]), lowered), derive(a[0]));
      }
      if (!base_varies) return mul(mul(node, call(Function::log, {a[0]})), derive(a[1]));
      return mul(node, add(mul(derive(a[1]), call(Function::log, {a[0]})),
                           div(mul(as_float(a[1]), derive(a[0])), as_float(a[0]))));
    }
  }
  return num(0.0);
}

// d(node)/d(target), unsimplified. Every rule uses the derivative of each operand at most once, so
// the result grows at most quadratically with the depth of the expression, never exponentially.
// Anything that is not a float, or does not contain the target, is 0 (so an int index holding the
// target, as in `tab[int(w[h])]`, contributes nothing, like floor and ceil).
NodePtr derive_by(const NodePtr& node, const Target& target) {
  if (node->type != ScalarType::floating || !target.occurs_in(*node)) return num(0.0);
  if (target.is(*node)) return num(1.0);
  const auto derive = [&target](const NodePtr& operand) { return derive_by(operand, target); };
  const auto& a = node->operands;
  switch (node->kind) {
    case NodeKind::variable: return num(0.0);
    case NodeKind::unary: return neg(derive(a[0]));
    case NodeKind::binary:
      switch (node->binary_op) {
        case BinaryOp::add: return add(derive(a[0]), derive(a[1]));
        case BinaryOp::sub: return sub(derive(a[0]), derive(a[1]));
        case BinaryOp::mul: return add(mul(derive(a[0]), a[1]), mul(a[0], derive(a[1])));
        case BinaryOp::div: {
          // (u/v)' = u'/v - u v' / v^2
          NodePtr v = as_float(a[1]);
          return sub(div(derive(a[0]), v), div(mul(a[0], derive(a[1])), mul(v, v)));
        }
        default: return num(0.0);
      }
    case NodeKind::select: return select(a[0], derive(a[1]), derive(a[2]));
    case NodeKind::call: return derive_call(node, target);
    default: return num(0.0);
  }
}

}  // namespace

NodePtr differentiate_by_score(const NodePtr& node) {
  return convert_to(simplify(derive_by(node, Target{})), ScalarType::floating);
}

NodePtr differentiate_by_read(const NodePtr& node, const Node& read) {
  return convert_to(simplify(derive_by(node, Target{&read})), ScalarType::floating);
}

}  // namespace flexjit::expr
