// NVRTC wrapper: compiles to cubin and PTX without a GPU, reports errors with everything needed to
// reproduce them, canonicalises options, parses ptxas resources.
#include "jit/compiler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "flexjit/error.hpp"
#include "jit/kernel_cache.hpp"
#include "test_util.hpp"

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;
using jit::CompileOptions;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Compiler, CompilesToCubinAndPtxForSm80AndSm90a) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    CompileOptions options;
    options.arch = arch;
    const jit::CompiledKernel k = jit::compile(saxpy_source(), options);
    ASSERT_GE(k.cubin.size(), 4u);
    EXPECT_EQ(k.cubin.substr(0, 4), std::string("\x7f" "ELF")) << arch;
    EXPECT_TRUE(contains(k.ptx, std::string("\n.target ") + arch + "\n")) << k.ptx.substr(0, 400);
    EXPECT_TRUE(contains(k.ptx, ".entry saxpy("));
    EXPECT_EQ(k.arch, arch);
    EXPECT_EQ(k.source_name, "saxpy.cu");
    EXPECT_EQ(k.kernel_names, std::vector<std::string>{"saxpy"});
    EXPECT_EQ(k.key.size(), 32u);
    EXPECT_FALSE(k.from_disk_cache);
    EXPECT_GT(k.compile_ms, 0.0);
    EXPECT_TRUE(contains(k.log, "ptxas info"));
    ASSERT_EQ(k.resources.count("saxpy"), 1u) << k.log;
    EXPECT_GT(k.resources.at("saxpy").registers, 0);
    EXPECT_EQ(k.options, options.canonical());
  }
}

TEST(Compiler, PtxasReportsEveryCompile) {
  // With a driver installed, NVRTC would otherwise serve a repeated compile from the driver's
  // JIT cache and print no ptxas output (so no resources).
  for (int i = 0; i < 2; ++i) {
    const jit::CompiledKernel k = jit::compile(saxpy_source(), CompileOptions{});
    EXPECT_TRUE(contains(k.log, "Compiling entry function 'saxpy'")) << i << ": " << k.log;
    EXPECT_EQ(k.resources.count("saxpy"), 1u) << i;
  }
}

TEST(Compiler, HeadersAreServedFromMemory) {
  jit::Source s;
  s.name = "with_header.cu";
  s.headers["flexjit/scale.cuh"] = "#pragma once\ninline float scale(float v) { return 2.0f * v; }\n";
  s.text =
      "#include \"flexjit/scale.cuh\"\n"
      "extern \"C\" __global__ void twice(float* y) { y[threadIdx.x] = scale(y[threadIdx.x]); }\n";
  s.kernel_names = {"twice"};
  const jit::CompiledKernel k = jit::compile(s, CompileOptions{});
  EXPECT_TRUE(contains(k.ptx, ".entry twice("));
}

TEST(Compiler, ErrorCarriesLogOptionsAndDumpedSource) {
  TempDir cache;
  ScopedEnv dir("FLEXJIT_CACHE_DIR", cache.str().c_str());
  ScopedEnv on("FLEXJIT_CACHE", nullptr);
  jit::Source s;
  s.name = "broken.cu";
  s.headers["helper.cuh"] = "#pragma once\n";
  s.text =
      "#include \"helper.cuh\"\n"
      "extern \"C\" __global__ void broken(float* y) {\n"
      "  y[0] = undefined_thing;\n"
      "}\n";
  s.kernel_names = {"broken"};
  CompileOptions options;
  options.extra = {"-DFLEXJIT_TEST=1"};
  try {
    jit::compile(s, options);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), "CompileError");
    EXPECT_TRUE(contains(e.log(), "identifier \"undefined_thing\" is undefined")) << e.log();
    // Summary: source name and the first error line of the log.
    EXPECT_EQ(what.substr(0, what.find('\n')),
              "NVRTC failed to compile broken.cu: broken.cu(3): error: identifier "
              "\"undefined_thing\" is undefined");
    EXPECT_EQ(e.options(), options.canonical());
    EXPECT_TRUE(contains(what, "\n  options: " + [&] {
      std::string joined;
      for (const auto& o : options.canonical()) joined += (joined.empty() ? "" : " ") + o;
      return joined;
    }()));
    EXPECT_TRUE(contains(what, "-DFLEXJIT_TEST=1"));
    EXPECT_TRUE(contains(what, "\n  NVRTC log:\n"));
    // The source is dumped under <cache>/failed/<stem>-<hash>.cu, headers next to it.
    const fs::path dumped = e.source_path();
    EXPECT_TRUE(contains(what, "\n  source: " + dumped.string() + "\n"));
    EXPECT_EQ(dumped.parent_path(), cache.path() / "failed");
    EXPECT_EQ(dumped.filename().string().substr(0, 7), "broken-");
    EXPECT_EQ(dumped.extension(), ".cu");
    ASSERT_TRUE(fs::exists(dumped));
    EXPECT_EQ(read_text(dumped), s.text);
    fs::path header = dumped;
    header.replace_extension(".include");
    EXPECT_EQ(read_text(header / "helper.cuh"), "#pragma once\n");
  }
}

