// NVRTC compiles every generated kernel (no GPU needed): every family for every mod of
// bench/suite.json, for sm_80 (mma.sync path) and sm_90a, plus the forward and backward families
// for each supported head-dim pair and dtype with a causal mask (non-divisible lengths, so the
// tail predication is compiled too). Compiles run in parallel into a temporary kernel cache. A
// CompileError fails the test; register spills do not, but every kernel's registers and spills
// are printed as a table so a regression is visible in the log.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "codegen/families/bwd_dkdv.hpp"
#include "codegen/families/fwd.hpp"
#include "codegen/family.hpp"
#include "codegen/kernel_spec.hpp"
#include "codegen/kernel_store.hpp"
#include "common/parallel.hpp"
#include "flexjit/error.hpp"
#include "jit/compiler.hpp"
#include "jit/kernel_cache.hpp"
#include "nvrtc_log.hpp"

namespace flexjit::codegen {
namespace {

namespace fs = std::filesystem;

// A problem of the suite, reduced to what shapes its kernels. (flexjit::load_suite lives in the
// attention module, which test_codegen does not link; the schema is read here directly.)
struct SuiteVariant {
  std::string name;
  int q_heads = 1, kv_heads = 1, q_len = 1, kv_len = 1, head_dim = 64, head_dim_v = 64;
  DType dtype = DType::bf16;
  std::string score_mod, mask_mod;
  Declarations declarations;
};

std::vector<SuiteVariant> read_suite(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const nlohmann::json root = nlohmann::json::parse(in);
  std::vector<SuiteVariant> out;
  for (const auto& p : root.at("problems")) {
    SuiteVariant v;
    v.name = p.at("name").get<std::string>();
    v.q_heads = p.at("Hq").get<int>();
    v.kv_heads = p.value("Hkv", v.q_heads);
    v.q_len = p.at("Sq").get<int>();
    v.kv_len = p.value("Skv", v.q_len);
    v.head_dim = p.at("D").get<int>();
    v.head_dim_v = p.value("Dv", v.head_dim);
    v.dtype = parse_dtype(p.value("dtype", std::string("bf16"))).value();
    v.score_mod = p.value("score_mod", std::string());
    v.mask_mod = p.value("mask_mod", std::string());
    if (p.contains("buffers"))
      for (const auto& [name, b] : p.at("buffers").items()) {
        BufferDecl decl{name, parse_dtype(b.value("dtype", std::string("f32"))).value(), {}};
        if (b.contains("segments")) {
          int64_t total = 0;
          for (const auto& s : b.at("segments")) total += s.get<int64_t>();
          decl.shape = {total};
        } else if (b.contains("alibi_heads")) {
          decl.shape = {b.at("alibi_heads").get<int64_t>()};
        } else if (b.contains("randn")) {
          decl.shape = b.at("randn").get<std::vector<int64_t>>();
        } else {
          decl.shape = {static_cast<int64_t>(b.at("const").size())};
        }
        v.declarations.buffers.push_back(decl);
      }
    out.push_back(v);
  }
  return out;
}

struct Job {
  std::string label;  // problem or matrix cell, for the table
  KernelSpec spec;
  std::string arch;
};

struct Outcome {
  bool compiled = false;
  std::string error;
  std::string smem_note;  // check_shared_memory's complaint, if any
  std::string log;        // NVRTC's and ptxas's messages
  std::map<std::string, KernelResources> resources;
  double ms = 0;
};

// A spec as Attention builds it for a call of this shape (block mask with full blocks when there
// is a mask; divisibility from the lengths).
KernelSpec attention_kernel(Family family, const SuiteVariant& v) {
  KernelSpec s;
  s.family = family;
  s.dtype = v.dtype;
  s.set_head_dims(v.head_dim, v.head_dim_v);  // (head dims no multiple of 64: the next multiple's tiles)
  s.gqa_group = v.q_heads / v.kv_heads;
  s.config = default_config(family, s.head_dim, s.head_dim_v);
  s.declarations = v.declarations;
  if (!v.score_mod.empty()) s.score_mod = Expr::parse(ModKind::score, v.score_mod, v.declarations);
  if (!v.mask_mod.empty()) s.mask_mod = Expr::parse(ModKind::mask, v.mask_mod, v.declarations);
  if (family == Family::block_mask) return s;
  if (family != Family::bwd_preprocess && s.has_mask()) s.has_block_mask = s.has_full_blocks = true;
  if (family != Family::bwd_preprocess)
    s.is_divisible = v.q_len % 128 == 0 && v.kv_len % 128 == 0 && v.q_len % s.config.block_m == 0 &&
                     v.kv_len % s.config.block_n == 0;
  return s;
}

std::vector<Job> build_jobs() {
  std::vector<Job> jobs;
  std::set<std::string> seen;
  auto add = [&](const std::string& label, const KernelSpec& spec, const std::string& arch) {
    // Identical kernels (e.g. long_* problems, which differ from others in lengths only) compile once.
    const std::string key = arch + "|" + spec.describe() + "|" + emit_mod_args_struct(spec.declarations);
    if (seen.insert(key).second) jobs.push_back({label, spec, arch});
  };
  const auto suite = read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json");
  for (const char* arch : {"sm_80", "sm_90a"})
    for (const SuiteVariant& v : suite) {
      for (Family f : {Family::fwd, Family::bwd_preprocess, Family::bwd_dq, Family::bwd_dkdv})
        add(v.name, attention_kernel(f, v), arch);
      if (!v.mask_mod.empty()) add(v.name, attention_kernel(Family::block_mask, v), arch);
    }
  for (const char* arch : {"sm_80", "sm_90a"})
    for (DType dtype : {DType::bf16, DType::f16})
      for (auto [d, dv] : {std::pair{64, 64}, {128, 128}, {256, 256}, {128, 64}, {192, 128}, {96, 96}, {40, 72}}) {
        SuiteVariant v;
        v.name = "causal_" + std::string(dtype_name(dtype)) + "_d" + std::to_string(d) + "_" + std::to_string(dv);
        v.q_heads = v.kv_heads = 2;
        v.q_len = v.kv_len = 1000;  // not a multiple of any tile: tails are predicated
        v.head_dim = d;
        v.head_dim_v = dv;
        v.dtype = dtype;
        v.mask_mod = "q_idx >= kv_idx";
        for (Family f : {Family::fwd, Family::bwd_preprocess, Family::bwd_dq, Family::bwd_dkdv})
          add(v.name, attention_kernel(f, v), arch);
      }
  return jobs;
}

class TempCacheDir {
 public:
  TempCacheDir() {
    std::string pattern = (fs::temp_directory_path() / "flexjit-codegen-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
    if (const char* old = std::getenv("FLEXJIT_CACHE_DIR")) old_ = old, had_old_ = true;
    ::setenv("FLEXJIT_CACHE_DIR", path_.c_str(), 1);
  }
  ~TempCacheDir() {
    if (had_old_)
      ::setenv("FLEXJIT_CACHE_DIR", old_.c_str(), 1);
    else
      ::unsetenv("FLEXJIT_CACHE_DIR");
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempCacheDir(const TempCacheDir&) = delete;
  TempCacheDir& operator=(const TempCacheDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  std::string old_;
  bool had_old_ = false;
};

// The tests below read NVRTC's log with nvrtc_warned: it must see the front end's warnings (as
// NVRTC 13.0 wrote them for a rendered forward) and nothing else of the log.
TEST(CodegenCompileMatrix, NvrtcWarnedReadsTheFrontEndsWarnings) {
  EXPECT_TRUE(nvrtc_warned("attention_fwd.cu(1869): warning #177-D: variable \"column_round\" was declared but "
                           "never referenced\n"));
  EXPECT_FALSE(nvrtc_warned(""));
  EXPECT_FALSE(nvrtc_warned("ptxas info    : Used 168 registers, used 1 barriers\n"));
  EXPECT_FALSE(nvrtc_warned("ptxas info    : 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"));
}

TEST(CodegenCompileMatrix, EveryFamilyModHeadDimAndDtypeCompiles) {
  const TempCacheDir cache;
  const std::vector<Job> jobs = build_jobs();
  ASSERT_GT(jobs.size(), 100u);
  std::vector<Outcome> outcomes(jobs.size());
  const auto start = std::chrono::steady_clock::now();
  parallel_for(jobs.size(), 0, [&](size_t i) {
    const Job& job = jobs[i];
    Outcome& o = outcomes[i];
    try {
      check_shared_memory(job.spec, job.arch);
    } catch (const UsageError& e) {
      o.smem_note = e.what();
    }
    try {
      // compile_kernel() minus its shared-memory check, so an oversized default still gets compiled
      // here (the check has its own test in validation_test.cpp).
      jit::CompileOptions options;
      options.arch = job.arch;
      const jit::CompiledKernel c = o.smem_note.empty() ? compile_kernel(job.spec, job.arch).kernel
                                                        : jit::get_or_compile(render(job.spec), options);
      o.compiled = true;
      o.log = c.log;
      o.resources = c.resources;
      o.ms = c.compile_ms;
      for (const auto& name : render(job.spec).kernel_names)
        if (!c.resources.count(name)) o.error = "no ptxas resources for " + name;
    } catch (const Error& e) {
      o.error = e.kind() + ": " + e.what();
    }
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("%-28s %-6s %-14s %-5s %-9s %-12s %4s %5s %6s %7s\n", "problem", "arch", "family", "dtype", "dims",
              "config", "gqa", "regs", "spills", "ms");
  int spilling = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const KernelSpec& s = jobs[i].spec;
    const Outcome& o = outcomes[i];
    const bool attention = is_attention_family(s.family);
    const std::string dims = attention ? std::to_string(s.head_dim) + "/" + std::to_string(s.head_dim_v) : "-";
    const std::string config =
        s.family == Family::fwd || s.family == Family::bwd_dq || s.family == Family::bwd_dkdv ? s.config.str() : "-";
    for (const auto& [name, r] : o.resources) {
      const std::string family = s.family == Family::block_mask
                                     ? (name == kernel_name(Family::block_mask, 0) ? "mask_classify" : "mask_compact")
                                     : std::string(family_name(s.family));
      std::printf("%-28s %-6s %-14s %-5s %-9s %-12s %4d %5d %6d %7.0f%s\n", jobs[i].label.c_str(), jobs[i].arch.c_str(),
                  family.c_str(), attention ? std::string(dtype_name(s.dtype)).c_str() : "-", dims.c_str(),
                  config.c_str(), s.gqa_group, r.registers, r.spill_store_bytes, o.ms,
                  o.smem_note.empty() ? "" : "  (shared memory over the arch limit)");
      if (r.spill_store_bytes > 0) ++spilling;
    }
  }
  std::printf("%zu kernels compiled in %.1f s (%d entry points spill registers)\n", jobs.size(), seconds, spilling);

  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_TRUE(outcomes[i].compiled && outcomes[i].error.empty())
        << jobs[i].label << " " << jobs[i].arch << " " << jobs[i].spec.describe() << ":\n"
        << outcomes[i].error;
    EXPECT_FALSE(nvrtc_warned(outcomes[i].log))
        << jobs[i].label << " " << jobs[i].arch << " " << jobs[i].spec.describe() << ":\n"
        << outcomes[i].log;
  }
  // Every kernel went into the temporary cache, none into the user's.
  size_t entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache.path()))
    if (e.path().extension() == ".cubin") ++entries;
  EXPECT_EQ(entries, jobs.size());
}

// The Hopper kernels overlap their warpgroup MMAs with other work (S with dP, dV with dS, the last
// GEMM of a tile with the first ones of the next). If anything in a kernel makes ptxas doubt that
// the accumulators are left alone while an MMA is in flight, it serialises every wgmma of the
// kernel and says so in the log (C7515) — a silent slowdown of 10% or more. Every suite mod's
// Hopper configs must compile without it.
TEST(CodegenCompileMatrix, HopperKernelsKeepTheirWgmmaPipelined) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  std::set<std::string> seen;
  for (const SuiteVariant& v : read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json")) {
    const bool wide = v.head_dim > 128;
    for (auto [family, config] : {std::pair{Family::fwd, wide ? "m128n64w8s2g" : "m128n128w8s2g"},
                                  {Family::fwd, wide ? "m128n64w8s2ws" : "m128n128w8s2ws"},
                                  {Family::bwd_dq, wide ? "m64n32w4s2g" : "m64n64w4s2g"},
                                  {Family::bwd_dkdv, wide ? "m32n64w4s2g" : "m64n128w8s2g"}}) {
      KernelSpec spec = attention_kernel(family, v);
      spec.config = BlockConfig::parse(config);
      if (seen.insert(spec.describe() + "|" + emit_mod_args_struct(spec.declarations)).second)
        jobs.push_back({v.name, spec, "sm_90a"});
    }
  }
  std::vector<std::string> logs(jobs.size()), errors(jobs.size());
  parallel_for(jobs.size(), 0, [&](size_t i) {
    try {
      logs[i] = compile_kernel(jobs[i].spec, jobs[i].arch).kernel.log;
    } catch (const Error& e) {
      errors[i] = e.what();
    }
  });
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(errors[i], "") << jobs[i].label << " " << jobs[i].spec.describe();
    EXPECT_EQ(logs[i].find("C7515"), std::string::npos)
        << jobs[i].label << " " << jobs[i].spec.describe() << ": ptxas serialised the wgmma pipeline:\n" << logs[i];
    EXPECT_EQ(logs[i].find("serialized"), std::string::npos) << jobs[i].label << " " << jobs[i].spec.describe();
  }
}

// The Hopper path beyond the suite's bf16 d64/d128: f16 with head dims 192 and 256, every family
// that has a wgmma kernel, compiled by NVRTC for sm_90a without errors or a serialised pipeline.
TEST(CodegenCompileMatrix, HopperKernelsCompileForF16AndWideHeads) {
  const TempCacheDir cache;
  struct Case {
    Family family;
    int head_dim;
    const char* config;
    const char* mask;
  };
  const Case cases[] = {
      {Family::fwd, 192, "m128n64w8s2g", "q_idx >= kv_idx"}, {Family::fwd, 256, "m128n64w8s2g", ""},
      {Family::bwd_dq, 192, "m64n32w4s2g", "q_idx >= kv_idx"}, {Family::bwd_dq, 256, "m64n32w4s2g", ""},
      {Family::bwd_dkdv, 256, "m32n64w4s2g", "q_idx >= kv_idx"},
  };
  std::vector<KernelSpec> specs;
  for (const Case& c : cases) {
    KernelSpec s;
    s.family = c.family;
    s.dtype = DType::f16;
    s.head_dim = s.head_dim_v = c.head_dim;
    s.config = BlockConfig::parse(c.config);
    if (*c.mask) {
      s.mask_mod = Expr::parse(ModKind::mask, c.mask);
      s.has_block_mask = s.has_full_blocks = true;
    }
    specs.push_back(s);
  }
  std::vector<std::string> logs(specs.size()), errors(specs.size());
  parallel_for(specs.size(), 0, [&](size_t i) {
    try {
      logs[i] = compile_kernel(specs[i], "sm_90a").kernel.log;
    } catch (const Error& e) {
      errors[i] = e.what();
    }
  });
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(errors[i], "") << specs[i].describe();
    EXPECT_EQ(logs[i].find("C7515"), std::string::npos) << specs[i].describe() << ":\n" << logs[i];
  }
}

