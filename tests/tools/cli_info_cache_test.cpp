// `flexjit info` and `flexjit cache ...`, run as a user would: the built binary, a temporary cache
// directory, exit codes and messages.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "flexjit/device.hpp"
#include "flexjit/version.hpp"
#include "jit/compiler.hpp"
#include "jit/kernel_cache.hpp"

extern char** environ;

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "flexjit-cli-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    cache_ = root_ / "cache";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Runs the CLI with FLEXJIT_CACHE_DIR pointing at this test's cache.
  Result run(const std::vector<std::string>& args) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string var = *e;
      if (var.rfind("FLEXJIT_CACHE", 0) != 0) env.push_back(var);
    }
    env.push_back("FLEXJIT_CACHE_DIR=" + cache_.string());
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_storage = {FLEXJIT_CLI_PATH};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);

    const fs::path out = root_ / "stdout", err = root_ / "stderr";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    Result r;
    if (::posix_spawn(&pid, FLEXJIT_CLI_PATH, &actions, nullptr, argv.data(), envp.data()) == 0) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    posix_spawn_file_actions_destroy(&actions);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  // Compiles `n` small kernels into this test's cache, as the library would.
  std::vector<std::string> fill_cache(int n) {
    const char* old = std::getenv("FLEXJIT_CACHE_DIR");
    const std::string saved = old ? old : "";
    ::setenv("FLEXJIT_CACHE_DIR", cache_.c_str(), 1);
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i) {
      jit::Source s;
      s.name = "k" + std::to_string(i) + ".cu";
      s.text = "extern \"C\" __global__ void k" + std::to_string(i) + "(int* p) { p[0] = " +
               std::to_string(i) + "; }\n";
      s.kernel_names = {"k" + std::to_string(i)};
      keys.push_back(jit::get_or_compile(s, jit::CompileOptions{}).key);
    }
    if (old)
      ::setenv("FLEXJIT_CACHE_DIR", saved.c_str(), 1);
    else
      ::unsetenv("FLEXJIT_CACHE_DIR");
    return keys;
  }

  fs::path root_, cache_;
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_F(CliTest, InfoWorksWithOrWithoutAGpu) {
  const Result r = run({"info"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(contains(r.out, std::string("flexjit ") + FLEXJIT_VERSION_STRING + "\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "NVRTC: " + jit::nvrtc_version_string() + " (archs: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "Targets: sm_80 ")) << r.out;
  EXPECT_TRUE(contains(r.out, "Cache: " + cache_.string() + " (0 kernels, 0 B)\n")) << r.out;
  std::string reason;
  if (gpu_available(&reason)) {
    const DeviceInfo d = current_device();
    EXPECT_TRUE(contains(r.out, "GPU: " + d.name + " (device ")) << r.out;
    EXPECT_TRUE(contains(r.out, "default arch " + d.default_arch())) << r.out;
  } else {
    EXPECT_TRUE(contains(r.out, "GPU: none (" + reason + ")\n")) << r.out;
    if (contains(reason, "no CUDA driver found")) {
      EXPECT_TRUE(contains(r.out, "Driver: none\n")) << r.out;
      EXPECT_TRUE(contains(r.out, "GPU: none (no CUDA driver found (libcuda.so.1): ")) << r.out;
    }
  }
}

TEST_F(CliTest, InfoJson) {
  fill_cache(1);
  const Result r = run({"info", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("flexjit_version"), FLEXJIT_VERSION_STRING);
  EXPECT_EQ(j.at("nvrtc").at("version"), jit::nvrtc_version_string());
  EXPECT_EQ(j.at("nvrtc").at("version_number"), jit::nvrtc_version());
  EXPECT_FALSE(j.at("nvrtc").at("archs").empty());
  EXPECT_EQ(j.at("targets"), jit::supported_archs());
  EXPECT_EQ(j.at("cache").at("directory"), cache_.string());
  EXPECT_EQ(j.at("cache").at("kernel_entries"), 1);
  EXPECT_EQ(j.at("cache").at("enabled"), true);
  EXPECT_EQ(j.at("gpu").at("available"), gpu_available());
  if (!gpu_available()) {
    EXPECT_FALSE(j.at("gpu").at("error").get<std::string>().empty());
  }
}

TEST_F(CliTest, CacheListSaysWhenTheCacheIsAFile) {
  cache_ = root_ / "a_file";
  std::ofstream(cache_) << "x";
  const Result r = run({"cache", "list"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "no compiled kernels cached in " + cache_.string() + "/kernels\n");
  EXPECT_EQ(r.err, "flexjit: warning: " + cache_.string() +
                       " is not a directory, so nothing can be cached there (set FLEXJIT_CACHE_DIR to a directory)\n");
}

TEST_F(CliTest, CacheListEmptyAndFilled) {
  Result r = run({"cache", "list"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "no compiled kernels cached in " + cache_.string() + "/kernels\n");

  const auto keys = fill_cache(2);
  r = run({"cache", "list"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')).substr(0, 18), "KEY               ") << r.out;
  for (const auto& key : keys) EXPECT_TRUE(contains(r.out, key.substr(0, 16) + "  ")) << r.out;
  EXPECT_TRUE(contains(r.out, " k0 ")) << r.out;
  EXPECT_TRUE(contains(r.out, " k1 ")) << r.out;
  EXPECT_TRUE(contains(r.out, " sm_90a ")) << r.out;
  EXPECT_TRUE(contains(r.out, "\n2 entries, ")) << r.out;
  EXPECT_TRUE(contains(r.out, " in " + cache_.string() + "/kernels\n")) << r.out;

  // A stray file is reported, not fatal.
  std::ofstream(cache_ / "kernels" / "junk.json") << "{";
  r = run({"cache", "list"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "1 damaged or incomplete file (ignored;")) << r.out;

  r = run({"cache", "list", "--json"});
  ASSERT_EQ(r.code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("entries").size(), 2u);
  EXPECT_EQ(j.at("damaged").size(), 1u);
}

TEST_F(CliTest, CacheShow) {
  const auto keys = fill_cache(1);
  Result r = run({"cache", "show", keys[0].substr(0, 8)});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "key:       " + keys[0] + "\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "source:    k0.cu\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "kernels:   k0\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "arch:      sm_90a\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "  k0: ")) << r.out;
  EXPECT_FALSE(contains(r.out, "key text:")) << r.out;

  r = run({"cache", "show", keys[0], "--key-text"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "key text:\nflexjit kernel key v1\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "__global__ void k0(int* p)")) << r.out;

  r = run({"cache", "show", keys[0], "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("key"), keys[0]);
}

TEST_F(CliTest, CacheShowUnknownKeyIsAUsageError) {
  fill_cache(1);
  const std::string unknown = "0000000000000000";
  Result r = run({"cache", "show", unknown});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: no kernel cache entry with key '" + unknown + "' in " +
                       cache_.string() + "/kernels (`flexjit cache list` shows the keys)\n");
  r = run({"cache", "show", "not-hex"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "error: 'not-hex' is not a kernel cache key")) << r.err;
  r = run({"cache", "show"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "key is required")) << r.err;
  r = run({"cache", "frobnicate"});
  EXPECT_EQ(r.code, 2);
  r = run({"cache"});
  EXPECT_EQ(r.code, 2);
}

TEST_F(CliTest, CacheClear) {
  Result r = run({"cache", "clear"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "nothing to remove in " + cache_.string() + "\n");

  const auto keys = fill_cache(2);
  std::ofstream(cache_ / "autotune.json") << "{}";
  r = run({"cache", "clear", "--dry-run"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "would remove " + (cache_ / "kernels" / (keys[0] + ".cubin")).string() +
                                  "\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "would remove " + (cache_ / "autotune.json").string() + "\n"));
  EXPECT_TRUE(contains(r.out, "would remove 2 kernel cache entries and autotune.json (")) << r.out;
  EXPECT_TRUE(fs::exists(cache_ / "kernels" / (keys[0] + ".cubin")));

  r = run({"cache", "clear"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("removed 2 kernel cache entries and autotune.json (", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, ") from " + cache_.string() + "\n")) << r.out;
  EXPECT_FALSE(fs::exists(cache_ / "kernels" / (keys[0] + ".cubin")));
  EXPECT_FALSE(fs::exists(cache_ / "autotune.json"));
  r = run({"cache", "list"});
  EXPECT_EQ(r.out, "no compiled kernels cached in " + cache_.string() + "/kernels\n");
}

// Issue 17 items 10 and 11: directories where files belong are cleared too (autotune.json as a
// directory used to fail the clear after the kernels were already gone).
TEST_F(CliTest, CacheClearRemovesDirectoriesInPlaceOfFiles) {
  const auto keys = fill_cache(1);
  fs::create_directories(cache_ / "autotune.json" / "x");
  fs::create_directories(cache_ / "kernels" / (std::string(32, 'b') + ".json") / "y");
  Result r = run({"cache", "clear"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("removed 2 kernel cache entries and autotune.json (", 0), 0u) << r.out;
  EXPECT_FALSE(fs::exists(cache_ / "autotune.json"));
  EXPECT_TRUE(fs::is_empty(cache_ / "kernels"));
}

}  // namespace
}  // namespace flexjit::test