TEST(Compiler, FailedSourceFallsBackToTmpWhenCacheDirIsUnwritable) {
  TempDir tmp;
  write_text(tmp.path() / "a_file", "x");
  ScopedEnv dir("FLEXJIT_CACHE_DIR", (tmp.path() / "a_file" / "cache").c_str());
  ScopedEnv on("FLEXJIT_CACHE", nullptr);
  jit::Source s = saxpy_source("fallback");
  s.text += "this is not C++\n";
  try {
    jit::compile(s, CompileOptions{});
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    const fs::path dumped = e.source_path();
    EXPECT_EQ(dumped.parent_path(),
              fs::temp_directory_path() / ("flexjit-failed-" + std::to_string(::getuid())));
    EXPECT_TRUE(fs::exists(dumped));
    fs::remove(dumped);
  }
}

TEST(Compiler, InvalidOptionIsACompileError) {
  TempDir cache;  // the failed source is dumped here, not into the user's cache
  ScopedEnv dir("FLEXJIT_CACHE_DIR", cache.str().c_str());
  CompileOptions options;
  options.extra = {"--no-such-nvrtc-option"};
  try {
    jit::compile(saxpy_source(), options);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.substr(0, what.find('\n')),
              "NVRTC failed to compile saxpy.cu (NVRTC_ERROR_INVALID_OPTION): " +
                  e.log().substr(0, e.log().find('\n')));
    EXPECT_TRUE(contains(e.log(), "--no-such-nvrtc-option")) << e.log();
  }
}

TEST(Compiler, MissingKernelNameIsACompileError) {
  TempDir cache;  // the failed source is dumped here, not into the user's cache
  ScopedEnv dir("FLEXJIT_CACHE_DIR", cache.str().c_str());
  jit::Source s = saxpy_source();
  s.kernel_names = {"saxpy", "saxpi"};
  try {
    jit::compile(s, CompileOptions{});
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.substr(0, what.find('\n')),
              "kernel 'saxpi' is not defined in saxpy.cu (declare it extern \"C\" __global__)");
  }
}

TEST(Compiler, ArchValidation) {
  const auto& archs = jit::supported_archs();
  for (const char* ok : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a",
                         "sm_100f", "sm_120"}) {
    EXPECT_NE(std::find(archs.begin(), archs.end(), ok), archs.end()) << ok;
    EXPECT_NO_THROW(jit::validate_arch(ok)) << ok;
  }
  std::string accepted;
  for (const auto& a : archs) accepted += (accepted.empty() ? "" : " ") + a;
  for (const char* bad : {"sm_75", "sm_90f", "sm_80a", "compute_90", "sm_999", "", "SM_90"}) {
    try {
      jit::validate_arch(bad);
      FAIL() << bad;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("unknown GPU architecture '") + bad +
                                           "'; with NVRTC " + jit::nvrtc_version_string() +
                                           " flexjit accepts: " + accepted);
    }
  }
  CompileOptions options;
  options.arch = "sm_75";
  EXPECT_THROW(options.canonical(), UsageError);
  EXPECT_THROW(jit::compile(saxpy_source(), options), UsageError);
}

