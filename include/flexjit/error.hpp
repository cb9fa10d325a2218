#pragma once
/// \file
/// The flexjit exception hierarchy. Every failure the library reports is a `flexjit::Error`; the
/// subclass names the stage that failed, and `what()` carries the full, user-facing message
/// (kind, place, the offending text with a caret, and a hint on how to fix it).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace flexjit {

/// Base of every exception flexjit throws. `kind()` is a stable identifier ("ExprError", ...)
/// that callers (and language bindings) can switch on; `what()` is the complete human-readable message.
class Error : public std::runtime_error {
 public:
  /// Builds an error of the given stable kind; `message` is the full text returned by `what()`.
  Error(std::string kind, const std::string& message);
  /// The stable kind of this error, e.g. "CompileError".
  const std::string& kind() const noexcept { return kind_; }

 private:
  std::string kind_;
};

/// One problem found in a user expression (score_mod / mask_mod), with its position.
struct Diagnostic {
  std::string mod;        ///< "score_mod" or "mask_mod" (or the helper name that produced it)
  int line = 1;           ///< 1-based line in the expression
  int column = 1;         ///< 1-based column of the first character of the offending token
  int length = 1;         ///< number of characters to underline with the caret
  std::string message;    ///< what is wrong, e.g. "unknown variable 'kv_id'"
  std::string hint;       ///< how to fix it ("did you mean 'kv_idx'?"); may be empty
  std::string source_line;///< the text of the offending line, for the caret display
  /// Renders "mod:line:col: message\n  source\n  ^~~\n  hint: ..." (no trailing newline).
  std::string format() const;
};

/// A score_mod / mask_mod expression failed to parse or type-check. Holds every diagnostic found.
class ExprError : public Error {
 public:
  /// Builds the error from all the diagnostics of one expression (at least one).
  explicit ExprError(std::vector<Diagnostic> diagnostics);
  /// Every problem found, in source order.
  const std::vector<Diagnostic>& diagnostics() const noexcept { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// A template failed to parse or render. `what()` reads "fwd.cu.j2:41:7: unknown filter 'indnt'".
class TemplateError : public Error {
 public:
  /// `name` is the template name, `line`/`column` 1-based; `message` says what was expected.
  TemplateError(std::string name, int line, int column, const std::string& message);
  /// Name of the template in which the error occurred.
  const std::string& template_name() const noexcept { return name_; }
  /// 1-based line of the error.
  int line() const noexcept { return line_; }
  /// 1-based column of the error.
  int column() const noexcept { return column_; }

 private:
  std::string name_;
  int line_;
  int column_;
};

/// NVRTC rejected a generated source. Carries the full compiler log, the options used and the
/// path where the failing source was written so it can be inspected.
class CompileError : public Error {
 public:
  /// `summary` is the first line of the message; log/options/source_path are appended to `what()`.
  CompileError(const std::string& summary, std::string log, std::vector<std::string> options,
               std::string source_path);
  /// The complete NVRTC program log.
  const std::string& log() const noexcept { return log_; }
  /// The NVRTC options the compile was run with.
  const std::vector<std::string>& options() const noexcept { return options_; }
  /// Where the failing source was dumped ("" if it could not be written).
  const std::string& source_path() const noexcept { return source_path_; }

 private:
  std::string log_;
  std::vector<std::string> options_;
  std::string source_path_;
};

/// The CUDA driver is missing or a Driver API call failed. `code()` is the CUresult (or -1 when
/// the driver library itself could not be loaded).
class DriverError : public Error {
 public:
  /// `message` is the full text; `code` the CUresult value.
  DriverError(const std::string& message, int code);
  /// The CUresult of the failed call, or -1 when libcuda.so.1 could not be loaded.
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A tensor's dtype, shape or strides do not fit what the kernel needs.
class ShapeError : public Error {
 public:
  /// `message` names the tensor, the dimension and the expected value.
  explicit ShapeError(const std::string& message);
};

/// The on-disk cache could not be read or written (a damaged entry is a miss, not an error).
class CacheError : public Error {
 public:
  /// `message` names the path and the failed operation.
  explicit CacheError(const std::string& message);
};

/// The caller asked for something invalid (bad option value, unknown name, out-of-range config).
class UsageError : public Error {
 public:
  /// `message` says what was wrong and what would be accepted.
  explicit UsageError(const std::string& message);
};

}  // namespace flexjit
