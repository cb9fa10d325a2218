// The installed package works for a user's project: `cmake --install` of this build tree into a
// temporary prefix, then tests/install/consumer is configured with -DCMAKE_PREFIX_PATH=<prefix>
// (find_package(flexjit)), built (a program on the shared library, one on the static library,
// every installed header compiled on its own) and run. Skips when cmake is not on PATH.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/subprocess.hpp"
#include "flexjit/version.hpp"

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;

std::string cmake_cache_value(const std::string& key) {
  std::ifstream in(fs::path(FLEXJIT_BINARY_DIR) / "CMakeCache.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    const auto eq = line.find('=');
    return eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  return "";
}

// Environment for the child cmake: nothing from an enclosing build (ctest, a parent cmake) leaks in.
ProcessOptions cmake_options(const ScratchDir& dir, double timeout) {
  ProcessOptions o;
  o.working_dir = dir.str();
  o.timeout_seconds = timeout;
  for (const char* var : {"CMAKE_PREFIX_PATH", "flexjit_DIR", "CMAKE_GENERATOR", "CMAKE_BUILD_PARALLEL_LEVEL",
                          "DESTDIR", "MAKEFLAGS"})
    o.env[var] = std::nullopt;
  return o;
}

TEST(Install, FindPackageConsumerBuildsAndRuns) {
  const std::string cmake = find_program("cmake");
  if (cmake.empty()) GTEST_SKIP() << "cmake is not on PATH: cannot install the package and build a consumer";
  const std::string sanitize = cmake_cache_value("FLEXJIT_SANITIZE");
  if (sanitize == "ON" || sanitize == "TRUE" || sanitize == "1")
    GTEST_SKIP() << "sanitizer build (FLEXJIT_SANITIZE=" << sanitize
                 << "): its libraries need the sanitizer runtime, so a plain consumer cannot link them; the "
                    "package is tested in the regular build";
  const fs::path build_dir = FLEXJIT_BINARY_DIR;
  bool have_shared = false;
  for (const auto& e : fs::directory_iterator(build_dir))
    if (e.path().filename().string().rfind("libflexjit.so", 0) == 0) have_shared = true;
  ASSERT_TRUE(have_shared && fs::exists(build_dir / "libflexjit.a") && fs::exists(build_dir / "flexjit"))
      << "install needs the built libraries and CLI: build `flexjit_shared flexjit_static flexjit` (or all) in "
      << build_dir;

  const ScratchDir dir("flexjit-install");
  const fs::path prefix = dir.path() / "prefix", consumer_build = dir.path() / "consumer-build";

  // 1. Install.
  const ProcessResult install =
      run_process({cmake, "--install", build_dir.string(), "--prefix", prefix.string()}, cmake_options(dir, 300));
  ASSERT_EQ(install.exit_code, 0) << "cmake --install failed:\n" << install.describe();
  std::string libdir = cmake_cache_value("CMAKE_INSTALL_LIBDIR");
  if (libdir.empty()) libdir = "lib";
  for (const std::string file : {"include/flexjit/version.hpp", "lib/cmake/flexjit/flexjitConfig.cmake",
                                 "lib/cmake/flexjit/flexjitConfigVersion.cmake",
                                 "lib/cmake/flexjit/flexjitTargets.cmake", "lib/libflexjit.a", "bin/flexjit"}) {
    std::string path = file;
    if (path.rfind("lib/", 0) == 0) path = libdir + path.substr(3);
    EXPECT_TRUE(fs::exists(prefix / path)) << "not installed: " << path << "\n" << install.out;
  }
  // Every public header, byte for byte.
  int headers = 0;
  for (const auto& e : fs::directory_iterator(fs::path(FLEXJIT_SOURCE_DIR) / "include" / "flexjit")) {
    ++headers;
    const fs::path installed = prefix / "include" / "flexjit" / e.path().filename();
    ASSERT_TRUE(fs::exists(installed)) << "header not installed: " << installed;
    EXPECT_EQ(read_whole_file(installed), read_whole_file(e.path())) << installed;
  }
  EXPECT_GE(headers, 10);
  const std::string version_hpp = read_whole_file(prefix / "include" / "flexjit" / "version.hpp");
  EXPECT_TRUE(has_text(version_hpp, "#define FLEXJIT_VERSION_STRING \"" FLEXJIT_VERSION_STRING "\"")) << version_hpp;

  // 2. Configure the consumer against the prefix only.
  std::vector<std::string> configure{cmake,
                                     "-S",
                                     FLEXJIT_TEST_DIR "/install/consumer",
                                     "-B",
                                     consumer_build.string(),
                                     "-DCMAKE_PREFIX_PATH=" + prefix.string(),
                                     "-DCMAKE_BUILD_TYPE=Release",
                                     "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF"};
  const std::string compiler = cmake_cache_value("CMAKE_CXX_COMPILER");
  if (!compiler.empty()) configure.push_back("-DCMAKE_CXX_COMPILER=" + compiler);
  if (!find_program("ninja").empty()) configure.insert(configure.end(), {"-G", "Ninja"});
  const ProcessResult configured = run_process(configure, cmake_options(dir, 300));
  ASSERT_EQ(configured.exit_code, 0) << "configuring the consumer failed:\n" << configured.describe();
  EXPECT_TRUE(has_text(configured.out, "flexjit " FLEXJIT_VERSION_STRING " found in " + prefix.string() + "/"))
      << "find_package must take the installed package:\n" << configured.out;

  // 3. Build it.
  const ProcessResult built =
      run_process({cmake, "--build", consumer_build.string(), "--parallel", "2"}, cmake_options(dir, 600));
  ASSERT_EQ(built.exit_code, 0) << "building the consumer failed:\n" << built.describe();

  // 4. Run both programs.
  const std::string expected = "flexjit " FLEXJIT_VERSION_STRING "\n"
                               "canonical: score + slope[h] * (kv_idx - q_idx)\n"
                               "gradient: 1.0\n"
                               "ExprError error: unknown variable 'kv_id' (did you mean 'kv_idx'?)\n";
  for (const char* program : {"consumer_shared", "consumer_static"}) {
    ProcessOptions o;
    o.working_dir = dir.str();
    o.timeout_seconds = 60;
    const ProcessResult r = run_process({(consumer_build / program).string()}, o);
    EXPECT_EQ(r.exit_code, 0) << program << ":\n" << r.describe();
    EXPECT_EQ(r.out, expected) << program;
  }
  // The shared consumer really uses the installed shared library.
  const std::string readelf = find_program("readelf");
  if (!readelf.empty()) {
    const ProcessResult dyn = run_process({readelf, "-d", (consumer_build / "consumer_shared").string()});
    EXPECT_TRUE(has_text(dyn.out, "[libflexjit.so.0]")) << dyn.out;
    const ProcessResult dyn_static = run_process({readelf, "-d", (consumer_build / "consumer_static").string()});
    EXPECT_FALSE(has_text(dyn_static.out, "libflexjit.so")) << dyn_static.out;
  }
  // And the installed CLI runs.
  const ProcessResult cli = run_process({(prefix / "bin" / "flexjit").string(), "--version"});
  EXPECT_EQ(cli.exit_code, 0) << cli.describe();
  EXPECT_TRUE(has_text(cli.out, FLEXJIT_VERSION_STRING)) << cli.out;
}

}  // namespace
}  // namespace flexjit::test
