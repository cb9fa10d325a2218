#include "expr/kv_affine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "expr/gradient.hpp"
#include "expr/simplify.hpp"

namespace flexjit::expr {
namespace {

bool is_variable(const Node& n, Variable v) { return n.kind == NodeKind::variable && n.variable == v; }

// Whether score enters `node` only linearly: through +, -, negation, and products and quotients by
// score-free factors.
bool linear_in_score(const Node& node) {
  if (!tree_uses(node, Variable::score)) return true;
  if (is_variable(node, Variable::score)) return true;
  if (node.kind == NodeKind::unary) return node.unary_op == UnaryOp::negate && linear_in_score(*node.operands[0]);
  if (node.kind != NodeKind::binary || node.type != ScalarType::floating) return false;
  const Node& lhs = *node.operands[0];
  const Node& rhs = *node.operands[1];
  switch (node.binary_op) {
    case BinaryOp::add:
    case BinaryOp::sub:
      return linear_in_score(lhs) && linear_in_score(rhs);
    case BinaryOp::mul:
      return (!tree_uses(lhs, Variable::score) && linear_in_score(rhs)) ||
             (!tree_uses(rhs, Variable::score) && linear_in_score(lhs));
    case BinaryOp::div:
      return !tree_uses(rhs, Variable::score) && linear_in_score(lhs);
    default:
      return false;
  }
}

// An int sum that carries kv_idx: the bound of its size and d(sum)/d(kv_idx).
struct IntSum {
  int64_t positions = 0;  // terms that are positions (each at most the longer length)
  int64_t literals = 0;   // the sum of the literals' magnitudes
  int64_t kv_coefficient = 0;
};

bool is_position(const Node& n) {
  return n.kind == NodeKind::variable && (n.variable == Variable::q_idx || n.variable == Variable::kv_idx ||
                                          n.variable == Variable::q_len || n.variable == Variable::kv_len);
}

// Whether `node` is an int sum of positions and literals (see kv_affine_form); its terms, with
// `sign` (+1 or -1) for the negations and subtractions above it, are added to `sum`.
bool int_position_sum(const Node& node, int sign, IntSum& sum) {
  if (node.type != ScalarType::integer) return false;
  if (is_position(node)) {
    ++sum.positions;
    if (node.variable == Variable::kv_idx) sum.kv_coefficient += sign;
    return true;
  }
  if (node.kind == NodeKind::literal) {
    sum.literals += std::llabs(static_cast<long long>(node.int_value));
    return true;
  }
  if (node.kind == NodeKind::unary)
    return node.unary_op == UnaryOp::negate && int_position_sum(*node.operands[0], -sign, sum);
  if (node.kind == NodeKind::binary && (node.binary_op == BinaryOp::add || node.binary_op == BinaryOp::sub))
    return int_position_sum(*node.operands[0], sign, sum) &&
           int_position_sum(*node.operands[1], node.binary_op == BinaryOp::add ? sign : -sign, sum);
  return false;
}

// d(node)/d(kv_idx) as a tree (nullptr: not affine in kv_idx); every int sum met widens `bound`
// (the largest position count and literal sum of any of them: a bound for each).
// score counts as a constant here (linear_in_score keeps it out of every product with kv_idx).
NodePtr kv_slope(const NodePtr& node, IntSum& bound) {
  const Node& n = *node;
  if (!tree_uses(n, Variable::kv_idx)) return make_int(0);
  if (n.type == ScalarType::integer) {
    IntSum own;
    if (!int_position_sum(n, 1, own)) return nullptr;
    bound.positions = std::max(bound.positions, own.positions);
    bound.literals = std::max(bound.literals, own.literals);
    // (At most the sum's position count in magnitude: far inside an int.)
    return make_int(static_cast<int32_t>(own.kv_coefficient));
  }
  if (n.type != ScalarType::floating) return nullptr;
  if (n.kind == NodeKind::call && n.function == Function::to_float) return kv_slope(n.operands[0], bound);
  if (n.kind == NodeKind::unary) {
    if (n.unary_op != UnaryOp::negate) return nullptr;
    const NodePtr s = kv_slope(n.operands[0], bound);
    return s ? make_unary(UnaryOp::negate, s) : nullptr;
  }
  if (n.kind != NodeKind::binary) return nullptr;
  const NodePtr& lhs = n.operands[0];
  const NodePtr& rhs = n.operands[1];
  const bool left_free = !tree_uses(*lhs, Variable::kv_idx), right_free = !tree_uses(*rhs, Variable::kv_idx);
  switch (n.binary_op) {
    case BinaryOp::add:
    case BinaryOp::sub: {
      const NodePtr a = kv_slope(lhs, bound), b = kv_slope(rhs, bound);
      if (!a || !b) return nullptr;
      return make_binary(n.binary_op, make_call(Function::to_float, {a}), b);
    }
    case BinaryOp::mul: {
      if (left_free) {
        const NodePtr s = kv_slope(rhs, bound);
        return s ? make_binary(BinaryOp::mul, lhs, s) : nullptr;
      }
      if (right_free) {
        const NodePtr s = kv_slope(lhs, bound);
        return s ? make_binary(BinaryOp::mul, s, rhs) : nullptr;
      }
      return nullptr;
    }
    case BinaryOp::div: {
      // A float quotient (an int one floors); the divisor free of kv_idx.
      if (!right_free) return nullptr;
      const NodePtr s = kv_slope(lhs, bound);
      return s ? make_binary(BinaryOp::div, make_call(Function::to_float, {s}), rhs) : nullptr;
    }
    default:
      return nullptr;
  }
}

}  // namespace

std::optional<KvAffineParts> kv_affine_form(const NodePtr& root) {
  if (root->type != ScalarType::floating || !tree_uses(*root, Variable::score) || !tree_uses(*root, Variable::kv_idx))
    return std::nullopt;
  if (!linear_in_score(*root)) return std::nullopt;
  const NodePtr derivative = differentiate_by_score(root);
  const auto g = number_literal(*derivative);
  if (!g || *g == 0.0 || !std::isfinite(*g)) return std::nullopt;
  IntSum bound;
  NodePtr slope = kv_slope(root, bound);
  if (!slope) return std::nullopt;
  slope = simplify(make_call(Function::to_float, {slope}));
  if (tree_uses(*slope, Variable::score) || tree_uses(*slope, Variable::kv_idx)) return std::nullopt;
  // Every position is below or at the longer length L, so an int sum is at most
  // positions * L + literals in magnitude.
  constexpr int64_t kIntMax = INT32_MAX;
  int64_t max_len = kIntMax;
  if (bound.literals >= kIntMax) return std::nullopt;
  if (bound.positions > 0) max_len = (kIntMax - bound.literals) / bound.positions;
  if (max_len < 1) return std::nullopt;
  KvAffineParts parts;
  parts.score_factor = *g;
  parts.kv_slope = std::move(slope);
  parts.max_len = static_cast<int>(max_len);
  return parts;
}

}  // namespace flexjit::expr
