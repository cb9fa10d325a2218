#include "expr/tile_bounds.hpp"

#include <cstdint>
#include <string>

#include "expr/builtins.hpp"
#include "expr/printer.hpp"
#include "flexjit/error.hpp"

namespace flexjit::expr {
namespace {

// True when the node's own operation has an interval rule (its operands are checked on their own).
bool has_rule(const Node& node) {
  if (node.type == ScalarType::floating) return false;
  if (node.kind == NodeKind::call && node.function != Function::to_int && node.function != Function::abs &&
      node.function != Function::min && node.function != Function::max && node.function != Function::clamp)
    return false;
  if (node.kind == NodeKind::binary && is_comparison(node.binary_op)) {
    const bool lhs_bool = node.operands[0]->type == ScalarType::boolean;
    const bool rhs_bool = node.operands[1]->type == ScalarType::boolean;
    if (lhs_bool != rhs_bool) return false;
    if (lhs_bool && node.binary_op != BinaryOp::eq && node.binary_op != BinaryOp::ne) return false;
  }
  return true;
}

// The outermost node, in reading order, that keeps the tree from having bounds, and why; null when
// the tree has them.
const Node* first_obstacle(const Node& node, std::string& why) {
  if (node.type == ScalarType::floating) {
    why = "it computes in float";
    return &node;
  }
  if (node.kind == NodeKind::buffer_read)
    for (const auto& index : node.operands)
      if (tree_uses(*index, Variable::kv_idx)) {
        why = "it indexes a buffer by kv_idx";
        return &node;
      }
  for (const auto& operand : node.operands)
    if (const Node* found = first_obstacle(*operand, why)) return found;
  if (!has_rule(node)) {
    why = "it has no interval rule for";
    return &node;
  }
  return nullptr;
}

void emit(const Node& node, std::string& out);

// The operand as a range (int) or a truth value (bool), converting a bool where an int is wanted.
void emit_as(const Node& node, ScalarType type, std::string& out) {
  if (type == ScalarType::integer && node.type == ScalarType::boolean) {
    out += "flexjit_rint(";
    emit(node, out);
    out += ')';
    return;
  }
  emit(node, out);
}

void emit_call(const char* function, const Node& node, ScalarType type, std::string& out) {
  out += function;
  out += '(';
  for (size_t i = 0; i < node.operands.size(); ++i) {
    if (i) out += ", ";
    emit_as(*node.operands[i], type, out);
  }
  out += ')';
}

const char* range_comparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::lt: return "flexjit_rlt";
    case BinaryOp::le: return "flexjit_rle";
    case BinaryOp::gt: return "flexjit_rgt";
    case BinaryOp::ge: return "flexjit_rge";
    case BinaryOp::eq: return "flexjit_req";
    default: return "flexjit_rne";
  }
}

void emit_binary(const Node& node, std::string& out) {
  const BinaryOp op = node.binary_op;
  if (is_comparison(op)) {
    if (node.operands[0]->type == ScalarType::boolean)
      return emit_call(op == BinaryOp::eq ? "flexjit_teq" : "flexjit_txor", node, ScalarType::boolean, out);
    return emit_call(range_comparison(op), node, ScalarType::integer, out);
  }
  if (node.type == ScalarType::boolean) {  // && || and & | ^ of bools
    const char* f = op == BinaryOp::logical_and || op == BinaryOp::bit_and ? "flexjit_tand"
                    : op == BinaryOp::logical_or || op == BinaryOp::bit_or ? "flexjit_tor"
                                                                           : "flexjit_txor";
    return emit_call(f, node, ScalarType::boolean, out);
  }
  const char* f = "";
  switch (op) {
    case BinaryOp::add: f = "flexjit_radd"; break;
    case BinaryOp::sub: f = "flexjit_rsub"; break;
    case BinaryOp::mul: f = "flexjit_rmul"; break;
    case BinaryOp::div: f = "flexjit_rdiv"; break;
    case BinaryOp::mod: f = "flexjit_rmod"; break;
    case BinaryOp::bit_and: f = "flexjit_rand"; break;
    case BinaryOp::bit_or: f = "flexjit_ror"; break;
    case BinaryOp::bit_xor: f = "flexjit_rxor"; break;
    default: throw UsageError("tile bounds: binary operator without an int rule");
  }
  emit_call(f, node, ScalarType::integer, out);
}