// Compiles `jobs` in parallel: each job's kernel, or its error text in `errors` (a warning of NVRTC's
// about the rendered source counts as an error).
std::vector<jit::CompiledKernel> compile_jobs(const std::vector<Job>& jobs, std::vector<std::string>& errors) {
  std::vector<jit::CompiledKernel> compiled(jobs.size());
  errors.assign(jobs.size(), "");
  parallel_for(jobs.size(), 0, [&](size_t i) {
    try {
      compiled[i] = compile_kernel(jobs[i].spec, jobs[i].arch).kernel;
      if (nvrtc_warned(compiled[i].log)) errors[i] = "NVRTC warned:\n" + compiled[i].log;
    } catch (const Error& e) {
      errors[i] = e.what();
    }
  });
  return compiled;
}

// Compiles the warp-specialised forward jobs in parallel and checks each: no errors, no ptxas
// wgmma warnings (C7515 / C7519), no spills (but for the labels in `may_spill`), and PTX that
// holds TMA loads, mbarrier waits, wgmma and the register split of its consumer warpgroups.
void check_warp_specialized_compiles(const std::vector<Job>& jobs, const std::set<std::string>& may_spill) {
  std::vector<std::string> errors;
  const std::vector<jit::CompiledKernel> compiled = compile_jobs(jobs, errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string what = jobs[i].label + " " + jobs[i].spec.describe();
    ASSERT_EQ(errors[i], "") << what;
    const jit::CompiledKernel& c = compiled[i];
    EXPECT_EQ(c.log.find("C75"), std::string::npos) << what << ": ptxas warned about the wgmma pipeline:\n" << c.log;
    ASSERT_EQ(c.resources.count("flexjit_attention_fwd"), 1u) << what;
    if (!may_spill.count(jobs[i].label)) {
      EXPECT_EQ(c.resources.at("flexjit_attention_fwd").spill_store_bytes, 0) << what << ":\n" << c.log;
    }
    EXPECT_NE(c.ptx.find("cp.async.bulk.tensor.4d"), std::string::npos) << what;
    EXPECT_NE(c.ptx.find("mbarrier.try_wait.parity"), std::string::npos) << what;
    EXPECT_NE(c.ptx.find("wgmma.mma_async"), std::string::npos) << what;
    const BlockConfig& config = jobs[i].spec.config;
    // Two consumer warpgroups: 40 / 232 registers (24 / 240 with 176-key tiles); three: 24 / 160.
    const char* producer = config.num_warps == 12 || config.block_n == 176 ? "24" : "40";
    const char* consumer = config.num_warps == 12 ? "160" : config.block_n == 176 ? "240" : "232";
    if (config.num_warps >= 8) {
      EXPECT_NE(c.ptx.find(std::string("setmaxnreg.dec.sync.aligned.u32 ") + producer), std::string::npos) << what;
      EXPECT_NE(c.ptx.find(std::string("setmaxnreg.inc.sync.aligned.u32 ") + consumer), std::string::npos) << what;
    }
    // One consumer warpgroup takes two CTAs per SM where both fit 228 KiB: 64 x 64 tiles up to head
    // dim 128 (97 KiB at d128), 64 x 128 at d64 (81 KiB); then the launch's 128 registers a thread
    // split 40 / 216. Alone on its SM it keeps all 255 and hands nothing over.
    const int widest = std::max(jobs[i].spec.head_dim, jobs[i].spec.head_dim_v);
    const bool two_ctas = config.num_warps == 4 && widest <= 128 && (config.block_n == 64 || widest <= 64);
    if (config.num_warps == 4) {
      EXPECT_EQ(c.ptx.find(".minnctapersm 2") != std::string::npos, two_ctas) << what;
      EXPECT_EQ(c.ptx.find("setmaxnreg.dec.sync.aligned.u32 40") != std::string::npos, two_ctas) << what;
      EXPECT_EQ(c.ptx.find("setmaxnreg.inc.sync.aligned.u32 216") != std::string::npos, two_ctas) << what;
    }
    if (config.block_n == 176) {
      EXPECT_NE(c.ptx.find("m64n176k16"), std::string::npos) << what;
    }
  }
}

// The warp-specialised forward (issue 12) for every suite mod and head dim at its Hopper default
// and the tuner's other 'ws' configs: NVRTC compiles it with no spills and no serialised wgmma,
// and its PTX holds what makes it warp-specialised: TMA tensor loads, mbarriers, and (with two
// consumer warpgroups) the register hand-over.
TEST(CodegenCompileMatrix, WarpSpecializedForwardCompilesForEveryModAndHeadDim) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  std::set<std::string> seen;
  auto add = [&](const std::string& label, KernelSpec spec) {
    if (seen.insert(spec.describe() + "|" + emit_mod_args_struct(spec.declarations)).second)
      jobs.push_back({label, spec, "sm_90a"});
  };
  // Every suite mod at the warp-specialised tiles of its head dim. Mods that read buffers spill a
  // few bytes there (their default stays on the synchronous path, see fwd.cpp); the spill check
  // below skips them, everything else holds for them too.
  std::set<std::string> buffer_mods;
  for (const SuiteVariant& v : read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json")) {
    KernelSpec spec = attention_kernel(Family::fwd, v);
    spec.config = BlockConfig::parse(v.head_dim > 128 ? "m128n64w8s2ws" : "m128n128w8s2ws");
    if (!spec.score_mod.buffers_read().empty() || !spec.mask_mod.buffers_read().empty()) buffer_mods.insert(v.name);
    add(v.name, spec);
    // The one-warpgroup shape the tuner tries for short sequences, two CTAs per SM.
    if (v.head_dim <= 128) {
      spec.config = BlockConfig::parse(v.head_dim > 64 ? "m64n64w4s2ws" : "m64n128w4s2ws");
      if (buffer_mods.count(v.name)) buffer_mods.insert(v.name + "_two_ctas");  // 216 registers: the table spills 8-164 bytes
      add(v.name + "_two_ctas", spec);
    }
  }
  for (DType dtype : {DType::bf16, DType::f16})
    for (auto [d, dv, config] : {std::tuple{64, 64, "m128n128w8s3ws"}, {128, 128, "m128n64w8s3ws"},
                                 {128, 128, "m64n128w4s2ws"}, {128, 128, "m64n64w4s2ws"}, {64, 64, "m64n128w4s2ws"},
                                 {192, 128, "m128n128w8s2ws"}, {192, 192, "m128n64w8s2ws"},
                                 {128, 64, "m128n128w8s2ws"}, {64, 256, "m128n64w8s2ws"}, {256, 256, "m64n64w4s2ws"}}) {
      SuiteVariant v;
      v.name = std::string("ws_") + std::string(dtype_name(dtype)) + "_d" + std::to_string(d) + "_" + std::to_string(dv);
      v.q_len = v.kv_len = 1000;
      v.head_dim = d;
      v.head_dim_v = dv;
      v.dtype = dtype;
      v.mask_mod = "q_idx >= kv_idx";
      KernelSpec spec = attention_kernel(Family::fwd, v);
      spec.config = BlockConfig::parse(config);
      add(v.name, spec);
    }
  check_warp_specialized_compiles(jobs, buffer_mods);
}

// The warp-specialised forward's tile-bounds walk (a mask_mod with interval bounds, no block mask:
// the producer walks the key tiles the bounds keep, each warp skips mask_mod where they find its
// rows' tile fully kept): positional masks, one reading h and one a parameter, lengths that cross
// the tiles' ends, each consumer-warpgroup count and d256. NVRTC compiles them with no spills and no
// serialised wgmma; their source holds flexjit_mask_mod_bounds and the spec's description says so.
TEST(CodegenCompileMatrix, WarpSpecializedForwardTileBoundsWalkCompiles) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  const char* masks[] = {"q_idx >= kv_idx", "q_idx >= kv_idx && q_idx - kv_idx <= 1024", "kv_idx <= 100 || q_idx >= kv_idx",
                         "q_idx + kv_len - q_len >= kv_idx", "kv_idx < 300 + 64 * h"};
  for (const char* mask : masks)
    for (auto [d, config] : {std::pair{64, "m192n128w12s2ws"}, {64, "m128n128w8s2ws"}, {128, "m128n128w8s2ws"},
                             {128, "m64n128w4s2ws"}, {256, "m128n64w8s2ws"}}) {
      SuiteVariant v;
      v.name = std::string("bounds_d") + std::to_string(d) + "_" + config + "_" + mask;
      v.q_len = v.kv_len = 1000;
      v.head_dim = v.head_dim_v = d;
      v.mask_mod = mask;
      KernelSpec spec = attention_kernel(Family::fwd, v);
      spec.config = BlockConfig::parse(config);
      spec.has_block_mask = spec.has_full_blocks = false;
      spec.is_divisible = false;
      spec.tile_bounds_walk = true;
      EXPECT_NE(spec.describe().find(" tile_bounds=1"), std::string::npos) << spec.describe();
      EXPECT_NE(render(spec).headers.at("flexjit_variant.cuh").find("flexjit_mask_mod_bounds"), std::string::npos)
          << spec.describe();
      jobs.push_back({v.name, spec, "sm_90a"});
    }
  // Three warpgroups (no overlap under a mask at 160 registers) spill 8 bytes beside the window's
  // two comparisons.
  check_warp_specialized_compiles(jobs, {"bounds_d64_m192n128w12s2ws_q_idx >= kv_idx && q_idx - kv_idx <= 1024"});
}

