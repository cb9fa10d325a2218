// libFuzzer target: random bytes as a template, parsed and rendered with a small context and an
// environment that can include a second template. Must never crash, hang or trip a sanitizer; the
// only acceptable failure is TemplateError with a position inside the template (issue 17 items 4
// and 13: nested loops without bound, unclosed tags reported far away).
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "flexjit/error.hpp"
#include "tmpl/template.hpp"

namespace {

using flexjit::tmpl::Json;

const Json& context() {
  static const Json c = Json::parse(R"({"n": 3, "xs": [1, 2, 3], "names": ["a", "b"], "o": {"a": 1, "b": [true, null]},
                                       "s": "text", "f": 1.5, "wgmma": true, "constants": [{"type": "int", "name": "D", "value": "64"}]})");
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    flexjit::tmpl::Environment env(std::make_shared<flexjit::tmpl::MapLoader>(
        std::map<std::string, std::string>{{"main.j2", text}, {"part.j2", "[{{ n }}{% for x in xs %}{{ x }}{% endfor %}]"}}));
    (void)env.render("main.j2", context());
  } catch (const flexjit::TemplateError& e) {
    if (e.line() < 1 || e.column() < 1) std::abort();
  }
  return 0;
}