TEST(Compiler, CanonicalOptions) {
  CompileOptions a;
  a.extra = {"-DB=2", "--maxrregcount=128", "-DA=1", "-DA=1"};
  CompileOptions b;
  b.extra = {"-DA=1", "-DB=2", "--maxrregcount=128", "-std=c++17"};
  EXPECT_EQ(a.canonical(), b.canonical());
  const std::vector<std::string> expected = {
      "--maxrregcount=128", "--no-cache",      "--ptxas-options=-v", "-DA=1", "-DB=2",
      "-arch=sm_90a",       "-default-device", "-lineinfo",          "-std=c++17"};
  EXPECT_EQ(a.canonical(), expected);

  CompileOptions quiet;
  quiet.line_info = false;
  quiet.ptxas_verbose = false;
  quiet.arch = "sm_80";
  EXPECT_EQ(quiet.canonical(),
            (std::vector<std::string>{"-arch=sm_80", "-default-device", "-std=c++17"}));

  // Include paths keep their order (it decides which header wins), after the sorted rest.
  CompileOptions inc;
  inc.extra = {"-I/b", "-DX", "-I/a", "-I/b"};
  const auto canonical = inc.canonical();
  ASSERT_GE(canonical.size(), 2u);
  EXPECT_EQ(canonical[canonical.size() - 2], "-I/b");
  EXPECT_EQ(canonical.back(), "-I/a");
}

