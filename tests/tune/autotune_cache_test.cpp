// The autotune cache: key text and buckets, store/lookup round trip, merging with entries other
// processes wrote, concurrent writer processes, damaged files moved aside and rebuilt, the
// in-process memo, FLEXJIT_CACHE=off, listing and FLEXJIT_AUTOTUNE parsing.
#include "tune/autotune_cache.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "flexjit/autotune.hpp"
#include "flexjit/error.hpp"
#include "flexjit/version.hpp"
#include "tune_test_util.hpp"

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tune::AutotuneCache;
using tune::AutotuneEntry;
using tune::AutotuneKey;

void expect_same_entry(const AutotuneEntry& a, const AutotuneEntry& b) {
  EXPECT_EQ(a.winner, b.winner);
  EXPECT_EQ(a.winner_ms, b.winner_ms);
  EXPECT_EQ(a.default_config, b.default_config);
  EXPECT_EQ(a.default_ms, b.default_ms);
  EXPECT_EQ(a.mode, b.mode);
  ASSERT_EQ(a.candidates.size(), b.candidates.size());
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    EXPECT_EQ(a.candidates[i].config, b.candidates[i].config);
    EXPECT_EQ(a.candidates[i].ms, b.candidates[i].ms);
    EXPECT_EQ(a.candidates[i].error, b.candidates[i].error);
  }
  EXPECT_EQ(a.created, b.created);
  EXPECT_EQ(a.created_unix, b.created_unix);
  EXPECT_EQ(a.flexjit_version, b.flexjit_version);
}

struct AutotuneCacheTest : ::testing::Test {
  TempDir dir;
  ScopedEnv cache_on{"FLEXJIT_CACHE", nullptr};
  void SetUp() override { tune::reset_autotune_cache_state_for_testing(); }
  void TearDown() override { tune::reset_autotune_cache_state_for_testing(); }
  AutotuneCache cache() const { return AutotuneCache(dir.str(), true); }
  fs::path file() const { return dir.path() / "autotune.json"; }
};

// ---- keys ----

TEST(AutotuneKey, CanonicalText) {
  EXPECT_EQ(sample_key().canonical(),
            "device=NVIDIA H100 80GB HBM3;sms=132;cc=9.0;driver=13000;nvrtc=13.0;flexjit=0.1.0;arch=sm_90a;"
            "family=fwd;dtype=bf16;d=128;dv=128;gqa=1;mods=0123456789abcdef;block_mask=1;full_blocks=1;"
            "sparse=128x128;divisible=1;safe_rows=0;q=4096;kv=4096;bh=32");
}

TEST(AutotuneKey, EscapesAndParsesBack) {
  AutotuneKey k = sample_key();
  k.device_name = "odd;name=with\\slash\n";
  const std::string text = k.canonical();
  EXPECT_EQ(text.substr(0, 35), "device=odd\\;name\\=with\\\\slash?;sms=");
  const auto fields = tune::parse_key_text(text);
  ASSERT_EQ(fields.size(), 21u);
  EXPECT_EQ(fields[0], (std::pair<std::string, std::string>{"device", "odd;name=with\\slash?"}));
  EXPECT_EQ(fields[7], (std::pair<std::string, std::string>{"family", "fwd"}));
  EXPECT_EQ(fields[20], (std::pair<std::string, std::string>{"bh", "32"}));
  EXPECT_TRUE(tune::parse_key_text("no fields here").empty());
}

