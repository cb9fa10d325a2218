// The on-disk kernel cache: hits without NVRTC, every kind of damaged entry is a repaired miss,
// concurrent writers (threads and processes) all succeed, directory resolution, fallbacks.
#include "jit/kernel_cache.hpp"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "flexjit/error.hpp"
#include "flexjit/kernel_cache.hpp"
#include "flexjit/version.hpp"
#include "test_util.hpp"

extern char** environ;

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;
using jit::CompileOptions;
using jit::CompiledKernel;

// ---- child-process mode for the two-process test ----
// When this variable is set, the test binary is a child started by TwoProcessesCompileTheSame:
// it compiles kChildSources sources into the cache directory given and exits before main().
constexpr const char* kChildEnv = "FLEXJIT_TEST_CACHE_CHILD_DIR";
constexpr int kChildSources = 3;

int run_child_if_requested() {
  const char* dir = std::getenv(kChildEnv);
  if (!dir) return 0;
  ::setenv("FLEXJIT_CACHE_DIR", dir, 1);
  ::unsetenv("FLEXJIT_CACHE");
  int status = 0;
  try {
    for (int i = 0; i < kChildSources; ++i) {
      const CompiledKernel k = jit::get_or_compile(saxpy_source("process " + std::to_string(i)),
                                                   CompileOptions{});
      if (k.cubin.compare(0, 4, "\x7f" "ELF") != 0) status = 3;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child failed: %s\n", e.what());
    status = 2;
  }
  std::fflush(stderr);
  std::_Exit(status);
}
const int g_child_mode = run_child_if_requested();

fs::path entry(const TempDir& dir, const std::string& key, const char* ext) {
  return jit::kernel_entry_path(dir.str(), key, ext);
}

std::string key_of(const jit::Source& s, const CompileOptions& o = {}) {
  return jit::kernel_key(jit::kernel_key_text(s, o.arch, o.canonical()));
}

// Sets FLEXJIT_CACHE_DIR to a fresh directory and enables the cache for the test.
struct CacheTest : ::testing::Test {
  TempDir dir;
  ScopedEnv cache_dir{"FLEXJIT_CACHE_DIR", dir.str().c_str()};
  ScopedEnv cache_on{"FLEXJIT_CACHE", nullptr};

  // Compiles through the cache; returns whether NVRTC ran.
  bool compiled(const jit::Source& s, CompiledKernel* out = nullptr) {
    const long before = jit::nvrtc_compile_count();
    CompiledKernel k = jit::get_or_compile(s, CompileOptions{});
    const bool ran = jit::nvrtc_compile_count() != before;
    EXPECT_EQ(k.from_disk_cache, !ran);
    if (out) *out = std::move(k);
    return ran;
  }
};

TEST_F(CacheTest, MissThenHitWithoutNvrtc) {
  const jit::Source s = saxpy_source("miss then hit");
  CompiledKernel first, second;
  EXPECT_TRUE(compiled(s, &first));
  EXPECT_FALSE(first.from_disk_cache);
  const std::string key = key_of(s);
  EXPECT_EQ(first.key, key);
  for (const char* ext : {".cubin", ".ptx", ".json"}) EXPECT_TRUE(fs::exists(entry(dir, key, ext)));

  EXPECT_FALSE(compiled(s, &second));
  EXPECT_TRUE(second.from_disk_cache);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.ptx, first.ptx);
  EXPECT_EQ(second.log, first.log);
  EXPECT_EQ(second.arch, first.arch);
  EXPECT_EQ(second.options, first.options);
  EXPECT_EQ(second.kernel_names, first.kernel_names);
  EXPECT_EQ(second.source_name, first.source_name);
  EXPECT_DOUBLE_EQ(second.compile_ms, first.compile_ms);
  ASSERT_EQ(second.resources.size(), first.resources.size());
  EXPECT_EQ(second.resources.at("saxpy").registers, first.resources.at("saxpy").registers);

  // No temporary file is left behind.
  for (const auto& f : fs::directory_iterator(dir.path() / "kernels"))
    EXPECT_NE(f.path().filename().string().rfind(".tmp-", 0), 0u) << f.path();
}

TEST_F(CacheTest, JsonRecordsTheEntry) {
  const jit::Source s = saxpy_source("json");
  CompiledKernel k;
  compiled(s, &k);
  const auto j = nlohmann::json::parse(read_text(entry(dir, k.key, ".json")));
  EXPECT_EQ(j.at("format"), "flexjit-kernel-cache-2");
  const std::string metadata_checksum = j.at("metadata_xxh3_64");
  EXPECT_EQ(metadata_checksum.size(), 16u);
  EXPECT_EQ(metadata_checksum.find_first_not_of("0123456789abcdef"), std::string::npos) << metadata_checksum;
  EXPECT_EQ(j.at("key"), k.key);
  EXPECT_EQ(j.at("key_text"), jit::kernel_key_text(s, "sm_90a", CompileOptions{}.canonical()));
  EXPECT_EQ(j.at("kernel_names"), std::vector<std::string>{"saxpy"});
  EXPECT_EQ(j.at("arch"), "sm_90a");
  EXPECT_EQ(j.at("flexjit_version"), FLEXJIT_VERSION_STRING);
  EXPECT_EQ(j.at("nvrtc_version"), jit::nvrtc_version_string());
  EXPECT_EQ(j.at("cubin").at("bytes"), k.cubin.size());
  EXPECT_EQ(j.at("ptx").at("bytes"), k.ptx.size());
  EXPECT_EQ(j.at("cubin").at("file"), k.key + ".cubin");
  EXPECT_GT(j.at("resources").at("saxpy").at("registers").get<int>(), 0);
  EXPECT_EQ(j.at("created").get<std::string>().size(), 20u);
  EXPECT_GT(j.at("compile_ms").get<double>(), 0.0);
}

