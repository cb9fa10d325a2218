#pragma once
// The text `flexjit check` prints: what flexjit understood of the user's expressions (canonical
// form, type, variables, buffers and parameters read), the CUDA it generates and, for a score_mod,
// the derived gradient. Lives in src/expr so it is tested without the CLI.
#include <optional>
#include <string>

#include "flexjit/expr.hpp"

namespace flexjit::expr {

/// Checks the given mods (at least one) against `declarations` and returns the report. Throws
/// ExprError carrying the diagnostics of both mods when either fails, UsageError when neither is
/// given or a declaration is invalid.
std::string check_report(const std::optional<std::string>& score_mod,
                         const std::optional<std::string>& mask_mod, const Declarations& declarations);

}  // namespace flexjit::expr
