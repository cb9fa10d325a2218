// Ready-made expression text for the common attention variants.
#include <cmath>

#include "expr/builtins.hpp"
#include "expr/printer.hpp"
#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"

namespace flexjit::mods {
namespace {

void require_buffer_name(const char* helper, const std::string& name) {
  if (!expr::is_identifier(name))
    throw UsageError(std::string("mods::") + helper + ": '" + name + "' is not a valid buffer name");
}

std::string combine(const std::vector<std::string>& masks, const char* op, const char* empty) {
  if (masks.empty()) return empty;
  std::string out;
  for (size_t i = 0; i < masks.size(); ++i) {
    if (i) out += op;
    out += "(" + masks[i] + ")";
  }
  return out;
}

}  // namespace

std::string causal() { return "q_idx >= kv_idx"; }

std::string sliding_window(int window) {
  if (window < 0)
    throw UsageError("mods::sliding_window: the window must be >= 0, got " + std::to_string(window));
  return "q_idx >= kv_idx && q_idx - kv_idx <= " + std::to_string(window);
}

std::string prefix_lm(int prefix) {
  if (prefix < 0) throw UsageError("mods::prefix_lm: the prefix must be >= 0, got " + std::to_string(prefix));
  return "kv_idx < " + std::to_string(prefix) + " || q_idx >= kv_idx";
}

std::string document(const std::string& doc_buffer) {
  require_buffer_name("document", doc_buffer);
  return doc_buffer + "[q_idx] == " + doc_buffer + "[kv_idx]";
}

std::string alibi(const std::string& slope_buffer) {
  require_buffer_name("alibi", slope_buffer);
  return "score + " + slope_buffer + "[h] * (kv_idx - q_idx)";
}

std::string softcap(double cap) {
  if (!(cap > 0.0) || !std::isfinite(cap))
    throw UsageError("mods::softcap: the cap must be a positive finite number, got " + expr::format_float_literal(cap));
  const std::string value = expr::format_float_literal(cap);
  return value + " * tanh(score / " + value + ")";
}

std::string and_masks(const std::vector<std::string>& masks) { return combine(masks, " && ", "true"); }
std::string or_masks(const std::vector<std::string>& masks) { return combine(masks, " || ", "false"); }

}  // namespace flexjit::mods
