#include "expr/diagnostics.hpp"

#include <algorithm>
#include <cctype>

namespace flexjit::expr {

DiagnosticSink::DiagnosticSink(std::string mod, std::string_view source)
    : mod_(std::move(mod)), source_(source) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < source_.size(); ++i)
    if (source_[i] == '\n') line_starts_.push_back(i + 1);
}

Diagnostic DiagnosticSink::make(SourceSpan span, std::string message, std::string hint) const {
  Diagnostic d;
  d.mod = mod_;
  d.message = std::move(message);
  d.hint = std::move(hint);
  const size_t offset = std::min<size_t>(span.offset, source_.size());
  const size_t line_index =
      static_cast<size_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) -
                          line_starts_.begin()) - 1;
  const size_t line_start = line_starts_[line_index];
  size_t line_end = source_.find('\n', line_start);
  if (line_end == std::string_view::npos) line_end = source_.size();
  d.line = static_cast<int>(line_index + 1);
  d.column = static_cast<int>(offset - line_start + 1);
  // The caret never runs past the end of the line it starts on.
  const size_t available = line_end > offset ? line_end - offset : 1;
  d.length = static_cast<int>(std::max<size_t>(1, std::min<size_t>(span.length, available)));
  // Control and non-ASCII bytes are shown as '?', one column per byte, so the caret lines up and
  // a terminal never receives escape sequences from user input.
  std::string line(source_.substr(line_start, line_end - line_start));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  for (char& c : line) {
    const auto u = static_cast<unsigned char>(c);
    if (c != '\t' && (u < 0x20 || u >= 0x7f)) c = '?';
  }
  d.source_line = std::move(line);
  return d;
}

void DiagnosticSink::error(SourceSpan span, std::string message, std::string hint) {
  diagnostics_.emplace_back(span.offset, make(span, std::move(message), std::move(hint)));
}

void DiagnosticSink::error_without_source(std::string message, std::string hint) {
  Diagnostic d;
  d.mod = mod_;
  d.message = std::move(message);
  d.hint = std::move(hint);
  diagnostics_.emplace_back(0, std::move(d));
}

void DiagnosticSink::throw_if_errors() {
  if (diagnostics_.empty()) return;
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Diagnostic> out;
  const size_t shown = std::min(diagnostics_.size(), kMaxDiagnostics);
  for (size_t i = 0; i < shown; ++i) out.push_back(std::move(diagnostics_[i].second));
  if (diagnostics_.size() > shown) {
    // Garbage input should not bury the first, most useful messages.
    Diagnostic more;
    more.mod = mod_;
    more.line = out.back().line;
    more.column = out.back().column;
    more.message = std::to_string(diagnostics_.size() - shown) + " more errors not shown";
    out.push_back(std::move(more));
  }
  diagnostics_.clear();
  throw ExprError(std::move(out));
}

std::string_view DiagnosticSink::text(SourceSpan span) const noexcept {
  if (span.offset >= source_.size()) return {};
  return source_.substr(span.offset, span.length);
}

std::string DiagnosticSink::quote(SourceSpan span) const {
  // Text that already has an error in it is no example to follow: a hint quoting `q_idx<<1`
  // would suggest the very '<<' that was just rejected.
  for (const auto& [offset, diagnostic] : diagnostics_)
    if (offset >= span.offset && offset < span.offset + span.length) return {};
  std::string out;
  bool space = false;
  for (char c : text(span)) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  if (out.size() > 40) return {};
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  if (n > 64 || m > 64) return std::max(n, m);
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates) {
  // A typo of a short name is one edit; longer names tolerate about one edit per three letters.
  const size_t limit = std::max<size_t>(1, name.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& names, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += separator;
    out += names[i];
  }
  return out;
}

}  // namespace flexjit::expr