TEST_F(CacheTest, NonUtf8KeyTextRoundTrips) {
  jit::Source s = saxpy_source("non-UTF-8 header");
  s.headers["latin1.cuh"] = "// caf\xe9 \xff\n";  // never included: only the key sees it
  CompiledKernel k;
  EXPECT_TRUE(compiled(s, &k));
  EXPECT_FALSE(compiled(s));
  const auto j = nlohmann::json::parse(read_text(entry(dir, k.key, ".json")));
  EXPECT_TRUE(j.contains("key_text_hex"));
}

// Each damage is a miss (NVRTC runs again) and the recompile repairs the entry (next is a hit).
void expect_miss_and_repair(CacheTest& t, const jit::Source& s) {
  EXPECT_TRUE(t.compiled(s)) << "damaged entry was trusted";
  EXPECT_FALSE(t.compiled(s)) << "entry was not repaired";
}

TEST_F(CacheTest, TornCubinIsAMiss) {
  const jit::Source s = saxpy_source("torn cubin");
  CompiledKernel k;
  compiled(s, &k);
  fs::resize_file(entry(dir, k.key, ".cubin"), k.cubin.size() / 2);
  expect_miss_and_repair(*this, s);
}

TEST_F(CacheTest, CubinWithSameSizeButOtherBytesIsAMiss) {
  const jit::Source s = saxpy_source("flipped byte");
  CompiledKernel k;
  compiled(s, &k);
  std::string bytes = k.cubin;
  bytes[bytes.size() / 2] ^= 0x5a;
  write_text(entry(dir, k.key, ".cubin"), bytes);
  expect_miss_and_repair(*this, s);
}

TEST_F(CacheTest, MissingCubinOrPtxIsAMiss) {
  const jit::Source s = saxpy_source("missing parts");
  CompiledKernel k;
  compiled(s, &k);
  fs::remove(entry(dir, k.key, ".cubin"));
  expect_miss_and_repair(*this, s);
  fs::remove(entry(dir, k.key, ".ptx"));
  expect_miss_and_repair(*this, s);
}

TEST_F(CacheTest, TruncatedJsonIsAMiss) {
  const jit::Source s = saxpy_source("truncated json");
  CompiledKernel k;
  compiled(s, &k);
  const std::string text = read_text(entry(dir, k.key, ".json"));
  write_text(entry(dir, k.key, ".json"), text.substr(0, text.size() / 2));
  expect_miss_and_repair(*this, s);
  write_text(entry(dir, k.key, ".json"), "");
  expect_miss_and_repair(*this, s);
}

TEST_F(CacheTest, JsonForAnotherKeyTextIsAMiss) {
  // What a hash collision would look like: the right file name, another kernel's key text.
  const jit::Source s = saxpy_source("collision");
  CompiledKernel k;
  compiled(s, &k);
  auto j = nlohmann::json::parse(read_text(entry(dir, k.key, ".json")));
  j["key_text"] = jit::kernel_key_text(saxpy_source("another kernel"), "sm_90a",
                                       CompileOptions{}.canonical());
  write_text(entry(dir, k.key, ".json"), j.dump());
  const std::string key_text = jit::kernel_key_text(s, "sm_90a", CompileOptions{}.canonical());
  EXPECT_FALSE(jit::load_cached_kernel(dir.str(), k.key, key_text).has_value());
  expect_miss_and_repair(*this, s);
}

TEST_F(CacheTest, JsonWithWrongFieldsIsAMiss) {
  const jit::Source s = saxpy_source("wrong fields");
  CompiledKernel k;
  compiled(s, &k);
  const std::string original = read_text(entry(dir, k.key, ".json"));
  for (const char* field : {"format", "key", "cubin", "resources", "kernel_names", "log"}) {
    auto j = nlohmann::json::parse(original);
    j[field] = 42;  // wrong type everywhere
    write_text(entry(dir, k.key, ".json"), j.dump());
    expect_miss_and_repair(*this, s);
  }
  for (const char* field : {"key_text", "compile_ms", "ptx"}) {
    auto j = nlohmann::json::parse(original);
    j.erase(field);
    write_text(entry(dir, k.key, ".json"), j.dump());
    expect_miss_and_repair(*this, s);
  }
}

