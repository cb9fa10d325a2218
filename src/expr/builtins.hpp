#pragma once
// The names the language knows: built-in variables, functions (with arities), keywords, and the
// rules a declared buffer / parameter name must follow so that it can never clash with them or
// with anything in the generated CUDA.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expr/ast.hpp"

namespace flexjit::expr {

/// A callable name. `where` is not a Function (it becomes a select node).
struct FunctionInfo {
  std::string_view name;
  bool is_where = false;
  Function function = Function::abs;
  int arity = 1;
  std::string_view parameters;  // "x", "a, b", "x, lo, hi": shown in arity errors
};

std::optional<Variable> lookup_variable(std::string_view name) noexcept;
const FunctionInfo* lookup_function(std::string_view name) noexcept;
const FunctionInfo& function_info(Function function) noexcept;

/// Every function name, sorted ("abs, ceil, clamp, ...").
std::vector<std::string> known_function_names();
/// The variables a mod of `kind` may read, in signature order.
std::vector<std::string> known_variable_names(ModKind kind);

/// Names people carry over from PyTorch or C (`q`, `kv`, `fabs`, `select`, `True`): the name the
/// language uses instead, or "" if there is none.
std::string_view alias_for_variable(std::string_view name) noexcept;
std::string_view alias_for_function(std::string_view name) noexcept;

/// True for `[A-Za-z_][A-Za-z0-9_]*`.
bool is_identifier(std::string_view name) noexcept;
/// Why `name` cannot name a buffer or parameter ("" when it can). `what` is "buffer"/"parameter".
std::string invalid_declaration_name(std::string_view what, std::string_view name);

}  // namespace flexjit::expr