void emit(const Node& node, std::string& out) {
  switch (node.kind) {
    case NodeKind::literal:
      if (node.type == ScalarType::boolean) {
        out += node.bool_value ? "flexjit_truth_of(true)" : "flexjit_truth_of(false)";
      } else {
        out += "flexjit_range_of(";
        out += node.int_value == INT32_MIN ? std::string("-2147483647 - 1") : std::to_string(node.int_value);
        out += ')';
      }
      return;
    case NodeKind::variable:
      switch (node.variable) {
        case Variable::h: case Variable::q_idx: case Variable::kv_idx: out += variable_name(node.variable); return;
        case Variable::b: case Variable::q_len: case Variable::kv_len:
          out += "flexjit_range_of(" + std::string(variable_name(node.variable)) + ")";
          return;
        default: throw UsageError("tile bounds: a mask_mod reads no score");
      }
    case NodeKind::parameter: out += "flexjit_range_of(args.p_" + node.name + ")"; return;
    case NodeKind::buffer_read:
      out += "flexjit_read_range(args.buf_" + node.name + ", flexjit_unsure";
      for (const auto& index : node.operands) {
        out += ", ";
        emit_as(*index, ScalarType::integer, out);
      }
      out += ')';
      return;
    case NodeKind::unary:
      out += node.unary_op == UnaryOp::logical_not ? "flexjit_tnot(" : "flexjit_rneg(";
      emit_as(*node.operands[0], node.unary_op == UnaryOp::logical_not ? ScalarType::boolean : ScalarType::integer,
              out);
      out += ')';
      return;
    case NodeKind::binary: emit_binary(node, out); return;
    case NodeKind::select:
      out += node.type == ScalarType::boolean ? "flexjit_tselect(" : "flexjit_rselect(";
      emit(*node.operands[0], out);
      out += ", ";
      emit_as(*node.operands[1], node.type, out);
      out += ", ";
      emit_as(*node.operands[2], node.type, out);
      out += ')';
      return;
    case NodeKind::call:
      switch (node.function) {
        case Function::to_int: emit_as(*node.operands[0], ScalarType::integer, out); return;
        case Function::abs: return emit_call("flexjit_rabs", node, ScalarType::integer, out);
        case Function::min: return emit_call("flexjit_rmin", node, ScalarType::integer, out);
        case Function::max: return emit_call("flexjit_rmax", node, ScalarType::integer, out);
        case Function::clamp: return emit_call("flexjit_rclamp", node, ScalarType::integer, out);
        default: throw UsageError("tile bounds: a float function reached the int rules");
      }
  }
}

}  // namespace

bool has_tile_bounds(const Node& root) {
  std::string why;
  return root.type == ScalarType::boolean && first_obstacle(root, why) == nullptr;
}

std::string tile_bounds_obstacle(const Node& root) {
  if (has_tile_bounds(root)) return "";
  if (root.type != ScalarType::boolean) return "it is not a mask_mod (a bool)";
  std::string why;
  const Node* node = first_obstacle(root, why);
  return node ? why + ": " + print_canonical(*node) : "it cannot be bounded";
}

std::string emit_tile_bounds_function(const Node& root, const std::string& function_name) {
  if (!is_identifier(function_name))
    throw UsageError("function name '" + function_name + "' is not a valid C++ identifier");
  if (!has_tile_bounds(root))
    throw UsageError("this mask_mod has no tile bounds (it computes in float or indexes a buffer by kv_idx); "
                     "classify its tiles position by position instead");
  std::string out = "__device__ __forceinline__ int " + function_name +
                    "(int b, FlexjitRange h, FlexjitRange q_idx, FlexjitRange kv_idx, int q_len, int kv_len, "
                    "const FlexjitModArgs& args) {\n"
                    "  bool flexjit_unsure = false;\n"
                    "  const FlexjitTruth flexjit_kept = ";
  emit(root, out);
  out += ";\n  (void)b; (void)h; (void)q_idx; (void)kv_idx; (void)q_len; (void)kv_len; (void)args;\n";
  out += "  return flexjit_tile_class(flexjit_kept, flexjit_unsure);\n}\n";
  return out;
}

}  // namespace flexjit::expr