TEST_F(CacheTest, GarbageFilesAreMissesAndHarmless) {
  const jit::Source s = saxpy_source("garbage");
  const std::string key = key_of(s);
  fs::create_directories(dir.path() / "kernels");
  write_text(entry(dir, key, ".json"), std::string("\x00\x01garbage{[", 10));
  write_text(entry(dir, key, ".cubin"), "not an elf");
  write_text(dir.path() / "kernels" / "zzzz.json", "{}");
  write_text(dir.path() / "kernels" / "README", "hello");
  fs::create_directories(dir.path() / "kernels" / "subdir");
  expect_miss_and_repair(*this, s);
  const KernelCacheListing listing = list_kernel_cache(dir.str());
  ASSERT_EQ(listing.entries.size(), 1u);
  EXPECT_EQ(listing.entries[0].key, key);
  EXPECT_EQ(listing.damaged.size(), 3u);  // zzzz.json, README and subdir
}

// ---- issue 17 items 3, 10, 11: entries that are not regular files, and repairs that say so ----

// Compiles `s` capturing stderr; returns what was printed.
std::string compile_and_capture(CacheTest& t, const jit::Source& s, bool* ran) {
  ::testing::internal::CaptureStderr();
  *ran = t.compiled(s);
  return ::testing::internal::GetCapturedStderr();
}

// The damage is a miss with one warning that names the entry and the damage; the next compile
// is a silent hit.
void expect_reported_repair(CacheTest& t, const jit::Source& s, const std::string& key, const std::string& damage) {
  bool ran = false;
  const std::string first = compile_and_capture(t, s, &ran);
  EXPECT_TRUE(ran) << "damaged entry was trusted";
  EXPECT_EQ(first, "flexjit: warning: kernel cache entry " + entry(t.dir, key, ".json").string() +
                       " was damaged (" + damage + "); recompiled it and rewrote the entry\n");
  const std::string second = compile_and_capture(t, s, &ran);
  EXPECT_FALSE(ran) << "entry was not repaired";
  EXPECT_EQ(second, "");
}

TEST_F(CacheTest, FifoInPlaceOfAnEntryFileIsRefusedWithoutBlocking) {
  const jit::Source s = saxpy_source("fifo");
  CompiledKernel k;
  compiled(s, &k);
  fs::remove(entry(dir, k.key, ".json"));
  ASSERT_EQ(::mkfifo(entry(dir, k.key, ".json").c_str(), 0600), 0);
  expect_reported_repair(*this, s, k.key, k.key + ".json is a FIFO (named pipe)");
  fs::remove(entry(dir, k.key, ".cubin"));
  ASSERT_EQ(::mkfifo(entry(dir, k.key, ".cubin").c_str(), 0600), 0);
  expect_reported_repair(*this, s, k.key, k.key + ".cubin is a FIFO (named pipe)");
}

TEST_F(CacheTest, LinkToDevZeroIsNotRead) {
  const jit::Source s = saxpy_source("dev zero");
  CompiledKernel k;
  compiled(s, &k);
  fs::remove(entry(dir, k.key, ".cubin"));
  fs::create_symlink("/dev/zero", entry(dir, k.key, ".cubin"));
  expect_reported_repair(*this, s, k.key, k.key + ".cubin is a character device");
}

TEST_F(CacheTest, DanglingLinkAndLoopAreReported) {
  const jit::Source s = saxpy_source("links");
  CompiledKernel k;
  compiled(s, &k);
  fs::remove(entry(dir, k.key, ".ptx"));
  fs::create_symlink(dir.path() / "nowhere", entry(dir, k.key, ".ptx"));
  expect_reported_repair(*this, s, k.key, k.key + ".ptx is a dangling symbolic link");
  fs::remove(entry(dir, k.key, ".json"));
  fs::create_symlink(k.key + ".json", entry(dir, k.key, ".json"));  // points at itself
  expect_reported_repair(*this, s, k.key, k.key + ".json cannot be read: Too many levels of symbolic links");
}

TEST_F(CacheTest, TruncationAndFlipsAreReportedOnce) {
  const jit::Source s = saxpy_source("reported");
  CompiledKernel k;
  compiled(s, &k);
  fs::resize_file(entry(dir, k.key, ".cubin"), k.cubin.size() / 2);
  expect_reported_repair(*this, s, k.key,
                         k.key + ".cubin does not match the size and checksum recorded in " + k.key + ".json");
  write_text(entry(dir, k.key, ".json"), "");
  expect_reported_repair(*this, s, k.key, k.key + ".json is not a JSON object");
}

// ---- the .json's own fields: the kernel names pick the entry point a launch uses ----

// A module with two kernels, so that their order in "kernel_names" matters.
jit::Source two_kernel_source(const std::string& salt) {
  jit::Source s;
  s.name = "pair.cu";
  s.text = "// " + salt +
           "\n"
           "extern \"C\" __global__ void first(int* p) { p[0] = 1; }\n"
           "extern \"C\" __global__ void second(int* p) { p[1] = 2; }\n";
  s.kernel_names = {"first", "second"};
  return s;
}

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(read_text(path)); }

