#include "expr/emitter.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "expr/builtins.hpp"
#include "flexjit/error.hpp"

namespace flexjit::expr {
namespace {

// Past this a double rounds to a float infinity (2^128 - 2^103).
constexpr double kFloatOverflow = 3.4028235677973366e38;

// Nodes of the function being emitted that were bound to a local (`const float flexjit_t3 = ...;`)
// and are emitted as that name; null while a local's own definition is emitted at the top level.
thread_local const std::unordered_map<const Node*, std::string>* g_locals = nullptr;

// A mask's column values (emit_cuda_column_functions) by node, emitted as reads of the values a
// kernel computed once per key: `flexjit_column_value(value, its errors, error word)`.
thread_local const std::unordered_map<const Node*, size_t>* g_values = nullptr;

// The error word the buffer reads being emitted report into: `flexjit_errors`, or inside the
// right side of an eager && / || the lambda's own word (see emit_logical).
thread_local std::string g_error_word = "flexjit_errors";

// True when emitting `node` reads a buffer (locals are already read, at the function's top).
bool reads_buffer(const Node& node) {
  if (g_locals && g_locals->count(&node)) return false;
  if (node.kind == NodeKind::buffer_read) return true;
  for (const auto& operand : node.operands)
    if (reads_buffer(*operand)) return true;
  return false;
}

void emit(const Node& node, std::string& out);

void emit_as(const Node& node, ScalarType type, std::string& out) {
  if (node.type == type || type == ScalarType::boolean) {
    emit(node, out);
    return;
  }
  if (node.type == ScalarType::boolean) {
    // Only explicit conversions reach here (int(x) / float(x) of a bool).
    out += '(';
    emit(node, out);
    out += type == ScalarType::floating ? " ? 1.0f : 0.0f)" : " ? 1 : 0)";
    return;
  }
  if (type == ScalarType::floating && node.kind == NodeKind::literal) {
    out += emit_float_constant(node.int_value);
    return;
  }
  if (type == ScalarType::floating) {
    out += "static_cast<float>(";
    emit(node, out);
    out += ')';
    return;
  }
  out += "flexjit_f2i(";
  emit(node, out);
  out += ')';
}

void emit_call(std::string_view function, const Node& node, std::string& out) {
  out += function;
  out += '(';
  for (size_t i = 0; i < node.operands.size(); ++i) {
    if (i) out += ", ";
    emit_as(*node.operands[i], operand_type(node, i), out);
  }
  out += ')';
}

void emit_binary(const Node& node, std::string& out) {
  const Node& lhs = *node.operands[0];
  const Node& rhs = *node.operands[1];
  const ScalarType operands = operand_type(node, 0);
  auto infix = [&](std::string_view op) {
    out += '(';
    emit_as(lhs, operands, out);
    out += ' ';
    out += op;
    out += ' ';
    emit_as(rhs, operands, out);
    out += ')';
  };
  const BinaryOp op = node.binary_op;
  if (is_logical(op)) {
    // Both sides are evaluated (no branch around the right side's loads, so a row's or a
    // column's reads are shared and issued together, as FlexAttention's Triton code does). A
    // right side that reads buffers reports its out-of-bounds reads only when the left side
    // did not decide the result: a guard such as `i < n && buf[i] > 0` stays silent, as in the
    // CPU interpreter's short-circuit.
    const bool is_and = op == BinaryOp::logical_and;
    if (!reads_buffer(rhs)) {
      out += "static_cast<bool>";
      return infix(is_and ? "&" : "|");
    }
    const std::string outer = g_error_word;
    const std::string inner = "flexjit_errors_" + std::to_string(outer.size());  // unique per nesting depth
    out += is_and ? "flexjit_land(" : "flexjit_lor(";
    emit_as(lhs, ScalarType::boolean, out);
    out += ", [&](unsigned& " + inner + ") -> bool { return ";
    g_error_word = inner;
    emit_as(rhs, ScalarType::boolean, out);
    g_error_word = outer;
    out += "; }, " + outer + ")";
    return;
  }
  if (is_comparison(op)) return infix(binary_op_text(op));
  if (is_bitwise(op)) {
    if (node.type == ScalarType::boolean) {
      if (op == BinaryOp::bit_xor) return infix("!=");
      out += "static_cast<bool>";
    }
    return infix(binary_op_text(op));
  }
  if (node.type == ScalarType::integer) {
    switch (op) {
      case BinaryOp::add: return emit_call("flexjit_iadd", node, out);
      case BinaryOp::sub: return emit_call("flexjit_isub", node, out);
      case BinaryOp::mul: return emit_call("flexjit_imul", node, out);
      case BinaryOp::div: return emit_call("flexjit_idiv", node, out);
      case BinaryOp::mod: return emit_call("flexjit_imod", node, out);
      default: return;
    }
  }
  if (const auto divisor = number_literal(rhs); op == BinaryOp::div && divisor) {
    const double magnitude = std::fabs(*divisor);
    if (magnitude > 0x1p-126 && magnitude < 0x1p126) return emit_call("__fdividef", node, out);
  }
  return infix(binary_op_text(op));
}

std::string_view float_function(Function function) {
  switch (function) {
    case Function::abs: return "fabsf";
    case Function::min: return "fminf";
    case Function::max: return "fmaxf";
    case Function::clamp: return "flexjit_fclamp";
    case Function::exp: return "__expf";
    case Function::exp2: return "exp2f";
    case Function::log: return "__logf";
    case Function::log2: return "__log2f";
    case Function::sqrt: return "sqrtf";
    case Function::rsqrt: return "rsqrtf";
    case Function::tanh: return "flexjit_tanh";
    case Function::sigmoid: return "flexjit_sigmoid";
    case Function::sin: return "sinf";
    case Function::cos: return "cosf";
    case Function::floor: return "floorf";
    case Function::ceil: return "ceilf";
    case Function::pow: return "powf";
    default: return "";
  }
}

std::string_view int_function(Function function) {
  switch (function) {
    case Function::abs: return "flexjit_iabs";
    case Function::min: return "flexjit_imin";
    case Function::max: return "flexjit_imax";
    case Function::clamp: return "flexjit_iclamp";
    default: return "";
  }
}

void emit(const Node& node, std::string& out) {
  if (g_locals) {
    if (auto it = g_locals->find(&node); it != g_locals->end()) {
      out += it->second;
      return;
    }
  }
  if (g_values) {
    if (auto it = g_values->find(&node); it != g_values->end()) {
      const std::string k = std::to_string(it->second);
      out += "flexjit_column_value(flexjit_v" + k + ", flexjit_value_errors[" + k + "], " + g_error_word + ")";
      return;
    }
  }
  switch (node.kind) {
    case NodeKind::literal:
      if (node.type == ScalarType::boolean) {
        out += node.bool_value ? "true" : "false";
      } else if (node.type == ScalarType::integer) {
        if (node.int_value == INT32_MIN) out += "(-2147483647 - 1)";
        else if (node.int_value < 0) out += "(" + std::to_string(node.int_value) + ")";
        else out += std::to_string(node.int_value);
      } else {
        out += emit_float_constant(node.float_value);
      }
      return;
    case NodeKind::variable: out += variable_name(node.variable); return;
    case NodeKind::parameter: out += "args.p_" + node.name; return;
    case NodeKind::buffer_read:
      out += "flexjit_read(args.buf_" + node.name + ", " + g_error_word;
      for (const auto& index : node.operands) {
        out += ", ";
        emit_as(*index, ScalarType::integer, out);
      }
      out += ')';
      return;
    case NodeKind::unary:
      if (node.unary_op == UnaryOp::logical_not) {
        out += "(!";
        emit(*node.operands[0], out);
        out += ')';
      } else if (node.type == ScalarType::integer) {
        emit_call("flexjit_ineg", node, out);
      } else {
        out += "(-";
        emit(*node.operands[0], out);
        out += ')';
      }
      return;
    case NodeKind::binary: emit_binary(node, out); return;
    case NodeKind::select:
      out += '(';
      emit(*node.operands[0], out);
      out += " ? ";
      emit_as(*node.operands[1], node.type, out);
      out += " : ";
      emit_as(*node.operands[2], node.type, out);
      out += ')';
      return;
    case NodeKind::call:
      if (node.function == Function::to_int || node.function == Function::to_float) {
        emit_as(*node.operands[0], node.type, out);
        return;
      }
      emit_call(node.type == ScalarType::integer ? int_function(node.function) : float_function(node.function),
                node, out);
      return;
  }
}

void require_identifier(const std::string& what, const std::string& text) {
  if (!is_identifier(text))
    throw UsageError(what + " '" + text + "' is not a valid C++ identifier");
}

}  // namespace

std::string emit_float_constant(double value) {
  if (std::isnan(value)) return "__int_as_float(0x7fffffff)";
  if (std::fabs(value) >= kFloatOverflow) return value > 0 ? "flexjit_inf()" : "(-flexjit_inf())";
  const auto single = static_cast<float>(value);
  char buffer[48];
  // Nine significant digits identify a float exactly.
  std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(single));
  std::string text(buffer);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  text += 'f';
  return std::signbit(single) ? "(" + text + ")" : text;
}

