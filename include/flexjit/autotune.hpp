#pragma once
/// \file
/// Autotuning of block configurations, seen from the outside: how much tuning flexjit does
/// (`FLEXJIT_AUTOTUNE`), where the results live, and what they hold.
///
/// The first call of an attention problem that is not in the autotune cache compiles a set of
/// candidate block configurations in parallel, times each on the GPU and keeps the fastest; the
/// result goes to `<cache dir>/autotune.json`, so later calls, in this process or any other, use
/// it without timing anything. Results are keyed by device (name, SM count, compute capability),
/// driver, NVRTC and flexjit versions, target arch, kernel family, dtype, head dims, GQA group,
/// the mods (score_mod, mask_mod, declarations), the specialisation flags and a shape bucket
/// (sequence lengths and batch x heads rounded up to a power of two).
///
/// The deterministic backward measures one more choice the same way, where both can run: how it
/// sums dQ (`FLEXJIT_DETERMINISTIC_DQ=auto`, the default). Its entries have the family
/// `deterministic_dq`, and their two candidates are the ways, each named by its dK/dV kernel's
/// default config: a warp-specialised one (`...ws`) for the ordered sums in that kernel, another
/// for the separate dQ kernel. The winner is the way later calls take.
///
/// Environment:
/// - `FLEXJIT_AUTOTUNE=off`: never tune, never read results; every kernel uses the built-in
///   default config for its family, head dim and GPU.
/// - `FLEXJIT_AUTOTUNE=on` (the default): tune a small curated set of configs (about 4 to 8).
/// - `FLEXJIT_AUTOTUNE=max`: tune every config that fits the GPU (tens of candidates); a result
///   tuned with `on` is tuned again once with `max`.
/// - `FLEXJIT_CACHE=off` keeps tuning results in the process only (nothing read or written).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flexjit/kernel_cache.hpp"

namespace flexjit {

/// How much autotuning flexjit does; see the file comment.
enum class AutotuneMode {
  off,  ///< built-in defaults only
  on,   ///< a small curated search space
  max,  ///< the full search space
};

/// The mode `FLEXJIT_AUTOTUNE` asks for (unset or empty: on). Throws UsageError for any other
/// value than off, on or max (any case), listing those.
AutotuneMode autotune_mode();

/// Parses "off", "on" or "max" (any case; e.g. a `--autotune` option). Throws UsageError
/// "<what>='<text>' is not an autotune mode: use off (built-in defaults, no tuning), on (tune a
/// small set of configs; the default) or max (tune every config that fits)".
AutotuneMode parse_autotune_mode(const std::string& text, const std::string& what = "FLEXJIT_AUTOTUNE");

/// "off", "on" or "max".
const char* autotune_mode_name(AutotuneMode mode) noexcept;

/// `<directory>/autotune.json`.
std::string autotune_cache_path(const std::string& directory = cache_directory());

/// One candidate the autotuner measured for a problem.
struct AutotuneMeasurement {
  std::string config;           ///< e.g. "m128n64w4s2"
  std::optional<double> ms;     ///< median time; absent when the candidate failed
  std::string error;            ///< why it failed (first line of the error), "" when it ran
};

/// One tuned problem in the autotune cache.
struct AutotuneRecord {
  std::string key_text;  ///< the canonical key ("device=...;sms=...;...;bh=32")
  /// The key's fields in order, e.g. {"family", "fwd"}, {"d", "128"}, {"q", "4096"}.
  std::vector<std::pair<std::string, std::string>> key_fields;
  std::string winner;                     ///< fastest config
  double winner_ms = 0;                   ///< its median time
  std::string default_config;             ///< the config used when tuning is off
  std::optional<double> default_ms;       ///< its time, when it was among the candidates and ran
  std::string mode;                       ///< "on" or "max": the search space measured
  std::vector<AutotuneMeasurement> candidates;  ///< every candidate, in the order measured
  std::string created;                    ///< ISO 8601 UTC
  int64_t created_unix = 0;               ///< seconds since the epoch
  std::string flexjit_version;            ///< flexjit version that measured it
};

/// The contents of an autotune cache file.
struct AutotuneListing {
  std::string path;                     ///< the file listed
  bool exists = false;                  ///< whether the file exists
  /// Why the file cannot be used ("" when it is fine or absent). A damaged file is moved aside
  /// and rebuilt by the next tuning run; listing only reports it.
  std::string damaged;
  std::vector<AutotuneRecord> entries;  ///< sorted by key text
};

/// What clear_autotune_cache() removed (or, with dry_run, would remove).
struct AutotuneClearReport {
  std::string path;                ///< `<directory>/autotune.json`
  uint64_t bytes = 0;              ///< bytes freed
  std::vector<std::string> paths;  ///< everything removed (the file and damaged copies), sorted
};

/// Removes `<directory>/autotune.json` (whatever is in its place, a directory included) and the
/// damaged copies moved aside next to it. With `dry_run` only reports what would go. Checks that
/// everything can be removed before removing anything; throws CacheError when it cannot.
AutotuneClearReport clear_autotune_cache(bool dry_run = false, const std::string& directory = cache_directory());

/// Lists `<directory>/autotune.json` without changing it.
AutotuneListing list_autotune_cache(const std::string& directory = cache_directory());

}  // namespace flexjit