std::string checksum_damage(const std::string& key) {
  return key + ".json does not match the metadata checksum recorded in it";
}

TEST_F(CacheTest, FlippedByteInAKernelNameIsReported) {
  const jit::Source s = saxpy_source("flipped name");
  CompiledKernel k;
  compiled(s, &k);
  // The probe's edit: one byte of the .json's text, "saxpy" -> "saxpz" in "kernel_names".
  std::string text = read_text(entry(dir, k.key, ".json"));
  const size_t at = text.find("\"saxpy\"", text.find("\"kernel_names\""));
  ASSERT_NE(at, std::string::npos) << text;
  text[at + 5] = 'z';
  write_text(entry(dir, k.key, ".json"), text);
  ASSERT_EQ(read_json(entry(dir, k.key, ".json")).at("kernel_names"), std::vector<std::string>{"saxpz"});
  const std::string key_text = jit::kernel_key_text(s, "sm_90a", CompileOptions{}.canonical());
  EXPECT_FALSE(jit::load_cached_kernel(dir.str(), k.key, key_text).has_value());
  // Listing shows no entry with a made-up kernel name: its three files are damage.
  const KernelCacheListing listing = list_kernel_cache(dir.str());
  EXPECT_TRUE(listing.entries.empty());
  EXPECT_EQ(listing.damaged.size(), 3u);
  EXPECT_THROW(find_kernel_cache_entry(k.key, dir.str()), UsageError);
  expect_reported_repair(*this, s, k.key, checksum_damage(k.key));
  CompiledKernel repaired;
  EXPECT_FALSE(compiled(s, &repaired));
  EXPECT_EQ(repaired.kernel_names, std::vector<std::string>{"saxpy"});
}

TEST_F(CacheTest, SwappedKernelNamesAreReported) {
  const jit::Source s = two_kernel_source("swapped");
  CompiledKernel k;
  compiled(s, &k);
  ASSERT_EQ(k.kernel_names, (std::vector<std::string>{"first", "second"}));
  auto j = read_json(entry(dir, k.key, ".json"));
  j["kernel_names"] = nlohmann::json::array({"second", "first"});
  write_text(entry(dir, k.key, ".json"), j.dump());
  expect_reported_repair(*this, s, k.key, checksum_damage(k.key));
  CompiledKernel repaired;
  EXPECT_FALSE(compiled(s, &repaired));
  EXPECT_EQ(repaired.kernel_names, (std::vector<std::string>{"first", "second"}));
}

TEST_F(CacheTest, NegativeRegisterCountIsReported) {
  const jit::Source s = saxpy_source("negative registers");
  CompiledKernel k;
  compiled(s, &k);
  auto j = read_json(entry(dir, k.key, ".json"));
  j["resources"]["saxpy"]["registers"] = -7;
  write_text(entry(dir, k.key, ".json"), j.dump());
  expect_reported_repair(*this, s, k.key, checksum_damage(k.key));
  CompiledKernel repaired;
  EXPECT_FALSE(compiled(s, &repaired));
  EXPECT_GT(repaired.resources.at("saxpy").registers, 0);
}

TEST_F(CacheTest, EntryWithoutMetadataChecksumIsReported) {
  const jit::Source s = saxpy_source("no metadata checksum");
  CompiledKernel k;
  compiled(s, &k);
  auto j = read_json(entry(dir, k.key, ".json"));
  j.erase("metadata_xxh3_64");
  write_text(entry(dir, k.key, ".json"), j.dump());
  expect_reported_repair(*this, s, k.key, k.key + ".json has no metadata checksum");
  // What the previous flexjit wrote: format 1, no metadata checksum.
  j["format"] = "flexjit-kernel-cache-1";
  write_text(entry(dir, k.key, ".json"), j.dump());
  expect_reported_repair(*this, s, k.key,
                         k.key + ".json was written by an older flexjit (format flexjit-kernel-cache-1)");
  EXPECT_EQ(read_json(entry(dir, k.key, ".json")).at("format"), "flexjit-kernel-cache-2");
}

