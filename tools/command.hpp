#pragma once
// Subcommand registry of the flexjit CLI: each tools/cmd_*.cpp registers its subcommand with a
// static CommandRegistrar, so adding a command touches one file.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace flexjit::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the operation failed (compile, driver, cache, I/O)
inline constexpr int kExitUsage = 2;    // the user's input was wrong (bad expression, bad flag)

// Declares the subcommand's options on `app` and returns the action to run when it is chosen.
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string description, CommandSetup setup);
};

}  // namespace flexjit::cli