TEST(AutotuneKey, EveryFieldChangesTheKey) {
  const AutotuneKey base = sample_key();
  std::vector<std::function<void(AutotuneKey&)>> changes = {
      [](AutotuneKey& k) { k.device_name = "NVIDIA A100-SXM4-80GB"; },
      [](AutotuneKey& k) { k.sm_count = 114; },
      [](AutotuneKey& k) { k.cc_major = 8; },
      [](AutotuneKey& k) { k.cc_minor = 9; },
      [](AutotuneKey& k) { k.driver_version = 12080; },
      [](AutotuneKey& k) { k.nvrtc_version = "12.8"; },
      [](AutotuneKey& k) { k.flexjit_version = "0.2.0"; },
      [](AutotuneKey& k) { k.arch = "sm_90"; },
      [](AutotuneKey& k) { k.family = "bwd_dq"; },
      [](AutotuneKey& k) { k.dtype = "f16"; },
      [](AutotuneKey& k) { k.head_dim = 64; },
      [](AutotuneKey& k) { k.head_dim_v = 64; },
      [](AutotuneKey& k) { k.gqa_group = 4; },
      [](AutotuneKey& k) { k.mods_hash = "fedcba9876543210"; },
      [](AutotuneKey& k) { k.has_block_mask = false; },
      [](AutotuneKey& k) { k.has_full_blocks = false; },
      [](AutotuneKey& k) { k.sparse_q_block = 64; },
      [](AutotuneKey& k) { k.sparse_kv_block = 64; },
      [](AutotuneKey& k) { k.is_divisible = false; },
      [](AutotuneKey& k) { k.rows_guaranteed_safe = true; },
      [](AutotuneKey& k) { k.q_len_bucket = 8192; },
      [](AutotuneKey& k) { k.kv_len_bucket = 8192; },
      [](AutotuneKey& k) { k.batch_heads_bucket = 64; },
  };
  std::set<std::string> seen = {base.canonical()};
  for (size_t i = 0; i < changes.size(); ++i) {
    AutotuneKey k = base;
    changes[i](k);
    EXPECT_TRUE(seen.insert(k.canonical()).second) << "change " << i << " left the key unchanged: " << k.canonical();
  }
}

TEST(AutotuneKey, ShapeBuckets) {
  EXPECT_EQ(tune::shape_bucket(0), 1);
  EXPECT_EQ(tune::shape_bucket(1), 1);
  EXPECT_EQ(tune::shape_bucket(3), 4);
  EXPECT_EQ(tune::shape_bucket(3000), 4096);
  EXPECT_EQ(tune::shape_bucket(4096), 4096);
  EXPECT_EQ(tune::shape_bucket(4097), 8192);
}

TEST(AutotuneKey, MadeFromASpecAndDevice) {
  codegen::KernelSpec spec;
  spec.family = codegen::Family::fwd;
  spec.head_dim = spec.head_dim_v = 128;
  spec.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  spec.has_block_mask = spec.has_full_blocks = true;
  DeviceInfo device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.sm_count = 132;
  device.cc_major = 9;
  device.driver_version = 13000;
  const AutotuneKey at_4096 = tune::make_autotune_key(spec, "sm_90a", device, 32, 4096, 4096);
  EXPECT_EQ(at_4096.q_len_bucket, 4096);
  EXPECT_EQ(at_4096.batch_heads_bucket, 32);
  EXPECT_TRUE(at_4096.is_divisible);
  EXPECT_EQ(at_4096.sparse_q_block, 128);
  EXPECT_EQ(at_4096.mods_hash, tune::mods_hash(spec));
  // 3968 = 31 * 128 shares 4096's bucket and divisibility: the same key. 3000 shares the bucket
  // but not divisibility (tail tiles change the winner); 4097 is in the next bucket.
  EXPECT_EQ(tune::make_autotune_key(spec, "sm_90a", device, 30, 3968, 4096).canonical(), at_4096.canonical());
  const AutotuneKey at_3000 = tune::make_autotune_key(spec, "sm_90a", device, 32, 3000, 4096);
  EXPECT_EQ(at_3000.q_len_bucket, 4096);
  EXPECT_FALSE(at_3000.is_divisible);
  EXPECT_NE(at_3000.canonical(), at_4096.canonical());
  const AutotuneKey at_4097 = tune::make_autotune_key(spec, "sm_90a", device, 32, 4097, 4096);
  EXPECT_EQ(at_4097.q_len_bucket, 8192);
  EXPECT_NE(at_4097.canonical(), at_4096.canonical());
  // Without a block mask the sparse sizes do not matter.
  codegen::KernelSpec dense = spec;
  dense.has_block_mask = dense.has_full_blocks = false;
  dense.sparse_q_block = 64;
  EXPECT_EQ(tune::make_autotune_key(dense, "sm_90a", device, 32, 4096, 4096).sparse_q_block, 0);
}