TEST_F(CacheTest, EveryFieldOfTheJsonIsChecked) {
  const jit::Source s = saxpy_source("every field");
  CompiledKernel k;
  compiled(s, &k);
  const auto original = read_json(entry(dir, k.key, ".json"));
  std::set<std::string> fields;
  for (const auto& [name, value] : original.items()) fields.insert(name);
  // A field added later must be added here too, after making sure a load checks it.
  EXPECT_EQ(fields, (std::set<std::string>{"arch", "compile_ms", "created", "created_unix", "cubin",
                                           "flexjit_version", "format", "kernel_names", "key", "key_text",
                                           "log", "metadata_xxh3_64", "nvrtc_version", "options", "ptx",
                                           "resources", "source_name"}));
  const std::map<std::string, nlohmann::json> edits = {
      {"arch", "sm_80"},
      {"compile_ms", original.at("compile_ms").get<double>() + 1},
      {"created", "2001-01-01T00:00:00Z"},
      {"created_unix", 978307200},
      {"cubin", {{"file", "other.cubin"}, {"bytes", original.at("cubin").at("bytes")},
                 {"xxh3_64", original.at("cubin").at("xxh3_64")}}},
      {"flexjit_version", "0.0.1"},
      {"kernel_names", nlohmann::json::array({"saxpy", "saxpy"})},
      {"key_text", original.at("key_text").get<std::string>() + " "},
      {"log", "another log"},
      {"nvrtc_version", "1.0"},
      {"options", nlohmann::json::array({"-arch=sm_90a"})},
      {"ptx", {{"file", "other.ptx"}, {"bytes", original.at("ptx").at("bytes")},
               {"xxh3_64", original.at("ptx").at("xxh3_64")}}},
      {"resources", nlohmann::json::object()},
      {"source_name", "other.cu"},
      {"metadata_xxh3_64", "0123456789abcdef"},
  };
  for (const auto& [field, value] : edits) {
    SCOPED_TRACE(field);
    auto j = original;
    j[field] = value;
    write_text(entry(dir, k.key, ".json"), j.dump());
    expect_reported_repair(*this, s, k.key, checksum_damage(k.key));
  }
  // A field that no writer wrote counts too.
  auto j = original;
  j["extra"] = 1;
  write_text(entry(dir, k.key, ".json"), j.dump());
  expect_reported_repair(*this, s, k.key, checksum_damage(k.key));
  // "format" and "key" are checked before the checksum, with their own message.
  for (const char* field : {"format", "key"}) {
    SCOPED_TRACE(field);
    j = original;
    j[field] = j.at(field).get<std::string>() + "0";
    write_text(entry(dir, k.key, ".json"), j.dump());
    expect_reported_repair(*this, s, k.key, k.key + ".json has another format or key");
  }
}

// Forged entries with valid checksums (what a buggy writer could leave): the loader's own sanity
// checks refuse them.
TEST_F(CacheTest, ResealedEntryWithWrongFieldsIsReported) {
  const jit::Source s = two_kernel_source("resealed");
  CompiledKernel k;
  compiled(s, &k);
  const auto original = read_json(entry(dir, k.key, ".json"));
  const std::string differ =
      k.key +
      ".json records kernel names, arch, options, source name or versions that differ from its key text";
  const std::vector<std::pair<std::string, nlohmann::json>> edits = {
      {"kernel_names", nlohmann::json::array({"second", "first"})},
      {"kernel_names", nlohmann::json::array({"first", "secone"})},
      {"kernel_names", nlohmann::json::array({"first"})},
      {"kernel_names", nlohmann::json::array()},
      {"arch", "sm_80"},
      {"options", nlohmann::json::array({"-arch=sm_90a"})},
      {"source_name", "other.cu"},
      {"flexjit_version", "0.0.1"},
  };
  for (const auto& [field, value] : edits) {
    SCOPED_TRACE(field + " = " + value.dump());
    auto j = original;
    j[field] = value;
    write_text(entry(dir, k.key, ".json"), j.dump());
    ASSERT_TRUE(jit::reseal_kernel_entry_for_testing(dir.str(), k.key));
    expect_reported_repair(*this, s, k.key, differ);
  }

  auto j = original;
  j["resources"]["second"]["registers"] = -7;
  write_text(entry(dir, k.key, ".json"), j.dump());
  ASSERT_TRUE(jit::reseal_kernel_entry_for_testing(dir.str(), k.key));
  expect_reported_repair(*this, s, k.key,
                         k.key + ".json records registers = -7 for kernel second, not a count");
  j = original;
  j["resources"]["first"]["spill_load_bytes"] = 1.5;
  write_text(entry(dir, k.key, ".json"), j.dump());
  ASSERT_TRUE(jit::reseal_kernel_entry_for_testing(dir.str(), k.key));
  expect_reported_repair(*this, s, k.key,
                         k.key + ".json records spill_load_bytes = 1.5 for kernel first, not a count");
  j = original;
  j["resources"]["first"]["barriers"] = 4294967296;
  write_text(entry(dir, k.key, ".json"), j.dump());
  ASSERT_TRUE(jit::reseal_kernel_entry_for_testing(dir.str(), k.key));
  expect_reported_repair(*this, s, k.key,
                         k.key + ".json records barriers = 4294967296 for kernel first, not a count");

  // The PTX, checksummed, but without one of the entry points the .json lists.
  std::string ptx = read_text(entry(dir, k.key, ".ptx"));
  const size_t at = ptx.find(".entry second(");
  ASSERT_NE(at, std::string::npos);
  ptx.replace(at, 14, ".entry secone(");
  write_text(entry(dir, k.key, ".ptx"), ptx);
  ASSERT_TRUE(jit::reseal_kernel_entry_for_testing(dir.str(), k.key));
  expect_reported_repair(*this, s, k.key,
                         k.key + ".ptx has no entry point second (listed in " + k.key + ".json)");

  // Resealing alone is not what the loader refuses: a resealed edit of the log, which no sanity
  // check reads, is a hit.
  j = original;
  j["log"] = "another log";
  write_text(entry(dir, k.key, ".json"), j.dump());
  ASSERT_TRUE(jit::reseal_kernel_entry_for_testing(dir.str(), k.key));
  CompiledKernel hit;
  EXPECT_FALSE(compiled(s, &hit));
  EXPECT_EQ(hit.log, "another log");
}

