#include "tmpl/operators.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace flexjit::tmpl {
namespace {

using Int = std::int64_t;

// Repetition ("-" * 80) is handy in generated code; a runaway count must not exhaust memory.
constexpr Int kMaxRepeatedSize = Int{1} << 24;

[[noreturn]] void fail_operands(const char* op, const Json& left, const Json& right) {
  throw ValueError(std::string("cannot apply '") + op + "' to " + type_name(left) + " and " +
                   type_name(right));
}

[[noreturn]] void fail_overflow(const char* op) {
  throw ValueError(std::string("integer overflow in '") + op + "'");
}

bool both_ints(const Json& a, const Json& b) { return a.is_number_integer() && b.is_number_integer(); }
bool both_numbers(const Json& a, const Json& b) { return a.is_number() && b.is_number(); }
double as_double(const Json& json) { return json.get<double>(); }

// `a op b` on ints, failing on overflow instead of wrapping (or being undefined behaviour).
template <class Builtin>
Int checked(Builtin builtin, Int a, Int b, const char* op) {
  Int result = 0;
  if (builtin(a, b, &result)) fail_overflow(op);
  return result;
}
bool add(Int a, Int b, Int* out) { return __builtin_add_overflow(a, b, out); }
bool subtract(Int a, Int b, Int* out) { return __builtin_sub_overflow(a, b, out); }
bool multiply(Int a, Int b, Int* out) { return __builtin_mul_overflow(a, b, out); }

Int floor_divide(Int a, Int b) {
  if (b == 0) throw ValueError("division by zero");
  if (a == std::numeric_limits<Int>::min() && b == -1) fail_overflow("//");
  Int quotient = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --quotient;
  return quotient;
}

Int floor_modulo(Int a, Int b) {
  if (b == 0) throw ValueError("modulo by zero");
  if (b == -1) return 0;  // also avoids INT64_MIN % -1, which traps
  Int remainder = a % b;
  if (remainder != 0 && ((remainder < 0) != (b < 0))) remainder += b;
  return remainder;
}

double float_modulo(double a, double b) {
  if (b == 0.0) throw ValueError("modulo by zero");
  double remainder = std::fmod(a, b);
  if (remainder != 0.0 && ((remainder < 0) != (b < 0))) remainder += b;
  return remainder;
}

Int int_power(Int base, Int exponent) {
  Int result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = checked(multiply, result, base, "**");
    exponent >>= 1;
    if (exponent > 0) base = checked(multiply, base, base, "**");
  }
  return result;
}

Json repeat(const Json& sequence, Int count) {
  const size_t length = sequence.is_string() ? sequence.get_ref<const std::string&>().size() : sequence.size();
  // Nothing repeated any number of times is nothing: without this an empty string times 10^10 looped
  // 10^10 times (found by fuzz_template).
  if (count <= 0 || length == 0) return sequence.is_string() ? Json("") : Json::array();
  if (static_cast<double>(length) * static_cast<double>(count) > static_cast<double>(kMaxRepeatedSize))
    throw ValueError("'*' would repeat a " + type_name(sequence) + " to more than " +
                     std::to_string(kMaxRepeatedSize) + " items");
  Json out = sequence.is_string() ? Json("") : Json::array();
  for (Int i = 0; i < count; ++i) {
    if (sequence.is_string())
      out.get_ref<std::string&>() += sequence.get_ref<const std::string&>();
    else
      out.insert(out.end(), sequence.begin(), sequence.end());
  }
  return out;
}

bool is_sequence(const Json& json) { return json.is_string() || json.is_array(); }

}  // namespace

const char* symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Subtract: return "-";
    case BinaryOp::Multiply: return "*";
    case BinaryOp::Divide: return "/";
    case BinaryOp::FloorDivide: return "//";
    case BinaryOp::Modulo: return "%";
    case BinaryOp::Power: return "**";
    case BinaryOp::Concat: return "~";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
  }
  return "?";
}

const char* symbol(CompareOp op) {
  switch (op) {
    case CompareOp::Equal: return "==";
    case CompareOp::NotEqual: return "!=";
    case CompareOp::Less: return "<";
    case CompareOp::LessEqual: return "<=";
    case CompareOp::Greater: return ">";
    case CompareOp::GreaterEqual: return ">=";
    case CompareOp::In: return "in";
    case CompareOp::NotIn: return "not in";
  }
  return "?";
}