TEST(AutotuneKey, ModsHashFollowsTheMeaning) {
  codegen::KernelSpec a;
  a.score_mod = Expr::parse(ModKind::score, "score + (q_idx - kv_idx)");
  codegen::KernelSpec b = a;
  b.score_mod = Expr::parse(ModKind::score, "score+(q_idx-kv_idx)");
  EXPECT_EQ(tune::mods_hash(a), tune::mods_hash(b));
  EXPECT_EQ(tune::mods_hash(a).size(), 16u);
  b.score_mod = Expr::parse(ModKind::score, "score + (kv_idx - q_idx)");
  EXPECT_NE(tune::mods_hash(a), tune::mods_hash(b));
  codegen::KernelSpec c = a;
  c.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  EXPECT_NE(tune::mods_hash(a), tune::mods_hash(c));
  codegen::KernelSpec d = a;
  d.declarations.params.push_back(ParamDecl{"softcap", ScalarType::floating});
  EXPECT_NE(tune::mods_hash(a), tune::mods_hash(d));
}

// ---- store and lookup ----

TEST_F(AutotuneCacheTest, RoundTrip) {
  EXPECT_FALSE(cache().lookup(sample_key()).has_value());
  EXPECT_FALSE(fs::exists(file()));
  AutotuneEntry e = sample_entry();
  e.candidates[0].ms = 1.0 / 3.0;  // full double precision survives the text form
  ASSERT_TRUE(cache().store(sample_key(), e));
  const auto hit = cache().lookup(sample_key());
  ASSERT_TRUE(hit.has_value());
  expect_same_entry(*hit, e);
  EXPECT_FALSE(cache().lookup(sample_key("another")).has_value());

  // A fresh process state reads the same from the file.
  tune::reset_autotune_cache_state_for_testing();
  const auto reread = cache().lookup(sample_key());
  ASSERT_TRUE(reread.has_value());
  expect_same_entry(*reread, e);

  const json j = json::parse(read_text(file()));
  EXPECT_EQ(j.at("format"), "flexjit-autotune-1");
  const json& stored = j.at("entries").at(sample_key().canonical());
  EXPECT_EQ(stored.at("winner"), "m128n64w4s2");
  EXPECT_EQ(stored.at("default"), "m128n32w4s2");
  EXPECT_EQ(stored.at("mode"), "on");
  EXPECT_EQ(stored.at("candidates").at(2), (json{{"config", "m128n128w8s2"}, {"error", "launch failed: out of resources"}}));
  EXPECT_TRUE(files_starting_with(dir.path(), ".tmp-").empty());
}

