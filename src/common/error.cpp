#include "flexjit/error.hpp"

#include <algorithm>

namespace flexjit {

Error::Error(std::string kind, const std::string& message)
    : std::runtime_error(message), kind_(std::move(kind)) {}

std::string Diagnostic::format() const {
  std::string out = mod + ":" + std::to_string(line) + ":" + std::to_string(column) +
                    ": " + message;
  if (!source_line.empty()) {
    out += "\n  " + source_line + "\n  ";
    // Tabs in the source keep their width under the caret so it lines up in a terminal.
    for (int i = 1; i < column && i - 1 < static_cast<int>(source_line.size()); ++i)
      out += source_line[static_cast<size_t>(i - 1)] == '\t' ? '\t' : ' ';
    out += '^';
    for (int i = 1; i < std::max(1, length); ++i) out += '~';
  }
  if (!hint.empty()) out += "\n  hint: " + hint;
  return out;
}

static std::string join_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (size_t i = 0; i < diagnostics.size(); ++i) {
    if (i) out += '\n';
    out += diagnostics[i].format();
  }
  return out;
}

ExprError::ExprError(std::vector<Diagnostic> diagnostics)
    : Error("ExprError", join_diagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {}

TemplateError::TemplateError(std::string name, int line, int column, const std::string& message)
    : Error("TemplateError",
            name + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message),
      name_(std::move(name)),
      line_(line),
      column_(column) {}

static std::string compile_message(const std::string& summary, const std::string& log,
                                   const std::vector<std::string>& options,
                                   const std::string& source_path) {
  std::string out = summary;
  out += "\n  source: " + (source_path.empty() ? std::string("(not written)") : source_path);
  out += "\n  options:";
  for (const auto& o : options) out += " " + o;
  out += "\n  NVRTC log:\n" + log;
  return out;
}

CompileError::CompileError(const std::string& summary, std::string log,
                           std::vector<std::string> options, std::string source_path)
    : Error("CompileError", compile_message(summary, log, options, source_path)),
      log_(std::move(log)),
      options_(std::move(options)),
      source_path_(std::move(source_path)) {}

DriverError::DriverError(const std::string& message, int code)
    : Error("DriverError", message), code_(code) {}

ShapeError::ShapeError(const std::string& message) : Error("ShapeError", message) {}
CacheError::CacheError(const std::string& message) : Error("CacheError", message) {}
UsageError::UsageError(const std::string& message) : Error("UsageError", message) {}

}  // namespace flexjit
