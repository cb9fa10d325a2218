#include "expr/builtins.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace flexjit::expr {
namespace {

constexpr std::array<FunctionInfo, 20> kFunctions{{
    {"abs", false, Function::abs, 1, "x"},
    {"ceil", false, Function::ceil, 1, "x"},
    {"clamp", false, Function::clamp, 3, "x, lo, hi"},
    {"cos", false, Function::cos, 1, "x"},
    {"exp", false, Function::exp, 1, "x"},
    {"exp2", false, Function::exp2, 1, "x"},
    {"float", false, Function::to_float, 1, "x"},
    {"floor", false, Function::floor, 1, "x"},
    {"int", false, Function::to_int, 1, "x"},
    {"log", false, Function::log, 1, "x"},
    {"log2", false, Function::log2, 1, "x"},
    {"max", false, Function::max, 2, "a, b"},
    {"min", false, Function::min, 2, "a, b"},
    {"pow", false, Function::pow, 2, "x, y"},
    {"rsqrt", false, Function::rsqrt, 1, "x"},
    {"sigmoid", false, Function::sigmoid, 1, "x"},
    {"sin", false, Function::sin, 1, "x"},
    {"sqrt", false, Function::sqrt, 1, "x"},
    {"tanh", false, Function::tanh, 1, "x"},
    {"where", true, Function::abs, 3, "condition, if_true, if_false"},
}};

struct Alias {
  std::string_view from;
  std::string_view to;
};

constexpr Alias kVariableAliases[] = {
    {"q", "q_idx"},         {"query", "q_idx"},      {"q_index", "q_idx"},   {"qi", "q_idx"},
    {"q_pos", "q_idx"},     {"k", "kv_idx"},         {"kv", "kv_idx"},       {"key", "kv_idx"},
    {"k_idx", "kv_idx"},    {"kv_index", "kv_idx"},  {"ki", "kv_idx"},       {"k_pos", "kv_idx"},
    {"kv_pos", "kv_idx"},   {"s", "score"},          {"scores", "score"},    {"qk", "score"},
    {"batch", "b"},         {"head", "h"},           {"seq_len", "q_len"},   {"q_length", "q_len"},
    {"kv_length", "kv_len"}, {"k_len", "kv_len"},    {"True", "true"},       {"False", "false"},
    {"infinity", "inf"},    {"INFINITY", "inf"},     {"math.inf", "inf"},    {"torch.inf", "inf"},
    {"float.inf", "inf"},   {"np.inf", "inf"},
};

constexpr Alias kFunctionAliases[] = {
    {"fabs", "abs"},     {"fabsf", "abs"},   {"fminf", "min"},    {"fmin", "min"},
    {"fmaxf", "max"},    {"fmax", "max"},    {"select", "where"}, {"ifelse", "where"},
    {"if_else", "where"}, {"clip", "clamp"}, {"expf", "exp"},     {"exp2f", "exp2"},
    {"logf", "log"},     {"log2f", "log2"},  {"sqrtf", "sqrt"},   {"rsqrtf", "rsqrt"},
    {"tanhf", "tanh"},   {"sinf", "sin"},    {"cosf", "cos"},     {"floorf", "floor"},
    {"ceilf", "ceil"},   {"powf", "pow"},    {"minimum", "min"},  {"maximum", "max"},
    {"logistic", "sigmoid"},
};

// C++ and CUDA keywords and builtin names: a declaration may not use them even though generated
// code prefixes every declared name, so that names read the same in expressions and kernels.
constexpr std::string_view kReservedWords[] = {
    "alignas", "alignof", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
    "catch", "char", "char16_t", "char32_t", "class", "compl", "const", "const_cast",
    "constexpr", "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "for", "friend", "goto", "if", "inline",
    "long", "mutable", "namespace", "new", "noexcept", "not_eq", "nullptr", "operator",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "return",
    "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
    "template", "this", "thread_local", "throw", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor",
    "xor_eq", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "args",
};

}  // namespace

std::optional<Variable> lookup_variable(std::string_view name) noexcept {
  for (int i = 0; i < kVariableCount; ++i) {
    const auto variable = static_cast<Variable>(i);
    if (variable_name(variable) == name) return variable;
  }
  return std::nullopt;
}

const FunctionInfo* lookup_function(std::string_view name) noexcept {
  for (const auto& info : kFunctions)
    if (info.name == name) return &info;
  return nullptr;
}

const FunctionInfo& function_info(Function function) noexcept {
  for (const auto& info : kFunctions)
    if (!info.is_where && info.function == function) return info;
  return kFunctions[0];
}

std::vector<std::string> known_function_names() {
  std::vector<std::string> names;
  for (const auto& info : kFunctions) names.emplace_back(info.name);
  return names;
}

std::vector<std::string> known_variable_names(ModKind kind) {
  std::vector<std::string> names;
  for (int i = 0; i < kVariableCount; ++i) {
    const auto variable = static_cast<Variable>(i);
    if (variable == Variable::score && kind != ModKind::score) continue;
    names.emplace_back(variable_name(variable));
  }
  return names;
}

std::string_view alias_for_variable(std::string_view name) noexcept {
  for (const auto& alias : kVariableAliases)
    if (alias.from == name) return alias.to;
  return {};
}

std::string_view alias_for_function(std::string_view name) noexcept {
  for (const auto& alias : kFunctionAliases)
    if (alias.from == name) return alias.to;
  return {};
}

bool is_identifier(std::string_view name) noexcept {
  if (name.empty()) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string invalid_declaration_name(std::string_view what, std::string_view name) {
  const std::string quoted = "'" + std::string(name) + "'";
  const std::string subject = std::string(what) + " name " + quoted;
  if (name.empty()) return std::string(what) + " name is empty";
  if (!is_identifier(name))
    return subject + " is not an identifier (use letters, digits and '_', not starting with a digit)";
  if (name.size() > 64) return subject + " is longer than 64 characters";
  if (lookup_variable(name)) return subject + " is a built-in variable; choose another name";
  if (lookup_function(name)) return subject + " is a built-in function; choose another name";
  if (name == "true" || name == "false" || name == "inf" || name == "and" || name == "or" ||
      name == "not")
    return subject + " is a keyword of the expression language; choose another name";
  if (name.find("__") != std::string_view::npos || name.rfind("flexjit", 0) == 0 ||
      name.rfind("Flexjit", 0) == 0 || name[0] == '_')
    return subject +
           " is reserved for generated code (no leading '_', no '__', no 'flexjit' prefix); "
           "choose another name";
  for (std::string_view word : kReservedWords)
    if (word == name) return subject + " is a C++/CUDA keyword; choose another name";
  return {};
}

}  // namespace flexjit::expr