std::string emit_cuda_expression(const Node& node) {
  std::string out;
  emit(node, out);
  return out;
}

namespace {

// Common subexpressions, found by structure. A derivative refers to its operands more than once
// (d tanh(u) = (1 - tanh(u)^2) u'), so nested mods gave a gradient whose text, printed as a tree,
// grew with the square of the nesting (and products exponentially): a 539-character softcap chain
// became megabytes of CUDA that NVRTC took 43 s to inline. Every subexpression used more than
// once is now emitted once into a local, which keeps the text linear in the size of the DAG.
class SharedSubexpressions {
 public:
  explicit SharedSubexpressions(const Node& root) {
    number(root);
    ++uses_[number_of_.at(&root)];
  }

  // Locals in dependency order: (node, type name, its value number).
  std::vector<const Node*> hoisted() const {
    std::vector<const Node*> out;
    for (size_t vn = 0; vn < representative_.size(); ++vn)
      if (uses_[vn] > 1 && hoistable_[vn]) out.push_back(representative_[vn]);
    return out;
  }
  // Every node (pointer) whose value number is one of `hoisted`, mapped to the local's name.
  std::unordered_map<const Node*, std::string> names(const std::vector<const Node*>& hoisted) const {
    std::unordered_map<size_t, std::string> by_number;
    for (size_t i = 0; i < hoisted.size(); ++i) by_number[number_of_.at(hoisted[i])] = "flexjit_t" + std::to_string(i);
    std::unordered_map<const Node*, std::string> out;
    for (const auto& [node, vn] : number_of_)
      if (auto it = by_number.find(vn); it != by_number.end()) out[node] = it->second;
    return out;
  }

