#pragma once
// Matching call arguments to parameters, shared by filters and tests (bound when parsed) and
// macros (bound when called), so that all three report argument mistakes in the same words.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tmpl/lexer.hpp"

namespace flexjit::tmpl {

struct NamedArgument {
  std::string name;
  Position pos;
};

/// Reports a binding mistake at a position; must not return.
using BindFailure = std::function<void(Position, const std::string&)>;

/// For each parameter, which argument fills it: an index into the positional arguments followed
/// by the keyword ones, or -1 when the parameter keeps its default. `callee` reads like
/// "filter 'indent'" or "macro 'tile'"; the first `required` parameters must be given.
std::vector<int> bind_arguments(const std::string& callee, const std::vector<std::string>& params,
                                size_t required, size_t positional_count,
                                const std::vector<NamedArgument>& keywords, Position call_pos,
                                const BindFailure& fail);

}  // namespace flexjit::tmpl