// Masks with tile bounds whose kv_idx-only part reads a buffer that kv_idx does not index
// (`kv_idx < len[b]`: bounds, and a column value) walk by their bounds without a block mask, with the
// values not staged (forward_mask_column_values: the walk's warps class tiles alone, the staging has
// a warpgroup barrier); with tables the values stay. Until session (zzzo) such a call without a
// block mask failed to compile ("the tile-bounds walk classes tiles per warp"; found by
// RandomProblemsGpu.AnyHeadDimForwardAndBackward: `kv_idx < len[b]`, no block mask, head dim 88).
TEST(CodegenCompileMatrix, TileBoundsWalkBesideMaskColumnValuesCompiles) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  const char* masks[] = {"kv_idx < len[b]", "kv_idx < len[b] && q_idx >= kv_idx", "kv_idx <= len[b] || q_idx >= kv_idx"};
  for (const char* mask : masks)
    for (auto [d, config] : {std::pair{64, "m128n128w8s2ws"}, {128, "m128n128w8s2ws"}, {128, "m64n128w4s2ws"}}) {
      SuiteVariant v;
      v.name = std::string("bounds_columns_d") + std::to_string(d) + "_" + config + "_" + mask;
      v.q_len = v.kv_len = 1000;
      v.head_dim = v.head_dim_v = d;
      v.mask_mod = mask;
      v.declarations.buffers = {BufferDecl::parse("len:i32:?")};
      KernelSpec spec = attention_kernel(Family::fwd, v);
      spec.config = BlockConfig::parse(config);
      spec.is_divisible = false;
      ASSERT_TRUE(spec.mask_mod.has_tile_bounds()) << mask;
      ASSERT_EQ(spec.mask_mod.column_value_count(), 1) << mask;
      EXPECT_TRUE(forward_walks_by_bounds(spec.mask_mod)) << mask;
      EXPECT_EQ(forward_mask_column_values(spec), 1) << "the tables' walk keeps the values: " << spec.describe();
      spec.has_block_mask = spec.has_full_blocks = false;
      spec.tile_bounds_walk = true;
      EXPECT_NO_THROW(spec.validate()) << spec.describe();
      EXPECT_EQ(forward_mask_column_values(spec), 0) << spec.describe();
      EXPECT_NE(render(spec).text.find("constexpr int MASK_COLUMN_VALUES = 0;"), std::string::npos) << spec.describe();
      jobs.push_back({v.name, spec, "sm_90a"});
    }
  check_warp_specialized_compiles(jobs, {});
}

// The tile-bounds walk exists only where it applies: the named error for a block mask, and for a
// mask_mod the bounds cannot class (a buffer indexed by kv_idx).
TEST(CodegenValidation, TileBoundsWalkOnlyWithoutTablesAndWithBounds) {
  SuiteVariant v;
  v.name = "bounds";
  v.head_dim = v.head_dim_v = 64;
  v.mask_mod = "q_idx >= kv_idx";
  KernelSpec spec = attention_kernel(Family::fwd, v);
  spec.config = BlockConfig::parse("m128n128w8s2ws");
  spec.tile_bounds_walk = true;
  spec.has_block_mask = spec.has_full_blocks = true;
  try {
    spec.validate();
    ADD_FAILURE() << "a block mask with the tile-bounds walk was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the tile-bounds walk (tile_bounds_walk) is for the warp-specialised forward without a block mask or "
              "per-sequence lengths, under a mask_mod with tile bounds (no float math, no buffer indexed by "
              "kv_idx); this is config m128n128w8s2ws with mask_mod=q_idx >= kv_idx");
  }
  spec.has_block_mask = spec.has_full_blocks = false;
  EXPECT_NO_THROW(spec.validate());
}

// The forward's lean form (issue 12). Above 160 accumulator registers (a 256-wide V beside 64-key
// tiles: 176) the full form overlaps S(t) with P(t-1) V(t-1), which fits the registers beside
// some mods only; compile_kernel keeps the full form where ptxas reports no spills and takes the
// lean one (no overlap there) where it does. Which mods fit is ptxas's call (NVRTC 13.0 here):
// the causal mask, unmodified scores, a softcap and ALiBi's slope read do (the last spilled a few
// words beside the tail's range test until the consumers took their work tile decoded, session
// (z)); the document mask does not; prefix LM does, at lengths the tiles divide and, since the
// lazy softmax (session (zzx): its tiles mostly skip the quad's shuffles and O's rescale), beside
// the tail's range test too.
TEST(CodegenCompileMatrix, ForwardTakesItsLeanFormWhereTheFullOneSpills) {
  const TempCacheDir cache;
  // How much the full form spills beside the mod: nothing, a few words (at most 32 bytes of spill
  // stores: the full form is still kept, its overlap being worth more), or more (the lean form).
  enum class Spills { none, few, many };
  struct Case {
    const char* suite_name;
    int length;
    Spills full;
    int head_dim = 256;
    const char* config = "m128n64w8s2ws";  // the Hopper default at d256
  };
  // At d64 the three-warpgroup tiles (over 192-row tables) overlap a mask that reads no buffer in
  // their full form only: causal and sliding windows fit it, prefix LM at lengths the tiles do not
  // divide spills and takes the lean form.
  const std::vector<Case> cases = {{"noop_d128", 4096, Spills::none},
                                   {"causal_d128", 4096, Spills::none},
                                   {"softcap_causal_d128", 4096, Spills::none},
                                   {"alibi_causal_d128", 1000, Spills::none},
                                   {"document_causal_d128", 4096, Spills::many},
                                   {"prefix_lm_d128", 4096, Spills::none},
                                   {"prefix_lm_d128", 1000, Spills::none},
                                   {"causal_d128", 4096, Spills::none, 64, "m192n128w12s2ws"},
                                   {"sliding_window_d128", 1000, Spills::none, 64, "m192n128w12s2ws"},
                                   {"prefix_lm_d128", 4096, Spills::none, 64, "m192n128w12s2ws"},
                                   {"prefix_lm_d128", 1000, Spills::many, 64, "m192n128w12s2ws"}};
  const std::vector<SuiteVariant> suite = read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json");
  std::vector<Job> jobs;
  std::vector<Spills> expected;
  for (const Case& c : cases) {
    const auto it = std::find_if(suite.begin(), suite.end(), [&](const SuiteVariant& v) { return v.name == c.suite_name; });
    ASSERT_NE(it, suite.end()) << c.suite_name;
    SuiteVariant v = *it;
    v.head_dim = v.head_dim_v = c.head_dim;
    v.q_len = v.kv_len = c.length;
    KernelSpec spec = attention_kernel(Family::fwd, v);
    spec.config = BlockConfig::parse(c.config);
    if (spec.config.block_m == 192) spec.sparse_q_block = 192;
    jobs.push_back({v.name + "_d" + std::to_string(c.head_dim) + "_" + c.config + "_" + std::to_string(c.length), spec,
                    "sm_90a"});
    expected.push_back(c.full);
  }
  std::vector<CompiledSpec> chosen(jobs.size());
  std::vector<jit::CompiledKernel> full(jobs.size());
  std::vector<std::string> errors(jobs.size());
  parallel_for(jobs.size(), 0, [&](size_t i) {
    try {
      chosen[i] = compile_kernel(jobs[i].spec, jobs[i].arch);
      full[i] = jit::get_or_compile(render(jobs[i].spec), [] {
        jit::CompileOptions options;
        options.arch = "sm_90a";
        return options;
      }());
    } catch (const Error& e) {
      errors[i] = e.what();
    }
  });
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string& what = jobs[i].label;
    ASSERT_EQ(errors[i], "") << what;
    const bool lean = expected[i] == Spills::many;
    EXPECT_EQ(chosen[i].spec.lean_registers, lean) << what;
    const int chosen_spills = chosen[i].kernel.resources.at("flexjit_attention_fwd").spill_store_bytes;
    const int full_spills = full[i].resources.at("flexjit_attention_fwd").spill_store_bytes;
    switch (expected[i]) {
      case Spills::none:
        EXPECT_EQ(full_spills, 0) << what;
        break;
      case Spills::few:
        EXPECT_GT(full_spills, 0) << what << ": the full form was expected to spill a few words";
        EXPECT_LE(full_spills, 32) << what;
        break;
      case Spills::many:
        EXPECT_GT(full_spills, 32) << what << ": the full form was expected to spill more than 32 bytes";
        EXPECT_LT(chosen_spills, full_spills) << what;
        break;
    }
    if (lean) {
      EXPECT_NE(chosen[i].spec.describe().find(" lean_registers=1"), std::string::npos) << what;
      EXPECT_TRUE(chosen[i].kernel.ptx != full[i].ptx) << what << ": the two forms compiled to the same PTX";
    } else {
      EXPECT_EQ(chosen_spills, full_spills) << what;
      EXPECT_TRUE(chosen[i].kernel.ptx == full[i].ptx) << what << ": the full form was not the one kept";
    }
    EXPECT_EQ(compiled_form(jobs[i].spec, "sm_90a").lean_registers, lean) << what;  // what emit renders
  }
  // One form at d128, on the synchronous path, and for three warpgroups without a mask.
  KernelSpec unmasked = jobs[7].spec;
  unmasked.mask_mod = Expr::parse(ModKind::mask, "true");
  unmasked.has_block_mask = unmasked.has_full_blocks = false;
  EXPECT_FALSE(descriptor(Family::fwd).has_lean_form(unmasked));
  KernelSpec d128 = jobs[0].spec;
  d128.head_dim = d128.head_dim_v = 128;
  d128.config = BlockConfig::parse("m128n128w8s2ws");
  EXPECT_FALSE(descriptor(Family::fwd).has_lean_form(d128));
  KernelSpec synchronous = jobs[0].spec;
  synchronous.config = BlockConfig::parse("m128n64w8s2g");
  EXPECT_FALSE(descriptor(Family::fwd).has_lean_form(synchronous));
}

// The wide warp-specialised tiles: three consumer warpgroups over 192 query rows (m192n128w12s2ws)
// and 176-key tiles (m128n176w8s2ws), for every unmasked suite mod at d64 and d128 (lengths that
// cross the tiles' ends and lengths they divide), f16, GQA, D != Dv and a mask_mod called without
// a block mask (every tile visited): NVRTC compiles them with no spills and no serialised wgmma,
// and the PTX holds their register split.
TEST(CodegenCompileMatrix, WideWarpSpecializedForwardCompilesForEveryUnmaskedModAndHeadDim) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  std::set<std::string> seen;
  auto add = [&](const std::string& label, KernelSpec spec, const char* config, int q_len, int kv_len) {
    spec.config = BlockConfig::parse(config);
    spec.has_block_mask = spec.has_full_blocks = false;
    spec.is_divisible = q_len % spec.config.block_m == 0 && kv_len % spec.config.block_n == 0;
    if (seen.insert(spec.describe() + "|" + emit_mod_args_struct(spec.declarations)).second)
      jobs.push_back({label, spec, "sm_90a"});
  };
  int unmasked = 0;
  for (const SuiteVariant& suite : read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json")) {
    if (!suite.mask_mod.empty()) continue;
    ++unmasked;
    for (int d : {64, 128})
      for (const char* config : {"m192n128w12s2ws", "m128n176w8s2ws"})
        for (int len : {suite.kv_len, 2112}) {  // 2112 = 11 x 192 = 12 x 176
          SuiteVariant v = suite;
          v.head_dim = v.head_dim_v = d;
          add(v.name + "_d" + std::to_string(d) + "_" + config, attention_kernel(Family::fwd, v), config, v.q_len, len);
        }
  }
  ASSERT_GE(unmasked, 2);  // noop_d128, noop_d64 and the decode problems
  struct Extra {
    DType dtype;
    int d, dv, gqa;
    const char* mask;
    const char* config;
  };
  for (const Extra& e : {Extra{DType::f16, 64, 64, 1, "", "m192n128w12s2ws"},
                         Extra{DType::f16, 128, 128, 1, "", "m192n128w12s2ws"},
                         Extra{DType::bf16, 64, 64, 4, "", "m192n128w12s2ws"},
                         Extra{DType::bf16, 64, 64, 1, "q_idx >= kv_idx", "m192n128w12s2ws"},
                         Extra{DType::f16, 128, 128, 1, "", "m128n176w8s2ws"},
                         Extra{DType::bf16, 128, 128, 4, "", "m128n176w8s2ws"},
                         Extra{DType::bf16, 128, 64, 1, "", "m128n176w8s2ws"},
                         Extra{DType::f16, 64, 128, 1, "", "m128n176w8s2ws"},
                         Extra{DType::bf16, 128, 128, 1, "q_idx >= kv_idx", "m128n176w8s2ws"},
                         Extra{DType::bf16, 64, 64, 1, "q_idx >= kv_idx", "m128n176w8s2ws"}}) {
    SuiteVariant v;
    v.name = std::string("wide_") + std::string(dtype_name(e.dtype)) + "_d" + std::to_string(e.d) + "_" +
             std::to_string(e.dv) + "_gqa" + std::to_string(e.gqa) + (*e.mask ? "_dense_causal" : "");
    v.q_heads = 4 * e.gqa;
    v.kv_heads = 4;
    v.q_len = v.kv_len = 1000;
    v.head_dim = e.d;
    v.head_dim_v = e.dv;
    v.dtype = e.dtype;
    v.mask_mod = e.mask;
    add(v.name, attention_kernel(Family::fwd, v), e.config, v.q_len, v.kv_len);
  }
  // Three warpgroups at d128 run without the overlap at 160 registers, just enough: a group of 7
  // query heads per kv head (the suite's decode_gqa7) tips ptxas into spilling 12 bytes there.
  check_warp_specialized_compiles(jobs, {"decode_gqa7_b8_kv64k_d128_m192n128w12s2ws"});
}

