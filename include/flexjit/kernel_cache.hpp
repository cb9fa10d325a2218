#pragma once
/// \file
/// The on-disk kernel cache, seen from the outside: where it lives, what it holds, and how to
/// clear it. flexjit fills and reads the cache by itself; these functions are for tools (the
/// `flexjit cache` command) and for users who want to inspect or reset it.
///
/// Location: `$FLEXJIT_CACHE_DIR`, else `$XDG_CACHE_HOME/flexjit` (when that variable holds an
/// absolute path), else `$HOME/.cache/flexjit`. Compiled kernels live in `<dir>/kernels/` as
/// `<key>.cubin`, `<key>.ptx` and `<key>.json`; autotuning results in `<dir>/autotune.json`;
/// sources that failed to compile are dumped to `<dir>/failed/`; an entry file found to be a
/// directory is moved to `<dir>/damaged/`. A damaged entry is recompiled and rewritten, with one
/// warning on stderr naming it.
///
/// Environment: `FLEXJIT_CACHE=off` (also `0`, `false`, `no`) makes flexjit neither read nor write
/// compiled kernels on disk (kernels are still compiled). A cache directory that cannot be written
/// produces one warning on stderr per process and flexjit continues without the disk cache: a
/// cache problem never fails a computation.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace flexjit {

/// What ptxas reported for one kernel (from `--ptxas-options=-v`); all zero when unknown.
struct KernelResources {
  int registers = 0;          ///< registers per thread
  int spill_store_bytes = 0;  ///< bytes of register spill stores per thread
  int spill_load_bytes = 0;   ///< bytes of register spill loads per thread
  int stack_frame_bytes = 0;  ///< bytes of stack frame per thread
  int static_smem_bytes = 0;  ///< bytes of statically declared shared memory per block
  int barriers = 0;           ///< named barriers used
};

/// One compiled kernel module in the cache, as recorded in its `<key>.json`.
struct KernelCacheEntry {
  std::string key;                          ///< 32 hex digits (XXH3-128 of the key text)
  std::string json_path;                    ///< absolute path of `<key>.json`
  std::string source_name;                  ///< e.g. "attention_fwd.cu"
  std::vector<std::string> kernel_names;    ///< the extern "C" kernels in the module
  std::string arch;                         ///< target, e.g. "sm_90a"
  std::vector<std::string> options;         ///< the canonical NVRTC options used
  std::string nvrtc_version;                ///< e.g. "13.0"
  std::string flexjit_version;              ///< flexjit version that wrote the entry
  std::string created;                      ///< creation time, ISO 8601 UTC
  int64_t created_unix = 0;                 ///< creation time, seconds since the epoch
  double compile_ms = 0;                    ///< NVRTC wall time of the original compile
  uint64_t cubin_bytes = 0;                 ///< size of `<key>.cubin`
  uint64_t total_bytes = 0;                 ///< size of the entry's files together
  std::map<std::string, KernelResources> resources;  ///< per kernel name
  /// The complete text the key was computed from (source, headers, options, versions). Filled by
  /// find_kernel_cache_entry() only; listing leaves it empty to keep listings cheap.
  std::string key_text;
};

/// The contents of a kernel cache directory.
struct KernelCacheListing {
  std::string directory;                  ///< the cache directory that was listed
  std::vector<KernelCacheEntry> entries;  ///< readable entries, oldest first
  /// Files in `kernels/` that belong to no readable entry (torn writes, foreign or damaged
  /// files). They are harmless: a damaged entry is a cache miss and is rewritten by the next
  /// compile; `flexjit cache clear` removes them.
  std::vector<std::string> damaged;
};

/// What clear_cache() removed (or, with dry_run, would remove).
struct CacheClearReport {
  std::string directory;           ///< the cache directory
  size_t kernel_entries = 0;       ///< number of distinct kernel keys removed
  size_t failed_dumps = 0;         ///< number of files under `failed/` removed
  uint64_t bytes = 0;              ///< bytes freed
  std::vector<std::string> paths;  ///< every file removed, sorted
};

/// The cache directory after applying the environment (see the file comment). Does not create it.
std::string cache_directory();

/// False when `FLEXJIT_CACHE` is `off`, `0`, `false` or `no` (any case); true when it is unset,
/// empty, `on`, `1`, `true` or `yes`; UsageError for anything else.
bool kernel_cache_enabled();

/// Lists the kernel cache in `directory`. A missing directory is an empty cache, not an error.
KernelCacheListing list_kernel_cache(const std::string& directory = cache_directory());

/// Finds the entry whose key starts with `key_prefix` (at least one hex digit). Throws UsageError
/// when no entry matches, or when several do (the message lists them).
KernelCacheEntry find_kernel_cache_entry(const std::string& key_prefix,
                                         const std::string& directory = cache_directory());

/// Removes everything in `<directory>/kernels/`, `<directory>/failed/` and `<directory>/damaged/`
/// (entries found damaged and moved aside). `autotune.json` belongs to the autotune cache:
/// clear_autotune_cache() in `flexjit/autotune.hpp`. With `dry_run` only reports what would go.
/// Checks that everything can be removed before removing anything; throws CacheError (having
/// removed nothing) when something cannot.
CacheClearReport clear_cache(bool dry_run = false, const std::string& directory = cache_directory());

}  // namespace flexjit
