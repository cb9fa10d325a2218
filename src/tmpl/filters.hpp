#pragma once
// The built-in filters (`x | indent(4)`) and tests (`x is defined`). Each declares its
// parameters so that the parser can bind and count arguments before anything renders; the
// functions then only check types. Failures throw ValueError (the renderer adds the position).

#include <string>
#include <string_view>
#include <vector>

#include "tmpl/value.hpp"

namespace flexjit::tmpl {

struct ParamSpec {
  std::string name;
  Json default_value;  // used when the argument is left out (only for optional parameters)
};

struct FilterSpec {
  std::string name;
  std::vector<ParamSpec> params;
  size_t required;         // the first `required` parameters have no default
  bool accepts_undefined;  // only `default`: an undefined input is passed as null `input`
  /// `input` is null when the input is undefined; `args` has one value per parameter.
  Json (*apply)(const FilterSpec& self, const Value* input, const std::vector<Value>& args);
};

struct TestSpec {
  std::string name;
  std::vector<ParamSpec> params;
  size_t required;
  bool accepts_undefined;  // `defined` / `undefined`
  bool (*check)(const TestSpec& self, const Value* input, const std::vector<Value>& args);
};

/// The filter called `name`, or null.
const FilterSpec* find_filter(std::string_view name);
/// Every filter name, for suggestions.
std::vector<std::string> filter_names();
/// The test called `name`, or null.
const TestSpec* find_test(std::string_view name);
/// Every test name, for suggestions.
std::vector<std::string> test_names();

/// Jinja's `indent`: every line but the first (unless `first`) gets `indentation` in front;
/// blank lines stay blank unless `blank`.
std::string indent_lines(const std::string& text, const std::string& indentation, bool first, bool blank);

}  // namespace flexjit::tmpl