TEST_F(CacheTest, LogThatIsNotUtf8StillHits) {
  // The .json stores such bytes as U+FFFD; the checksum must cover the stored form.
  const jit::Source s = saxpy_source("latin-1 log");
  CompiledKernel k;
  compiled(s, &k);
  const std::string key_text = jit::kernel_key_text(s, "sm_90a", CompileOptions{}.canonical());
  k.log = "caf\xe9\n";
  std::string error;
  ASSERT_TRUE(jit::store_cached_kernel(dir.str(), k, key_text, &error)) << error;
  const auto loaded = jit::load_cached_kernel(dir.str(), k.key, key_text);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->log, "caf\xef\xbf\xbd\n");
  EXPECT_FALSE(compiled(s));
}

TEST_F(CacheTest, DirectoryInPlaceOfAnEntryIsMovedAside) {
  const jit::Source s = saxpy_source("directory entry");
  CompiledKernel k;
  compiled(s, &k);
  fs::remove(entry(dir, k.key, ".json"));
  fs::create_directories(entry(dir, k.key, ".json") / "inside");
  bool ran = false;
  const std::string warning = compile_and_capture(*this, s, &ran);
  EXPECT_TRUE(ran);
  const std::string prefix = "flexjit: warning: kernel cache entry " + entry(dir, k.key, ".json").string() +
                             " was damaged (" + k.key + ".json is a directory); recompiled it and rewrote the "
                             "entry; moved the directory in its place to " + (dir.path() / "damaged").string() +
                             "/" + k.key + ".json.";
  EXPECT_EQ(warning.rfind(prefix, 0), 0u) << warning;
  // The cache works again: a hit, no "cache unusable" warning.
  EXPECT_EQ(compile_and_capture(*this, s, &ran), "");
  EXPECT_FALSE(ran);
  ASSERT_TRUE(fs::is_directory(dir.path() / "damaged"));
  // clear removes what was moved aside, and a directory left in kernels/ too.
  fs::create_directories(dir.path() / "kernels" / (std::string(32, 'a') + ".cubin") / "x");
  const CacheClearReport cleared = clear_cache(false, dir.str());
  EXPECT_FALSE(fs::exists(dir.path() / "damaged"));
  EXPECT_TRUE(fs::is_empty(dir.path() / "kernels"));
  EXPECT_EQ(cleared.kernel_entries, 2u);
}

TEST_F(CacheTest, ClearChecksBeforeDeleting) {
  const jit::Source s = saxpy_source("clear checks");
  CompiledKernel k;
  compiled(s, &k);
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  fs::create_directories(dir.path() / "failed" / "locked");
  write_text(dir.path() / "failed" / "locked" / "x.cu", "broken");
  fs::permissions(dir.path() / "failed" / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THROW(clear_cache(false, dir.str()), CacheError);
  fs::permissions(dir.path() / "failed" / "locked", fs::perms::owner_all);
  EXPECT_TRUE(fs::exists(entry(dir, k.key, ".cubin"))) << "a failed clear deleted kernels";
}

TEST_F(CacheTest, ClearLeavesAutotuneJsonToTheAutotuneCache) {
  fs::create_directories(dir.path() / "kernels");
  write_text(dir.path() / "autotune.json", "{}");
  clear_cache(false, dir.str());
  EXPECT_TRUE(fs::exists(dir.path() / "autotune.json"));
}

TEST_F(CacheTest, EightThreadsCompilingTheSameKernel) {
  const jit::Source s = saxpy_source("eight threads");
  std::vector<std::thread> threads;
  std::vector<CompiledKernel> results(8);
  std::vector<std::string> errors(8);
  std::atomic<int> ready{0};
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < 8) std::this_thread::yield();
      try {
        results[i] = jit::get_or_compile(s, CompileOptions{});
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(errors[i], "") << i;
    EXPECT_EQ(results[i].key, key_of(s));
    EXPECT_EQ(results[i].cubin.substr(0, 4), std::string("\x7f" "ELF"));
  }
  const std::string key_text = jit::kernel_key_text(s, "sm_90a", CompileOptions{}.canonical());
  const auto loaded = jit::load_cached_kernel(dir.str(), key_of(s), key_text);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->cubin.size(), results[0].cubin.size());
  EXPECT_FALSE(compiled(s));
  EXPECT_TRUE(list_kernel_cache(dir.str()).damaged.empty());  // no temporary file left over
}

pid_t spawn_child(const std::string& cache_dir) {
  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind(std::string(kChildEnv) + "=", 0) != 0) env_storage.push_back(*e);
  env_storage.push_back(std::string(kChildEnv) + "=" + cache_dir);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = fs::read_symlink("/proc/self/exe").string();
  char* argv[] = {exe.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data());
  return rc == 0 ? pid : -1;
}