// A second request for a compiled spec comes from the disk cache, with the same resources.
TEST(CodegenCompileMatrix, CompileKernelUsesTheDiskCache) {
  const TempCacheDir cache;
  KernelSpec s;
  s.family = Family::fwd;
  s.head_dim = s.head_dim_v = 64;
  s.config = default_config(Family::fwd, 64, 64);
  s.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  s.has_block_mask = s.has_full_blocks = true;
  const long before = jit::nvrtc_compile_count();
  const jit::CompiledKernel first = compile_kernel(s, "sm_80").kernel;
  const jit::CompiledKernel second = compile_kernel(s, "sm_80").kernel;
  EXPECT_EQ(jit::nvrtc_compile_count(), before + 1);
  EXPECT_FALSE(first.from_disk_cache);
  EXPECT_TRUE(second.from_disk_cache);
  EXPECT_EQ(first.key, second.key);
  EXPECT_EQ(first.cubin, second.cubin);
  ASSERT_EQ(second.resources.count(kernel_name(Family::fwd)), 1u);
  EXPECT_EQ(first.resources.at(kernel_name(Family::fwd)).registers,
            second.resources.at(kernel_name(Family::fwd)).registers);
  EXPECT_TRUE(fs::exists(cache.path() / "kernels" / (first.key + ".cubin")));
}

// Buffer reads with 32-bit offsets (KernelSpec::buffer_offsets_32): the variant header maps the
// emitted reads to flexjit_read_32, the kernel is a variant of its own (another description and
// disk key), and the kernels that read buffers compile in that form for the suite's buffer mods
// (documents, nested documents, relative-position bias, ALiBi): the warp-specialised and the
// synchronous forward and the dQ kernel.
TEST(CodegenCompileMatrix, BufferReadsCompileWithThirtyTwoBitOffsets) {
  const TempCacheDir cache;
  int checked = 0;
  std::set<std::string> seen;
  for (const SuiteVariant& v : read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json")) {
    if (v.head_dim != 128 || v.q_len < 128) continue;
    for (auto [family, config] : {std::pair{Family::fwd, "m128n128w8s2ws"}, {Family::fwd, "m128n64w4s2"},
                                  {Family::bwd_dq, ""}}) {
      KernelSpec wide = attention_kernel(family, v);
      if (wide.score_mod.buffers_read().empty() && wide.mask_mod.buffers_read().empty()) continue;
      if (*config) wide.config = BlockConfig::parse(config);  // bwd_dq: its default
      if (!seen.insert(wide.describe() + "|" + emit_mod_args_struct(wide.declarations)).second) continue;
      KernelSpec narrow = wide;
      narrow.buffer_offsets_32 = true;
      const std::string label = v.name + " " + wide.config.str();
      EXPECT_EQ(narrow.describe(), wide.describe() + " buffer_offsets=32") << label;
      const jit::Source src = render(narrow);
      const std::string& header = src.headers.at("flexjit_variant.cuh");
      EXPECT_NE(header.find("#define flexjit_read flexjit_read_32"), std::string::npos) << label;
      EXPECT_NE(header.find("#undef flexjit_read"), std::string::npos) << label;
      EXPECT_EQ(render(wide).headers.at("flexjit_variant.cuh").find("flexjit_read_32"), std::string::npos) << label;
      const CompiledSpec n = compile_kernel(narrow, "sm_90a"), w = compile_kernel(wide, "sm_90a");
      EXPECT_NE(n.kernel.key, w.kernel.key) << label;
      EXPECT_EQ(n.kernel.resources.count(kernel_name(family)), 1u) << label << "\n" << n.kernel.log;
      ++checked;
    }
  }
  EXPECT_GE(checked, 12);  // documents, nested documents, relative position, ALiBi, learnable ALiBi: 3 kernels each
}

// A kernel that stages a mod's values (column or diagonal) compiles for sm_90a with no serialised
// wgmma and at most `max_spill_bytes` of spill stores (negative: not checked).
void expect_staged_values_kernel_compiles(const KernelSpec& spec, const std::string& label, int max_spill_bytes) {
  const CompiledSpec k = compile_kernel(spec, "sm_90a");
  const std::string name = kernel_name(spec.family);
  ASSERT_EQ(k.kernel.resources.count(name), 1u) << label << "\n" << k.kernel.log;
  if (max_spill_bytes >= 0) {
    EXPECT_LE(k.kernel.resources.at(name).spill_store_bytes, max_spill_bytes) << label << "\n" << k.kernel.log;
  }
  EXPECT_EQ(k.kernel.log.find("C7515"), std::string::npos) << label << "\n" << k.kernel.log;
  EXPECT_EQ(k.kernel.log.find("C7519"), std::string::npos) << label << "\n" << k.kernel.log;
}

// The diagonal-values tests' variant: GQA 3:1, Sq != Skv, the tables the cases read.
SuiteVariant diagonal_values_variant(std::vector<BufferDecl> buffers) {
  SuiteVariant v;
  v.q_heads = 6;
  v.kv_heads = 2;
  v.q_len = 1000;
  v.kv_len = 777;
  v.declarations.buffers = std::move(buffers);
  return v;
}

// A score_mod's column values (codegen::forward_score_column_values): the warp-specialised
// forward's variant header has the values function and the score_mod that reads them, its kernel
// calls it and compiles with no serialised wgmma; the synchronous kernel reads per score; a mask
// with column values of its own keeps them and the score reads per score; a score without key-only
// reads has none.
TEST(CodegenCompileMatrix, ScoreColumnValuesInTheWarpSpecialisedForward) {
  const TempCacheDir cache;
  SuiteVariant v;
  v.q_heads = 6;
  v.kv_heads = 2;
  v.q_len = v.kv_len = 1000;
  v.declarations.buffers = {BufferDecl::parse("kb:f32:?x?"), BufferDecl::parse("w:f32:?x?"),
                            BufferDecl::parse("tab:f32:?"), BufferDecl::parse("doc:i32:?"),
                            BufferDecl::parse("bias_doc:f32:?")};
  struct Case { const char* score; const char* mask; int values; };
  const Case cases[] = {{"score + kb[b][kv_idx]", "q_idx >= kv_idx", 1},
                        {"score + kb[b][kv_idx]", "", 1},
                        {"score * w[h][kv_idx] + tab[kv_idx] * 2.0", "q_idx + 40 >= kv_idx", 2},
                        {"where(doc[q_idx] == doc[kv_idx], score + bias_doc[doc[kv_idx]], score - 1.0)", "", 2},
                        {"score + kb[b][kv_idx]", "doc[q_idx] == doc[kv_idx]", 0},  // the mask's values
                        {"score + tab[kv_idx - q_idx + 999]", "q_idx >= kv_idx", 0}};
  for (const Case& c : cases)
    for (auto [d, config] : {std::pair{128, "m128n128w8s2ws"}, {64, "m192n128w12s2ws"}, {64, "m64n128w4s2ws"},
                             {128, "m128n64w4s2"}}) {
      v.head_dim = v.head_dim_v = d;
      v.score_mod = c.score;
      v.mask_mod = c.mask;
      KernelSpec spec = attention_kernel(Family::fwd, v);
      spec.config = BlockConfig::parse(config);
      if (spec.config.block_m == 192) spec.has_block_mask = spec.has_full_blocks = false;  // (calls without one)
      const bool ws = spec.config.warp_specialized;
      const int values = ws ? c.values : 0;
      const std::string label = std::string(c.score) + " | " + c.mask + " | " + config;
      EXPECT_EQ(forward_score_column_values(spec), values) << label;
      const jit::Source src = render(spec);
      const std::string& header = src.headers.at("flexjit_variant.cuh");
      EXPECT_EQ(header.find("flexjit_score_columns(int b, int h, int kv_idx") != std::string::npos, values > 0) << label;
      EXPECT_EQ(src.text.find("flexjit_score_mod_log2_columns(") != std::string::npos,
                values > 0 || forward_score_diagonal_values(spec) > 0) << label;
      if (values == 0) continue;
      EXPECT_NE(src.text.find("[[maybe_unused]] constexpr int SCORE_COLUMN_VALUES = " + std::to_string(values) + ";"), std::string::npos)
          << label;
      expect_staged_values_kernel_compiles(spec, label, -1);
    }
}

// A score_mod's diagonal values (codegen::forward_score_diagonal_values): the warp-specialised
// forward's variant header has the values function of the diagonal and the score_mod that reads
// them, its kernel calls them and compiles with no spill and no serialised wgmma (a per-head
// relative table spilled 712 bytes at d128 and 1,024 at d64 reading per score); the synchronous
// kernel reads per score; a mask's column values (documents) are staged beside them; the score_mod's
// own column values and an affine score keep their own forms.
TEST(CodegenCompileMatrix, ScoreDiagonalValuesInTheWarpSpecialisedForward) {
  const TempCacheDir cache;
  SuiteVariant v = diagonal_values_variant({BufferDecl::parse("relh:bf16:?x?"), BufferDecl::parse("rel:f32:?"),
                                            BufferDecl::parse("t5:f32:?x32"), BufferDecl::parse("doc:i32:?"),
                                            BufferDecl::parse("kb:f32:?"), BufferDecl::parse("slope:f32:?")});
  // offsets_32: the 32-bit buffer reads that calls take (KernelSpec::buffer_offsets_32): beside
  // documents with 64-bit ones the kernel spills (232-640 bytes, against 488-996 reading per score).
  // bias: `score + V` (forward_diagonal_bias_form, where two or more consumer warpgroups stage them).
  // table: its values from the call's diagonal table (forward_diagonal_table: V reads neither b,
  // q_len nor kv_len; two consumer warpgroups, up to 128-key tiles).
  struct Case {
    const char* score;
    const char* mask;
    int values;
    bool offsets_32 = false;
    bool bias = false;
    bool table = false;
  };
  const Case cases[] = {
      {"score + relh[h][kv_idx - q_idx + 4096]", "q_idx >= kv_idx", 1, false, true, true},
      {"score + relh[h][kv_idx - q_idx + 4096]", "", 1, false, true, true},
      {"score + relh[h][kv_idx - q_idx + q_len - 1]", "q_idx >= kv_idx", 1, false, true, false},
      {"score + relh[b % 2][kv_idx - q_idx + 4096]", "", 1, false, true, false},
      {"score * 0.5 + rel[q_idx - kv_idx + 999] + relh[h % 2][kv_idx - q_idx + 999]", "q_idx + 40 >= kv_idx", 2},
      {"score + t5[h][where(kv_idx - q_idx > 0, 16, 0) + where(abs(kv_idx - q_idx) < 8, abs(kv_idx - q_idx), "
       "min(15, 8 + int(log(float(abs(kv_idx - q_idx)) / 8.0) / log(16.0) * 8.0)))]", "", 1, false, true, true},
      {"score + relh[h][kv_idx - q_idx + 4096]", "doc[q_idx] == doc[kv_idx]", 1, true},  // beside the mask's column values
      {"score + kb[kv_idx] + rel[kv_idx - q_idx + 999]", "", 0},                  // the score_mod's column values
      {"score + slope[h] * float(kv_idx - q_idx)", "q_idx >= kv_idx", 0}};          // ALiBi: the affine pass
  for (const Case& c : cases)
    for (auto [d, config] : {std::pair{128, "m128n128w8s2ws"}, {64, "m192n128w12s2ws"}, {64, "m64n128w4s2ws"},
                             {64, "m128n128w8s2ws"}, {128, "m128n64w4s2"}}) {
      v.head_dim = v.head_dim_v = d;
      v.score_mod = c.score;
      v.mask_mod = c.mask;
      KernelSpec spec = attention_kernel(Family::fwd, v);
      spec.config = BlockConfig::parse(config);
      spec.buffer_offsets_32 = c.offsets_32;
      if (spec.config.block_m == 192) spec.has_block_mask = spec.has_full_blocks = false;  // (calls without one)
      const bool ws = spec.config.warp_specialized;
      const int values = ws ? c.values : 0;
      const std::string label = std::string(c.score) + " | " + c.mask + " | " + config + " d" + std::to_string(d);
      EXPECT_EQ(forward_score_diagonal_values(spec), values) << label;
      const jit::Source src = render(spec);
      const std::string& header = src.headers.at("flexjit_variant.cuh");
      EXPECT_EQ(header.find("flexjit_score_diagonals(int b, int h, int kv_idx") != std::string::npos, values > 0) << label;
      EXPECT_EQ(src.text.find("apply_tile_mods_by_score_diagonals<") != std::string::npos, values > 0) << label;
      if (values == 0) continue;
      EXPECT_NE(src.text.find("[[maybe_unused]] constexpr int SCORE_DIAGONAL_VALUES = " + std::to_string(values) + ";"),
                std::string::npos) << label;
      const bool bias = c.bias && spec.config.num_warps >= 8;
      EXPECT_EQ(forward_diagonal_bias_form(spec), bias) << label;
      EXPECT_NE(src.text.find(std::string("[[maybe_unused]] constexpr bool SCORE_DIAGONAL_BIAS_FORM = ") +
                              (bias ? "true" : "false") + ";"),
                std::string::npos) << label;
      // (Three warpgroups at d64 with 128-key tiles: under masks that read no buffer.)
      const bool table = c.table && (spec.config.num_warps == 8 || (spec.config.num_warps == 12 && d == 64)) &&
                         spec.config.block_n <= 128;
      EXPECT_EQ(forward_diagonal_table(spec), table) << label;
      EXPECT_NE(src.text.find(std::string("[[maybe_unused]] constexpr bool SCORE_DIAGONAL_TABLE = ") +
                              (table ? "true" : "false") + ";"),
                std::string::npos) << label;
      if (table) {
        // The table's own kernel: its variant header has the values function, and it compiles.
        const KernelSpec table_spec = diagonal_table_kernel_spec(spec);
        const jit::Source table_src = render(table_spec);
        EXPECT_NE(table_src.headers.at("flexjit_variant.cuh").find("flexjit_score_diagonals(int b, int h, int kv_idx"),
                  std::string::npos) << label;
        expect_staged_values_kernel_compiles(table_spec, label + " (table)", 0);
      }
      if (bias) {
        // A negative scale, and a positive one below 2^-20, add the values per score.
        KernelSpec negative = spec, small = spec;
        negative.negative_scale = true;
        small.small_scale = true;
        EXPECT_FALSE(forward_diagonal_bias_form(negative)) << label;
        EXPECT_FALSE(forward_diagonal_bias_form(small)) << label;
        EXPECT_NE(small.describe().find(" small_scale=1"), std::string::npos) << label;
        EXPECT_EQ(spec.describe().find("small_scale"), std::string::npos) << label;
      }
      // The table form on three warpgroups keeps its four Q descriptors in local memory (44 bytes:
      // the loop reads them from L1, and ran 1.08x the two-warpgroup tiles).
      expect_staged_values_kernel_compiles(spec, label, table && spec.config.num_warps == 12 ? 48 : 0);
    }
}

