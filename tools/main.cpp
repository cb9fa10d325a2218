// The flexjit command-line tool: dispatches to the subcommands registered in tools/cmd_*.cpp and
// turns every flexjit::Error into a message on stderr and a nonzero exit code.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "command.hpp"
#include "flexjit/error.hpp"
#include "flexjit/version.hpp"

namespace flexjit::cli {
namespace {

struct Registered {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<Registered>& registry() {
  static std::vector<Registered> commands;
  return commands;
}

}  // namespace

CommandRegistrar::CommandRegistrar(std::string name, std::string description, CommandSetup setup) {
  registry().push_back({std::move(name), std::move(description), std::move(setup)});
}

// CLI11 reports a missing subcommand ("A subcommand is required") before an unknown word, so a
// typo in a command name or a top-level option was never named. Walks the words the way the
// parser will and names the first one that is neither a subcommand nor a known option.
// Returns "" when the line is fine (CLI11 then reports anything else).
std::string unknown_word(CLI::App& app, int argc, char** argv) {
  CLI::App* level = &app;
  std::string path = "flexjit";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    const auto subs = level->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) return "";
    if (word == "-h" || word == "--help" || (level == &app && word == "--version")) return "";
    std::string names;
    for (const CLI::App* sub : subs) names += (names.empty() ? "" : ", ") + sub->get_name();
    if (!word.empty() && word[0] == '-')
      return "unknown option '" + word + "' for '" + path + "': give a command first (" + names + ")";
    CLI::App* next = nullptr;
    for (CLI::App* sub : subs)
      if (sub->get_name() == word) next = sub;
    if (!next) return "unknown command '" + word + "' for '" + path + "' (commands: " + names + ")";
    level = next;
    path += " " + word;
  }
  return "";
}

}  // namespace flexjit::cli

int main(int argc, char** argv) {
  using namespace flexjit::cli;
  CLI::App app{"flexjit " FLEXJIT_VERSION_STRING
               ": FlexAttention-style attention kernels from expression strings, compiled at run "
               "time with NVRTC"};
  app.set_version_flag("--version", std::string(FLEXJIT_VERSION_STRING));
  app.require_subcommand(1);
  std::map<std::string, std::function<int()>> actions;
  auto& commands = registry();
  std::sort(commands.begin(), commands.end(),
            [](const Registered& a, const Registered& b) { return a.name < b.name; });
  for (auto& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    actions[command.name] = command.setup(*sub);
  }
  if (const std::string problem = unknown_word(app, argc, argv); !problem.empty()) {
    std::fprintf(stderr, "error: %s\n", problem.c_str());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  try {
    for (auto* sub : app.get_subcommands()) return actions.at(sub->get_name())();
  } catch (const flexjit::ExprError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitUsage;
  } catch (const flexjit::UsageError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitUsage;
  } catch (const flexjit::ShapeError& e) {
    std::fprintf(stderr, "ShapeError: %s\n", e.what());
    return kExitUsage;
  } catch (const flexjit::Error& e) {
    std::fprintf(stderr, "%s: %s\n", e.kind().c_str(), e.what());
    return kExitFailure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitFailure;
  }
  return kExitFailure;
}
