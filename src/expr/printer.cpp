#include "expr/printer.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace flexjit::expr {
namespace {

// Precedence of the node as an operand: binary operators by C precedence, unary above them,
// everything printed as an atom or a call above all.
constexpr int kUnaryPrecedence = 11;
constexpr int kAtomPrecedence = 12;

int precedence_of(const Node& node) {
  switch (node.kind) {
    case NodeKind::binary: return binary_precedence(node.binary_op);
    case NodeKind::unary: return kUnaryPrecedence;
    case NodeKind::literal:
      // A negative literal prints with a leading '-', like a unary minus.
      if ((node.type == ScalarType::integer && node.int_value < 0) ||
          (node.type == ScalarType::floating && std::signbit(node.float_value)))
        return kUnaryPrecedence;
      return kAtomPrecedence;
    default: return kAtomPrecedence;
  }
}

void print(const Node& node, std::string& out);

void print_operand(const Node& operand, bool parenthesize, std::string& out) {
  if (parenthesize) out += '(';
  print(operand, out);
  if (parenthesize) out += ')';
}

void print_arguments(const std::vector<NodePtr>& operands, std::string& out) {
  out += '(';
  for (size_t i = 0; i < operands.size(); ++i) {
    if (i) out += ", ";
    print(*operands[i], out);
  }
  out += ')';
}

void print(const Node& node, std::string& out) {
  switch (node.kind) {
    case NodeKind::literal:
      if (node.type == ScalarType::boolean) out += node.bool_value ? "true" : "false";
      else if (node.type == ScalarType::integer) out += std::to_string(node.int_value);
      else out += format_float_literal(node.float_value);
      return;
    case NodeKind::variable: out += variable_name(node.variable); return;
    case NodeKind::parameter: out += node.name; return;
    case NodeKind::buffer_read:
      out += node.name;
      for (const auto& index : node.operands) {
        out += '[';
        print(*index, out);
        out += ']';
      }
      return;
    case NodeKind::unary: {
      out += unary_op_text(node.unary_op);
      // `-(-x)` and `-(-1)` keep their parentheses so no `--` ever appears.
      print_operand(*node.operands[0], precedence_of(*node.operands[0]) <= kUnaryPrecedence, out);
      return;
    }
    case NodeKind::binary: {
      const int precedence = binary_precedence(node.binary_op);
      print_operand(*node.operands[0], precedence_of(*node.operands[0]) < precedence, out);
      out += ' ';
      out += binary_op_text(node.binary_op);
      out += ' ';
      print_operand(*node.operands[1], precedence_of(*node.operands[1]) <= precedence, out);
      return;
    }
    case NodeKind::select:
      out += "where";
      print_arguments(node.operands, out);
      return;
    case NodeKind::call:
      out += function_name(node.function);
      print_arguments(node.operands, out);
      return;
  }
}

}  // namespace

std::string format_float_literal(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const double magnitude = std::fabs(value);
  if (magnitude == 0.0 || (magnitude >= 1e-5 && magnitude < 1e16)) {
    // Positional notation with the fewest decimals that round-trip: "30.0", "0.0333333".
    for (int decimals = 1; decimals <= 25; ++decimals) {
      std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
      if (std::strtod(buffer, nullptr) == value) return buffer;
    }
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text(buffer);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string print_canonical(const Node& node) {
  std::string out;
  print(node, out);
  return out;
}

}  // namespace flexjit::expr