// The warp-specialised dK/dV kernel's diagonal values (codegen::dkdv_score_diagonal_values): at
// head dim 64 (two and one consumer warpgroups, three stages, per-sequence lengths) its variant
// header has the values function of the diagonal and the score_mod that reads them, the kernel
// stages them and compiles with no spill and no serialised wgmma; the ordered kernel
// (deterministic mode) stages them too; at head dim 128 too, beside one dQ buffer instead of two
// (spills 40 -> 0 bytes fast, 92 -> 36 ordered); the synchronous kernel reads per score. A
// derivative with diagonal values of its own (`score * rel[...]`), an affine score (ALiBi) and
// column slices (d256) keep the per-score reads.
TEST(CodegenCompileMatrix, ScoreDiagonalValuesInTheWarpSpecialisedDkdv) {
  const TempCacheDir cache;
  SuiteVariant v = diagonal_values_variant({BufferDecl::parse("relh:bf16:?x?"), BufferDecl::parse("rel:f32:?"),
                                            BufferDecl::parse("t5:f32:?x32"), BufferDecl::parse("slope:f32:?")});
  // seed: `score + V` with one value, so the table's pairs seed Sᵀ (dkdv_diagonal_seed) at head
  // dim 64; at 128 the raw table.
  struct Case { const char* score; const char* mask; int values; bool seed; };
  const Case cases[] = {
      {"score + relh[h][kv_idx - q_idx + 4096]", "q_idx >= kv_idx", 1, true},
      {"score + relh[h][kv_idx - q_idx + 4096]", "", 1, true},
      {"score * 0.5 + relh[h][kv_idx - q_idx + 4096]", "", 1, false},  // a prescaled score: the raw table
      {"score * 0.5 + rel[q_idx - kv_idx + 999] + relh[h % 2][kv_idx - q_idx + 999]", "q_idx + 40 >= kv_idx", 2, false},
      {"score + t5[h][where(kv_idx - q_idx > 0, 16, 0) + where(abs(kv_idx - q_idx) < 8, abs(kv_idx - q_idx), "
       "min(15, 8 + int(log(float(abs(kv_idx - q_idx)) / 8.0) / log(16.0) * 8.0)))]", "", 1, true},
      {"score * rel[kv_idx - q_idx + 999]", "q_idx >= kv_idx", 0, false},        // the derivative reads it
      {"score + slope[h] * float(kv_idx - q_idx)", "q_idx >= kv_idx", 0, false}};  // ALiBi: two FFMAs a score
  struct Kernel { int d; const char* config; bool ordered, seq_lens, staged; };
  const Kernel kernels[] = {{64, "m64n128w8s2ws", false, false, true}, {64, "m64n128w8s3ws", false, false, true},
                            {64, "m64n64w4s2ws", false, false, true},  {64, "m64n128w8s3ws", false, true, true},
                            {64, "m64n128w8s2ws", true, false, true},  {128, "m64n128w8s2ws", false, false, true},  {128, "m64n128w8s2ws", true, false, true},
                            {256, "m64n64w8s2ws", false, false, false}, {64, "m64n128w8s2g", false, false, false}};
  for (const Case& c : cases)
    for (const Kernel& k : kernels) {
      v.head_dim = v.head_dim_v = k.d;
      v.score_mod = c.score;
      v.mask_mod = c.mask;
      KernelSpec spec = attention_kernel(Family::bwd_dkdv, v);
      spec.config = BlockConfig::parse(k.config);
      spec.dq_accumulate = true;
      spec.dq_ordered = k.ordered;
      spec.seq_lens = k.seq_lens;
      const int values = k.staged ? c.values : 0;
      const std::string label = std::string(c.score) + " | " + c.mask + " | d" + std::to_string(k.d) + " " +
                                k.config + (k.ordered ? " ordered" : "") + (k.seq_lens ? " seq_lens" : "");
      EXPECT_EQ(dkdv_score_diagonal_values(spec), values) << label;
      const jit::Source src = render(spec);
      const std::string& header = src.headers.at("flexjit_variant.cuh");
      EXPECT_EQ(header.find("flexjit_score_diagonals(int b, int h, int kv_idx") != std::string::npos, values > 0) << label;
      EXPECT_EQ(src.text.find("= stage_score_diagonals(") != std::string::npos, values > 0) << label;
      if (values == 0) continue;
      EXPECT_NE(src.text.find("[[maybe_unused]] constexpr int SCORE_DIAGONAL_VALUES = " + std::to_string(values) + ";"),
                std::string::npos) << label;
      // One value (reading neither b, q_len nor kv_len): from the call's diagonal table
      // (dkdv_diagonal_table), its slices in the buffers' place.
      const bool table = values == 1;
      EXPECT_EQ(dkdv_diagonal_table(spec), table) << label;
      EXPECT_NE(src.text.find(std::string("[[maybe_unused]] constexpr bool SCORE_DIAGONAL_TABLE = ") +
                              (table ? "true" : "false") + ";"),
                std::string::npos) << label;
      const bool seed = c.seed && k.d == 64;
      EXPECT_EQ(dkdv_diagonal_seed(spec), seed) << label;
      EXPECT_NE(src.text.find(std::string("[[maybe_unused]] constexpr bool SCORE_DIAGONAL_SEED = ") +
                              (seed ? "true" : "false") + ";"),
                std::string::npos) << label;
      // The ordered kernel at d64 spills beside these mods either way (ptxas, emit --ordered-dq
      // --gqa 3: 80-108 bytes reading per score, 48-80 with the values, 88-96 with the table's
      // slices beside them). The table form keeps the staging for calls whose table has errors:
      // beside both, the causal per-head table at d64 spills 8 bytes in the fast kernel, which ran
      // its backward 1.225x main's all the same (H100, notes/perf.md "(zzzj)").
      expect_staged_values_kernel_compiles(spec, label, k.ordered ? 112 : table ? 8 : 0);
    }
}

// The fast backward's dK/dV kernel (issue 13: dQ = dS K added in fp32 there, no dQ kernel) for
// every suite mod at d64 and d128 with the 64-query wgmma tiles it takes (two warpgroups splitting
// the dQ columns at d128 and the kv rows at d64; at d64 also one warpgroup taking both), GQA, f16,
// D != Dv, odd lengths and dense masks: NVRTC compiles it with no spills and no serialised wgmma, and the PTX
// holds the vector reductions and the M-major dSᵀ operand (wgmma with both transposes set).
TEST(CodegenCompileMatrix, FastBackwardDkdvCompilesForEverySuiteModAndHeadDim) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  std::set<std::string> seen;
  auto add = [&](const std::string& label, KernelSpec spec, const char* config) {
    spec.config = BlockConfig::parse(config);
    spec.dq_accumulate = true;
    if (seen.insert(spec.describe() + "|" + emit_mod_args_struct(spec.declarations)).second)
      jobs.push_back({label, spec, "sm_90a"});
  };
  for (const SuiteVariant& v : read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json")) {
    // Decode problems have no backward; learnable buffers keep the deterministic backward (their
    // gradients are summed by the dQ kernel).
    if (v.head_dim > 128 || v.name.rfind("decode", 0) == 0 || v.name.find("learnable") != std::string::npos) continue;
    add(v.name, attention_kernel(Family::bwd_dkdv, v), "m64n128w8s2g");
    if (v.head_dim == 64) add(v.name, attention_kernel(Family::bwd_dkdv, v), "m64n64w4s2g");
  }
  for (DType dtype : {DType::bf16, DType::f16})
    for (auto [d, dv] : {std::pair{64, 64}, {128, 128}, {128, 64}, {64, 128}}) {
      SuiteVariant v;
      v.name = std::string("fast_") + std::string(dtype_name(dtype)) + "_d" + std::to_string(d) + "_" + std::to_string(dv);
      v.q_len = 1000, v.kv_len = 777;
      v.head_dim = d, v.head_dim_v = dv, v.dtype = dtype;
      v.q_heads = 8, v.kv_heads = 2;
      v.mask_mod = "q_idx >= kv_idx";
      KernelSpec spec = attention_kernel(Family::bwd_dkdv, v);
      spec.is_divisible = false;
      add(v.name, spec, "m64n128w8s2g");
      spec.has_block_mask = spec.has_full_blocks = false;  // mask_mod on every tile
      add(v.name + "_dense", spec, d == 64 ? "m64n64w4s2g" : "m64n128w8s2g");
    }
  ASSERT_GE(jobs.size(), 20u);
  std::vector<std::string> errors;
  const std::vector<jit::CompiledKernel> compiled = compile_jobs(jobs, errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string what = jobs[i].label + " " + jobs[i].spec.describe();
    ASSERT_EQ(errors[i], "") << what;
    const jit::CompiledKernel& c = compiled[i];
    EXPECT_EQ(c.log.find("C75"), std::string::npos) << what << ": ptxas warned about the wgmma pipeline:\n" << c.log;
    ASSERT_EQ(c.resources.count("flexjit_attention_bwd_dkdv"), 1u) << what;
    // A mask_mod on every tile of a d128 GQA group spills 16 bytes here (the deterministic
    // kernel spills 104 there); everything else fits.
    if (jobs[i].label.find("_d128_128_dense") == std::string::npos) {
      EXPECT_EQ(c.resources.at("flexjit_attention_bwd_dkdv").spill_store_bytes, 0) << what << ":\n" << c.log;
    } else {
      EXPECT_LE(c.resources.at("flexjit_attention_bwd_dkdv").spill_store_bytes, 32) << what << ":\n" << c.log;
    }
    EXPECT_NE(c.ptx.find("red.global.add.v2.f32"), std::string::npos) << what;
    EXPECT_NE(c.ptx.find(", p, 1, 1, 1, 1;"), std::string::npos) << what << ": no wgmma with A and B transposed";
  }
}


