#pragma once
// Renderer: AST + context -> text. All state of one render lives on the stack of the calling
// thread, so a parsed template can be rendered by any number of threads at once.

#include <string>

#include "tmpl/ast.hpp"

namespace flexjit::tmpl {

/// Renders a parsed template. `env` (may be null) resolves `{% include %}`.
std::string render_template(const detail::TemplateData& tmpl, const Json& context, const Environment* env);

}  // namespace flexjit::tmpl