 private:
  size_t number(const Node& node) {
    if (auto it = number_of_.find(&node); it != number_of_.end()) return it->second;  // shared pointer
    std::string key = std::to_string(static_cast<int>(node.kind)) + "|" + std::to_string(static_cast<int>(node.type)) +
                      "|" + std::to_string(static_cast<int>(node.variable)) + "|" +
                      std::to_string(static_cast<int>(node.unary_op)) + "|" +
                      std::to_string(static_cast<int>(node.binary_op)) + "|" +
                      std::to_string(static_cast<int>(node.function)) + "|" + std::to_string(node.int_value) + "|" +
                      std::to_string(node.bool_value) + "|" + node.name + "|";
    char bits[32];
    std::snprintf(bits, sizeof bits, "%a|", node.float_value);
    key += bits;
    std::vector<size_t> children;
    bool pure = node.kind != NodeKind::buffer_read;
    for (const auto& operand : node.operands) {
      const size_t child = number(*operand);
      children.push_back(child);
      key += std::to_string(child) + ",";
      pure = pure && pure_[child];
    }
    auto [it, inserted] = by_key_.emplace(key, representative_.size());
    const size_t vn = it->second;
    if (inserted) {
      representative_.push_back(&node);
      uses_.push_back(0);
      pure_.push_back(pure);
      // Leaves cost nothing to repeat. A subtree reading a buffer stays where it is: evaluated
      // eagerly it could flag an out-of-bounds read in a branch that was not taken.
      const bool leaf = node.kind == NodeKind::literal || node.kind == NodeKind::variable ||
                        node.kind == NodeKind::parameter;
      hoistable_.push_back(pure && !leaf);
      for (size_t child : children) ++uses_[child];  // once per distinct parent
    }
    number_of_[&node] = vn;
    return vn;
  }

