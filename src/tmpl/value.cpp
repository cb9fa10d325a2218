#include "tmpl/value.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace flexjit::tmpl {

std::string type_name(const Json& json) {
  switch (json.type()) {
    case Json::value_t::null: return "none";
    case Json::value_t::boolean: return "bool";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "int";
    case Json::value_t::number_float: return "float";
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "list";
    case Json::value_t::object: return "object";
    default: return "binary";
  }
}

std::string type_name(const Value& value) {
  return value.is_macro() ? "macro" : type_name(value.json());
}

std::string type_name_with_article(const std::string& type) {
  return (type == "int" || type == "object" ? "an " : "a ") + type;
}

bool truthy(const Json& json) {
  switch (json.type()) {
    case Json::value_t::null: return false;
    case Json::value_t::boolean: return json.get<bool>();
    case Json::value_t::number_integer: return json.get<std::int64_t>() != 0;
    case Json::value_t::number_unsigned: return json.get<std::uint64_t>() != 0;
    case Json::value_t::number_float: return json.get<double>() != 0.0;
    case Json::value_t::string: return !json.get_ref<const std::string&>().empty();
    case Json::value_t::array:
    case Json::value_t::object: return !json.empty();
    default: return true;
  }
}

std::int64_t as_int(const Json& json) {
  if (json.is_number_unsigned()) {
    auto value = json.get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw ValueError("integer " + std::to_string(value) + " is too large (the limit is 2**63 - 1)");
    return static_cast<std::int64_t>(value);
  }
  return json.get<std::int64_t>();
}

std::string format_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0.0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest scientific form that reads back exactly (what Python's repr finds).
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*e", precision - 1, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string scientific = buffer;
  std::string out = value < 0 ? "-" : "";
  size_t e = scientific.find('e');
  std::string digits;
  for (size_t i = value < 0 ? 1 : 0; i < e; ++i)
    if (scientific[i] != '.') digits += scientific[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exponent = std::atoi(scientific.c_str() + e + 1);
  const int point = exponent + 1;  // digits before the decimal point
  // Python switches to exponent notation outside 1e-4 <= |x| < 1e16.
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out += "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (static_cast<size_t>(point) >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(point) - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exponent_text[16];
  std::snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+',
                std::abs(exponent));
  return out + exponent_text;
}

static std::string string_repr(const std::string& text) {
  // Python prefers single quotes, and switches to double ones to avoid escaping a single quote.
  const char quote = text.find('\'') != std::string::npos && text.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == quote) {
          out += '\\';
          out += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + quote;
}

std::string python_repr(const Json& json) {
  switch (json.type()) {
    case Json::value_t::null: return "None";
    case Json::value_t::boolean: return json.get<bool>() ? "True" : "False";
    case Json::value_t::number_integer: return std::to_string(json.get<std::int64_t>());
    case Json::value_t::number_unsigned: return std::to_string(json.get<std::uint64_t>());
    case Json::value_t::number_float: return format_float(json.get<double>());
    case Json::value_t::string: return string_repr(json.get_ref<const std::string&>());
    case Json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < json.size(); ++i) out += (i ? ", " : "") + python_repr(json[i]);
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, item] : json.items()) {
        out += (first ? "" : ", ") + string_repr(key) + ": " + python_repr(item);
        first = false;
      }
      return out + "}";
    }
    default: return "<binary>";
  }
}

std::string to_output(const Json& json) {
  return json.is_string() ? json.get<std::string>() : python_repr(json);
}

}  // namespace flexjit::tmpl
