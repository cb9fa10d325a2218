#pragma once
/// \file
/// flexjit's template engine: a strict subset of Jinja over `nlohmann::json` contexts, used to
/// render the CUDA kernel templates. A template is parsed once into an AST (`Template::parse`) and
/// rendered many times; rendering is `const` and safe to run from several threads at once.
///
/// Supported: `{{ expr }}`, `{% if/elif/else %}`, `{% for x in xs %}` / `{% for k, v in o.items() %}`
/// (with `loop.index`, `index0`, `revindex`, `revindex0`, `first`, `last`, `length`, and
/// `{% else %}` for an empty list), `{% set x = ... %}` and `{% set x %}...{% endset %}`,
/// `{% include name [ignore missing] %}`, `{% macro m(a, b=1) %}`, `{% filter f %}`,
/// `{% raw %}`, `{# comments #}`, and the whitespace controls `-` / `+`. Expressions: literals,
/// lists, `.attr`, `[key]`, calls of macros, `range()` and `items()` / `keys()` / `values()`,
/// filters (abs, count, d, default, first, float, indent, int, join, last, length, lower, replace,
/// string, trim, upper), tests (boolean, defined, divisibleby, even, float, integer, iterable,
/// mapping, none, number, odd, sequence, string, undefined), `and or not`, comparisons (chained),
/// `in` / `not in`, `+ - * / // % **`, `~`, `x if c else y`, all with Jinja's precedence.
/// Scoping is Jinja's: a `set` inside a loop iteration, macro, include, set block or filter block
/// stays there (a `set` inside `if` does not); a macro sees its arguments and the scope where it
/// was defined, not its caller's variables. Whitespace handling matches Jinja 3.1 exactly.
///
/// Where it differs from Jinja, it is stricter or simpler:
///   - an undefined variable, attribute, key or index is an error, except as the operand of
///     `default(...)` or `is defined` / `is not defined`; there, a whole chain (`a.b[0].c`) is
///     undefined if any link is missing;
///   - `default(x)` also replaces `none` (null in the JSON context), not only undefined values;
///   - filters check the types they are given (`upper` of an int is an error, not "1");
///   - `x if c` needs its `else`; `true == 1` is false (JSON booleans are not numbers);
///   - `range()`, `items()`, `keys()` and `values()` give lists; objects iterate in key order
///     (nlohmann::json keeps keys sorted); an included template also sees `loop`;
///   - not supported: dict literals, tuples, slices, string methods, `{% extends %}` /
///     `{% block %}` / `{% import %}` / `{% call %}`, loop filters (`for x in y if c`), tests
///     without parentheses (`x is divisibleby 3`), and the `|safe` / autoescape machinery.
/// Values print like Jinja: ints as ints, floats in Python's shortest round-trip form (`1.0`,
/// `1e-05`), booleans as `True` / `False`, null as `None`, lists and objects like Python's repr.

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "flexjit/error.hpp"

namespace flexjit::tmpl {

/// The type of template contexts and of every value a template computes.
using Json = nlohmann::json;

/// Limits that keep a hostile or broken template from exhausting the stack, the time or memory.
struct Limits {
  /// Deepest chain of `{% include %}` (a template including one including one ...).
  static constexpr int kMaxIncludeDepth = 32;
  /// Deepest chain of macro calls (a macro may call itself, but not without end).
  static constexpr int kMaxMacroDepth = 64;
  /// Deepest nesting of an expression (parentheses, operators, filter chains, lists).
  static constexpr int kMaxExpressionDepth = 64;
  /// Deepest nesting of blocks (`if` in `for` in `macro` ...).
  static constexpr int kMaxBlockDepth = 64;
  /// Most items `range()` may produce.
  static constexpr long long kMaxRangeLength = 1000000;
  /// Most loop iterations in one render, all loops together (nested loops multiply, so a bound
  /// on each `range()` alone does not bound the time a render takes).
  static constexpr long long kMaxLoopIterations = 100000;
  /// Most bytes one render writes, captured blocks included (our kernels are about 100 KB).
  static constexpr size_t kMaxOutputBytes = size_t{64} << 20;
};

/// Where `{% include %}` and `Environment` find templates by name. Implementations must be safe
/// to call from several threads at once (an `Environment` calls them without a lock).
class Loader {
 public:
  virtual ~Loader() = default;
  /// The text of the template `name`, or nothing when there is no such template.
  virtual std::optional<std::string> load(const std::string& name) const = 0;
  /// The names this loader knows, used only to suggest a name when one is not found. The default
  /// knows none (no suggestion).
  virtual std::vector<std::string> names() const { return {}; }
};

/// A loader over templates held in memory (name -> text).
class MapLoader : public Loader {
 public:
  /// Serves exactly the given templates.
  explicit MapLoader(std::map<std::string, std::string> files);
  /// The text of `name`, or nothing.
  std::optional<std::string> load(const std::string& name) const override;
  /// Every name in the map.
  std::vector<std::string> names() const override;