TEST_F(AutotuneCacheTest, StoreFillsTimesAndVersionAndKeepsNullDefault) {
  AutotuneEntry e = sample_entry();
  e.created.clear();
  e.created_unix = 0;
  e.flexjit_version.clear();
  e.default_ms.reset();
  e.mode = AutotuneMode::max;
  const int64_t before = static_cast<int64_t>(std::time(nullptr));
  ASSERT_TRUE(cache().store(sample_key(), e));
  tune::reset_autotune_cache_state_for_testing();
  const auto hit = cache().lookup(sample_key());
  ASSERT_TRUE(hit.has_value());
  EXPECT_GE(hit->created_unix, before);
  EXPECT_TRUE(std::regex_match(hit->created, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << hit->created;
  EXPECT_EQ(hit->flexjit_version, FLEXJIT_VERSION_STRING);
  EXPECT_FALSE(hit->default_ms.has_value());
  EXPECT_EQ(hit->mode, AutotuneMode::max);
  EXPECT_TRUE(json::parse(read_text(file())).at("entries").at(sample_key().canonical()).at("default_ms").is_null());
}

TEST_F(AutotuneCacheTest, SameKeyIsReplacedOthersKept) {
  ASSERT_TRUE(cache().store(sample_key("a"), sample_entry(1.0)));
  ASSERT_TRUE(cache().store(sample_key("b"), sample_entry(2.0)));
  ASSERT_TRUE(cache().store(sample_key("a"), sample_entry(3.0)));
  EXPECT_EQ(cache().lookup(sample_key("a"))->winner_ms, 3.0);
  EXPECT_EQ(cache().lookup(sample_key("b"))->winner_ms, 2.0);
  EXPECT_EQ(cache().entries().size(), 2u);
}

TEST_F(AutotuneCacheTest, MergesAnEntryAnotherProcessWroteMeanwhile) {
  ASSERT_TRUE(cache().store(sample_key("mine-1"), sample_entry(1.0)));
  ASSERT_TRUE(cache().lookup(sample_key("mine-1")).has_value());  // memoised in this process now
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const bool ok = AutotuneCache(dir.str(), true).store(sample_key("theirs"), sample_entry(2.0));
    std::_Exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // This process sees the other's entry (the file changed under its memo) ...
  ASSERT_TRUE(cache().lookup(sample_key("theirs")).has_value());
  EXPECT_EQ(cache().lookup(sample_key("theirs"))->winner_ms, 2.0);
  // ... and its next store keeps it.
  ASSERT_TRUE(cache().store(sample_key("mine-2"), sample_entry(3.0)));
  tune::reset_autotune_cache_state_for_testing();
  const auto all = cache().entries();
  EXPECT_EQ(all.size(), 3u);
  EXPECT_EQ(all.at(sample_key("mine-1").canonical()).winner_ms, 1.0);
  EXPECT_EQ(all.at(sample_key("theirs").canonical()).winner_ms, 2.0);
  EXPECT_EQ(all.at(sample_key("mine-2").canonical()).winner_ms, 3.0);
}

TEST_F(AutotuneCacheTest, MemoNoticesAReplacedFile) {
  ASSERT_TRUE(cache().store(sample_key("a"), sample_entry(1.0)));
  ASSERT_TRUE(cache().lookup(sample_key("a")).has_value());
  // Another writer renames a new file into place (same size is possible; the inode changes).
  std::string text = read_text(file());
  const std::string from = sample_key("a").canonical(), to = sample_key("b").canonical();
  text.replace(text.find(from), from.size(), to);
  write_text(dir.path() / "replacement", text);
  fs::rename(dir.path() / "replacement", file());
  EXPECT_FALSE(cache().lookup(sample_key("a")).has_value());
  EXPECT_TRUE(cache().lookup(sample_key("b")).has_value());
  // Deleted: empty.
  fs::remove(file());
  EXPECT_FALSE(cache().lookup(sample_key("b")).has_value());
}

// Two processes store 50 entries each, at the same time; a third key is written by both.
TEST_F(AutotuneCacheTest, ConcurrentProcessesKeepEveryEntry) {
  constexpr int kPerProcess = 50;
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      bool ok = true;
      const AutotuneCache c(dir.str(), true);
      for (int i = 0; i < kPerProcess; ++i) {
        ok &= c.store(sample_key("p" + std::to_string(p) + "-" + std::to_string(i)), sample_entry(1.0 + i));
        ok &= c.store(sample_key("shared"), sample_entry(100.0 + p));
        ok &= c.lookup(sample_key("p" + std::to_string(p) + "-" + std::to_string(i))).has_value();
      }
      std::_Exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  testing::internal::CaptureStderr();
  const auto all = cache().entries();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // the file is valid
  EXPECT_EQ(all.size(), 2u * kPerProcess + 1);
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < kPerProcess; ++i) {
      const auto it = all.find(sample_key("p" + std::to_string(p) + "-" + std::to_string(i)).canonical());
      ASSERT_NE(it, all.end()) << p << " " << i;
      EXPECT_EQ(it->second.winner_ms, 1.0 + i);
    }
  const double shared = all.at(sample_key("shared").canonical()).winner_ms;
  EXPECT_TRUE(shared == 100.0 || shared == 101.0) << shared;
  EXPECT_TRUE(files_starting_with(dir.path(), ".tmp-").empty());
  EXPECT_TRUE(files_starting_with(dir.path(), "autotune.json.damaged").empty());
}

TEST_F(AutotuneCacheTest, ConcurrentThreads) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) cache().store(sample_key("t" + std::to_string(t) + "-" + std::to_string(i)), sample_entry());
    });
  for (auto& t : threads) t.join();
  tune::reset_autotune_cache_state_for_testing();
  EXPECT_EQ(cache().entries().size(), 40u);
}

// ---- damaged files ----

struct Damaged {
  const char* name;
  std::function<std::string(const std::string& valid)> contents;
  const char* reason;
};

