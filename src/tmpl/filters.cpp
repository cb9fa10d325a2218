#include "tmpl/filters.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace flexjit::tmpl {
namespace {

// ---- argument checks shared by the filters and tests ----

template <class Spec>
std::string kind_of(const Spec&);
template <>
std::string kind_of(const FilterSpec& spec) { return "filter '" + spec.name + "'"; }
template <>
std::string kind_of(const TestSpec& spec) { return "test '" + spec.name + "'"; }

template <class Spec>
[[noreturn]] void fail_input(const Spec& spec, const char* expected, const Value& input) {
  throw ValueError(kind_of(spec) + " expects " + expected + ", got " + type_name(input));
}

template <class Spec>
const Json& input_of(const Spec& spec, const Value* input, const char* expected, bool (Json::*accepts)() const noexcept) {
  if (input->is_macro() || !(input->json().*accepts)()) fail_input(spec, expected, *input);
  return input->json();
}

template <class Spec>
const std::string& string_input(const Spec& spec, const Value* input) {
  return input_of(spec, input, "a string", &Json::is_string).template get_ref<const std::string&>();
}

template <class Spec>
[[noreturn]] void fail_argument(const Spec& spec, size_t index, const char* expected, const Value& arg) {
  throw ValueError(kind_of(spec) + " argument '" + spec.params[index].name + "' must be " + expected +
                   ", got " + type_name(arg));
}

template <class Spec>
const Json& argument(const Spec& spec, const std::vector<Value>& args, size_t index, const char* expected,
                     bool (Json::*accepts)() const noexcept) {
  if (args[index].is_macro() || !(args[index].json().*accepts)()) fail_argument(spec, index, expected, args[index]);
  return args[index].json();
}

template <class Spec>
bool bool_argument(const Spec& spec, const std::vector<Value>& args, size_t index) {
  return argument(spec, args, index, "a bool", &Json::is_boolean).template get<bool>();
}

template <class Spec>
const std::string& string_argument(const Spec& spec, const std::vector<Value>& args, size_t index) {
  return argument(spec, args, index, "a string", &Json::is_string).template get_ref<const std::string&>();
}

size_t count_characters(const std::string& text) {
  size_t count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

std::string trim_spaces(const std::string& text) {
  const char* spaces = " \t\n\r\f\v";
  size_t begin = text.find_first_not_of(spaces);
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(spaces) - begin + 1);
}

// ---- filters ----

Json filter_abs(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  const Json& number = input_of(self, input, "a number", &Json::is_number);
  if (number.is_number_float()) return std::fabs(number.get<double>());
  std::int64_t value = as_int(number);
  if (value == std::numeric_limits<std::int64_t>::min()) throw ValueError("integer overflow in 'abs'");
  return value < 0 ? -value : value;
}

Json filter_default(const FilterSpec& self, const Value* input, const std::vector<Value>& args) {
  const bool boolean = bool_argument(self, args, 1);
  const bool use_default = input == nullptr ||
                           (!input->is_macro() && (input->json().is_null() ||
                                                   (boolean && !truthy(input->json()))));
  const Value& chosen = use_default ? args[0] : *input;
  if (chosen.is_macro()) throw ValueError("filter 'default' cannot return a macro");
  return chosen.json();
}

Json filter_first_or_last(const FilterSpec& self, const Value* input, bool first) {
  const Json& list = input_of(self, input, "a list", &Json::is_array);
  if (list.empty()) throw ValueError("filter '" + self.name + "' got an empty list");
  return first ? list.front() : list.back();
}
Json filter_first(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  return filter_first_or_last(self, input, true);
}
Json filter_last(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  return filter_first_or_last(self, input, false);
}

Json filter_float(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  if (!input->is_macro() && input->json().is_number()) return input->json().get<double>();
  const std::string text = trim_spaces(string_input(self, input));
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw ValueError("filter 'float' cannot convert '" + text + "' to a float");
  return value;
}

Json filter_int(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  if (!input->is_macro() && input->json().is_number_integer()) return input->json();
  if (!input->is_macro() && input->json().is_number_float()) {
    double value = input->json().get<double>();
    if (!(std::fabs(value) < 9.2e18)) throw ValueError("filter 'int' cannot convert " + format_float(value) + " to an int");
    return static_cast<std::int64_t>(value);  // truncates towards zero, like Python's int()
  }
  const std::string text = trim_spaces(string_input(self, input));
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0' && errno != ERANGE) return static_cast<std::int64_t>(value);
  double real = std::strtod(text.c_str(), &end);  // "3.5" -> 3, as Jinja does
  if (text.empty() || *end != '\0' || !(std::fabs(real) < 9.2e18))
    throw ValueError("filter 'int' cannot convert '" + text + "' to an int");
  return static_cast<std::int64_t>(real);
}

Json filter_indent(const FilterSpec& self, const Value* input, const std::vector<Value>& args) {
  const std::string& text = string_input(self, input);
  std::string indentation;
  if (!args[0].is_macro() && args[0].json().is_number_integer()) {
    std::int64_t width = as_int(args[0].json());
    if (width < 0 || width > 1024)
      throw ValueError("filter 'indent' argument 'width' must be between 0 and 1024, got " + std::to_string(width));
    indentation.assign(static_cast<size_t>(width), ' ');
  } else if (!args[0].is_macro() && args[0].json().is_string()) {
    indentation = args[0].json().get<std::string>();
  } else {
    fail_argument(self, 0, "an int or a string", args[0]);
  }
  return indent_lines(text, indentation, bool_argument(self, args, 1), bool_argument(self, args, 2));
}

Json filter_join(const FilterSpec& self, const Value* input, const std::vector<Value>& args) {
  const Json& list = input_of(self, input, "a list", &Json::is_array);
  const std::string& separator = string_argument(self, args, 0);
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) out += (i ? separator : "") + to_output(list[i]);
  return out;
}

