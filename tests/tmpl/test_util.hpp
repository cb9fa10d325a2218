#pragma once
// Helpers shared by the template engine tests.

#include <gtest/gtest.h>

#include <string>

#include "support/fuzz_seeds.hpp"
#include "tmpl/template.hpp"

namespace flexjit::tmpl::test {

/// Parses and renders `text` as template "t.j2".
inline std::string render(const std::string& text, const Json& context = Json::object(), Options options = {}) {
  flexjit::test::save_fuzz_seed(text);
  return Template::parse("t.j2", text, options).render(context);
}

/// The what() of the TemplateError that parsing + rendering `text` throws, or a note that none
/// was thrown (so a failed expectation shows what happened).
inline std::string error_of(const std::string& text, const Json& context = Json::object(), Options options = {}) {
  try {
    std::string out = render(text, context, options);
    return "<no error; rendered: " + out + ">";
  } catch (const TemplateError& error) {
    return error.what();
  }
}

/// Same, through an environment (for includes).
inline std::string error_of(const Environment& env, const std::string& name, const Json& context = Json::object()) {
  try {
    std::string out = env.render(name, context);
    return "<no error; rendered: " + out + ">";
  } catch (const TemplateError& error) {
    return error.what();
  }
}

}  // namespace flexjit::tmpl::test
