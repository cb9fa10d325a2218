#pragma once
// Collects the diagnostics of one expression: turns byte spans into line/column, attaches the
// source line for the caret display, and throws them together as one ExprError.
#include <string>
#include <string_view>
#include <vector>

#include "expr/ast.hpp"
#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"

namespace flexjit::expr {

/// At most this many diagnostics are reported for one expression (then a count of the rest).
inline constexpr size_t kMaxDiagnostics = 20;

class DiagnosticSink {
 public:
  /// `mod` is the name shown before the position ("score_mod", "mask_mod").
  DiagnosticSink(std::string mod, std::string_view source);

  /// Records an error at `span` (length 0 is shown as one caret).
  void error(SourceSpan span, std::string message, std::string hint = "");
  /// Records an error that has no useful position (shown at 1:1 without the source line).
  void error_without_source(std::string message, std::string hint = "");

  bool has_errors() const noexcept { return !diagnostics_.empty(); }
  size_t count() const noexcept { return diagnostics_.size(); }
  /// Throws ExprError with every diagnostic, in source order, if there is any.
  void throw_if_errors();
  /// Builds one diagnostic without recording it (for errors thrown at evaluation time).
  Diagnostic make(SourceSpan span, std::string message, std::string hint = "") const;

  /// The source text of a span.
  std::string_view text(SourceSpan span) const noexcept;
  /// The source text of a span with whitespace runs collapsed to one space, for quoting inside a
  /// suggestion; empty when it is too long to quote usefully or holds an error already reported.
  std::string quote(SourceSpan span) const;

 private:
  std::string mod_;
  std::string_view source_;
  std::vector<size_t> line_starts_;
  std::vector<std::pair<uint32_t, Diagnostic>> diagnostics_;  // (offset, diagnostic)
};

/// Optimal-string-alignment edit distance (insert, delete, substitute, swap neighbours), after
/// lower-casing both names.
size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate closest to `name` if it is close enough to be a plausible typo, else "".
std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates);
/// "a, b, c" (sorted as given).
std::string join(const std::vector<std::string>& names, std::string_view separator = ", ");

}  // namespace flexjit::expr
