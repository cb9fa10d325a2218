#pragma once
// The autotune cache: `<cache dir>/autotune.json`, one file of tuned problems shared by every
// process (format in autotune_cache.cpp's header comment).
//
// Concurrency: writers take an exclusive flock() on `autotune.json.lock`, re-read the file, merge
// their entry into what is there (entries other processes wrote meanwhile are kept; the same key
// is replaced) and write a temporary file that is fsynced and renamed over autotune.json. Readers
// take no lock: the rename is atomic, so a reader sees the old file or the new one, never a mix.
// A file that does not parse, or is not in this format, is reported once on stderr, moved aside
// to `autotune.json.damaged-<UTC time>` (under the lock, after checking again that it is still
// the damaged file) and replaced by a fresh one; its contents are never used.
//
// In-process, the parsed file is memoised per path and re-read only when its inode, size or
// modification time changes, so a lookup that hits costs one stat().
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"
#include "flexjit/autotune.hpp"
#include "flexjit/config.hpp"
#include "flexjit/device.hpp"

namespace flexjit::tune {

// Everything that decides which config wins. Two problems with equal keys share a result.
struct AutotuneKey {
  // The GPU and software stack.
  std::string device_name;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  int driver_version = 0;
  std::string nvrtc_version;    // "13.0"
  std::string flexjit_version;  // FLEXJIT_VERSION_STRING
  std::string arch;             // NVRTC target, "sm_90a"
  // The kernel.
  std::string family;           // "fwd", "bwd_dq", "bwd_dkdv"
  std::string dtype;            // "bf16", "f16"
  int head_dim = 0, head_dim_v = 0;
  int gqa_group = 1;
  std::string mods_hash;        // mods_hash(spec): score_mod, mask_mod and declarations
  bool has_block_mask = false, has_full_blocks = false;
  int sparse_q_block = 0, sparse_kv_block = 0;  // 0 without a block mask
  bool is_divisible = false;    // q_len and kv_len are multiples of 128 (the largest tile)
  bool rows_guaranteed_safe = false;
  // The shape, bucketed (shape_bucket).
  int64_t q_len_bucket = 0, kv_len_bucket = 0, batch_heads_bucket = 0;

  // "device=NVIDIA H100 80GB HBM3;sms=132;cc=9.0;driver=13000;nvrtc=13.0;flexjit=0.1.0;
  // arch=sm_90a;family=fwd;dtype=bf16;d=128;dv=128;gqa=1;mods=<16 hex>;block_mask=1;
  // full_blocks=1;sparse=128x128;divisible=1;safe_rows=0;q=4096;kv=4096;bh=32" (one line).
  // '\', ';' and '=' inside a value are escaped with '\'; control characters become '?'.
  std::string canonical() const;
};

// The key text split back into (name, value) pairs, escapes undone; empty when `text` is not of
// that form.
std::vector<std::pair<std::string, std::string>> parse_key_text(const std::string& text);

// The smallest power of two >= n (1 for n <= 1): 3000 and 4096 share bucket 4096, 4097 goes to
// 8192. A config tuned for one length is close to the best for the lengths of its bucket.
int64_t shape_bucket(int64_t n);

// 16 hex digits (XXH3-64) over the canonical score_mod and mask_mod and the declarations' struct.
std::string mods_hash(const codegen::KernelSpec& spec);

// The key of a problem: `base` is the kernel spec of the call (its config does not matter; its
// flags and sparse block sizes do), `arch` the target, `device` the GPU that will time it. Fills
// the NVRTC and flexjit versions of this build.
AutotuneKey make_autotune_key(const codegen::KernelSpec& base, const std::string& arch,
                              const DeviceInfo& device, int64_t batch_heads, int64_t q_len,
                              int64_t kv_len);

// One measured candidate.
struct MeasuredConfig {
  BlockConfig config;
  std::optional<double> ms;  // median time, absent when it failed
  std::string error;         // first line of the failure, "" when it ran
};

// A tuned problem.
struct AutotuneEntry {
  BlockConfig winner;
  double winner_ms = 0;
  BlockConfig default_config;
  std::optional<double> default_ms;
  AutotuneMode mode = AutotuneMode::on;  // the space searched (on: small, max: full)
  std::vector<MeasuredConfig> candidates;
  std::string created;                   // ISO 8601 UTC (filled by store() when empty)
  int64_t created_unix = 0;              // (filled by store() when 0)
  std::string flexjit_version;           // (filled by store() when empty)
};

// The format tag of autotune.json.
inline constexpr const char* kAutotuneFormat = "flexjit-autotune-1";

// The autotune cache of one directory. Cheap to construct; all state is process-wide per path,
// so every AutotuneCache of the same directory sees the same memo. Thread-safe.
class AutotuneCache {
 public:
  // `enabled` false keeps entries in a process-wide map only (FLEXJIT_CACHE=off).
  explicit AutotuneCache(std::string directory = cache_directory(), bool enabled = kernel_cache_enabled());

  // The entry stored under `key`, or nullopt. Never throws for a bad file: a damaged one is
  // reported, moved aside and treated as empty.
  std::optional<AutotuneEntry> lookup(const AutotuneKey& key) const;

  // Merges `entry` under `key` into the file (see the file comment). Returns false when the file
  // cannot be written; then it warns once per process on stderr ("flexjit: warning: cannot write
  // the autotune cache '<path>' (<why>); tuning results are kept in this process only. Set
  // FLEXJIT_CACHE_DIR to a writable directory, or FLEXJIT_CACHE=off to silence this warning.") and
  // keeps the entry in memory, so lookups in this process still find it.
  bool store(const AutotuneKey& key, const AutotuneEntry& entry) const;

  // Every entry, by key text (a damaged file is handled as in lookup()).
  std::map<std::string, AutotuneEntry> entries() const;

  const std::string& directory() const { return directory_; }
  std::string path() const;  // <directory>/autotune.json

 private:
  std::string directory_;
  bool enabled_;
};

// For tests: forget every memoised file and in-memory entry, and let the warnings appear again.
void reset_autotune_cache_state_for_testing();

}  // namespace flexjit::tune