Json apply_binary(BinaryOp op, const Json& left, const Json& right) {
  const char* op_text = symbol(op);
  switch (op) {
    case BinaryOp::Concat:
      return to_output(left) + to_output(right);
    case BinaryOp::Add:
      if (both_ints(left, right))
        return checked(add, as_int(left), as_int(right), op_text);
      if (both_numbers(left, right)) return as_double(left) + as_double(right);
      if (left.is_string() && right.is_string())
        return left.get_ref<const std::string&>() + right.get_ref<const std::string&>();
      if (left.is_array() && right.is_array()) {
        Json joined = left;
        joined.insert(joined.end(), right.begin(), right.end());
        return joined;
      }
      break;
    case BinaryOp::Subtract:
      if (both_ints(left, right))
        return checked(subtract, as_int(left), as_int(right), op_text);
      if (both_numbers(left, right)) return as_double(left) - as_double(right);
      break;
    case BinaryOp::Multiply:
      if (both_ints(left, right))
        return checked(multiply, as_int(left), as_int(right), op_text);
      if (both_numbers(left, right)) return as_double(left) * as_double(right);
      if (is_sequence(left) && right.is_number_integer()) return repeat(left, as_int(right));
      if (left.is_number_integer() && is_sequence(right)) return repeat(right, as_int(left));
      break;
    case BinaryOp::Divide:
      if (both_numbers(left, right)) {
        if (as_double(right) == 0.0) throw ValueError("division by zero");
        return as_double(left) / as_double(right);
      }
      break;
    case BinaryOp::FloorDivide:
      if (both_ints(left, right)) return floor_divide(as_int(left), as_int(right));
      if (both_numbers(left, right)) {
        if (as_double(right) == 0.0) throw ValueError("division by zero");
        return std::floor(as_double(left) / as_double(right));
      }
      break;
    case BinaryOp::Modulo:
      if (both_ints(left, right)) return floor_modulo(as_int(left), as_int(right));
      if (both_numbers(left, right)) return float_modulo(as_double(left), as_double(right));
      break;
    case BinaryOp::Power:
      if (both_ints(left, right) && as_int(right) >= 0) return int_power(as_int(left), as_int(right));
      if (both_numbers(left, right)) {
        if (as_double(left) == 0.0 && as_double(right) < 0)
          throw ValueError("0 cannot be raised to a negative power");
        return std::pow(as_double(left), as_double(right));
      }
      break;
    case BinaryOp::And:
    case BinaryOp::Or:
      break;  // short-circuiting: the renderer evaluates these itself
  }
  fail_operands(op_text, left, right);
}

Json apply_unary(UnaryOp op, const Json& value) {
  const char* op_text = op == UnaryOp::Negate ? "-" : "+";
  if (value.is_number_integer()) {
    Int number = as_int(value);
    if (op == UnaryOp::Plus) return number;
    if (number == std::numeric_limits<Int>::min()) fail_overflow(op_text);
    return -number;
  }
  if (value.is_number_float()) return op == UnaryOp::Plus ? as_double(value) : -as_double(value);
  throw ValueError(std::string("cannot apply unary '") + op_text + "' to " + type_name(value));
}

bool apply_compare(CompareOp op, const Json& left, const Json& right) {
  switch (op) {
    case CompareOp::Equal: return left == right;
    case CompareOp::NotEqual: return left != right;
    case CompareOp::In:
    case CompareOp::NotIn: {
      bool found = false;
      if (right.is_array()) {
        for (const auto& item : right) found = found || item == left;
      } else if (right.is_string() || right.is_object()) {
        if (!left.is_string())
          throw ValueError(std::string("'") + symbol(op) + "' with " +
                           type_name_with_article(type_name(right)) +
                           " on the right needs a string on the left, got " + type_name(left));
        const auto& needle = left.get_ref<const std::string&>();
        found = right.is_string() ? right.get_ref<const std::string&>().find(needle) != std::string::npos
                                  : right.contains(needle);
      } else {
        throw ValueError(std::string("'") + symbol(op) +
                         "' needs a list, a string or an object on the right, got " + type_name(right));
      }
      return op == CompareOp::In ? found : !found;
    }
    default: break;
  }
  int order = 0;
  if (both_ints(left, right)) {
    // Compare as written: an unsigned above INT64_MAX is still larger than any int.
    if (left.is_number_unsigned() || right.is_number_unsigned()) {
      auto widen = [](const Json& j) {
        return j.is_number_unsigned() ? static_cast<long double>(j.get<std::uint64_t>())
                                      : static_cast<long double>(j.get<Int>());
      };
      order = widen(left) < widen(right) ? -1 : widen(left) > widen(right) ? 1 : 0;
    } else {
      order = as_int(left) < as_int(right) ? -1 : as_int(left) > as_int(right) ? 1 : 0;
    }
  } else if (both_numbers(left, right)) {
    order = as_double(left) < as_double(right) ? -1 : as_double(left) > as_double(right) ? 1 : 0;
  } else if (left.is_string() && right.is_string()) {
    order = left.get_ref<const std::string&>().compare(right.get_ref<const std::string&>());
  } else {
    throw ValueError("cannot compare " + type_name(left) + " and " + type_name(right) + " with '" +
                     symbol(op) + "'");
  }
  switch (op) {
    case CompareOp::Less: return order < 0;
    case CompareOp::LessEqual: return order <= 0;
    case CompareOp::Greater: return order > 0;
    case CompareOp::GreaterEqual: return order >= 0;
    default: return false;
  }
}

}  // namespace flexjit::tmpl
