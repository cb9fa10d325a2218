// `flexjit tune`: warms both caches for a suite of problems. With a GPU, each problem's forward and
// backward run once on fresh inputs, which tunes every kernel family whose best config is not yet
// in autotune.json (FLEXJIT_AUTOTUNE=on: a small space; --max: every config that fits) and leaves
// the winners and all their candidates' kernels on disk. Without a GPU it compiles the candidates
// (so the first call on a GPU compiles nothing) and says that timing needs a GPU.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "backward_mode_option.hpp"
#include "command.hpp"
#include "flexjit/autotune.hpp"
#include "flexjit/error.hpp"
#include "problem_inputs.hpp"

namespace flexjit::cli {
namespace {

std::string ms_text(const std::optional<double>& ms) {
  if (!ms) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", *ms);
  return buf;
}

CommandRegistrar registrar("tune", "Autotune block configs for a problem suite and warm the kernel and autotune caches", [](CLI::App& app) {
  struct Options {
    std::string suite = "bench/suite.json";
    std::string only;
    std::string arch = "sm_90a";
    int jobs = 0;
    bool max = false;
    bool no_bwd = false;
    BackwardModeOption bwd_mode;
  };
  auto o = std::make_shared<Options>();
  app.add_option("--suite", o->suite, "problem suite (JSON, schema of bench/suite.json)")->capture_default_str();
  app.add_option("--only", o->only, "comma-separated problem names to tune");
  app.add_option("--jobs", o->jobs, "parallel NVRTC compiles (default: one per core)");
  app.add_flag("--max", o->max, "search every config that fits (FLEXJIT_AUTOTUNE=max) instead of the small space");
  app.add_flag("--no-bwd", o->no_bwd, "forward kernels only");
  o->bwd_mode.add_option(app);
  app.add_option("--arch", o->arch, "target when there is no GPU (compile only)")->capture_default_str();
  return [o]() {
    if (o->max) setenv("FLEXJIT_AUTOTUNE", "max", 1);
    if (autotune_mode() == AutotuneMode::off)
      throw UsageError("FLEXJIT_AUTOTUNE=off disables tuning; unset it (or set on|max) to run flexjit tune");
    const auto problems = select_problems(load_suite(o->suite), o->only);
    const bool terminal = isatty(fileno(stdout)) != 0;
    std::string why;
    if (!gpu_available(&why)) {
      std::printf("no GPU (%s)\ncompiling every candidate config for %s into the kernel cache; timing needs a GPU, so "
                  "autotune.json is not written\n", why.c_str(), o->arch.c_str());
      for (size_t i = 0; i < problems.size(); ++i) {
        const SuiteProblem& p = problems[i];
        if (p.decode) {  // one default config, chosen per call from the lengths: nothing to tune
          std::printf("[%zu/%zu] %-28s decode: no block config to tune (compiled on its first call)\n", i + 1,
                      problems.size(), p.name.c_str());
          continue;
        }
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<WarmedKernel> kernels;
        for_problem(p, [&] {
          const Attention attention(problem_spec(p));
          kernels = attention.warm_up({p.batch, p.q_heads, p.kv_heads, p.q_len, p.kv_len}, !o->no_bwd, o->arch, o->jobs);
        });
        size_t cached = 0;
        for (const auto& k : kernels) cached += k.from_cache ? 1 : 0;
        std::printf("[%zu/%zu] %-28s %3zu kernels (%zu already cached) in %.1f s\n", i + 1, problems.size(),
                    p.name.c_str(), kernels.size(), cached,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        std::fflush(stdout);
      }
      return kExitOk;
    }
    if (o->jobs > 0) setenv("FLEXJIT_TUNE_JOBS", std::to_string(o->jobs).c_str(), 1);
    std::mt19937_64 rng(std::random_device{}());
    struct Row {
      std::string problem;
      KernelChoice choice;
    };
    std::vector<Row> rows;
    for (size_t i = 0; i < problems.size(); ++i) {
      const SuiteProblem& p = problems[i];
      if (terminal) std::printf("\r[%zu/%zu] %-28s tuning...%20s", i + 1, problems.size(), p.name.c_str(), "");
      else std::printf("[%zu/%zu] %s\n", i + 1, problems.size(), p.name.c_str());
      std::fflush(stdout);
      std::vector<KernelChoice> choices;
      for_problem(p, [&] {
        const Attention attention(problem_spec(p));
        const bool backward = !o->no_bwd && !p.decode;  // decode problems are forward only
        ProblemInputs in = ProblemInputs::create(p, attention, backward, rng);
        o->bwd_mode.apply(in.call);
        in.forward(attention, nullptr);
        if (backward) in.backward(attention, nullptr);
        synchronize();
        check_buffer_errors();
        choices = attention.last_choices();
      });
      for (const KernelChoice& c : choices) {
        if (c.family == "bwd_preprocess") continue;  // row-wise, no block config to tune
        rows.push_back({p.name, c});
        if (!terminal)
          std::printf("  %-9s %-16s %-8s %s (default %s: %s, %d candidates)\n", c.family.c_str(), c.config.str().c_str(),
                      c.source.c_str(), ms_text(c.ms).c_str(), c.default_config.str().c_str(),
                      ms_text(c.default_ms).c_str(), c.candidates);
      }
    }
    if (terminal) std::printf("\r%60s\r", "");
    std::printf("\n%-28s %-9s %-16s %-8s %11s %-16s %11s %8s\n", "problem", "kernel", "winner", "source", "time",
                "default", "default", "speedup");
    for (const Row& r : rows) {
      const auto& c = r.choice;
      std::string speedup = "-";
      if (c.ms && c.default_ms && *c.ms > 0) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.2fx", *c.default_ms / *c.ms);
        speedup = buf;
      }
      std::printf("%-28s %-9s %-16s %-8s %11s %-16s %11s %8s\n", r.problem.c_str(), c.family.c_str(),
                  c.config.str().c_str(), c.source.c_str(), ms_text(c.ms).c_str(), c.default_config.str().c_str(),
                  ms_text(c.default_ms).c_str(), speedup.c_str());
    }
    std::printf("\nautotune cache: %s\n", autotune_cache_path().c_str());
    return kExitOk;
  };
});

}  // namespace
}  // namespace flexjit::cli
