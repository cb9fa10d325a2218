#pragma once
// Parser: tokens -> AST. Recursive descent with Jinja's operator precedence, from loosest to
// tightest: `x if c else y`, `or`, `and`, `not`, comparisons and `in`, `+ -`, `~`,
// `* / // %`, `**`, unary `- +`, then filters / tests, then `.attr`, `[key]` and calls.
// Filters and tests are looked up and their arguments bound here, so a misspelt filter fails
// when the template is parsed, not when some branch first renders it.

#include <string>
#include <string_view>

#include "tmpl/ast.hpp"

namespace flexjit::tmpl {

/// Parses a whole template. Throws TemplateError on the first syntax error.
Body parse_template(const std::string& template_name, std::string_view text, const Options& options);

}  // namespace flexjit::tmpl
