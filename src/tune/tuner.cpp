#include "tune/tuner.hpp"

#include <chrono>
#include <exception>
#include <memory>
#include <mutex>

#include "common/parallel.hpp"
#include "flexjit/error.hpp"
#include "jit/memo.hpp"
#include "jit/module.hpp"

namespace flexjit::tune {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// select_config's answers in this process, by autotune key (which names the device, so the
// context id of the key is 0). Bounded: an evicted problem asks the autotune cache again.
constexpr size_t kSelectionMemoCapacity = 1024;
jit::LruMemo<std::optional<BlockConfig>>& selections() {
  static auto* memo = new jit::LruMemo<std::optional<BlockConfig>>(kSelectionMemoCapacity);
  return *memo;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string describe_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// Compiles every candidate; `kernels[i]` holds the result of candidate i when it compiled.
TuneOutcome compile_all(const std::vector<Candidate>& candidates, const TuneOptions& options,
                        std::vector<std::optional<codegen::CompiledSpec>>& kernels) {
  TuneOutcome outcome;
  outcome.results.resize(candidates.size());
  kernels.assign(candidates.size(), std::nullopt);
  const auto start = std::chrono::steady_clock::now();
  parallel_for(candidates.size(), options.compile_workers, [&](size_t i) {
    CandidateResult& r = outcome.results[i];
    r.config = candidates[i].spec.config;
    try {
      codegen::CompiledSpec compiled = codegen::compile_kernel(candidates[i].spec, candidates[i].arch);
      const jit::CompiledKernel& k = compiled.kernel;
      r.compiled = true;
      r.from_disk_cache = k.from_disk_cache;
      r.compile_ms = k.compile_ms;
      for (const auto& [name, resources] : k.resources) {
        r.registers = std::max(r.registers, resources.registers);
        r.spill_bytes = std::max(r.spill_bytes, resources.spill_store_bytes);
      }
      kernels[i] = std::move(compiled);
    } catch (...) {
      r.error = describe_exception();
    }
  });
  outcome.compile_wall_ms = ms_since(start);
  return outcome;
}

}  // namespace

TuneOutcome compile_candidates(const std::vector<Candidate>& candidates, const TuneOptions& options) {
  std::vector<std::optional<codegen::CompiledSpec>> kernels;
  return compile_all(candidates, options, kernels);
}

TuneOutcome tune(const std::vector<Candidate>& candidates, const Launcher& launch, Stream stream,
                 const TuneOptions& options) {
  if (candidates.empty()) throw UsageError("autotune: no candidates to tune");
  std::vector<std::optional<codegen::CompiledSpec>> kernels;
  TuneOutcome outcome = compile_all(candidates, options, kernels);
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < candidates.size(); ++i) {
    CandidateResult& r = outcome.results[i];
    if (!kernels[i]) continue;
    try {
      const codegen::ReadyKernel ready = codegen::load_ready_kernel(kernels[i]->spec, std::move(kernels[i]->kernel));
      kernels[i].reset();
      const Timing t = time_on_gpu([&](Stream s) { launch(candidates[i], ready, s); }, stream, options.timing);
      r.ms = t.median_ms;
      r.min_ms = t.min_ms;
      if (!outcome.winner || t.median_ms < *outcome.results[*outcome.winner].ms) outcome.winner = i;
    } catch (...) {
      r.error = describe_exception();
    }
  }
  outcome.timing_wall_ms = ms_since(start);
  if (!outcome.winner) {
    std::string message = "autotune " + std::string(codegen::family_name(candidates.front().spec.family)) +
                          ": none of the " + std::to_string(candidates.size()) + " candidates is usable:";
    for (const CandidateResult& r : outcome.results) message += "\n  " + r.config.str() + ": " + first_line(r.error);
    throw UsageError(message);
  }
  return outcome;
}

AutotuneEntry make_entry(const TuneOutcome& outcome, const BlockConfig& default_config, AutotuneMode mode) {
  AutotuneEntry e;
  const CandidateResult& best = outcome.best();
  e.winner = best.config;
  e.winner_ms = *best.ms;
  e.default_config = default_config;
  e.mode = mode;
  for (const CandidateResult& r : outcome.results) {
    MeasuredConfig m;
    m.config = r.config;
    m.ms = r.ms;
    if (!r.ms) m.error = r.error.empty() ? "not timed" : first_line(r.error).substr(0, 500);
    if (r.config == default_config && r.ms) e.default_ms = r.ms;
    e.candidates.push_back(std::move(m));
  }
  return e;
}

Selection select_config(const codegen::KernelSpec& base, const std::string& arch, const AutotuneKey& key,
                        const SpecForConfig& spec_for, const Launcher& launch, Stream stream, AutotuneMode mode,
                        const AutotuneCache& cache, const TuneOptions& options) {
  if (mode == AutotuneMode::off) return {default_for(base, arch), ConfigSource::defaults, std::nullopt};
  // Once chosen, a problem keeps its config for the life of the process (a result another process
  // stores later does not switch kernels mid-run), and the answer costs one map lookup.
  const jit::MemoKey memo_key{0, cache.path() + "\n" + autotune_mode_name(mode) + "\n" + key.canonical()};
  if (const std::optional<BlockConfig> known = selections().find(memo_key))
    return {*known, ConfigSource::cache, std::nullopt};
  auto remember = [&](const BlockConfig& config) { selections().insert(memo_key, config); };
  // A stored result is used only when it searched at least this mode's space and its winner is
  // still a valid config here (the file is shared and may have been edited by hand).
  auto cached_winner = [&]() -> std::optional<BlockConfig> {
    const std::optional<AutotuneEntry> hit = cache.lookup(key);
    if (!hit || (mode == AutotuneMode::max && hit->mode != AutotuneMode::max)) return std::nullopt;
    if (prune_reason(spec_for(hit->winner), arch)) return std::nullopt;
    return hit->winner;
  };
  if (auto winner = cached_winner()) {
    remember(*winner);
    return {*winner, ConfigSource::cache, std::nullopt};
  }

  // One tuning run at a time in this process: concurrent timings would slow each other down, and
  // a second thread asking for the same problem finds the first one's result.
  static std::mutex tuning;
  std::lock_guard<std::mutex> lock(tuning);
  if (auto winner = cached_winner()) {
    remember(*winner);
    return {*winner, ConfigSource::cache, std::nullopt};
  }
  const BlockConfig fallback = default_for(base, arch);
  const std::vector<BlockConfig> configs =
      candidate_configs(base, mode == AutotuneMode::max ? SearchSpace::full : SearchSpace::small, arch);
  if (configs.empty()) {
    const std::optional<std::string> why = prune_reason(spec_for(fallback), arch);
    throw UsageError("autotune " + std::string(codegen::family_name(base.family)) + ": no block config fits " +
                     arch + (why ? " (the default: " + *why + ")" : std::string()));
  }
  std::vector<Candidate> candidates;
  candidates.reserve(configs.size());
  for (const BlockConfig& c : configs) candidates.push_back({spec_for(c), arch});
  Selection selection;
  selection.outcome = tune(candidates, launch, stream, options);
  selection.config = selection.outcome->best().config;
  selection.source = ConfigSource::tuned;
  cache.store(key, make_entry(*selection.outcome, fallback, mode));
  remember(selection.config);
  return selection;
}

void reset_selections_for_testing() { selections().clear(); }

}  // namespace flexjit::tune
