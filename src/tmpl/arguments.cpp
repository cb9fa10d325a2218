#include "tmpl/arguments.hpp"

#include <algorithm>

#include "tmpl/suggest.hpp"

namespace flexjit::tmpl {

static std::string count_of(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::vector<int> bind_arguments(const std::string& callee, const std::vector<std::string>& params,
                                size_t required, size_t positional_count,
                                const std::vector<NamedArgument>& keywords, Position call_pos,
                                const BindFailure& fail) {
  const size_t given = positional_count + keywords.size();
  if (positional_count > params.size()) {
    fail(call_pos, params.empty()
                       ? callee + " takes no arguments, got " + std::to_string(given)
                       : callee + " takes at most " + count_of(params.size(), "argument") + ", got " +
                             std::to_string(given));
  }
  std::vector<int> slots(params.size(), -1);
  for (size_t i = 0; i < positional_count; ++i) slots[i] = static_cast<int>(i);
  for (size_t k = 0; k < keywords.size(); ++k) {
    const auto& keyword = keywords[k];
    auto found = std::find(params.begin(), params.end(), keyword.name);
    if (found == params.end())
      fail(keyword.pos, callee + " has no argument named '" + keyword.name + "'" +
                            did_you_mean(keyword.name, params));
    auto& slot = slots[static_cast<size_t>(found - params.begin())];
    if (slot != -1) fail(keyword.pos, callee + " got argument '" + keyword.name + "' twice");
    slot = static_cast<int>(positional_count + k);
  }
  for (size_t i = 0; i < required; ++i)
    if (slots[i] == -1) fail(call_pos, callee + " is missing argument '" + params[i] + "'");
  return slots;
}

}  // namespace flexjit::tmpl