TEST_F(AutotuneCacheTest, DamagedFilesAreReportedMovedAsideAndRebuilt) {
  ASSERT_TRUE(cache().store(sample_key(), sample_entry()));
  const std::string valid = read_text(file());
  const std::string key = sample_key().canonical();
  auto with = [&](const std::string& field, const json& value) {
    json j = json::parse(valid);
    j["entries"][key][field] = value;
    return j.dump();
  };
  const std::vector<Damaged> cases = {
      {"truncated", [](const std::string& v) { return v.substr(0, v.size() / 2); }, "not valid JSON"},
      {"empty", [](const std::string&) { return std::string(); }, "not valid JSON"},
      {"not JSON", [](const std::string&) { return std::string("winner = m128n64w4s2\n"); }, "not valid JSON"},
      {"array", [](const std::string&) { return std::string("[1, 2]"); }, "not a JSON object"},
      {"no format", [](const std::string&) { return std::string(R"({"entries": {}})"); }, "no \"format\" tag"},
      {"foreign format", [](const std::string&) { return std::string(R"({"format": "flexjit-autotune-0", "entries": {}})"); },
       "format is 'flexjit-autotune-0', expected 'flexjit-autotune-1'"},
      {"entries not an object", [](const std::string&) { return std::string(R"({"format": "flexjit-autotune-1", "entries": []})"); },
       "\"entries\" is missing or not an object"},
      {"winner_ms a string", [&](const std::string&) { return with("winner_ms", "fast"); },
       nullptr},  // reason built below (it names the key)
      {"bad config", [&](const std::string&) { return with("winner", "m128x64"); }, nullptr},
      {"bad mode", [&](const std::string&) { return with("mode", "fast"); }, nullptr},
      {"negative time", [&](const std::string&) { return with("default_ms", -1.0); }, nullptr},
      {"candidates an object", [&](const std::string&) { return with("candidates", json::object()); }, nullptr},
  };
  const std::map<std::string, std::string> entry_reasons = {
      {"winner_ms a string", "entry '" + key + "': \"winner_ms\" is missing or not a non-negative number"},
      {"bad config", "entry '" + key + "': \"winner\" is not a block config ('m128x64')"},
      {"bad mode", "entry '" + key + "': \"mode\" is 'fast', expected 'on' or 'max'"},
      {"negative time", "entry '" + key + "': \"default_ms\" is missing or not a non-negative number"},
      {"candidates an object", "entry '" + key + "': \"candidates\" is missing or not an array"},
  };
  for (const Damaged& c : cases) {
    SCOPED_TRACE(c.name);
    for (const auto& f : files_starting_with(dir.path(), "autotune.json.damaged")) fs::remove(dir.path() / f);
    const std::string bad = c.contents(valid);
    write_text(file(), bad);
    const std::string reason = c.reason ? c.reason : entry_reasons.at(c.name);
    // Reported once, moved aside, treated as empty.
    testing::internal::CaptureStderr();
    EXPECT_FALSE(cache().lookup(sample_key()).has_value());
    EXPECT_FALSE(cache().lookup(sample_key()).has_value());
    const std::string err = testing::internal::GetCapturedStderr();
    const auto aside = files_starting_with(dir.path(), "autotune.json.damaged-");
    ASSERT_EQ(aside.size(), 1u);
    EXPECT_TRUE(std::regex_match(aside[0], std::regex(R"(autotune\.json\.damaged-\d{8}T\d{6}Z)"))) << aside[0];
    EXPECT_EQ(err, "flexjit: warning: autotune cache '" + file().string() + "' is damaged (" + reason +
                       "); moved it to '" + (dir.path() / aside[0]).string() + "' and starting a fresh one\n");
    EXPECT_EQ(read_text(dir.path() / aside[0]), bad);  // kept for inspection, unchanged
    EXPECT_FALSE(fs::exists(file()));
    // The next store starts a fresh, valid file.
    ASSERT_TRUE(cache().store(sample_key(), sample_entry(0.5)));
    tune::reset_autotune_cache_state_for_testing();
    ASSERT_TRUE(cache().lookup(sample_key()).has_value());
    EXPECT_EQ(cache().lookup(sample_key())->winner_ms, 0.5);
  }
}