TEST(Compiler, CanonicalOptionsRejectAmbiguousInput) {
  auto message = [](std::vector<std::string> extra) {
    CompileOptions o;
    o.extra = std::move(extra);
    try {
      o.canonical();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({"-arch=sm_80"}),
            "NVRTC option '-arch=sm_80' sets the target; set CompileOptions::arch instead");
  EXPECT_EQ(message({"--gpu-architecture=sm_80"}),
            "NVRTC option '--gpu-architecture=sm_80' sets the target; set CompileOptions::arch "
            "instead");
  EXPECT_EQ(message({"maxrregcount=1"}),
            "NVRTC option 'maxrregcount=1' does not start with '-'; give each option as one "
            "element, e.g. \"-DTILE=128\" or \"--maxrregcount=128\"");
  EXPECT_EQ(message({"-DX=1", "-DX=2"}),
            "NVRTC options define macro 'X' in two different ways ('-DX=2' and an earlier one); "
            "keep one");
  EXPECT_EQ(message({"-DX", "-UX"}),
            "NVRTC options define macro 'X' in two different ways ('-UX' and an earlier one); "
            "keep one");
}

TEST(Compiler, KeyDependsOnEverythingThatChangesTheOutput) {
  auto key = [](const jit::Source& s, const CompileOptions& o) {
    return jit::kernel_key(jit::kernel_key_text(s, o.arch, o.canonical()));
  };
  const jit::Source base = saxpy_source();
  CompileOptions options;
  options.extra = {"-DA=1", "-DB=2"};
  const std::string k = key(base, options);
  EXPECT_EQ(k.size(), 32u);
  EXPECT_TRUE(std::all_of(k.begin(), k.end(), [](char c) { return std::isxdigit(c) && !std::isupper(c); }));

  CompileOptions reordered;
  reordered.extra = {"-DB=2", "-DA=1", "-DB=2"};
  EXPECT_EQ(key(base, reordered), k);

  CompileOptions other_option = options;
  other_option.extra.push_back("--maxrregcount=64");
  EXPECT_NE(key(base, other_option), k);
  CompileOptions other_arch = options;
  other_arch.arch = "sm_80";
  EXPECT_NE(key(base, other_arch), k);
  CompileOptions no_lineinfo = options;
  no_lineinfo.line_info = false;
  EXPECT_NE(key(base, no_lineinfo), k);

  jit::Source text = base;
  text.text += " ";
  EXPECT_NE(key(text, options), k);
  jit::Source name = base;
  name.name = "saxpy2.cu";
  EXPECT_NE(key(name, options), k);
  jit::Source header = base;
  header.headers["h.cuh"] = "";
  EXPECT_NE(key(header, options), k);
  jit::Source header2 = base;
  header2.headers["h.cuh"] = " ";
  EXPECT_NE(key(header2, options), key(header, options));
  jit::Source kernels = base;
  kernels.kernel_names.push_back("other");
  EXPECT_NE(key(kernels, options), k);

  // compile() reports the same key the cache computes.
  EXPECT_EQ(jit::compile(base, options).key, k);
}

TEST(Compiler, ParsesResourcesFromARealPtxasLog) {
  jit::Source s;
  s.name = "resources.cu";
  s.text = R"(
extern "C" __global__ void smem(float* y) {
  __shared__ float buf[1024];
  buf[threadIdx.x] = y[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = buf[1023 - threadIdx.x];
}
extern "C" __global__ void heavy(float* y) {
  float r[64];
  for (int i = 0; i < 64; ++i) r[i] = y[i * threadIdx.x];
  float s = 0;
  for (int i = 0; i < 64; ++i) s += r[(i * 7) % 64] * r[i];
  y[0] = s;
}
)";
  s.kernel_names = {"smem", "heavy"};
  CompileOptions options;
  options.extra = {"--maxrregcount=24"};
  const jit::CompiledKernel k = jit::compile(s, options);
  ASSERT_EQ(k.resources.size(), 2u) << k.log;
  const KernelResources& smem = k.resources.at("smem");
  EXPECT_EQ(smem.static_smem_bytes, 4096) << k.log;
  EXPECT_EQ(smem.barriers, 1) << k.log;
  EXPECT_GT(smem.registers, 0);
  EXPECT_EQ(smem.spill_store_bytes, 0);
  const KernelResources& heavy = k.resources.at("heavy");
  EXPECT_LE(heavy.registers, 24) << k.log;
  EXPECT_GT(heavy.spill_store_bytes, 0) << k.log;
  EXPECT_GT(heavy.spill_load_bytes, 0) << k.log;
  EXPECT_GT(heavy.stack_frame_bytes, 0) << k.log;
  EXPECT_EQ(heavy.static_smem_bytes, 0);
}

TEST(Compiler, ParsesResourcesFromALogExcerpt) {
  // NVRTC 13.0 output, with a non-inlined device function whose properties must not be taken
  // for a kernel's, and the older form without "used N barriers".
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     64 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'heavy' for 'sm_90a'\n"
      "ptxas info    : Function properties for heavy\n"
      "ptxas         .     312 bytes stack frame, 308 bytes spill stores, 368 bytes spill loads\n"
      "ptxas info    : Used 24 registers, used 0 barriers, 312 bytes cumulative stack size\n"
      "ptxas info    : Compile time = 17.341 ms\n"
      "ptxas info    : Compiling entry function 'smem' for 'sm_80'\n"
      "ptxas info    : Function properties for smem\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 9 registers, used 1 barriers, 4096 bytes smem, 360 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'old' for 'sm_80'\n"
      "ptxas info    : Used 12 registers, 2048 bytes smem, 380 bytes cmem[0]\n";
  const auto r = jit::parse_ptxas_resources(log);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r.count("helper"), 0u);
  const KernelResources& heavy = r.at("heavy");
  EXPECT_EQ(heavy.registers, 24);
  EXPECT_EQ(heavy.barriers, 0);
  EXPECT_EQ(heavy.stack_frame_bytes, 312);
  EXPECT_EQ(heavy.spill_store_bytes, 308);
  EXPECT_EQ(heavy.spill_load_bytes, 368);
  EXPECT_EQ(heavy.static_smem_bytes, 0);
  const KernelResources& smem = r.at("smem");
  EXPECT_EQ(smem.registers, 9);
  EXPECT_EQ(smem.barriers, 1);
  EXPECT_EQ(smem.static_smem_bytes, 4096);
  EXPECT_EQ(smem.stack_frame_bytes, 0);
  EXPECT_EQ(r.at("old").registers, 12);
  EXPECT_EQ(r.at("old").static_smem_bytes, 2048);
  EXPECT_TRUE(jit::parse_ptxas_resources("").empty());
}

TEST(Compiler, VersionAndArchLists) {
  const int v = jit::nvrtc_version();
  EXPECT_GE(v, 12000);
  EXPECT_EQ(jit::nvrtc_version_string(),
            std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10));
  const auto& nvrtc = jit::nvrtc_supported_archs();
  EXPECT_TRUE(std::is_sorted(nvrtc.begin(), nvrtc.end()));
  EXPECT_NE(std::find(nvrtc.begin(), nvrtc.end(), 90), nvrtc.end());
  for (const auto& arch : jit::supported_archs()) EXPECT_GE(std::stoi(arch.substr(3, 3)), 80);
}

TEST(Compiler, CompilesFromSeveralThreadsAtOnce) {
  const long before = jit::nvrtc_compile_count();
  std::vector<std::thread> threads;
  std::vector<std::string> keys(6);
  std::vector<std::string> errors(6);
  for (size_t i = 0; i < keys.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        keys[i] = jit::compile(saxpy_source("thread " + std::to_string(i)), CompileOptions{}).key;
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(errors[i], "");
    EXPECT_EQ(keys[i].size(), 32u);
  }
  EXPECT_EQ(jit::nvrtc_compile_count() - before, 6);
}

}  // namespace
}  // namespace flexjit::test
