#pragma once
// Values as the renderer handles them, and how they print. A value is JSON data or a macro;
// JSON is held by pointer when it lives elsewhere for at least as long (the context, a frame, the
// list a loop walks) so that reading `spec.tiles` does not copy the context.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>

#include "tmpl/template.hpp"

namespace flexjit::tmpl {

struct MacroStmt;
class Frame;

/// A macro as a value: its definition, the scope it closes over, and the template it came from
/// (errors in its body name that template).
struct Macro {
  const MacroStmt* definition;
  const Frame* scope;
  const std::string* template_name;
};

class Value {
 public:
  /// Refers to `json` without copying; `json` must outlive the value.
  static Value view_of(const Json& json) { return Value(&json); }
  static Value owning(Json json) { return Value(std::move(json)); }
  static Value of_macro(Macro macro) { return Value(macro); }

  bool is_macro() const { return std::holds_alternative<Macro>(data_); }
  /// The JSON data; only for values that are not macros.
  const Json& json() const {
    if (auto pointer = std::get_if<const Json*>(&data_)) return **pointer;
    return std::get<Json>(data_);
  }
  const Macro& macro() const { return std::get<Macro>(data_); }
  /// A non-owning alias of this value, valid while this value lives unchanged.
  Value view() const { return is_macro() ? *this : view_of(json()); }
  /// A part of this value's JSON (an element or member): a view when this value is one, else a
  /// copy, since an owned value may die before the part is used.
  Value part(const Json& element) const {
    return std::holds_alternative<const Json*>(data_) ? view_of(element) : owning(element);
  }
  /// A value that owns its data, for storing beyond the lifetime of what it refers to.
  Value owned() const { return is_macro() ? *this : owning(json()); }

 private:
  explicit Value(const Json* json) : data_(json) {}
  explicit Value(Json json) : data_(std::move(json)) {}
  explicit Value(Macro macro) : data_(macro) {}
  std::variant<const Json*, Json, Macro> data_;
};

/// A failed operation on values (bad operand types, division by zero, ...). It carries no
/// position: the renderer catches it and reports it as a TemplateError at the node that failed.
class ValueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "none", "bool", "int", "float", "string", "list" or "object".
std::string type_name(const Json& json);
/// Like the above, and "macro" for macros.
std::string type_name(const Value& value);
/// "an int", "a list", ... for messages.
std::string type_name_with_article(const std::string& type);

/// Python's truth: false, 0, 0.0, "", [], {} and none are false; everything else is true.
bool truthy(const Json& json);

/// Reads an int (also an unsigned one that fits); throws ValueError if it is too large.
std::int64_t as_int(const Json& json);

/// What `{{ value }}` prints: strings as they are, everything else as `python_repr`.
std::string to_output(const Json& json);
/// Python's repr of the value: None, True, 1, 1.0, 'text', [1, 'a'], {'k': 1}.
std::string python_repr(const Json& json);
/// Python's repr of a float: the shortest text that reads back to the same double.
std::string format_float(double value);

}  // namespace flexjit::tmpl