 private:
  std::map<std::string, std::string> files_;
};

/// A loader over the files below one directory; a name is a relative path ("common/tile.j2").
/// Names that are absolute or contain a ".." component are never loaded, so a template cannot
/// read files outside the directory.
class DirectoryLoader : public Loader {
 public:
  /// Serves the files below `root`.
  explicit DirectoryLoader(std::string root);
  /// The content of `root/name`, or nothing when it does not exist or the name is not allowed.
  std::optional<std::string> load(const std::string& name) const override;
  /// Every regular file below the root, as a relative path with '/' separators.
  std::vector<std::string> names() const override;

 private:
  std::string root_;
};

/// How template text is turned into output; the names and meaning follow Jinja's flags.
struct Options {
  /// Drop the first newline after a block tag (`%}`) or a comment (`#}`).
  bool trim_blocks = true;
  /// Drop the spaces and tabs before a block tag or comment that starts a line.
  bool lstrip_blocks = true;
  /// Keep the newline that ends the template text. On by default, unlike Jinja: generated files
  /// end with a newline, and an included template's last line stays a line of its own.
  bool keep_trailing_newline = true;
};

class Environment;
class Template;

namespace detail {
struct TemplateData;
/// The parsed tree of a template (for the renderer, which follows includes).
const TemplateData& data_of(const Template& tmpl);
}  // namespace detail

/// A parsed template: immutable, cheap to copy (copies share the parsed tree), and safe to render
/// from several threads at once.
class Template {
 public:
  /// Parses `text`; `name` is used in error messages and for include-cycle detection.
  /// Throws `TemplateError` on any syntax error (unknown tag or filter, unclosed block, ...).
  static Template parse(std::string name, std::string_view text, Options options = {});
  /// Renders with `context` (a JSON object, or null for an empty one). `env` resolves
  /// `{% include %}`; without it, an include is an error. Throws `TemplateError`.
  std::string render(const Json& context, const Environment* env = nullptr) const;
  /// The name given to `parse`.
  const std::string& name() const;
  /// The options the template was parsed with.
  const Options& options() const;

 private:
  explicit Template(std::shared_ptr<const detail::TemplateData> data);
  friend const detail::TemplateData& detail::data_of(const Template& tmpl);
  std::shared_ptr<const detail::TemplateData> data_;
};

/// Loads templates by name through a `Loader`, parses each once and keeps it. Safe to use from
/// several threads at once; the references it hands out stay valid as long as it lives.
class Environment {
 public:
  /// Templates come from `loader` (may be null: then no template can be found) and are parsed
  /// with `options`.
  explicit Environment(std::shared_ptr<const Loader> loader, Options options = {});
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  /// The template `name`, parsed on first use. Throws `TemplateError` when the loader has no such
  /// template ("<name>:1:1: template 'x' not found") or it fails to parse.
  const Template& get(const std::string& name) const;
  /// Like `get`, but returns null when the loader has no such template (parse errors still throw).
  const Template* find(const std::string& name) const;
  /// `get(name).render(context, this)`.
  std::string render(const std::string& name, const Json& context) const;
  /// The loader's known name closest to `name`, for "did you mean" hints ("" if none is close).
  std::string suggest_name(const std::string& name) const;
  /// The options templates are parsed with.
  const Options& options() const { return options_; }

 private:
  std::shared_ptr<const Loader> loader_;
  Options options_;
  mutable std::mutex mutex_;
  // std::map: a reference to a cached Template stays valid while other entries are inserted.
  mutable std::map<std::string, Template> cache_;
};

}  // namespace flexjit::tmpl