  std::unordered_map<const Node*, size_t> number_of_;
  std::unordered_map<std::string, size_t> by_key_;
  std::vector<const Node*> representative_;  // in post order: children before parents
  std::vector<int> uses_;
  std::vector<bool> pure_, hoistable_;
};

const char* c_type(ScalarType type) {
  switch (type) {
    case ScalarType::boolean: return "bool";
    case ScalarType::integer: return "int";
    case ScalarType::floating: return "float";
  }
  return "float";
}

// The body of a mod function after its signature: pure subexpressions used more than once in
// locals, then the return statement; `values` (or null) are emitted as column values.
std::string emit_function_body(const Node& root, ModKind kind, const std::string& file,
                               const std::unordered_map<const Node*, size_t>* values) {
  std::string out = "#line 1 \"" + file + "\"\n";
  const SharedSubexpressions shared(root);
  const std::vector<const Node*> hoisted = shared.hoisted();
  const std::unordered_map<const Node*, std::string> names = shared.names(hoisted);
  struct Restore {
    ~Restore() {
      g_locals = nullptr;
      g_values = nullptr;
    }
  } restore;
  g_values = values;
  for (size_t i = 0; i < hoisted.size(); ++i) {
    // The definition refers to the locals before it (children come first), never to itself: a
    // copy of the node has the same operands but is not a key of `names`.
    out += "  const " + std::string(c_type(hoisted[i]->type)) + " flexjit_t" + std::to_string(i) + " = ";
    g_locals = &names;
    const Node shallow = *hoisted[i];
    emit(shallow, out);
    out += ";\n";
  }
  g_locals = &names;
  out += "  return ";
  emit_as(root, kind == ModKind::score ? ScalarType::floating : ScalarType::boolean, out);
  out += ";\n}\n";
  return out;
}

void require_line_file(const std::string& file) {
  for (char c : file)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/'))
      throw UsageError("#line file name '" + file + "' may only contain letters, digits and _ - . /");
}

// True when the tree reads a buffer anywhere.
bool reads_a_buffer(const Node& node) {
  std::vector<const Node*> stack = {&node};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->kind == NodeKind::buffer_read) return true;
    for (const auto& operand : n->operands) stack.push_back(operand.get());
  }
  return false;
}

// A subexpression worth computing once per key: it reads a buffer, and its value depends on the
// key (kv_idx) and on nothing that varies along a tile's rows.
bool is_column_value(const Node& node) {
  if (!tree_uses(node, Variable::kv_idx) || tree_uses(node, Variable::q_idx) || tree_uses(node, Variable::score))
    return false;
  return reads_a_buffer(node);
}

// The coefficients of q_idx and kv_idx in an int tree that is linear in them: sums, differences,
// negations and products with an int literal of the two variables and of subtrees that use
// neither. Nullopt where the tree is not of that form (or a coefficient leaves +-2^31).
std::optional<std::pair<long long, long long>> position_coefficients(const Node& node) {
  const bool uses_q = tree_uses(node, Variable::q_idx), uses_kv = tree_uses(node, Variable::kv_idx);
  if (!uses_q && !uses_kv) return std::make_pair(0ll, 0ll);
  if (node.type != ScalarType::integer) return std::nullopt;
  std::optional<std::pair<long long, long long>> out;
  if (node.kind == NodeKind::variable) {
    out = std::make_pair(node.variable == Variable::q_idx ? 1ll : 0ll, node.variable == Variable::kv_idx ? 1ll : 0ll);
  } else if (node.kind == NodeKind::unary && node.unary_op == UnaryOp::negate) {
    if (const auto c = position_coefficients(*node.operands[0])) out = std::make_pair(-c->first, -c->second);
  } else if (node.kind == NodeKind::binary && node.operands.size() == 2 &&
             (node.binary_op == BinaryOp::add || node.binary_op == BinaryOp::sub)) {
    const auto l = position_coefficients(*node.operands[0]), r = position_coefficients(*node.operands[1]);
    const long long sign = node.binary_op == BinaryOp::add ? 1 : -1;
    if (l && r) out = std::make_pair(l->first + sign * r->first, l->second + sign * r->second);
  } else if (node.kind == NodeKind::binary && node.operands.size() == 2 && node.binary_op == BinaryOp::mul) {
    for (int side = 0; side < 2 && !out; ++side) {
      const Node& k = *node.operands[side];
      if (k.kind != NodeKind::literal || k.type != ScalarType::integer) continue;
      if (const auto c = position_coefficients(*node.operands[1 - side]))
        out = std::make_pair(k.int_value * c->first, k.int_value * c->second);
    }
  }
  constexpr long long kLimit = 1ll << 31;
  if (out && (std::llabs(out->first) >= kLimit || std::llabs(out->second) >= kLimit)) return std::nullopt;
  return out;
}

// True when the tree's value depends on q_idx and kv_idx only through kv_idx - q_idx: every use of
// them lies in a linear int subtree (position_coefficients) whose two coefficients cancel. Such a
// tree's value at (q_idx, kv_idx) is its value at (0, kv_idx - q_idx) in 32-bit wrapping arithmetic.
bool depends_on_positions_by_difference(const Node& node) {
  if (!tree_uses(node, Variable::q_idx) && !tree_uses(node, Variable::kv_idx)) return true;
  if (const auto c = position_coefficients(node)) return c->first + c->second == 0;
  if (node.kind == NodeKind::variable) return false;
  for (const auto& operand : node.operands)
    if (!depends_on_positions_by_difference(*operand)) return false;
  return true;
}

