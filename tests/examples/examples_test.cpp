// The example programs (examples/*.cpp) run as a user runs them: each must exit 0 and say what it
// did. With a GPU they run attention and compare with the float64 reference (the test checks
// their verdict lines); without one they compile their kernels for sm_90a and run the CPU
// reference (the test checks the kernels listed and that they went into the given cache).
// Examples are found in <build dir>/examples/; with FLEXJIT_BUILD_EXAMPLES=OFF (the sanitizer
// build) the tests skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/subprocess.hpp"
#include "flexjit/device.hpp"

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;

struct ExampleCase {
  std::string name;
  bool backward;                      // runs (and on the GPU checks) the backward pass too
  std::vector<std::string> families;  // kernels it compiles without a GPU
};

void PrintTo(const ExampleCase& c, std::ostream* os) { *os << c.name; }

std::vector<ExampleCase> example_cases() {
  // The backward's default on sm_90a is the fast mode: no dQ kernel (the dK/dV kernel sums dQ).
  const std::vector<std::string> fwd_bwd{"fwd", "bwd_preprocess", "bwd_dkdv", "block_mask"};
  return {{"causal", true, fwd_bwd},
          {"alibi", false, {"fwd", "block_mask"}},
          {"document_packing", true, fwd_bwd},
          {"softcap_gqa", true, fwd_bwd}};
}

// "" when a GPU is usable, else why not.
const std::string& no_gpu() {
  static const std::string reason = [] {
    std::string why;
    return gpu_available(&why) ? std::string() : why;
  }();
  return reason;
}

// The value of `key` in the build directory's CMakeCache.txt ("" when absent).
std::string cmake_cache_value(const std::string& key) {
  std::ifstream in(fs::path(FLEXJIT_BINARY_DIR) / "CMakeCache.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    const auto eq = line.find('=');
    return eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  return "";
}

bool cmake_false(std::string value) {
  for (char& c : value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return value == "OFF" || value == "0" || value == "FALSE" || value == "NO" || value == "N" || value.empty();
}

size_t count_files(const fs::path& dir, const std::string& extension) {
  size_t n = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == extension) ++n;
  return n;
}

class Examples : public ::testing::TestWithParam<ExampleCase> {
 protected:
  // The example's binary, or skips / fails saying why it is not there.
  fs::path binary() {
    const fs::path path = fs::path(FLEXJIT_BINARY_DIR) / "examples" / GetParam().name;
    if (fs::exists(path)) return path;
    const std::string option = cmake_cache_value("FLEXJIT_BUILD_EXAMPLES");
    if (cmake_false(option)) {
      skipped_ = "the examples are not built in " FLEXJIT_BINARY_DIR " (FLEXJIT_BUILD_EXAMPLES=" +
                 (option.empty() ? std::string("unset") : option) + ")";
      return {};
    }
    ADD_FAILURE() << path << " is missing although FLEXJIT_BUILD_EXAMPLES=" << option
                  << "; build it with `ninja example_" << GetParam().name << "` (or build all)";
    return {};
  }

  ProcessResult run(const fs::path& program, const fs::path& cache) {
    ProcessOptions options;
    options.working_dir = dir_.str();
    options.env["FLEXJIT_CACHE_DIR"] = cache.string();
    // Built-in defaults: one kernel per family (warm_up would otherwise compile every candidate
    // the autotuner tries), and no tuning time on a GPU.
    options.env["FLEXJIT_AUTOTUNE"] = "off";
    options.env["FLEXJIT_CACHE"] = std::nullopt;
    options.timeout_seconds = 600;
    return run_process({program.string()}, options);
  }

  std::string skipped_;
  ScratchDir dir_{"flexjit-example"};
};

TEST_P(Examples, RunsAndReports) {
  const ExampleCase& c = GetParam();
  const fs::path program = binary();
  if (!skipped_.empty()) GTEST_SKIP() << skipped_;
  if (program.empty()) return;
  const fs::path cache = dir_.path() / "cache";
  const ProcessResult r = run(program, cache);
  ASSERT_FALSE(r.timed_out) << r.describe();
  ASSERT_EQ(r.exit_code, 0) << r.describe();

  if (no_gpu().empty()) {
    EXPECT_EQ(r.out.rfind("GPU: ", 0), 0u) << r.out;
    EXPECT_TRUE(has_text(r.out, "  out  relative error ")) << r.out;
    EXPECT_TRUE(has_text(r.out, "  lse  relative error ")) << r.out;
    if (c.backward) {
      for (const char* grad : {"  dq   relative error ", "  dk   relative error ", "  dv   relative error "})
        EXPECT_TRUE(has_text(r.out, grad)) << r.out;
    }
    EXPECT_FALSE(has_text(r.out, "FAILED")) << r.out;
    EXPECT_TRUE(has_text(r.out, c.name + ": passed\n")) << r.out;
    return;
  }

  EXPECT_EQ(r.out.rfind("no GPU found (" + no_gpu() + ")\n"
                        "compiling the kernels for sm_90a and running the float64 CPU reference only\n",
                        0),
            0u)
      << r.out;
  // One line per kernel, each compiled by NVRTC into the (fresh) cache given to the example.
  auto compiled_lines = [](const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("  compiled ", 0) == 0) lines.push_back(line);
    return lines;
  };
  const auto lines = compiled_lines(r.out);
  EXPECT_EQ(lines.size(), c.families.size()) << r.out;
  for (const std::string& family : c.families) {
    const std::string start = "  compiled " + family + std::string(15 - family.size(), ' ');
    EXPECT_TRUE(has_text(r.out, start)) << "no line for " << family << " in\n" << r.out;
  }
  for (const std::string& line : lines) {
    EXPECT_TRUE(has_text(line, " for sm_90a: ")) << line;
    EXPECT_TRUE(has_text(line, " registers, ")) << line;
    EXPECT_TRUE(has_text(line, " bytes spilled (NVRTC)")) << line;
  }
  EXPECT_TRUE(has_text(r.out, "\nCPU reference (")) << r.out;
  const std::string last = c.name + ": done without a GPU\n";
  EXPECT_TRUE(r.out.size() >= last.size() && r.out.compare(r.out.size() - last.size(), last.size(), last) == 0)
      << r.out;
  EXPECT_EQ(r.err, "");
  // One entry per kernel, and one more for each kernel compiled in its lean form (the forward and
  // the fast dK/dV kernel have one: compile_kernel keeps the full form's entry, which makes the
  // choice a lookup next time).
  size_t lean_capable = 0;
  for (const std::string& family : c.families) lean_capable += family == "fwd" || family == "bwd_dkdv";
  EXPECT_GE(count_files(cache, ".cubin"), c.families.size()) << "kernels must go into FLEXJIT_CACHE_DIR";
  EXPECT_LE(count_files(cache, ".cubin"), c.families.size() + lean_capable) << "kernels must go into FLEXJIT_CACHE_DIR";

  // A second run finds every kernel in the disk cache.
  const ProcessResult again = run(program, cache);
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  const auto cached = compiled_lines(again.out);
  EXPECT_EQ(cached.size(), c.families.size()) << again.out;
  for (const std::string& line : cached) EXPECT_TRUE(has_text(line, "(from the disk cache)")) << line;
}

std::string example_name(const ::testing::TestParamInfo<ExampleCase>& param) { return param.param.name; }

INSTANTIATE_TEST_SUITE_P(AllExamples, Examples, ::testing::ValuesIn(example_cases()), example_name);

}  // namespace
}  // namespace flexjit::test