TEST_F(CacheTest, TwoProcessesCompilingTheSameKernels) {
  ASSERT_EQ(g_child_mode, 0);
  const pid_t a = spawn_child(dir.str());
  const pid_t b = spawn_child(dir.str());
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  for (pid_t pid : {a, b}) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  for (int i = 0; i < kChildSources; ++i) {
    const jit::Source s = saxpy_source("process " + std::to_string(i));
    const std::string key_text = jit::kernel_key_text(s, "sm_90a", CompileOptions{}.canonical());
    EXPECT_TRUE(jit::load_cached_kernel(dir.str(), key_of(s), key_text).has_value()) << i;
    EXPECT_FALSE(compiled(s)) << i;
  }
  const KernelCacheListing listing = list_kernel_cache(dir.str());
  EXPECT_EQ(listing.entries.size(), static_cast<size_t>(kChildSources));
  EXPECT_TRUE(listing.damaged.empty());
}

TEST_F(CacheTest, CacheOffCompilesEveryTimeAndWritesNothing) {
  for (const char* off : {"off", "OFF", "0", "false", "no"}) {
    ScopedEnv disable("FLEXJIT_CACHE", off);
    EXPECT_FALSE(kernel_cache_enabled()) << off;
  }
  for (const char* on : {"on", "1", "", "yes", "True"}) {
    ScopedEnv enable("FLEXJIT_CACHE", on);
    EXPECT_TRUE(kernel_cache_enabled()) << on;
  }
  for (const char* bogus : {"of", "bogus", "2"}) {  // neither: named, never read as on
    ScopedEnv bad("FLEXJIT_CACHE", bogus);
    try {
      kernel_cache_enabled();
      ADD_FAILURE() << bogus << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("FLEXJIT_CACHE='") + bogus +
                                           "' is not on or off (on, 1, true, yes: the disk cache; off, 0, false, no: "
                                           "none)");
    }
  }
  ScopedEnv disable("FLEXJIT_CACHE", "off");
  const jit::Source s = saxpy_source("cache off");
  EXPECT_TRUE(compiled(s));
  EXPECT_TRUE(compiled(s));
  EXPECT_FALSE(fs::exists(dir.path() / "kernels"));
}

TEST_F(CacheTest, UnwritableDirectoryWarnsOnceAndContinues) {
  write_text(dir.path() / "a_file", "x");
  const std::string bad = (dir.path() / "a_file" / "cache").string();
  ScopedEnv unwritable("FLEXJIT_CACHE_DIR", bad.c_str());
  jit::reset_cache_warning_for_testing();
  ::testing::internal::CaptureStderr();
  CompiledKernel k;
  EXPECT_TRUE(compiled(saxpy_source("unwritable 1"), &k));
  EXPECT_TRUE(compiled(saxpy_source("unwritable 2")));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(k.cubin.substr(0, 4), std::string("\x7f" "ELF"));
  EXPECT_EQ(err,
            "flexjit: warning: kernel cache directory '" + bad + "' is not usable (cannot create " +
                bad + "/kernels: Not a directory); continuing without the disk cache, so kernels "
                "are recompiled in every process. Set FLEXJIT_CACHE_DIR to a writable directory, "
                "or FLEXJIT_CACHE=off to silence this warning.\n");
}

TEST_F(CacheTest, ReadOnlyKernelsDirectoryWarnsAndContinues) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions do not stop writes";
  fs::create_directories(dir.path() / "kernels");
  fs::permissions(dir.path() / "kernels", fs::perms::owner_read | fs::perms::owner_exec);
  jit::reset_cache_warning_for_testing();
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(compiled(saxpy_source("read-only")));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("Permission denied"), std::string::npos) << err;
  fs::permissions(dir.path() / "kernels", fs::perms::owner_all);
}

TEST(CacheDirectory, ResolutionOrder) {
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv flexjit("FLEXJIT_CACHE_DIR", "/srv/flexjit-cache");
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(cache_directory(), "/srv/flexjit-cache");
  }
  {
    ScopedEnv flexjit("FLEXJIT_CACHE_DIR", "");
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(cache_directory(), "/xdg/flexjit");
  }
  {
    ScopedEnv flexjit("FLEXJIT_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/is/ignored");
    EXPECT_EQ(cache_directory(), "/home/someone/.cache/flexjit");
  }
  {
    ScopedEnv flexjit("FLEXJIT_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(cache_directory(), "/home/someone/.cache/flexjit");
  }
}

// ---- the public listing API (used by `flexjit cache`) ----