// A subexpression worth computing once per diagonal of a tile (per value of kv_idx - q_idx): it
// reads a buffer, uses q_idx or kv_idx, depends on them only through their difference and does
// not read the score (`rel[h][kv_idx - q_idx + 4096]`, a T5 bucket's table read).
bool is_diagonal_value(const Node& node) {
  if (tree_uses(node, Variable::score)) return false;
  if (!tree_uses(node, Variable::q_idx) && !tree_uses(node, Variable::kv_idx)) return false;
  if (!depends_on_positions_by_difference(node)) return false;
  return reads_a_buffer(node);
}

// The tree with every q_idx replaced by 0: for a diagonal value, the function of kv_idx - q_idx
// that the values function evaluates with that difference passed as kv_idx.
NodePtr with_q_idx_zero(const NodePtr& node) {
  if (node->kind == NodeKind::variable && node->variable == Variable::q_idx) return make_int(0, node->span);
  if (!tree_uses(*node, Variable::q_idx)) return node;
  auto copy = std::make_shared<Node>(*node);
  for (auto& operand : copy->operands) operand = with_q_idx_zero(operand);
  return copy;
}

// Every node of the tree that is one of `values` (by structure), mapped to that value's index.
void find_column_values(const Node& node, const std::vector<NodePtr>& values,
                        std::unordered_map<const Node*, size_t>& found) {
  for (size_t k = 0; k < values.size(); ++k)
    if (same_tree(node, *values[k])) {
      found[&node] = k;
      return;
    }
  for (const auto& operand : node.operands) find_column_values(*operand, values, found);
}

}  // namespace

static std::vector<NodePtr> largest_values(const NodePtr& root, bool (*is_value)(const Node&)) {
  std::vector<NodePtr> values;
  std::vector<NodePtr> stack = {root};
  // Pre-order, left to right: a value is found before the values inside it would be.
  while (!stack.empty()) {
    NodePtr node = stack.back();
    stack.pop_back();
    if (is_value(*node)) {
      bool known = false;
      for (const auto& v : values) known = known || same_tree(*v, *node);
      if (!known) values.push_back(node);
      continue;
    }
    for (auto it = node->operands.rbegin(); it != node->operands.rend(); ++it) stack.push_back(*it);
  }
  return values;
}

std::vector<NodePtr> column_values(const NodePtr& root) { return largest_values(root, is_column_value); }

std::vector<NodePtr> diagonal_values(const NodePtr& root) { return largest_values(root, is_diagonal_value); }

bool diagonal_value_is_added_to_score(const NodePtr& root, const std::vector<NodePtr>& values) {
  if (values.size() != 1 || root->kind != NodeKind::binary || root->binary_op != BinaryOp::add ||
      root->type != ScalarType::floating || root->operands.size() != 2)
    return false;
  auto is_score = [](const Node& n) { return n.kind == NodeKind::variable && n.variable == Variable::score; };
  auto is_bias = [&](const Node& n) { return n.type == ScalarType::floating && same_tree(n, *values[0]); };
  const Node& lhs = *root->operands[0];
  const Node& rhs = *root->operands[1];
  return (is_score(lhs) && is_bias(rhs)) || (is_bias(lhs) && is_score(rhs));
}

std::string emit_cuda_function(const Node& root, ModKind kind, const std::string& function_name,
                               const std::string& line_file) {
  require_identifier("function name", function_name);
  const std::string file = line_file.empty() ? std::string(mod_name(kind)) : line_file;
  require_line_file(file);
  std::string out = "__device__ __forceinline__ ";
  if (kind == ModKind::score)
    out += "float " + function_name +
           "(float score, int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, "
           "const FlexjitModArgs& args, unsigned& flexjit_errors) {\n";
  else
    out += "bool " + function_name +
           "(int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, "
           "const FlexjitModArgs& args, unsigned& flexjit_errors) {\n";
  return out + emit_function_body(root, kind, file, nullptr);
}

