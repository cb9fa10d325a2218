#include "expr/checker.hpp"

#include <string>

#include "expr/builtins.hpp"
#include "expr/simplify.hpp"

namespace flexjit::expr {
namespace {

std::string type_phrase(ScalarType type) {
  switch (type) {
    case ScalarType::boolean: return "a bool";
    case ScalarType::integer: return "an int";
    case ScalarType::floating: return "a float";
  }
  return "?";
}

std::string ordinal_operand(size_t index) { return index == 0 ? "left" : "right"; }

std::string index_example(std::string_view buffer, size_t rank) {
  static const char* const kIndexNames[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
  std::string out(buffer);
  for (size_t i = 0; i < rank && i < 8; ++i) out += std::string("[") + kIndexNames[i] + "]";
  return out;
}

class Checker {
 public:
  Checker(ModKind kind, const Declarations& declarations, DiagnosticSink& sink)
      : kind_(kind), declarations_(declarations), sink_(sink) {}

  NodePtr check_root(const Syntax& root) {
    NodePtr node = check(root);
    if (!node) return nullptr;
    if (kind_ == ModKind::score && node->type == ScalarType::boolean) {
      const std::string condition = sink_.quote(root.span);
      sink_.error(root.span, "score_mod must return a number, but this expression is a bool",
                  "to mask by a condition write `where(" +
                      (condition.empty() ? std::string("condition") : condition) +
                      ", score, -inf)`, or give the condition as the mask_mod");
      return nullptr;
    }
    if (kind_ == ModKind::mask && node->type != ScalarType::boolean) {
      const std::string value = sink_.quote(root.span);
      sink_.error(root.span,
                  "mask_mod must return a bool, but this expression is " + type_phrase(node->type),
                  "compare values to get a bool, e.g. `q_idx >= kv_idx`" +
                      (value.empty() || node->type != ScalarType::integer
                           ? std::string()
                           : "; `" + value + " != 0` tests for nonzero"));
      return nullptr;
    }
    return node;
  }

 private:
  NodePtr check(const Syntax& syntax) {
    switch (syntax.kind) {
      case SyntaxKind::integer: return make_int(static_cast<int32_t>(syntax.integer), syntax.span);
      case SyntaxKind::floating: return make_float(syntax.floating, syntax.span);
      case SyntaxKind::boolean: return make_bool(syntax.boolean, syntax.span);
      case SyntaxKind::name: return check_name(syntax);
      case SyntaxKind::unary: return check_unary(syntax);
      case SyntaxKind::binary: return check_binary(syntax);
      case SyntaxKind::conditional: return check_select(syntax, "'?:'", "the condition of '?:'");
      case SyntaxKind::call: return check_call(syntax);
      case SyntaxKind::index: return check_index(syntax);
    }
    return nullptr;
  }

  std::vector<std::string> value_candidates() const {
    std::vector<std::string> names = known_variable_names(kind_);
    for (const auto& param : declarations_.params) names.push_back(param.name);
    for (const auto& buffer : declarations_.buffers) names.push_back(buffer.name);
    names.insert(names.end(), {"true", "false", "inf"});
    return names;
  }

  std::string known_values_hint() const {
    std::string hint = "known variables: " + join(known_variable_names(kind_));
    if (!declarations_.params.empty()) {
      std::vector<std::string> names;
      for (const auto& param : declarations_.params) names.push_back(param.name);
      hint += "; parameters: " + join(names);
    }
    if (!declarations_.buffers.empty()) {
      std::vector<std::string> names;
      for (const auto& buffer : declarations_.buffers) names.push_back(buffer.name);
      hint += "; buffers: " + join(names);
    }
    return hint;
  }

  NodePtr check_name(const Syntax& syntax) {
    const std::string_view name = syntax.text;
    if (auto variable = lookup_variable(name)) {
      if (*variable == Variable::score && kind_ == ModKind::mask) {
        sink_.error(syntax.op_span, "'score' is only available in score_mod",
                    "a mask_mod decides from positions alone; to mask by score write "
                    "`where(condition, score, -inf)` as the score_mod");
        return nullptr;
      }
      return make_variable(*variable, syntax.span);
    }
    if (const ParamDecl* param = declarations_.find_param(name)) return make_parameter(*param, syntax.span);
    if (const BufferDecl* buffer = declarations_.find_buffer(name)) {
      sink_.error(syntax.op_span, "buffer '" + buffer->name + "' must be indexed",
                  "write `" + index_example(buffer->name, buffer->shape.size()) + "`");
      return nullptr;
    }
    if (const FunctionInfo* function = lookup_function(name)) {
      sink_.error(syntax.op_span,
                  "'" + std::string(name) + "' is a function; call it as `" + std::string(name) +
                      "(" + std::string(function->parameters) + ")`");
      return nullptr;
    }
    report_unknown_value(syntax);
    return nullptr;
  }

  void report_unknown_value(const Syntax& syntax) {
    const std::string name(syntax.text);
    const size_t dot = name.rfind('.');
    if (dot != std::string::npos) {
      const std::string last = name.substr(dot + 1);
      if (const FunctionInfo* function = lookup_function(last)) {
        sink_.error(syntax.op_span, "unknown name '" + name + "' (did you mean '" + last + "'?)",
                    "functions are called without a module prefix: `" + last + "(" +
                        std::string(function->parameters) + ")`");
        return;
      }
    }
    std::string suggestion(alias_for_variable(name));
    if (suggestion.empty()) suggestion = nearest_name(name, value_candidates());
    if (suggestion == "score" && kind_ == ModKind::mask) suggestion.clear();
    if (!suggestion.empty()) {
      sink_.error(syntax.op_span,
                  "unknown variable '" + name + "' (did you mean '" + suggestion + "'?)");
      return;
    }
    std::string hint = known_values_hint();
    if (is_identifier(name))
      hint += "; to pass a value at launch, declare a parameter (CLI: `--param " + name + ":float`)";
    sink_.error(syntax.op_span, "unknown variable '" + name + "'", hint);
  }

  NodePtr check_unary(const Syntax& syntax) {
    NodePtr operand = check(*syntax.operands[0]);
    if (!operand) return nullptr;
    if (syntax.unary_op == UnaryOp::negate && operand->type == ScalarType::boolean) {
      sink_.error(syntax.operands[0]->span, "'-' needs a number, but its operand is a bool",
                  "use '!' to negate a bool");
      return nullptr;
    }
    if (syntax.unary_op == UnaryOp::logical_not && operand->type != ScalarType::boolean) {
      const std::string text = sink_.quote(syntax.operands[0]->span);
      sink_.error(syntax.operands[0]->span,
                  "'!' needs a bool, but its operand is " + type_phrase(operand->type),
                  "write `" +
                      (text.empty() ? std::string("x")
                                    : text.find(' ') == std::string::npos ? text : "(" + text + ")") +
                      " == 0` to test for zero");
      return nullptr;
    }
    return make_unary(syntax.unary_op, std::move(operand), syntax.span);
  }

  static bool is_literal_zero(const Node& node) {
    if (node.kind != NodeKind::literal) return false;
    return (node.type == ScalarType::integer && node.int_value == 0) ||
           (node.type == ScalarType::floating && node.float_value == 0.0);
  }

  NodePtr check_binary(const Syntax& syntax) {
    NodePtr lhs = check(*syntax.operands[0]);
    NodePtr rhs = check(*syntax.operands[1]);
    if (!lhs || !rhs) return nullptr;
    const BinaryOp op = syntax.binary_op;
    const std::string op_text = "'" + std::string(binary_op_text(op)) + "'";
    const NodePtr* operands[2] = {&lhs, &rhs};

    if (is_logical(op)) {
      bool ok = true;
      for (size_t i = 0; i < 2; ++i) {
        const Node& operand = **operands[i];
        if (operand.type == ScalarType::boolean) continue;
        const std::string text = sink_.quote(syntax.operands[i]->span);
        sink_.error(syntax.operands[i]->span,
                    "the " + ordinal_operand(i) + " operand of " + op_text + " is " +
                        type_phrase(operand.type) + ", but " + op_text + " needs bools",
                    "write `" + (text.empty() ? std::string("x") : text) +
                        " != 0` to test a number for nonzero");
        ok = false;
      }
      return ok ? make_binary(op, std::move(lhs), std::move(rhs), syntax.span) : nullptr;
    }
    if (is_bitwise(op)) {
      const bool ints = lhs->type == ScalarType::integer && rhs->type == ScalarType::integer;
      const bool bools = lhs->type == ScalarType::boolean && rhs->type == ScalarType::boolean;
      if (ints || bools) return make_binary(op, std::move(lhs), std::move(rhs), syntax.span);
      std::string hint;
      if (op == BinaryOp::bit_xor && (lhs->type == ScalarType::floating || rhs->type == ScalarType::floating))
        hint = "'^' is bitwise xor, not a power; write `pow(x, y)`";
      else if (lhs->type == ScalarType::boolean || rhs->type == ScalarType::boolean)
        hint = "as in C, " + op_text +
               " binds more loosely than comparisons: parenthesise, e.g. `(x & 1) == 0`; "
               "on bools use '&&' or '||'";
      else
        hint = "bitwise operators work on ints; convert with `int(x)`";
      sink_.error(syntax.op_span,
                  op_text + " needs two ints or two bools, but its operands are " +
                      type_phrase(lhs->type) + " and " + type_phrase(rhs->type),
                  hint);
      return nullptr;
    }
    if (is_comparison(op)) {
      const bool equality = op == BinaryOp::eq || op == BinaryOp::ne;
      const bool numbers = is_number(lhs->type) && is_number(rhs->type);
      const bool bools = lhs->type == ScalarType::boolean && rhs->type == ScalarType::boolean;
      if (numbers || (equality && bools))
        return make_binary(op, std::move(lhs), std::move(rhs), syntax.span);
      if (bools)
        sink_.error(syntax.op_span, op_text + " cannot order bools",
                    "only '==' and '!=' compare bools");
      else
        sink_.error(syntax.op_span,
                    "cannot compare " + type_phrase(lhs->type) + " with " + type_phrase(rhs->type) +
                        " using " + op_text,
                    "turn the number into a bool first, e.g. `x != 0`");
      return nullptr;
    }
    // Arithmetic.
    bool ok = true;
    for (size_t i = 0; i < 2; ++i) {
      const Node& operand = **operands[i];
      if (op == BinaryOp::mod && operand.type == ScalarType::floating) {
        sink_.error(syntax.operands[i]->span,
                    "'%' needs ints, but its " + ordinal_operand(i) + " operand is a float",
                    "for a float remainder write `x - y * floor(x / y)`");
        ok = false;
      } else if (operand.type == ScalarType::boolean) {
        sink_.error(syntax.operands[i]->span,
                    op_text + " needs numbers, but its " + ordinal_operand(i) + " operand is a bool",
                    "convert it with `int(...)` or `float(...)`, or choose a value with "
                    "`where(condition, a, b)`");
        ok = false;
      }
    }
    if (!ok) return nullptr;
    if ((op == BinaryOp::div || op == BinaryOp::mod) && is_literal_zero(*rhs)) {
      sink_.error(syntax.op_span, op == BinaryOp::div ? "division by zero" : "remainder by zero",
                  "the divisor is the literal 0");
      return nullptr;
    }
    // A divisor that folds to 0 (`q_idx / (1 - 1)`) is as wrong as a literal one.
    if ((op == BinaryOp::div || op == BinaryOp::mod) && rhs->kind != NodeKind::literal &&
        is_literal_zero(*simplify(rhs))) {
      const std::string divisor = sink_.quote(syntax.operands[1]->span);
      sink_.error(syntax.op_span, op == BinaryOp::div ? "division by zero" : "remainder by zero",
                  divisor.empty() ? std::string("the divisor is the constant 0")
                                  : "the divisor `" + divisor + "` is the constant 0");
      return nullptr;
    }
    return make_binary(op, std::move(lhs), std::move(rhs), syntax.span);
  }

  // `c ? a : b` and `where(c, a, b)`.
  NodePtr check_select(const Syntax& syntax, const std::string& what, const std::string& condition_name) {
    NodePtr condition = check(*syntax.operands[0]);
    NodePtr if_true = check(*syntax.operands[1]);
    NodePtr if_false = check(*syntax.operands[2]);
    bool ok = condition && if_true && if_false;
    if (condition && condition->type != ScalarType::boolean) {
      const std::string text = sink_.quote(syntax.operands[0]->span);
      sink_.error(syntax.operands[0]->span,
                  condition_name + " must be a bool, but it is " + type_phrase(condition->type),
                  "write `" + (text.empty() ? std::string("x") : text) + " != 0` to test for nonzero");
      ok = false;
    }
    if (if_true && if_false && (if_true->type == ScalarType::boolean) != (if_false->type == ScalarType::boolean)) {
      sink_.error(syntax.op_span,
                  "the branches of " + what + " must both be numbers or both be bools, but they are " +
                      type_phrase(if_true->type) + " and " + type_phrase(if_false->type));
      ok = false;
    }
    if (!ok) return nullptr;
    return make_select(std::move(condition), std::move(if_true), std::move(if_false), syntax.span);
  }

  NodePtr check_call(const Syntax& syntax) {
    const std::string name(syntax.text);
    const FunctionInfo* info = lookup_function(name);
    if (!info) {
      report_unknown_function(syntax);
      // Still check the arguments: their mistakes are independent of the callee's.
      for (const auto& operand : syntax.operands) (void)check(*operand);
      return nullptr;
    }
    const size_t given = syntax.operands.size();
    if (given != static_cast<size_t>(info->arity)) {
      sink_.error(syntax.op_span,
                  "'" + name + "' takes " + std::to_string(info->arity) +
                      (info->arity == 1 ? " argument (" : " arguments (") +
                      std::string(info->parameters) + "), but was given " + std::to_string(given));
      for (const auto& operand : syntax.operands) (void)check(*operand);
      return nullptr;
    }
    if (info->is_where) return check_select(syntax, "'where'", "the first argument of 'where'");
    std::vector<NodePtr> args;
    bool ok = true;
    for (size_t i = 0; i < given; ++i) {
      NodePtr arg = check(*syntax.operands[i]);
      if (!arg) {
        ok = false;
        continue;
      }
      const bool conversion = info->function == Function::to_int || info->function == Function::to_float;
      if (arg->type == ScalarType::boolean && !conversion) {
        sink_.error(syntax.operands[i]->span,
                    "argument " + std::to_string(i + 1) + " of '" + name +
                        "' must be a number, but it is a bool",
                    "convert it with `float(...)`, or choose a value with `where(condition, a, b)`");
        ok = false;
        continue;
      }
      args.push_back(std::move(arg));
    }
    if (!ok) return nullptr;
    return make_call(info->function, std::move(args), syntax.span);
  }

  void report_unknown_function(const Syntax& syntax) {
    const std::string name(syntax.text);
    const std::string known = "known functions: " + join(known_function_names());
    if (lookup_variable(name) || declarations_.find_param(name)) {
      sink_.error(syntax.op_span,
                  "'" + name + "' is a " + (lookup_variable(name) ? "variable" : "parameter") +
                      ", not a function",
                  "only functions can be called; is an operator missing before '('?");
      return;
    }
    if (const BufferDecl* buffer = declarations_.find_buffer(name)) {
      sink_.error(syntax.op_span, "'" + name + "' is a buffer, not a function",
                  "index a buffer with brackets: `" + index_example(buffer->name, buffer->shape.size()) + "`");
      return;
    }
    std::string last = name;
    if (const size_t dot = name.rfind('.'); dot != std::string::npos) last = name.substr(dot + 1);
    std::string suggestion;
    if (last != name && lookup_function(last)) suggestion = last;
    if (suggestion.empty()) suggestion = std::string(alias_for_function(last));
    if (suggestion.empty()) suggestion = nearest_name(last, known_function_names());
    if (name == "relu") {
      sink_.error(syntax.op_span, "unknown function 'relu'", "write `max(x, 0.0)`; " + known);
      return;
    }
    sink_.error(syntax.op_span,
                "unknown function '" + name + "'" +
                    (suggestion.empty() ? std::string() : " (did you mean '" + suggestion + "'?)"),
                known);
  }

  NodePtr check_index(const Syntax& syntax) {
    // Collect `base[i0][i1]...` (the syntax nests left: index(index(base, i0), i1)).
    std::vector<const Syntax*> indices;
    const Syntax* base = &syntax;
    while (base->kind == SyntaxKind::index) {
      indices.insert(indices.begin(), base->operands[1].get());
      base = base->operands[0].get();
    }
    std::vector<NodePtr> checked;
    bool ok = true;
    for (const Syntax* index : indices) {
      NodePtr node = check(*index);
      if (!node) {
        ok = false;
        checked.push_back(nullptr);
        continue;
      }
      checked.push_back(std::move(node));
    }
    const BufferDecl* buffer = nullptr;
    if (base->kind != SyntaxKind::name) {
      sink_.error(syntax.op_span, "only buffers can be indexed",
                  "declare a buffer and index it by name, e.g. `bias[h]`");
      return nullptr;
    }
    const std::string name(base->text);
    buffer = declarations_.find_buffer(name);
    if (!buffer) {
      report_unknown_buffer(*base);
      return nullptr;
    }
    if (indices.size() != buffer->shape.size()) {
      const size_t rank = buffer->shape.size();
      sink_.error(syntax.op_span,
                  "buffer '" + name + "' has rank " + std::to_string(rank) + " but is indexed with " +
                      std::to_string(indices.size()) + (indices.size() == 1 ? " index" : " indices"),
                  "write `" + index_example(name, rank) + "`");
      return nullptr;
    }
    for (size_t i = 0; i < checked.size(); ++i) {
      if (!checked[i] || checked[i]->type == ScalarType::integer) continue;
      const std::string hint = checked[i]->type == ScalarType::floating
                                   ? "convert it with `int(x)`, which truncates toward zero; "
                                     "`floor` and `ceil` return floats, so write `int(floor(x))`"
                                   : "convert it with `int(x)` (0 or 1)";
      sink_.error(indices[i]->span,
                  "index " + std::to_string(i + 1) + " of buffer '" + name + "' is " +
                      type_phrase(checked[i]->type) + ", but buffer indices must be ints",
                  hint);
      ok = false;
    }
    if (!ok) return nullptr;
    // Constant indices are checked against the declared extents here: at run time an
    // out-of-bounds read only sets an error flag (and reads 0), so `slope[16]` on 16 elements
    // would otherwise be found only after a launch, if at all.
    for (size_t i = 0; i < checked.size(); ++i) {
      const NodePtr folded = simplify(checked[i]);
      if (folded->kind != NodeKind::literal || folded->type != ScalarType::integer) continue;
      const long long value = folded->int_value;
      const long long extent = buffer->shape[i];
      if (value >= 0 && (extent < 0 || value < extent)) continue;
      const std::string which = "index " + std::to_string(i + 1) + " of buffer '" + name + "'";
      if (value < 0)
        sink_.error(indices[i]->span, which + " is the constant " + std::to_string(value) + ", below 0",
                    "buffer indices start at 0; there is no negative indexing from the end");
      else
        sink_.error(indices[i]->span,
                    which + " is the constant " + std::to_string(value) + ", past its extent " +
                        std::to_string(extent),
                    "valid indices are 0 to " + std::to_string(extent - 1));
      ok = false;
    }
    if (!ok) return nullptr;
    return make_buffer_read(*buffer, std::move(checked), syntax.span);
  }

  void report_unknown_buffer(const Syntax& base) {
    const std::string name(base.text);
    if (lookup_variable(name) || declarations_.find_param(name)) {
      sink_.error(base.op_span, "'" + name + "' is not a buffer; only declared buffers can be indexed");
      return;
    }
    std::vector<std::string> buffers;
    for (const auto& buffer : declarations_.buffers) buffers.push_back(buffer.name);
    const std::string suggestion = nearest_name(name, buffers);
    if (!suggestion.empty()) {
      sink_.error(base.op_span, "unknown buffer '" + name + "' (did you mean '" + suggestion + "'?)");
      return;
    }
    sink_.error(base.op_span, "unknown buffer '" + name + "'",
                buffers.empty() ? "no buffers are declared; declare one with the spec (CLI: `--buffer " +
                                      name + ":i32:4096`)"
                                : "declared buffers: " + join(buffers));
  }

  ModKind kind_;
  const Declarations& declarations_;
  DiagnosticSink& sink_;
};

}  // namespace

NodePtr check_syntax(const Syntax& root, ModKind kind, const Declarations& declarations,
                     DiagnosticSink& sink) {
  const size_t errors_before = sink.count();
  NodePtr node = Checker(kind, declarations, sink).check_root(root);
  return sink.count() == errors_before ? node : nullptr;
}

}  // namespace flexjit::expr
