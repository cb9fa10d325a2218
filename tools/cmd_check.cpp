// `flexjit check --score EXPR --mask EXPR [--buffer NAME:DTYPE:DIMS] [--param NAME:TYPE]`: parses
// and type-checks the expressions and shows what flexjit makes of them. Bad expressions end with
// every diagnostic on stderr and exit code 2 (main.cpp maps ExprError and UsageError).
#include <cstdio>
#include <optional>

#include "command.hpp"
#include "expr/check_report.hpp"
#include "mod_options.hpp"

namespace flexjit::cli {
namespace {

const CommandRegistrar kCheck(
    "check", "parse and type-check expressions; show the canonical form, types, generated CUDA and gradient",
    [](CLI::App& app) -> std::function<int()> {
      auto options = std::make_shared<VariantOptions>();
      options->add_mod_flags(app);
      app.footer(
          "Example: flexjit check --score 'score + slope[h] * (kv_idx - q_idx)' --buffer slope:f32:16 "
          "--mask 'q_idx >= kv_idx'");
      return [options, &app]() {
        const std::optional<std::string> score =
            app.count("--score") ? std::optional<std::string>(options->score) : std::nullopt;
        const std::optional<std::string> mask =
            app.count("--mask") ? std::optional<std::string>(options->mask) : std::nullopt;
        const std::string report = expr::check_report(score, mask, options->declarations());
        std::fwrite(report.data(), 1, report.size(), stdout);
        return kExitOk;
      };
    });

}  // namespace
}  // namespace flexjit::cli