namespace {

// A constant factor far from the float range's ends, so that its products with a scale stay normal floats.
bool usable_factor(double k) { return std::fabs(k) >= 0x1p-100 && std::fabs(k) <= 0x1p100; }

// The constant of `score * k`, `k * score` or `score / c` (1 / c) at `node`, if it is one of those.
std::optional<double> score_factor_at(const Node& node) {
  if (node.kind != NodeKind::binary || node.type != ScalarType::floating || node.operands.size() != 2) return std::nullopt;
  const Node& lhs = *node.operands[0];
  const Node& rhs = *node.operands[1];
  auto is_score = [](const Node& n) { return n.kind == NodeKind::variable && n.variable == Variable::score; };
  std::optional<double> k;
  if (node.binary_op == BinaryOp::mul) {
    if (is_score(lhs)) k = number_literal(rhs);
    else if (is_score(rhs)) k = number_literal(lhs);
  } else if (node.binary_op == BinaryOp::div && is_score(lhs)) {
    if (const auto c = number_literal(rhs); c && *c != 0.0) k = 1.0 / *c;
  }
  if (k && !usable_factor(*k)) return std::nullopt;
  return k;
}

void collect_score_factors(const Node& node, std::vector<double>& factors) {
  if (const auto k = score_factor_at(node)) {
    factors.push_back(*k);
    return;
  }
  if (node.kind == NodeKind::variable && node.variable == Variable::score) {
    factors.push_back(1.0);
    return;
  }
  for (const auto& operand : node.operands) collect_score_factors(*operand, factors);
}

// The tree with every `score * prescale` form replaced by `score` (which then stands for the
// prescaled score); throws where a score is in another form and prescale is not 1.
NodePtr prescale_scores(const NodePtr& node, double prescale) {
  // (A form with another factor is walked into: its score then counts as a bare one.)
  if (const auto k = score_factor_at(*node); k && *k == prescale) return make_variable(Variable::score, node->span);
  if (node->kind == NodeKind::variable && node->variable == Variable::score) {
    if (prescale != 1.0)
      throw UsageError("internal: a score_mod's score is not multiplied by the prescale it was emitted with");
    return node;
  }
  std::vector<NodePtr> operands;
  bool changed = false;
  for (const auto& operand : node->operands) {
    operands.push_back(prescale_scores(operand, prescale));
    changed = changed || operands.back() != operand;
  }
  if (!changed) return node;
  auto copy = std::make_shared<Node>(*node);
  copy->operands = std::move(operands);
  return copy;
}

}  // namespace

std::optional<double> uniform_score_factor(const Node& root) {
  std::vector<double> factors;
  collect_score_factors(root, factors);
  if (factors.empty()) return 1.0;
  for (double k : factors)
    if (k != factors.front()) return std::nullopt;
  return factors.front();
}

// The tree a prescaled score function returns, and the factor its `score` carries. Its scores
// are acc * score_scale (the prescale divided out), and its root's literal factors are folded into
// output_factor, which then multiplies the whole; or, with `distribute` and a tree `score ± R` (R
// free of score, nested to the left: `score + kb[kv_idx] + hb[h][kv_idx]`), distributed over the
// terms, the score itself scaled by it (score_factor) and each R by a literal. With R a column
// value, staged scaled, a score then costs one FFMA where `(score + R) * log2(e)` took an FMUL, an
// FADD and an FMUL (the per-key bias forward, notes/perf.md "(zzzc)"). Only the column form
// distributes: elsewhere the hoisted scale * factor is one more live register, and the sm_80
// backward kernels beside relative tables spilled with it (0 -> 40 bytes).
struct PrescaledBody {
  NodePtr body;
  double score_factor = 1.0;  // `score` in body stands for acc * score_scale * score_factor
};

// R * factor, the factor folded into R's own literal factor where R has one (`0.5 * x`).
static NodePtr scaled_term(const NodePtr& term, double factor) {
  const Node& n = *term;
  if (n.kind == NodeKind::binary && n.binary_op == BinaryOp::mul && n.type == ScalarType::floating) {
    const auto right = number_literal(*n.operands[1]);
    const auto left = number_literal(*n.operands[0]);
    const double k = right ? *right : left ? *left : 0.0;
    const NodePtr& rest = right ? n.operands[0] : n.operands[1];
    const double folded = k * factor;
    if ((right || left) && rest->type == ScalarType::floating && usable_factor(folded))
      return make_binary(BinaryOp::mul, rest, make_float(folded), n.span);
  }
  return make_binary(BinaryOp::mul, term, make_float(factor), n.span);
}