// The fast backward's warp-specialised dK/dV kernel (its default on sm_90a: m64n128w8s2ws at d128,
// m64n128w8s3ws at d64) for every suite mod, and GQA, f16, D != Dv, odd lengths and dense masks:
// NVRTC compiles it with no serialised wgmma; the PTX holds the TMA loads, the bulk copies of the
// row statistics, the bulk dQ reductions, the mbarriers and the register hand-over. The consumers
// hold dK, dV, the scores in flight and dQ's share in 240 registers: most mods fit; score_mods with
// a derivative of their own (soft-capping) and buffer-indexed masks spill a little (measured at
// most 192 bytes at d128, 12 outside the walk at d64).
TEST(CodegenCompileMatrix, WarpSpecializedBackwardDkdvCompilesForEverySuiteModAndHeadDim) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  std::set<std::string> seen;
  auto add = [&](const std::string& label, KernelSpec spec) {
    spec.config = BlockConfig::parse(std::max(spec.head_dim, spec.head_dim_v) <= 64 ? "m64n128w8s3ws" : "m64n128w8s2ws");
    spec.dq_accumulate = true;
    if (seen.insert(spec.describe() + "|" + emit_mod_args_struct(spec.declarations)).second)
      jobs.push_back({label, spec, "sm_90a"});
  };
  for (const SuiteVariant& v : read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json")) {
    if (v.head_dim > 128 || v.name.rfind("decode", 0) == 0 || v.name.find("learnable") != std::string::npos) continue;
    add(v.name, attention_kernel(Family::bwd_dkdv, v));
  }
  for (DType dtype : {DType::bf16, DType::f16})
    for (auto [d, dv] : {std::pair{64, 64}, {128, 128}, {128, 64}, {64, 128}}) {
      SuiteVariant v;
      v.name = std::string("ws_") + std::string(dtype_name(dtype)) + "_d" + std::to_string(d) + "_" + std::to_string(dv);
      v.q_len = 1000, v.kv_len = 777;
      v.head_dim = d, v.head_dim_v = dv, v.dtype = dtype;
      v.q_heads = 8, v.kv_heads = 2;
      v.mask_mod = "q_idx >= kv_idx";
      KernelSpec spec = attention_kernel(Family::bwd_dkdv, v);
      spec.is_divisible = false;
      add(v.name, spec);
      spec.has_block_mask = spec.has_full_blocks = false;  // mask_mod on every tile
      add(v.name + "_dense", spec);
    }
  ASSERT_GE(jobs.size(), 20u);
  std::vector<std::string> errors;
  const std::vector<jit::CompiledKernel> compiled = compile_jobs(jobs, errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string what = jobs[i].label + " " + jobs[i].spec.describe();
    ASSERT_EQ(errors[i], "") << what;
    const jit::CompiledKernel& c = compiled[i];
    EXPECT_EQ(c.log.find("C75"), std::string::npos) << what << ": ptxas warned about the wgmma pipeline or setmaxnreg:\n"
                                                   << c.log;
    ASSERT_EQ(c.resources.count("flexjit_attention_bwd_dkdv"), 1u) << what;
    const int spills = c.resources.at("flexjit_attention_bwd_dkdv").spill_store_bytes;
    // At d64 the unmasked kernel (dQ by turns) keeps three words for the epilogue on the stack:
    // stored once before the walk, loaded once after it (SASS); the walk itself spills nothing.
    EXPECT_LE(spills, std::max(jobs[i].spec.head_dim, jobs[i].spec.head_dim_v) <= 64 ? 12 : 256) << what << ":\n"
                                                                                             << c.log;
    for (const char* instruction : {"cp.async.bulk.tensor.4d", "cp.async.bulk.shared::cluster.global.mbarrier",
                                    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32", "mbarrier.try_wait",
                                    "setmaxnreg.inc", "setmaxnreg.dec"})
      EXPECT_NE(c.ptx.find(instruction), std::string::npos) << what << ": no " << instruction;
    // Two consumer warpgroups hand each other their dSᵀ rows (bar.arrive, then bar.sync on the
    // other's barrier): at head dim 128 each computes 64 of dQ's columns, at 64 they take the whole
    // share by turns (DQ_ALTERNATE); one warpgroup needs no exchange.
    EXPECT_EQ(c.ptx.find("bar.arrive") != std::string::npos, jobs[i].spec.config.num_warps == 8) << what;
    const jit::Source source = render(jobs[i].spec);
    EXPECT_EQ(source.text.find("constexpr bool DQ_ALTERNATE = true;") != std::string::npos, jobs[i].spec.head_dim == 64)
        << what;
    EXPECT_EQ(c.ptx.find("wgmma.mma_async.sync.aligned.m64n32k16"), std::string::npos) << what << ": a 32-column dQ share";
    // At head dims 64/64 the warpgroup's K and V rows stay in registers as the A operands of Sᵀ and
    // dPᵀ: the kernel's wgmma shapes include m64n64k16 with A from registers and B K-major.
    const bool kv_fragments = jobs[i].spec.head_dim == 64 && jobs[i].spec.head_dim_v == 64;
    EXPECT_EQ(source.headers.at("flexjit_wgmma.cuh").find("struct WgmmaRS<64, false>") != std::string::npos, kv_fragments)
        << what;
    EXPECT_EQ(source.text.find("constexpr bool KV_IN_REGISTERS = true;") != std::string::npos, kv_fragments) << what;
  }
}

// The fast mode's warp-specialised dK/dV kernel has one form. Its lean form (LEAN_REGISTERS, taken
// where the full one spilled) recomputed the dQ staging offsets each tile instead of keeping 8 to 16
// of them live across the walk; since (zzzv) the staging stores take one live address
// (flexjit_dq_accum_column XORs with row % 4), so the kernels spill no more than their lean forms
// did (NVRTC 13.0, sm_90a): the suite's documents mask at d128 none (its full form spilled 32
// bytes), causal none; the deterministic mode's ordered kernels, whose lean forms spilled 60
// (documents), 72 (soft-capping) and 44 (ALiBi) bytes, at most that, and no call compiles twice.
TEST(CodegenCompileMatrix, BackwardDkdvHasOneFormThatSpillsNoMoreThanItsLeanFormDid) {
  const TempCacheDir cache;
  struct Case {
    const char* suite_name;
    bool ordered;
    int max_spill_bytes;
  };
  const std::vector<Case> cases = {{"document_causal_d128", false, 0},
                                   {"causal_d128", false, 0},
                                   {"document_causal_d128", true, 60},
                                   {"softcap_causal_d128", true, 72},
                                   {"alibi_causal_d128", true, 44}};
  const std::vector<SuiteVariant> suite = read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json");
  std::vector<Job> jobs;
  for (const Case& c : cases) {
    const auto it = std::find_if(suite.begin(), suite.end(), [&](const SuiteVariant& v) { return v.name == c.suite_name; });
    ASSERT_NE(it, suite.end()) << c.suite_name;
    KernelSpec spec = attention_kernel(Family::bwd_dkdv, *it);
    spec.config = BlockConfig::parse("m64n128w8s2ws");  // the Hopper default at d128
    spec.dq_accumulate = true;
    spec.dq_ordered = c.ordered;
    jobs.push_back({std::string(c.suite_name) + (c.ordered ? " ordered" : ""), spec, "sm_90a"});
  }
  EXPECT_FALSE(descriptor(Family::bwd_dkdv).has_lean_form);
  std::vector<CompiledSpec> chosen(jobs.size());
  std::vector<std::string> errors(jobs.size());
  parallel_for(jobs.size(), 0, [&](size_t i) {
    try {
      chosen[i] = compile_kernel(jobs[i].spec, jobs[i].arch);
    } catch (const Error& e) {
      errors[i] = e.what();
    }
  });
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string& what = jobs[i].label;
    ASSERT_EQ(errors[i], "") << what;
    EXPECT_FALSE(chosen[i].spec.lean_registers) << what;
    EXPECT_EQ(chosen[i].spec.describe().find("lean_registers"), std::string::npos) << what;
    EXPECT_EQ(render(jobs[i].spec).text.find("LEAN_REGISTERS"), std::string::npos) << what;
    EXPECT_LE(chosen[i].kernel.resources.at("flexjit_attention_bwd_dkdv").spill_store_bytes, cases[i].max_spill_bytes)
        << what << ":\n" << chosen[i].kernel.log;
  }
}

// The fast dK/dV kernels that read LSE pairs ahead of Sᵀ's wait (dkdv_stats_ahead_tiles: d64), and
// those that do not (d128): every suite mod over lengths the tiles divide compiles its one form
// without spills (soft-capping at d128: at most the 12 bytes it had before the read ahead).
TEST(CodegenCompileMatrix, LseReadAheadKeepsEachKernelsForm) {
  const TempCacheDir cache;
  std::vector<std::pair<std::string, KernelSpec>> specs;
  for (const SuiteVariant& v : read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json")) {
    if (v.head_dim > 128 || v.name.rfind("decode", 0) == 0 || v.name.find("learnable") != std::string::npos ||
        v.q_heads != v.kv_heads)
      continue;
    KernelSpec spec = attention_kernel(Family::bwd_dkdv, v);
    spec.config = BlockConfig::parse(v.head_dim == 64 ? "m64n128w8s3ws" : "m64n128w8s2ws");
    spec.dq_accumulate = true;
    spec.is_divisible = true;
    specs.emplace_back(v.name, spec);
  }
  ASSERT_GE(specs.size(), 8u);
  std::vector<CompiledSpec> chosen(specs.size());
  std::vector<std::string> errors(specs.size());
  parallel_for(specs.size(), 0, [&](size_t i) {
    try {
      chosen[i] = compile_kernel(specs[i].second, "sm_90a");
    } catch (const Error& e) {
      errors[i] = e.what();
    }
  });
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string& what = specs[i].first;
    ASSERT_EQ(errors[i], "") << what;
    EXPECT_EQ(template_context(specs[i].second)["stats_ahead_tiles"].get<int>(), specs[i].second.head_dim == 64 ? 2 : 0)
        << what;
    EXPECT_FALSE(chosen[i].spec.lean_registers) << what;  // one form since (zzzv)
    const int spills = chosen[i].kernel.resources.at("flexjit_attention_bwd_dkdv").spill_store_bytes;
    if (what.find("softcap") == std::string::npos) {
      EXPECT_EQ(spills, 0) << what << ":\n" << chosen[i].kernel.log;
    } else {
      // d128 (no read ahead): 12 bytes, as before it; d64: none.
      EXPECT_LE(spills, specs[i].second.head_dim == 64 ? 0 : 12) << what << ":\n" << chosen[i].kernel.log;
    }
    EXPECT_EQ(chosen[i].kernel.log.find("C75"), std::string::npos) << what << ": serialised wgmma";
  }
}

// The same kernel above head dim 128 (m64n64w8s2ws, its default there): each consumer warpgroup
// takes one column slice of dK and dV over the tile's 64 kv rows, and stages its slice of dQ for
// its writer warp's tensor reductions. Every suite mod at its head dims (the suite's d256 problems,
// and each d<=128 mod again at d256), f16, D != Dv, odd lengths and dense masks: NVRTC compiles it
// with no serialised wgmma and no spills (soft-capping: a few); the PTX holds the TMA loads, the
// dQ pieces' tensor reductions (and no reductions from registers), the register hand-over, with
// GQA 8:1 the pair's cluster, and without it the warpgroups' exchange of their score halves.
TEST(CodegenCompileMatrix, WarpSpecializedBackwardDkdvCompilesAboveHeadDim128) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  std::set<std::string> seen;
  auto add = [&](const std::string& label, KernelSpec spec) {
    spec.config = BlockConfig::parse("m64n64w8s2ws");
    spec.dq_accumulate = true;
    if (seen.insert(spec.describe() + "|" + emit_mod_args_struct(spec.declarations)).second)
      jobs.push_back({label, spec, "sm_90a"});
  };
  for (SuiteVariant v : read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json")) {
    if (v.name.rfind("decode", 0) == 0 || v.name.find("learnable") != std::string::npos) continue;
    v.head_dim = v.head_dim_v = 256;
    add(v.name, attention_kernel(Family::bwd_dkdv, v));
  }
  for (DType dtype : {DType::bf16, DType::f16})
    for (auto [d, dv] : {std::pair{256, 256}, {256, 128}, {128, 256}}) {
      SuiteVariant v;
      v.name = std::string("ws_") + std::string(dtype_name(dtype)) + "_d" + std::to_string(d) + "_" + std::to_string(dv);
      v.q_len = 1000, v.kv_len = 777;
      v.head_dim = d, v.head_dim_v = dv, v.dtype = dtype;
      v.q_heads = 8, v.kv_heads = 2;
      v.mask_mod = "q_idx >= kv_idx";
      KernelSpec spec = attention_kernel(Family::bwd_dkdv, v);
      spec.is_divisible = false;
      add(v.name, spec);
      spec.has_block_mask = spec.has_full_blocks = false;  // mask_mod on every tile
      add(v.name + "_dense", spec);
      spec.gqa_group = 8;  // (once 2-CTA clusters, removed in session (zx): the same kernel as 4:1 now)
      add(v.name + "_dense_gqa8", spec);
      spec.has_block_mask = spec.has_full_blocks = true;
      add(v.name + "_gqa8", spec);
    }
  ASSERT_GE(jobs.size(), 15u);
  std::vector<std::string> errors;
  const std::vector<jit::CompiledKernel> compiled = compile_jobs(jobs, errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string what = jobs[i].label + " " + jobs[i].spec.describe();
    ASSERT_EQ(errors[i], "") << what;
    const jit::CompiledKernel& c = compiled[i];
    EXPECT_EQ(c.log.find("C75"), std::string::npos) << what << ": ptxas warned about the wgmma pipeline or setmaxnreg:\n"
                                                   << c.log;
    ASSERT_EQ(c.resources.count("flexjit_attention_bwd_dkdv"), 1u) << what;
    // Soft-capping's own derivative (the scores' gradient factor, 32 more registers) spills about
    // 200 bytes here, as it does at d128; D != Dv with GQA 4:1 and tables spills 8 bytes of the
    // prologue's walk state (before the roles split, measured); everything else fits.
    const std::string& label = jobs[i].label;
    const bool dims_differ = jobs[i].spec.head_dim != jobs[i].spec.head_dim_v;
    EXPECT_LE(c.resources.at("flexjit_attention_bwd_dkdv").spill_store_bytes,
              label.rfind("softcap", 0) == 0 ? 256 : dims_differ ? 8 : 0)
        << what << ":\n" << c.log;
    for (const char* instruction : {"cp.async.bulk.tensor.4d", "mbarrier.try_wait", "setmaxnreg.inc", "setmaxnreg.dec",
                                    "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group"})
      EXPECT_NE(c.ptx.find(instruction), std::string::npos) << what << ": no " << instruction;
    EXPECT_EQ(c.ptx.find("red.global.add"), std::string::npos) << what << ": dQ reduced from registers";
    // No kernel is a cluster (GQA 8:1 took 2-CTA clusters until session (zx), which ran 0.61-0.69x
    // this kernel on an H200).
    for (const char* instruction : {".reqnctapercluster", "mapa.shared::cluster", "st.shared::cluster",
                                    "mbarrier.arrive.release.cluster.shared::cluster", "barrier.cluster.wait"})
      EXPECT_EQ(c.ptx.find(instruction), std::string::npos) << what << ": " << instruction;
    // The warpgroups split the tile's queries (score halves), GQA 8:1 too: each computes Sᵀ and
    // dPᵀ of 32 queries (m64n32k16), announces its staged halves (bar.arrive) and reads the other's
    // as the A operand of dV's and dK's other k-steps (A and B from shared memory, B N-major: the
    // instruction's last immediate 1, its transpose-A one 0).
    EXPECT_NE(c.ptx.find("bar.arrive"), std::string::npos) << what;
    EXPECT_NE(c.ptx.find(".m64n32k16.f32"), std::string::npos) << what;
    // The mbarriers: K and V's, the Q ring's full and empty of two stages, each warpgroup's dQ
    // buffer full and empty, the dO tile's full and empty: 11. Under a mask or a score_mod the
    // second dQ piece is staged in the Q stage, on a full barrier per warpgroup of its own (two
    // more). The unmasked, unmodified kernel keeps its buffer.
    const KernelSpec& spec = jobs[i].spec;
    const bool piece_in_stage =
        (spec.has_mask() || spec.has_block_mask || !spec.score_is_identity()) && spec.head_dim == 256;
    size_t inits = 0;
    for (size_t at = c.ptx.find("mbarrier.init.shared::cta.b64"); at != std::string::npos;
         at = c.ptx.find("mbarrier.init.shared::cta.b64", at + 1))
      ++inits;
    EXPECT_EQ(inits, 11u + (piece_in_stage ? 2u : 0u)) << what;
    EXPECT_EQ(c.ptx.find(".m64n64k16.f32") != std::string::npos, true) << what << ": dQ's pieces";
  }
}

