#pragma once
// The autotuner: compiles candidate kernels in parallel (NVRTC is thread-safe per program), loads
// each, times it on the GPU with events (warm-up, L2 flushed before every timed run, median of
// the repeats) and picks the fastest. A candidate that fails to compile, load or launch is
// recorded as unusable with its error; tuning fails only when every candidate does.
//
// select_config() is the whole policy the attention entry points need: FLEXJIT_AUTOTUNE=off gives
// the default; otherwise the autotune cache answers, or the problem is tuned once and stored.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "codegen/kernel_store.hpp"
#include "flexjit/autotune.hpp"
#include "flexjit/device.hpp"
#include "tune/autotune_cache.hpp"
#include "tune/config_space.hpp"
#include "tune/timing.hpp"

namespace flexjit::tune {

// One kernel to try: the spec with its config (and every flag that depends on the config, such as
// is_divisible, already set) and the NVRTC target.
struct Candidate {
  codegen::KernelSpec spec;
  std::string arch;
};

struct TuneOptions {
  // Shorter than a benchmark's: candidates differ by 10% or more, and tuning runs on a user's
  // first call. The L2 flush before every timed run keeps one candidate's inputs from being
  // served from the cache its predecessor warmed.
  TimingOptions timing{/*warmup_ms=*/5, /*repeat_ms=*/25, /*min_repeats=*/5, /*max_repeats=*/200,
                       /*flush_l2=*/true};
  size_t compile_workers = 0;  // threads compiling candidates (0: one per hardware thread)
};

// What happened to one candidate.
struct CandidateResult {
  BlockConfig config;
  bool compiled = false;          // NVRTC (or the disk cache) produced a kernel
  bool from_disk_cache = false;
  double compile_ms = 0;          // NVRTC time (of the original compile on a cache hit)
  int registers = 0;              // per thread, from ptxas
  int spill_bytes = 0;            // spill stores per thread, from ptxas
  std::optional<double> ms;       // median time; absent when not timed or failed
  std::optional<double> min_ms;   // fastest repeat
  std::string error;              // the failure's full message, "" when none
  bool usable() const { return ms.has_value(); }
};

struct TuneOutcome {
  std::vector<CandidateResult> results;  // one per candidate, in the candidates' order
  std::optional<size_t> winner;          // index of the fastest; absent after compile_candidates()
  double compile_wall_ms = 0;            // wall time of the parallel compile step
  double timing_wall_ms = 0;             // wall time of loading and timing
  const CandidateResult& best() const { return results.at(winner.value()); }
};

// Enqueues one run of the candidate's kernel (and nothing else) on the stream. It is called many
// times; the kernel is loaded in the current context. Throwing marks the candidate unusable.
// Give it the call's real tensors and, for a sparse problem, the call's real block mask: which
// blocks are visited decides which tiles win, and an all-full mask would tune a dense problem.
// (Outputs are overwritten by every run; the call's own launch afterwards writes them again.)
using Launcher = std::function<void(const Candidate&, const codegen::ReadyKernel&, Stream)>;

// Compiles every candidate in parallel, then loads and times each usable one on `stream` in turn.
// Needs a GPU. Throws UsageError when the list is empty or when no candidate is usable:
//   "autotune fwd: none of the 2 candidates is usable:\n  m64n64w4s2: <first line>\n  ..."
TuneOutcome tune(const std::vector<Candidate>& candidates, const Launcher& launch, Stream stream,
                 const TuneOptions& options = {});

// Compiles every candidate in parallel into the kernel cache (warms it; needs no GPU) and reports
// which compiled. Never throws for a failing candidate.
TuneOutcome compile_candidates(const std::vector<Candidate>& candidates, const TuneOptions& options = {});

// The cache entry of a tuning outcome (winner required). default_ms is the default's time when
// it was among the results and ran.
AutotuneEntry make_entry(const TuneOutcome& outcome, const BlockConfig& default_config, AutotuneMode mode);

// How select_config() decided.
enum class ConfigSource {
  defaults,  // FLEXJIT_AUTOTUNE=off
  cache,     // found in the autotune cache
  tuned,     // tuned now (and stored)
};

struct Selection {
  BlockConfig config;
  ConfigSource source = ConfigSource::defaults;
  std::optional<TuneOutcome> outcome;  // when tuned now
};

// Builds the spec of one candidate config: `base` with the config set and the flags that depend
// on it (is_divisible) recomputed. Attention supplies it.
using SpecForConfig = std::function<codegen::KernelSpec(const BlockConfig&)>;

// The config a call of `base` (one of fwd, bwd_dq, bwd_dkdv) on `arch` should use.
//   mode off: default_for(base, arch); nothing is read, compiled or timed.
//   otherwise: what this process chose before for the same cache file, mode and key (so a
//   problem keeps its kernel for the life of the process and a repeated call costs a map lookup);
//   else the cached winner for `key` when there is one whose config is still valid for
//   `base` on `arch` and that was tuned with at least `mode`'s space (a result tuned with "on" is
//   re-tuned once under "max"); else the candidate_configs() of the mode are tuned on `stream`
//   (one problem at a time per process, so timings do not disturb each other) and the result is
//   stored under `key`.
Selection select_config(const codegen::KernelSpec& base, const std::string& arch, const AutotuneKey& key,
                        const SpecForConfig& spec_for, const Launcher& launch, Stream stream,
                        AutotuneMode mode, const AutotuneCache& cache = AutotuneCache(),
                        const TuneOptions& options = {});

// For tests: forget what select_config() chose in this process.
void reset_selections_for_testing();

}  // namespace flexjit::tune