// `score ± R` chains with each R scaled by factor, or null where the tree is not one.
static NodePtr distributed_sum(const NodePtr& node, double factor) {
  const Node& n = *node;
  if (n.kind == NodeKind::variable && n.variable == Variable::score) return node;
  if (n.kind != NodeKind::binary || n.type != ScalarType::floating ||
      (n.binary_op != BinaryOp::add && n.binary_op != BinaryOp::sub))
    return nullptr;
  const NodePtr& lhs = n.operands[0];
  const NodePtr& rhs = n.operands[1];
  const auto plain = [](const NodePtr& term) {
    return !tree_uses(*term, Variable::score) &&
           (term->type == ScalarType::floating || term->type == ScalarType::integer);
  };
  if (plain(rhs)) {
    NodePtr left = distributed_sum(lhs, factor);
    return left ? make_binary(n.binary_op, left, scaled_term(rhs, factor), n.span) : nullptr;
  }
  if (n.binary_op == BinaryOp::add && plain(lhs)) {
    NodePtr right = distributed_sum(rhs, factor);
    return right ? make_binary(BinaryOp::add, scaled_term(lhs, factor), right, n.span) : nullptr;
  }
  return nullptr;
}

static PrescaledBody prescaled_body(const Node& root, double prescale, double output_factor, bool distribute) {
  const NodePtr borrowed(&root, [](const Node*) {});  // the caller owns the tree
  NodePtr body = prescale_scores(borrowed, prescale);
  // The root's literal factors join output_factor (float operands only: an int product wraps).
  for (;;) {
    const Node& n = *body;
    if (n.type != ScalarType::floating) break;
    if (n.kind == NodeKind::unary && n.unary_op == UnaryOp::negate && n.operands[0]->type == ScalarType::floating) {
      output_factor = -output_factor;
      body = n.operands[0];
      continue;
    }
    if (n.kind != NodeKind::binary || (n.binary_op != BinaryOp::mul && n.binary_op != BinaryOp::div)) break;
    const NodePtr& lhs = n.operands[0];
    const NodePtr& rhs = n.operands[1];
    const auto right = number_literal(*rhs);
    const auto left = n.binary_op == BinaryOp::mul ? number_literal(*lhs) : std::nullopt;
    double factor;
    NodePtr rest;
    if (right && lhs->type == ScalarType::floating) {
      factor = n.binary_op == BinaryOp::mul ? *right : 1.0 / *right;
      rest = lhs;
    } else if (left && rhs->type == ScalarType::floating) {
      factor = *left;
      rest = rhs;
    } else {
      break;
    }
    const double folded = output_factor * factor;
    if (!usable_factor(folded)) break;
    output_factor = folded;
    body = rest;
  }
  if (output_factor == 1.0) return {body, 1.0};
  if (NodePtr sum = distribute ? distributed_sum(body, output_factor) : nullptr; sum && sum != body)
    return {sum, output_factor};
  return {make_binary(BinaryOp::mul, body, make_float(output_factor)), 1.0};
}

// `const float score = ...;`: the prescaled score, times the distributed factor where it has one.
static std::string score_declaration(const PrescaledBody& prescaled) {
  if (!tree_uses(*prescaled.body, Variable::score)) return "";
  if (prescaled.score_factor == 1.0) return "  const float score = flexjit_acc * flexjit_score_scale;\n";
  return "  const float score = flexjit_acc * (flexjit_score_scale * " + emit_float_constant(prescaled.score_factor) +
         ");\n";
}

std::string emit_cuda_prescaled_function(const Node& root, double prescale, double output_factor,
                                         const std::string& function_name, const std::string& line_file) {
  require_identifier("function name", function_name);
  const std::string file = line_file.empty() ? std::string(mod_name(ModKind::score)) : line_file;
  require_line_file(file);
  const PrescaledBody prescaled = prescaled_body(root, prescale, output_factor, false);
  std::string out = "__device__ __forceinline__ float " + function_name +
                    "(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, int kv_idx, "
                    "int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {\n";
  // score: the score times the prescale (the caller's score_scale holds the product).
  out += score_declaration(prescaled);
  return out + emit_function_body(*prescaled.body, ModKind::score, file, nullptr);
}

