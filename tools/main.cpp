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