// The same kernel on its own 192-column tiles (codegen::set_dkdv_half_slab_tiles: head dims 136-192
// beside a V of 72-192): slices of 96 columns run as wgmmas of 64 and 32 columns. Every suite mod
// at MLA's 192/128 at two and three stages, and 160/128, 192/192, 136/72 in f16 with odd lengths,
// dense masks and GQA 8:1, fast and ordered: NVRTC compiles it with no serialised wgmma (the 32-column
// dQ piece in rows of the 64-column one's accumulator had ptxas serialise every wgmma for
// registers, C7511) and the spills of 256-column tiles; the PTX holds the 32-column parts and the
// shared dQ buffer's barriers.
TEST(CodegenCompileMatrix, WarpSpecializedBackwardDkdvCompilesOn192ColumnTiles) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  std::set<std::string> seen;
  auto add = [&](const std::string& label, KernelSpec spec, int d, int dv, const char* config, bool ordered) {
    spec.config = BlockConfig::parse(config);
    spec.dq_accumulate = true;
    spec.dq_ordered = ordered;
    set_dkdv_half_slab_tiles(spec, d, dv, "sm_90a");
    ASSERT_EQ(spec.head_dim, 192) << label;
    if (seen.insert(spec.describe() + "|" + emit_mod_args_struct(spec.declarations)).second)
      jobs.push_back({label, spec, "sm_90a"});
  };
  for (SuiteVariant v : read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json")) {
    if (v.name.rfind("decode", 0) == 0 || v.name.find("learnable") != std::string::npos) continue;
    v.head_dim = 192, v.head_dim_v = 128;
    const KernelSpec spec = attention_kernel(Family::bwd_dkdv, v);
    add(v.name, spec, 192, 128, "m64n64w8s2ws", false);
    add(v.name + "_s3", spec, 192, 128, "m64n64w8s3ws", false);
    if (spec.has_mask() || !spec.score_is_identity()) add(v.name + "_ordered", spec, 192, 128, "m64n64w8s2ws", true);
  }
  for (auto [d, dv] : {std::pair{160, 128}, {192, 192}, {136, 72}}) {
    SuiteVariant v;
    v.name = "half_slab_f16_d" + std::to_string(d) + "_" + std::to_string(dv);
    v.q_len = 1000, v.kv_len = 777;
    v.head_dim = d, v.head_dim_v = dv, v.dtype = DType::f16;
    v.q_heads = 8, v.kv_heads = 1;
    v.mask_mod = "q_idx >= kv_idx";
    KernelSpec spec = attention_kernel(Family::bwd_dkdv, v);
    spec.is_divisible = false;
    spec.gqa_group = 8;
    add(v.name, spec, d, dv, "m64n64w8s3ws", false);
    add(v.name + "_ordered", spec, d, dv, "m64n64w8s2ws", true);
    spec.has_block_mask = spec.has_full_blocks = false;  // mask_mod on every tile
    add(v.name + "_dense", spec, d, dv, "m64n64w8s2ws", false);
  }
  ASSERT_GE(jobs.size(), 25u);
  std::vector<std::string> errors;
  const std::vector<jit::CompiledKernel> compiled = compile_jobs(jobs, errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string what = jobs[i].label + " " + jobs[i].spec.describe();
    ASSERT_EQ(errors[i], "") << what;
    const jit::CompiledKernel& c = compiled[i];
    EXPECT_EQ(c.log.find("C75"), std::string::npos) << what << ": ptxas warned about the wgmma pipeline or setmaxnreg:\n"
                                                   << c.log;
    ASSERT_EQ(c.resources.count("flexjit_attention_bwd_dkdv"), 1u) << what;
    // (As on 256 columns: the fast form with GQA spills 8 bytes of the prologue's walk state, the
    // ordered form's writers, in the producers' 24 registers, up to 92 bytes with GQA, off the
    // consumers' path.)
    const KernelSpec& spec = jobs[i].spec;
    EXPECT_LE(c.resources.at("flexjit_attention_bwd_dkdv").spill_store_bytes,
              spec.dq_ordered ? 128 : spec.gqa_group > 1 ? 8 : 0)
        << what << ":\n" << c.log;
    // dK's and dQ's 32-column parts (B N-major, half a slab in), and the 64-column ones.
    EXPECT_NE(c.ptx.find(".m64n32k16.f32"), std::string::npos) << what;
    EXPECT_NE(c.ptx.find(".m64n64k16.f32"), std::string::npos) << what;
    EXPECT_NE(c.ptx.find("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group"), std::string::npos)
        << what;
    // The slices' 11 mbarriers at two stages (as on 256 columns without the piece in the stage; a
    // third stage's full and empty two more; the ordered form's 8 name and 8 rank barriers), and
    // the shared dQ buffer's full and empty ones.
    size_t inits = 0;
    for (size_t at = c.ptx.find("mbarrier.init.shared::cta.b64"); at != std::string::npos;
         at = c.ptx.find("mbarrier.init.shared::cta.b64", at + 1))
      ++inits;
    EXPECT_EQ(inits, 13u + 2u * (spec.config.stages - 2) + (spec.dq_ordered ? 16u : 0u)) << what;
  }
}

// The deterministic mode's ordered form of that kernel (KernelSpec::dq_ordered): the writer warp
// counts its rank in each query tile's sum from the kv_* tables (with tables) or the grid (without),
// waits for the tile's counter to reach it and passes it on. For the kinds of walk there are
// (dense with and without mask_mod, tables with and without full blocks, GQA, f16, D != Dv, d64,
// d128 and the column slices of d256; two chains through tables alone): NVRTC compiles it with no
// serialised wgmma and the spills of the fast form, and the PTX holds the acquire, the releases,
// the proxy fences and the back-off.
TEST(CodegenCompileMatrix, OrderedBackwardDkdvCompilesForEveryKindOfWalk) {
  const TempCacheDir cache;
  std::vector<Job> jobs;
  for (DType dtype : {DType::bf16, DType::f16})
    for (auto [d, dv] : {std::pair{64, 64}, {128, 128}, {128, 64}, {256, 256}, {256, 128}}) {
      for (const char* mask : {"", "q_idx >= kv_idx", "doc[q_idx] == doc[kv_idx]"}) {
        if (dtype == DType::f16 && std::string(mask) != "q_idx >= kv_idx") continue;
        if (dv == 128 && d == 256 && dtype == DType::f16) continue;
        SuiteVariant v;
        v.name = std::string("ordered_") + std::string(dtype_name(dtype)) + "_d" + std::to_string(d) + "_" +
                 std::to_string(dv) + (mask[0] == 0 ? "_noop" : mask[0] == 'q' ? "_causal" : "_document");
        v.q_len = 1000, v.kv_len = 777;
        v.head_dim = d, v.head_dim_v = dv, v.dtype = dtype;
        v.q_heads = 8, v.kv_heads = 2;
        v.mask_mod = mask;
        if (std::string(mask).find("doc") != std::string::npos) v.declarations.buffers.push_back({"doc", DType::i32, {1000}});
        KernelSpec spec = attention_kernel(Family::bwd_dkdv, v);
        // Above head dim 128: a column slice per consumer warpgroup, a writer warp each.
        spec.config = BlockConfig::parse(d <= 64 && dv <= 64 ? "m64n128w8s3ws" : d > 128 ? "m64n64w8s2ws" : "m64n128w8s2ws");
        spec.dq_accumulate = spec.dq_ordered = true;
        spec.is_divisible = false;
        jobs.push_back({v.name, spec, "sm_90a"});
        if (mask[0] == 'q' && dtype == DType::bf16 && d == 128 && dv == 128) {
          KernelSpec wide = spec;  // kv blocks of 256 keys: two CTAs' tiles per listed block
          wide.sparse_kv_block = 256;
          jobs.push_back({v.name + "_kv_block_256", wide, "sm_90a"});
        }
        if (mask[0] == 'q') {
          spec.has_block_mask = spec.has_full_blocks = false;  // mask_mod on every tile, no tables
          jobs.push_back({v.name + "_dense", spec, "sm_90a"});
        }
        if (mask[0] == 'd' && dv == d) {
          // Two chains through the tables (codegen::ordered_long_chains: tables alone over 64 kv
          // tiles, whose sums descend), without GQA, whose kernels keep one.
          KernelSpec chains = spec;
          chains.gqa_group = 1;
          chains.mask_mod = Expr::no_mask();
          chains.dq_long_chains = true;
          jobs.push_back({v.name + "_tables_alone_long_chains", chains, "sm_90a"});
        }
      }
    }
  ASSERT_GE(jobs.size(), 10u);
  std::vector<std::string> errors;
  const std::vector<jit::CompiledKernel> compiled = compile_jobs(jobs, errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string what = jobs[i].label + " " + jobs[i].spec.describe();
    ASSERT_EQ(errors[i], "") << what;
    EXPECT_NE(what.find(" dq_ordered=1"), std::string::npos) << what;
    if (jobs[i].spec.dq_long_chains) {
      EXPECT_NE(what.find(" long_chains=1"), std::string::npos) << what;
      EXPECT_EQ(ordered_dq_chains(jobs[i].spec), 2) << what;
    }
    const jit::CompiledKernel& c = compiled[i];
    EXPECT_EQ(c.log.find("C75"), std::string::npos) << what << ": ptxas warned about the wgmma pipeline or setmaxnreg:\n"
                                                   << c.log;
    ASSERT_EQ(c.resources.count("flexjit_attention_bwd_dkdv"), 1u) << what;
    // The writer warps run in the producers' 24 registers (all the consumers' 240 leave): their
    // rank, chain and turn spill there (measured up to 132 bytes at d64, 236 at d128 with a
    // document mask, 64-88 at d256), off the consumers' path.
    const int spills = c.resources.at("flexjit_attention_bwd_dkdv").spill_store_bytes;
    EXPECT_LE(spills, std::max(jobs[i].spec.head_dim, jobs[i].spec.head_dim_v) <= 64 ? 160 : 256) << what << ":\n"
                                                                                              << c.log;
    std::printf("%-48s spills %d\n", jobs[i].label.c_str(), spills);
    const bool slices = jobs[i].spec.head_dim > 128;  // tensor reductions of 64-column pieces
    // A chain's first share is stored (no zeroed accumulator), the rest added.
    for (const char* instruction : {"ld.acquire.gpu.global.s32", "red.release.gpu.global.add.s32",
                                    "st.release.gpu.global.s32", "fence.proxy.async.global", "nanosleep",
                                    slices ? "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group"
                                           : "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32",
                                    slices ? "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group"
                                           : "cp.async.bulk.global.shared::cta.bulk_group ["})
      EXPECT_NE(c.ptx.find(instruction), std::string::npos) << what << ": no " << instruction;
    // With tables the rank is a warp's count over the query block's kv_* row.
    EXPECT_EQ(c.ptx.find("redux.sync.add") != std::string::npos, jobs[i].spec.has_block_mask) << what;
  }
}