TEST_F(AutotuneCacheTest, StoreOverADamagedFileMovesItAsideToo) {
  write_text(file(), "{ torn");
  testing::internal::CaptureStderr();
  ASSERT_TRUE(cache().store(sample_key(), sample_entry()));
  const std::string err = testing::internal::GetCapturedStderr();
  const auto aside = files_starting_with(dir.path(), "autotune.json.damaged-");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(err, "flexjit: warning: autotune cache '" + file().string() +
                     "' is damaged (not valid JSON); moved it to '" + (dir.path() / aside[0]).string() +
                     "' and starting a fresh one\n");
  EXPECT_EQ(cache().entries().size(), 1u);
  // A second damage in the same second gets its own name.
  write_text(file(), "{ torn again");
  testing::internal::CaptureStderr();
  EXPECT_FALSE(cache().lookup(sample_key()).has_value());
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(files_starting_with(dir.path(), "autotune.json.damaged-").size(), 2u);
}

// ---- no disk ----

TEST_F(AutotuneCacheTest, UnwritableDirectoryWarnsOnceAndKeepsResultsInMemory) {
  write_text(dir.path() / "a-file", "");
  const std::string bad_dir = (dir.path() / "a-file" / "cache").string();
  const AutotuneCache c(bad_dir, true);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(c.store(sample_key("a"), sample_entry(1.0)));
  EXPECT_FALSE(c.store(sample_key("b"), sample_entry(2.0)));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "flexjit: warning: cannot write the autotune cache '" + bad_dir +
                     "/autotune.json' (cannot create " + bad_dir +
                     ": Not a directory); tuning results are kept in this process only. Set FLEXJIT_CACHE_DIR to "
                     "a writable directory, or FLEXJIT_CACHE=off to silence this warning.\n");
  EXPECT_EQ(c.lookup(sample_key("a"))->winner_ms, 1.0);
  EXPECT_EQ(c.lookup(sample_key("b"))->winner_ms, 2.0);
}

TEST_F(AutotuneCacheTest, CacheOffKeepsResultsInTheProcessOnly) {
  ScopedEnv off("FLEXJIT_CACHE", "off");
  ScopedEnv where("FLEXJIT_CACHE_DIR", dir.str().c_str());
  const AutotuneCache c;  // the defaults read the environment
  EXPECT_TRUE(c.store(sample_key(), sample_entry(1.0)));
  EXPECT_EQ(c.lookup(sample_key())->winner_ms, 1.0);
  EXPECT_FALSE(fs::exists(file()));
  EXPECT_TRUE(fs::is_empty(dir.path()));
  // The disk cache of the same directory does not see it.
  EXPECT_FALSE(cache().lookup(sample_key()).has_value());
}

// ---- listing ----

TEST_F(AutotuneCacheTest, Listing) {
  EXPECT_FALSE(list_autotune_cache(dir.str()).exists);
  ASSERT_TRUE(cache().store(sample_key("b"), sample_entry(2.0)));
  ASSERT_TRUE(cache().store(sample_key("a"), sample_entry(1.0)));
  const AutotuneListing listing = list_autotune_cache(dir.str());
  EXPECT_EQ(listing.path, file().string());
  EXPECT_TRUE(listing.exists);
  EXPECT_EQ(listing.damaged, "");
  ASSERT_EQ(listing.entries.size(), 2u);
  const AutotuneRecord& r = listing.entries[0];
  EXPECT_EQ(r.key_text, sample_key("a").canonical());
  EXPECT_EQ(r.key_fields.at(12), (std::pair<std::string, std::string>{"mods", "a"}));
  EXPECT_EQ(r.winner, "m128n64w4s2");
  EXPECT_EQ(r.winner_ms, 1.0);
  EXPECT_EQ(r.default_config, "m128n32w4s2");
  EXPECT_EQ(r.default_ms, 1.125);
  EXPECT_EQ(r.mode, "on");
  ASSERT_EQ(r.candidates.size(), 3u);
  EXPECT_EQ(r.candidates[2].config, "m128n128w8s2");
  EXPECT_FALSE(r.candidates[2].ms.has_value());
  EXPECT_EQ(r.candidates[2].error, "launch failed: out of resources");
  EXPECT_EQ(r.created, "2025-01-31T12:00:00Z");
  // A damaged file is reported, not moved.
  write_text(file(), "nope");
  const AutotuneListing damaged = list_autotune_cache(dir.str());
  EXPECT_TRUE(damaged.exists);
  EXPECT_EQ(damaged.damaged, "not valid JSON");
  EXPECT_TRUE(damaged.entries.empty());
  EXPECT_TRUE(fs::exists(file()));
}

