#pragma once
// `--bwd-mode fast|deterministic` of `run`, `bench` and `tune`: the backward's mode, handed to
// CallOptions (left unset when the flag is absent, so FLEXJIT_DETERMINISTIC decides).
#include <CLI/CLI.hpp>

#include <string>

#include "flexjit/attention.hpp"

namespace flexjit::cli {

struct BackwardModeOption {
  std::string text;

  void add_option(CLI::App& app) {
    app.add_option("--bwd-mode", text,
                   "backward mode: fast (the default: dQ summed by the dK/dV kernel on sm_90a, head dims up to 128 "
                   "and, on 256-column tiles, to 256) or deterministic (the same bits every run: the dK/dV kernel's dQ sums taking turns in a "
                   "fixed order, or a dQ kernel, whichever is faster for the call; FLEXJIT_DETERMINISTIC=1)")
        ->check(CLI::IsMember({"fast", "deterministic"}));
  }
  bool given() const { return !text.empty(); }
  void apply(CallOptions& call) const {
    if (given()) call.backward_mode = text == "fast" ? BackwardMode::fast : BackwardMode::deterministic;
  }
};

}  // namespace flexjit::cli
