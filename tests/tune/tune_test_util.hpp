#pragma once
// Shared by the tune tests: environment and temporary-directory scopes, file helpers, sample keys
// and entries, and running this test binary again as a child process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <cstring>
#include <string>
#include <vector>

#include "tune/autotune_cache.hpp"

extern char** environ;

#include "support/scoped.hpp"

namespace flexjit::test {

// Files in `dir` whose name starts with `prefix`, sorted.
inline std::vector<std::string> files_starting_with(const std::filesystem::path& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A complete key for tests (no GPU needed); `tag` goes into the mods hash to make keys distinct.
inline tune::AutotuneKey sample_key(const std::string& tag = "0123456789abcdef") {
  tune::AutotuneKey k;
  k.device_name = "NVIDIA H100 80GB HBM3";
  k.sm_count = 132;
  k.cc_major = 9;
  k.cc_minor = 0;
  k.driver_version = 13000;
  k.nvrtc_version = "13.0";
  k.flexjit_version = "0.1.0";
  k.arch = "sm_90a";
  k.family = "fwd";
  k.dtype = "bf16";
  k.head_dim = 128;
  k.head_dim_v = 128;
  k.gqa_group = 1;
  k.mods_hash = tag;
  k.has_block_mask = true;
  k.has_full_blocks = true;
  k.sparse_q_block = 128;
  k.sparse_kv_block = 128;
  k.is_divisible = true;
  k.rows_guaranteed_safe = false;
  k.q_len_bucket = 4096;
  k.kv_len_bucket = 4096;
  k.batch_heads_bucket = 32;
  return k;
}

// An entry with two timed candidates and one failure; `winner_ms` tells entries apart.
inline tune::AutotuneEntry sample_entry(double winner_ms = 0.25) {
  tune::AutotuneEntry e;
  e.winner = BlockConfig::parse("m128n64w4s2");
  e.winner_ms = winner_ms;
  e.default_config = BlockConfig::parse("m128n32w4s2");
  e.default_ms = winner_ms + 0.125;
  e.mode = AutotuneMode::on;
  e.candidates = {{BlockConfig::parse("m128n32w4s2"), winner_ms + 0.125, ""},
                  {BlockConfig::parse("m128n64w4s2"), winner_ms, ""},
                  {BlockConfig::parse("m128n128w8s2"), std::nullopt, "launch failed: out of resources"}};
  e.created = "2025-01-31T12:00:00Z";
  e.created_unix = 1738324800;
  e.flexjit_version = "0.1.0";
  return e;
}

// Runs this test binary again with `env` added, returns its exit status (-1 when it did not exit
// normally) and its stdout + stderr in `output`.
inline int run_self(const std::vector<std::string>& args, const std::vector<std::string>& env, std::string* output) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  static std::atomic<int> counter{0};
  const std::filesystem::path log = std::filesystem::temp_directory_path() /
                                    ("flexjit-tune-child-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(counter++) + ".log");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> argv_s = {self};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The added variables first: getenv() returns the first of duplicate names. A parent run as
  // one shard of a sharded run must not pass the sharding on: the child runs one named test.
  std::vector<std::string> env_s = env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "GTEST_TOTAL_SHARDS=", 19) != 0 && std::strncmp(*e, "GTEST_SHARD_INDEX=", 18) != 0)
      env_s.push_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (output) *output = read_text(log);
  std::filesystem::remove(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace flexjit::test