TEST_F(CacheTest, ListFindAndClear) {
  EXPECT_TRUE(list_kernel_cache(dir.str()).entries.empty());  // no kernels/ yet
  CompiledKernel a, b;
  compiled(saxpy_source("list a"), &a);
  compiled(saxpy_source("list b"), &b);
  const KernelCacheListing listing = list_kernel_cache(dir.str());
  EXPECT_EQ(listing.directory, dir.str());
  ASSERT_EQ(listing.entries.size(), 2u);
  std::set<std::string> keys;
  for (const auto& e : listing.entries) {
    keys.insert(e.key);
    EXPECT_EQ(e.kernel_names, std::vector<std::string>{"saxpy"});
    EXPECT_EQ(e.arch, "sm_90a");
    EXPECT_EQ(e.source_name, "saxpy.cu");
    EXPECT_EQ(e.flexjit_version, FLEXJIT_VERSION_STRING);
    EXPECT_GT(e.cubin_bytes, 0u);
    EXPECT_GT(e.total_bytes, e.cubin_bytes);
    EXPECT_TRUE(e.key_text.empty());
    EXPECT_EQ(e.json_path, (dir.path() / "kernels" / (e.key + ".json")).string());
  }
  EXPECT_EQ(keys, (std::set<std::string>{a.key, b.key}));

  const KernelCacheEntry found = find_kernel_cache_entry(a.key.substr(0, 6), dir.str());
  EXPECT_EQ(found.key, a.key);
  EXPECT_EQ(found.key_text, jit::kernel_key_text(saxpy_source("list a"), "sm_90a",
                                                 CompileOptions{}.canonical()));
  EXPECT_EQ(find_kernel_cache_entry(b.key, dir.str()).key, b.key);

  const std::string unknown = "0123abcd0123abcd";
  ASSERT_NE(a.key.rfind(unknown, 0), 0u);
  ASSERT_NE(b.key.rfind(unknown, 0), 0u);
  try {
    find_kernel_cache_entry(unknown, dir.str());
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "no kernel cache entry with key '0123abcd0123abcd' in " +
                  (dir.path() / "kernels").string() + " (`flexjit cache list` shows the keys)");
  }
  try {
    find_kernel_cache_entry("xyz", dir.str());
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "'xyz' is not a kernel cache key: give 1 to 32 hex digits of a key shown by "
              "`flexjit cache list`");
  }

  // An ambiguous prefix: forge a second, valid entry whose key shares 31 digits with a's.
  std::string twin = a.key;
  twin.back() = twin.back() == '0' ? '1' : '0';
  fs::copy_file(entry(dir, a.key, ".cubin"), entry(dir, twin, ".cubin"));
  fs::copy_file(entry(dir, a.key, ".ptx"), entry(dir, twin, ".ptx"));
  auto j = nlohmann::json::parse(read_text(entry(dir, a.key, ".json")));
  j["key"] = twin;
  write_text(entry(dir, twin, ".json"), j.dump());
  ASSERT_TRUE(jit::reseal_kernel_entry_for_testing(dir.str(), twin));  // "key" is checksummed
  try {
    find_kernel_cache_entry(a.key.substr(0, 31), dir.str());
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.substr(0, what.find('\n')),
              "key prefix '" + a.key.substr(0, 31) + "' is ambiguous: it matches 2 entries:");
    EXPECT_NE(what.find("\n  " + a.key + "  saxpy  sm_90a"), std::string::npos) << what;
    EXPECT_NE(what.find("\n  " + twin + "  saxpy  sm_90a"), std::string::npos) << what;
    EXPECT_NE(what.find("\ngive more digits of the key"), std::string::npos) << what;
  }

  // clear: dry run first, then for real; failed/ goes too (autotune.json is the autotune cache's).
  write_text(dir.path() / "autotune.json", "{}");
  fs::create_directories(dir.path() / "failed" / "x.include");
  write_text(dir.path() / "failed" / "x-12345678.cu", "broken");
  write_text(dir.path() / "failed" / "x.include" / "h.cuh", "");
  write_text(dir.path() / "kernels" / ".tmp-leftover", "");
  const CacheClearReport dry = clear_cache(true, dir.str());
  EXPECT_EQ(dry.kernel_entries, 3u);  // a, b, twin
  EXPECT_EQ(dry.failed_dumps, 2u);
  EXPECT_EQ(dry.paths.size(), 9u + 2u + 1u);
  EXPECT_GT(dry.bytes, 0u);
  EXPECT_EQ(list_kernel_cache(dir.str()).entries.size(), 3u);
  EXPECT_TRUE(fs::exists(dir.path() / "autotune.json"));

  const CacheClearReport done = clear_cache(false, dir.str());
  EXPECT_EQ(done.paths, dry.paths);
  EXPECT_EQ(done.kernel_entries, 3u);
  EXPECT_TRUE(list_kernel_cache(dir.str()).entries.empty());
  EXPECT_TRUE(list_kernel_cache(dir.str()).damaged.empty());
  EXPECT_TRUE(fs::exists(dir.path() / "autotune.json"));
  EXPECT_FALSE(fs::exists(dir.path() / "failed"));
  const CacheClearReport again = clear_cache(false, dir.str());
  EXPECT_TRUE(again.paths.empty());
  EXPECT_EQ(again.kernel_entries, 0u);

  // After clearing, compiling works again (and misses).
  EXPECT_TRUE(compiled(saxpy_source("list a")));
}

}  // namespace
}  // namespace flexjit::test