// A causal kernel of `family` at head dims d / dv (1000 tokens, two heads) on `config`, for the
// tests below that count its wgmma shapes.
Job narrow_head_dim_job(Family family, int d, int dv, const char* config, bool dq_accumulate = false) {
  SuiteVariant v;
  v.name = std::to_string(d) + "/" + std::to_string(dv);
  v.q_heads = v.kv_heads = 2;
  v.q_len = v.kv_len = 1000;
  v.head_dim = d;
  v.head_dim_v = dv;
  v.mask_mod = "q_idx >= kv_idx";
  KernelSpec spec = attention_kernel(family, v);
  spec.config = BlockConfig::parse(config);
  spec.dq_accumulate = dq_accumulate;
  return {v.name, spec, "sm_90a"};
}

// The jobs' PTX, each compiled without error.
std::vector<std::string> compile_ptx(const std::vector<Job>& jobs) {
  std::vector<std::string> errors, ptx;
  const std::vector<jit::CompiledKernel> compiled = compile_jobs(jobs, errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(errors[i], "") << jobs[i].label;
    ptx.push_back(errors[i].empty() ? compiled[i].ptx : std::string());
  }
  return ptx;
}

// How many wgmmas of shape m64nNk16 the PTX issues.
size_t count_wgmma_shape(const std::string& ptx, int n) {
  const std::string shape = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16";
  size_t found = 0;
  for (size_t at = ptx.find(shape); at != std::string::npos; at = ptx.find(shape, at + 1)) ++found;
  return found;
}

// Head dims that are no multiple of 64 run on the next multiple's tiles, whose columns past the
// tensors' hold zeros: S = Q Kᵀ sums over the tensors' columns only (D_REDUCE, to the next 16), so
// a d96 forward issues 6 of a d128 tile's 8 k-steps per score GEMM, a d40 one 3 of 4. Counted on the
// score GEMM's own shape (64-key tiles: m64n64k16; O's is m64n128k16).
TEST(CodegenCompileMatrix, ScoresSumOverTheTensorsColumnsOnly) {
  std::vector<Job> jobs;
  for (int d : {128, 96, 64, 40}) jobs.push_back(narrow_head_dim_job(Family::fwd, d, 128, "m128n64w8s2ws"));
  const std::vector<std::string> ptx = compile_ptx(jobs);
  std::map<int, size_t> score_steps;
  for (size_t i = 0; i < jobs.size(); ++i) score_steps[jobs[i].spec.memory_head_dim()] = count_wgmma_shape(ptx[i], 64);
  ASSERT_GT(score_steps[128], 0u);
  EXPECT_EQ(score_steps[96] * 8, score_steps[128] * 6) << score_steps[96] << " / " << score_steps[128];
  EXPECT_EQ(score_steps[64] * 2, score_steps[128]);
  EXPECT_EQ(score_steps[40] * 4, score_steps[64] * 3) << score_steps[40] << " / " << score_steps[64];
}

// O += P V in the warp-specialised forward spans V's own columns rounded to 16 (DV_GEMM), not the
// tile's: Dv 80 and 96 on 128-column tiles issue m64n80k16 and m64n96k16 as often as Dv 128 issues
// m64n128k16, and no 128-wide wgmma at all (the scores' are m64n64k16 at 64-key tiles); Dv 40 on
// 64-column tiles issues m64n48k16.
TEST(CodegenCompileMatrix, OutputGemmSpansTheTensorsColumnsOnly) {
  std::vector<Job> jobs;
  for (int dv : {128, 80, 96, 40}) jobs.push_back(narrow_head_dim_job(Family::fwd, 128, dv, "m128n64w8s2ws"));
  const std::vector<std::string> ptx = compile_ptx(jobs);
  const auto count = [&](size_t i, int n) { return count_wgmma_shape(ptx[i], n); };
  const size_t whole = count(0, 128);
  ASSERT_GT(whole, 0u);
  EXPECT_EQ(count(1, 80), whole);
  EXPECT_EQ(count(1, 128), 0u);
  EXPECT_EQ(count(2, 96), whole);
  EXPECT_EQ(count(2, 128), 0u);
  EXPECT_EQ(count(3, 48), whole);
}

// dQ by turns at head dims 72 to 96 (128-column tiles): the turn's share, up to 96 columns, sits
// beside dK and dV. NVRTC compiles the fast mode's kernel for masks with tile bounds and without,
// score_mods with and without buffer reads, GQA, and two and three stages, with no spills and no
// serialised wgmma; the turns stay in their tile (no DQ_DEFERRED), with two dQ staging buffers at
// two stages and one at three (taken by turns: the kernel's stage_dq says why that is safe in the
// tile and not a tile late). Where the share does not fit beside dK and dV (dq_plan: documents at
// 88 and 96 spilled 96 bytes, 88/104 and 96/112 serialised every wgmma, 80/128 spilled 60 bytes)
// the columns split as before, and those kernels compile clean too. Per-sequence lengths without a
// mask or tables take three stages at 72 and 80 (hopper_default).
TEST(CodegenCompileMatrix, DqByTurnsAtHeadDims72To96CompilesWithoutSpills) {
  const TempCacheDir cache;
  struct Case {
    const char* suite_name;
    int d, dv;
    const char* config;
    int buffers;  // 0: no turns (the columns split)
    bool seq_lens = false;
  };
  const Case cases[] = {{"causal_d128", 72, 72, "m64n128w8s2ws", 2},
                        {"noop_d128", 80, 80, "m64n128w8s3ws", 1},
                        {"alibi_causal_d128", 80, 80, "m64n128w8s2ws", 2},
                        {"document_causal_d128", 80, 80, "m64n128w8s3ws", 1},
                        {"softcap_causal_d128", 96, 96, "m64n128w8s2ws", 2},
                        {"alibi_causal_d128", 96, 96, "m64n128w8s3ws", 1},
                        {"gqa_causal_d128", 96, 80, "m64n128w8s3ws", 1},
                        {"document_causal_d128", 88, 88, "m64n128w8s2ws", 0},
                        {"gqa_causal_d128", 96, 112, "m64n128w8s2ws", 0},
                        {"causal_d128", 88, 104, "m64n128w8s2ws", 0},
                        {"noop_d128", 80, 128, "m64n128w8s2ws", 0},
                        {"noop_d128", 72, 72, "m64n128w8s3ws", 1, true},
                        {"noop_d128", 80, 80, "m64n128w8s3ws", 1, true}};
  const auto suite = read_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json");
  std::vector<Job> jobs;
  for (const Case& c : cases) {
    const auto v =
        std::find_if(suite.begin(), suite.end(), [&](const SuiteVariant& x) { return x.name == c.suite_name; });
    ASSERT_NE(v, suite.end()) << c.suite_name;
    SuiteVariant w = *v;
    w.head_dim = c.d, w.head_dim_v = c.dv;
    w.q_len = 1000, w.kv_len = 777;
    KernelSpec spec = attention_kernel(Family::bwd_dkdv, w);
    spec.is_divisible = false;
    spec.config = BlockConfig::parse(c.config);
    spec.dq_accumulate = true;
    spec.seq_lens = c.seq_lens;
    const std::string label = std::string(c.suite_name) + " " + std::to_string(c.d) + "/" + std::to_string(c.dv) +
                              (c.seq_lens ? " per-sequence lengths" : "");
    jobs.push_back({label, spec, "sm_90a"});
  }
  std::vector<std::string> errors;
  const std::vector<jit::CompiledKernel> compiled = compile_jobs(jobs, errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string what = jobs[i].label + " " + jobs[i].spec.describe();
    ASSERT_EQ(errors[i], "") << what;
    const jit::CompiledKernel& c = compiled[i];
    EXPECT_EQ(c.log.find("C75"), std::string::npos) << what << ": ptxas serialised wgmma:\n" << c.log;
    ASSERT_EQ(c.resources.count("flexjit_attention_bwd_dkdv"), 1u) << what;
    EXPECT_EQ(c.resources.at("flexjit_attention_bwd_dkdv").spill_store_bytes, 0) << what << ":\n" << c.log;
    const std::string text = render(jobs[i].spec).text;
    const bool turns = cases[i].buffers > 0;
    EXPECT_EQ(text.find("constexpr bool DQ_ALTERNATE = true;") != std::string::npos, turns) << what;
    EXPECT_NE(text.find("constexpr bool DQ_DEFERRED = false;"), std::string::npos) << what;
    if (!turns) continue;
    EXPECT_NE(text.find("constexpr int DQ_BUFFERS = " + std::to_string(cases[i].buffers) + ";"), std::string::npos)
        << what;
    // The turn's share spans the tensors' columns rounded to 16: m64n<d>k16 over the tile's 128 kv
    // rows, 8 k-steps, beside dK's own m64n<d>k16.
    EXPECT_GE(count_wgmma_shape(c.ptx, (cases[i].d + 15) / 16 * 16), 8u) << what;
  }
}

// The warp-specialised dK/dV kernel with one column slice runs dV += Pᵀ dO and dK += dSᵀ Q over the
// tensors' own columns rounded to 16 (DV_GEMM, DK_GEMM): at 80/80 on 128-column tiles as many
// m64n80k16 for them as 128/128 issues m64n128k16, and no 128-wide wgmma (Sᵀ and dPᵀ are
// m64n64k16); at 112/40 (tiles 128/64) dK's are m64n112k16 and dV's m64n48k16, as many of each
// as dK's m64n128k16 at 128/64. dQ at 80/80 goes by turns (dq_plan): the turn's whole share,
// m64n80k16 over the tile's 128 kv rows (8 k-steps), where 128/128 has each warpgroup multiply a
// 64-column share (m64n64k16).
TEST(CodegenCompileMatrix, GradientGemmsSpanTheTensorsColumnsOnly) {
  std::vector<Job> jobs;
  for (const auto& [d, dv] : std::vector<std::pair<int, int>>{{128, 128}, {80, 80}, {128, 64}, {112, 40}})
    jobs.push_back(narrow_head_dim_job(Family::bwd_dkdv, d, dv, "m64n128w8s2ws", /*dq_accumulate=*/true));
  const std::vector<std::string> ptx = compile_ptx(jobs);
  const auto count = [&](size_t i, int n) { return count_wgmma_shape(ptx[i], n); };
  const size_t whole = count(0, 128);
  ASSERT_GT(whole, 0u);
  EXPECT_EQ(count(1, 80), whole + 8);
  EXPECT_EQ(count(1, 128), 0u);
  // m64n64k16 at 128/128 and not at 80/80: the dQ share's 8 k-steps, and Sᵀ's and dPᵀ's k-steps
  // past column 80 (3 each).
  EXPECT_EQ(count(0, 64) - count(1, 64), 8u + 2 * 3);
  // 128/64: dK's are the m64n128k16 (dV's m64n64k16, beside those of Sᵀ, dPᵀ and dQ); dK and dV
  // take as many k-steps each.
  const size_t dk_128 = count(2, 128);
  ASSERT_GT(dk_128, 0u);
  EXPECT_EQ(count(3, 112), dk_128);
  EXPECT_EQ(count(3, 128), 0u);
  EXPECT_EQ(count(3, 48), dk_128);
}

// The synchronous dK/dV kernel ('g') and the dQ kernel span dK's, dV's and dQ's columns rounded to
// 16 too: at 80/80 as many m64n80k16 as 128/128 issues m64n128k16, and none of the latter.
TEST(CodegenCompileMatrix, SynchronousGradientGemmsSpanTheTensorsColumnsOnly) {
  const std::vector<Job> jobs = {narrow_head_dim_job(Family::bwd_dkdv, 128, 128, "m64n128w8s2g"),
                                 narrow_head_dim_job(Family::bwd_dkdv, 80, 80, "m64n128w8s2g"),
                                 narrow_head_dim_job(Family::bwd_dq, 128, 128, "m64n64w4s2g"),
                                 narrow_head_dim_job(Family::bwd_dq, 80, 80, "m64n64w4s2g")};
  const std::vector<std::string> ptx = compile_ptx(jobs);
  const auto count = [&](size_t i, int n) { return count_wgmma_shape(ptx[i], n); };
  for (size_t whole_job : {0u, 2u}) {
    const size_t whole = count(whole_job, 128);
    ASSERT_GT(whole, 0u) << jobs[whole_job].label;
    EXPECT_EQ(count(whole_job + 1, 80), whole) << jobs[whole_job + 1].label;
    EXPECT_EQ(count(whole_job + 1, 128), 0u) << jobs[whole_job + 1].label;
  }
}

}  // namespace
}  // namespace flexjit::codegen