// ---- issue 17 items 3 and 11: what is in autotune.json's place, and clearing it ----

TEST_F(AutotuneCacheTest, FifoOrDirectoryInPlaceOfTheFileIsNotRead) {
  ASSERT_EQ(::mkfifo(file().c_str(), 0600), 0);
  const AutotuneListing fifo = list_autotune_cache(dir.str());  // would block on a FIFO before
  EXPECT_TRUE(fifo.exists);
  EXPECT_EQ(fifo.damaged, file().string() + " is a FIFO (named pipe)");
  EXPECT_FALSE(cache().lookup(sample_key("a")).has_value());
  fs::remove(file());
  fs::create_directories(file() / "inside");
  EXPECT_EQ(list_autotune_cache(dir.str()).damaged, file().string() + " is a directory");
}

TEST_F(AutotuneCacheTest, ClearRemovesTheFileDamagedCopiesAndADirectoryInItsPlace) {
  ASSERT_TRUE(cache().store(sample_key("a"), sample_entry(1.0)));
  write_text(dir.path() / "autotune.json.damaged-20250101T000000Z", "old");
  write_text(dir.path() / "kernels.json", "not ours");
  const AutotuneClearReport dry = clear_autotune_cache(true, dir.str());
  EXPECT_EQ(dry.paths, (std::vector<std::string>{file().string(), file().string() + ".damaged-20250101T000000Z"}));
  EXPECT_GT(dry.bytes, 3u);
  EXPECT_TRUE(fs::exists(file()));
  const AutotuneClearReport done = clear_autotune_cache(false, dir.str());
  EXPECT_EQ(done.paths, dry.paths);
  EXPECT_FALSE(fs::exists(file()));
  EXPECT_FALSE(fs::exists(dir.path() / "autotune.json.damaged-20250101T000000Z"));
  EXPECT_TRUE(fs::exists(dir.path() / "kernels.json"));
  EXPECT_FALSE(cache().lookup(sample_key("a")).has_value());  // the process forgot it too

  // A directory in the file's place (`cache clear` failed on it after deleting the kernels).
  fs::create_directories(file() / "a" / "b");
  EXPECT_EQ(clear_autotune_cache(false, dir.str()).paths, std::vector<std::string>{file().string()});
  EXPECT_FALSE(fs::exists(file()));
  EXPECT_TRUE(clear_autotune_cache(false, dir.str()).paths.empty());
}

// ---- FLEXJIT_AUTOTUNE ----

TEST(AutotuneMode, Environment) {
  {
    ScopedEnv unset("FLEXJIT_AUTOTUNE", nullptr);
    EXPECT_EQ(autotune_mode(), AutotuneMode::on);
  }
  {
    ScopedEnv empty("FLEXJIT_AUTOTUNE", "");
    EXPECT_EQ(autotune_mode(), AutotuneMode::on);
  }
  for (auto [text, mode] : {std::pair<const char*, AutotuneMode>{"off", AutotuneMode::off},
                            {"OFF", AutotuneMode::off},
                            {"on", AutotuneMode::on},
                            {"max", AutotuneMode::max},
                            {"Max", AutotuneMode::max}}) {
    ScopedEnv set("FLEXJIT_AUTOTUNE", text);
    EXPECT_EQ(autotune_mode(), mode) << text;
  }
  ScopedEnv bad("FLEXJIT_AUTOTUNE", "fast");
  try {
    autotune_mode();
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "FLEXJIT_AUTOTUNE='fast' is not an autotune mode: use off (built-in defaults, no tuning), on (tune "
                 "a small set of configs; the default) or max (tune every config that fits)");
  }
  try {
    parse_autotune_mode("1", "--autotune");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 41), "--autotune='1' is not an autotune mode: u");
  }
  EXPECT_STREQ(autotune_mode_name(AutotuneMode::max), "max");
  EXPECT_EQ(autotune_cache_path("/x/y"), "/x/y/autotune.json");
}

}  // namespace
}  // namespace flexjit::test