Json filter_length(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  if (!input->is_macro() && input->json().is_string())
    return count_characters(input->json().get_ref<const std::string&>());
  if (!input->is_macro() && (input->json().is_array() || input->json().is_object())) return input->json().size();
  fail_input(self, "a list, a string or an object", *input);
}

Json filter_lower(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  std::string text = string_input(self, input);
  for (char& c : text) if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

Json filter_upper(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  std::string text = string_input(self, input);
  for (char& c : text) if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return text;
}

Json filter_replace(const FilterSpec& self, const Value* input, const std::vector<Value>& args) {
  const std::string& text = string_input(self, input);
  const std::string& old_text = string_argument(self, args, 0);
  const std::string& new_text = string_argument(self, args, 1);
  std::int64_t remaining = -1;  // none: replace every occurrence
  if (args[2].is_macro() || !(args[2].json().is_null() || args[2].json().is_number_integer()))
    fail_argument(self, 2, "an int", args[2]);
  if (args[2].json().is_number_integer()) remaining = as_int(args[2].json());
  if (old_text.empty()) throw ValueError("filter 'replace' argument 'old' must not be empty");
  std::string out;
  size_t from = 0;
  for (size_t found; remaining != 0 && (found = text.find(old_text, from)) != std::string::npos; --remaining) {
    out += text.substr(from, found - from) + new_text;
    from = found + old_text.size();
  }
  return out + text.substr(from);
}

Json filter_string(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  if (input->is_macro()) fail_input(self, "a value", *input);
  return to_output(input->json());
}

Json filter_trim(const FilterSpec& self, const Value* input, const std::vector<Value>&) {
  return trim_spaces(string_input(self, input));
}

// ---- tests ----

bool test_defined(const TestSpec&, const Value* input, const std::vector<Value>&) { return input != nullptr; }
bool test_undefined(const TestSpec&, const Value* input, const std::vector<Value>&) { return input == nullptr; }

template <bool (Json::*predicate)() const noexcept>
bool test_type(const TestSpec&, const Value* input, const std::vector<Value>&) {
  return !input->is_macro() && (input->json().*predicate)();
}

bool test_sequence(const TestSpec&, const Value* input, const std::vector<Value>&) {
  return !input->is_macro() && (input->json().is_array() || input->json().is_string());
}
bool test_iterable(const TestSpec&, const Value* input, const std::vector<Value>&) {
  return !input->is_macro() && (input->json().is_array() || input->json().is_object() || input->json().is_string());
}

std::int64_t int_input(const TestSpec& self, const Value* input) {
  return as_int(input_of(self, input, "an int", &Json::is_number_integer));
}
bool test_even(const TestSpec& self, const Value* input, const std::vector<Value>&) { return int_input(self, input) % 2 == 0; }
bool test_odd(const TestSpec& self, const Value* input, const std::vector<Value>&) { return int_input(self, input) % 2 != 0; }
bool test_divisibleby(const TestSpec& self, const Value* input, const std::vector<Value>& args) {
  std::int64_t divisor = as_int(argument(self, args, 0, "an int", &Json::is_number_integer));
  if (divisor == 0) throw ValueError("test 'divisibleby' argument 'num' must not be 0");
  return divisor == -1 || int_input(self, input) % divisor == 0;
}

// Filters with several names share one function; the table lists each name once.
const std::vector<FilterSpec>& filters() {
  static const std::vector<FilterSpec> table = {
      {"abs", {}, 0, false, filter_abs},
      {"count", {}, 0, false, filter_length},
      {"d", {{"default_value", ""}, {"boolean", false}}, 0, true, filter_default},
      {"default", {{"default_value", ""}, {"boolean", false}}, 0, true, filter_default},
      {"first", {}, 0, false, filter_first},
      {"float", {}, 0, false, filter_float},
      {"indent", {{"width", 4}, {"first", false}, {"blank", false}}, 0, false, filter_indent},
      {"int", {}, 0, false, filter_int},
      {"join", {{"d", ""}}, 0, false, filter_join},
      {"last", {}, 0, false, filter_last},
      {"length", {}, 0, false, filter_length},
      {"lower", {}, 0, false, filter_lower},
      {"replace", {{"old", nullptr}, {"new", nullptr}, {"count", nullptr}}, 2, false, filter_replace},
      {"string", {}, 0, false, filter_string},
      {"trim", {}, 0, false, filter_trim},
      {"upper", {}, 0, false, filter_upper},
  };
  return table;
}

const std::vector<TestSpec>& tests() {
  static const std::vector<TestSpec> table = {
      {"boolean", {}, 0, false, test_type<&Json::is_boolean>},
      {"defined", {}, 0, true, test_defined},
      {"divisibleby", {{"num", nullptr}}, 1, false, test_divisibleby},
      {"even", {}, 0, false, test_even},
      {"float", {}, 0, false, test_type<&Json::is_number_float>},
      {"integer", {}, 0, false, test_type<&Json::is_number_integer>},
      {"iterable", {}, 0, false, test_iterable},
      {"mapping", {}, 0, false, test_type<&Json::is_object>},
      {"none", {}, 0, false, test_type<&Json::is_null>},
      {"number", {}, 0, false, test_type<&Json::is_number>},
      {"odd", {}, 0, false, test_odd},
      {"sequence", {}, 0, false, test_sequence},
      {"string", {}, 0, false, test_type<&Json::is_string>},
      {"undefined", {}, 0, true, test_undefined},
  };
  return table;
}

template <class Spec>
const Spec* find_in(const std::vector<Spec>& table, std::string_view name) {
  for (const auto& spec : table)
    if (spec.name == name) return &spec;
  return nullptr;
}

template <class Spec>
std::vector<std::string> names_in(const std::vector<Spec>& table) {
  std::vector<std::string> names;
  for (const auto& spec : table) names.push_back(spec.name);
  return names;
}

}  // namespace

std::string indent_lines(const std::string& text, const std::string& indentation, bool first, bool blank) {
  // Jinja appends a newline and then splits with splitlines(), so a trailing newline survives
  // and never gets indentation of its own (unless `blank`).
  std::vector<std::string> lines;
  const std::string padded = text + "\n";
  for (size_t start = 0; start < padded.size();) {
    size_t end = padded.find('\n', start);
    lines.push_back(padded.substr(start, end - start));
    start = end + 1;
  }
  std::string out = lines[0];
  for (size_t i = 1; i < lines.size(); ++i)
    out += "\n" + (blank || !lines[i].empty() ? indentation + lines[i] : lines[i]);
  return first ? indentation + out : out;
}

const FilterSpec* find_filter(std::string_view name) { return find_in(filters(), name); }
std::vector<std::string> filter_names() { return names_in(filters()); }
const TestSpec* find_test(std::string_view name) { return find_in(tests(), name); }
std::vector<std::string> test_names() { return names_in(tests()); }

}  // namespace flexjit::tmpl
