#include "expr/equalities.hpp"

#include <utility>
#include <vector>

namespace flexjit::expr {
namespace {

// `node` with every subtree equal to `from` replaced by `to` (same type: both integers).
NodePtr replace(const NodePtr& node, const Node& from, const NodePtr& to) {
  if (same_tree(*node, from)) return to;
  bool changed = false;
  std::vector<NodePtr> operands;
  operands.reserve(node->operands.size());
  for (const auto& operand : node->operands) {
    operands.push_back(replace(operand, from, to));
    changed = changed || operands.back() != operand;
  }
  if (!changed) return node;
  auto copy = std::make_shared<Node>(*node);
  copy->operands = std::move(operands);
  return copy;
}

// The integer equalities among the conjuncts of `node` (through nested `&&`).
void collect_equalities(const NodePtr& node, std::vector<std::pair<NodePtr, NodePtr>>& out) {
  if (node->kind != NodeKind::binary) return;
  if (node->binary_op == BinaryOp::logical_and) {
    collect_equalities(node->operands[0], out);
    collect_equalities(node->operands[1], out);
  } else if (node->binary_op == BinaryOp::eq && node->operands[0]->type == ScalarType::integer &&
             node->operands[1]->type == ScalarType::integer) {
    out.emplace_back(node->operands[0], node->operands[1]);
  }
}

}  // namespace

NodePtr propagate_equalities(const NodePtr& node) {
  bool changed = false;
  std::vector<NodePtr> operands;
  operands.reserve(node->operands.size());
  for (const auto& operand : node->operands) {
    operands.push_back(propagate_equalities(operand));
    changed = changed || operands.back() != operand;
  }
  if (node->kind == NodeKind::binary && node->binary_op == BinaryOp::logical_and) {
    std::vector<std::pair<NodePtr, NodePtr>> equalities;
    collect_equalities(operands[0], equalities);
    for (const auto& [a, b] : equalities) {
      const bool a_keys = tree_uses(*a, Variable::kv_idx), b_keys = tree_uses(*b, Variable::kv_idx);
      if (a_keys == b_keys) continue;  // nothing to gain: both or neither depend on the key
      const NodePtr& keep = a_keys ? b : a;
      const NodePtr& drop = a_keys ? a : b;
      NodePtr rewritten = replace(operands[1], *drop, keep);
      changed = changed || rewritten != operands[1];
      operands[1] = std::move(rewritten);
    }
  }
  if (!changed) return node;
  auto copy = std::make_shared<Node>(*node);
  copy->operands = std::move(operands);
  return copy;
}

}  // namespace flexjit::expr