// `void NAME(int b, int h, int kv_idx, ..., unsigned (&flexjit_values)[N], unsigned
// (&flexjit_value_errors)[N])`: one key's column values (int and float bits, bool as 0 or 1) and
// the error bits of each value's reads.
static std::string emit_values_function(const std::vector<NodePtr>& values, const std::string& values_name,
                                 const std::string& line_file) {
  const std::string n = std::to_string(values.size());
  std::string out = "__device__ __forceinline__ void " + values_name +
                    "(int b, int h, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, "
                    "unsigned (&flexjit_values)[" + n +
                    "], unsigned (&flexjit_value_errors)[" + n + "]) {\n#line 1 \"" + line_file + "\"\n";
  struct Restore {
    ~Restore() { g_error_word = "flexjit_errors"; }
  } restore;
  for (size_t k = 0; k < values.size(); ++k) {
    const std::string i = std::to_string(k);
    const Node& v = *values[k];
    std::string text;
    g_error_word = "flexjit_errors";
    emit(v, text);
    out += "  {\n    unsigned flexjit_errors = 0u;\n    flexjit_values[" + i + "] = ";
    if (v.type == ScalarType::floating) out += "__float_as_uint(" + text + ");\n";
    else if (v.type == ScalarType::boolean) out += "(" + text + ") ? 1u : 0u;\n";
    else out += "static_cast<unsigned>(" + text + ");\n";
    out += "    flexjit_value_errors[" + i + "] = flexjit_errors;\n  }\n";
  }
  out += "}\n\n";
  return out;
}

// The column-value function's locals: `const T flexjit_vK = <value K from its bits>;`.
static std::string value_declarations(const std::vector<NodePtr>& values) {
  std::string out;
  for (size_t k = 0; k < values.size(); ++k) {
    const std::string i = std::to_string(k);
    const ScalarType t = values[k]->type;
    out += "  const " + std::string(c_type(t)) + " flexjit_v" + i + " = " +
           (t == ScalarType::floating  ? "__uint_as_float(flexjit_values[" + i + "])"
            : t == ScalarType::boolean ? "flexjit_values[" + i + "] != 0u"
                                       : "static_cast<int>(flexjit_values[" + i + "])") +
           ";\n";
  }
  return out;
}

std::string emit_cuda_column_functions(const Node& root, const std::string& values_name,
                                       const std::string& mask_name) {
  require_identifier("function name", values_name);
  require_identifier("function name", mask_name);
  const NodePtr borrowed(&root, [](const Node*) {});  // the caller owns the tree
  const std::vector<NodePtr> values = column_values(borrowed);
  if (values.empty()) throw UsageError("the mask_mod has no column values (no buffer read that depends on kv_idx alone)");
  const std::string n = std::to_string(values.size());
  std::string out = emit_values_function(values, values_name, "mask_mod");
  out += "__device__ __forceinline__ bool " + mask_name +
         "(int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, "
         "unsigned& flexjit_errors, const unsigned (&flexjit_values)[" + n +
         "], const unsigned (&flexjit_value_errors)[" + n + "]) {\n";
  out += value_declarations(values);
  std::unordered_map<const Node*, size_t> found;
  find_column_values(root, values, found);
  return out + emit_function_body(root, ModKind::mask, "mask_mod", &found);
}

std::string emit_cuda_prescaled_column_functions(const Node& root, double prescale, double output_factor,
                                                 const std::string& values_name, const std::string& score_name,
                                                 const std::string& line_file, bool diagonal) {
  require_identifier("function name", values_name);
  require_identifier("function name", score_name);
  const std::string file = line_file.empty() ? std::string(mod_name(ModKind::score)) : line_file;
  require_line_file(file);
  const PrescaledBody prescaled = prescaled_body(root, prescale, output_factor, true);
  const NodePtr& body = prescaled.body;
  const std::vector<NodePtr> values = diagonal ? diagonal_values(body) : column_values(body);
  if (values.empty())
    throw UsageError(diagonal ? "the score_mod has no diagonal values (no buffer read that depends on kv_idx - q_idx alone)"
                              : "the score_mod has no column values (no buffer read that depends on kv_idx alone)");
  const std::string n = std::to_string(values.size());
  std::string out;
  if (diagonal) {
    // The values function takes the diagonal (kv_idx - q_idx) in its kv_idx parameter.
    std::vector<NodePtr> at_difference;
    for (const auto& v : values) at_difference.push_back(with_q_idx_zero(v));
    out = emit_values_function(at_difference, values_name, file);
  } else {
    out = emit_values_function(values, values_name, file);
  }
  out += "__device__ __forceinline__ float " + score_name +
         "(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, "
         "const FlexjitModArgs& args, unsigned& flexjit_errors, const unsigned (&flexjit_values)[" + n +
         "], const unsigned (&flexjit_value_errors)[" + n + "]) {\n";
  out += score_declaration(prescaled);
  out += value_declarations(values);
  std::unordered_map<const Node*, size_t> found;
  find_column_values(*body, values, found);
  return out + emit_function_body(*body, ModKind::score, file, &found);
}

}  // namespace flexjit::expr
