// The tuner on a GPU: tuning the built-in kernel over warp counts (one candidate invalid), then a
// second process reusing the stored result without timing; select_config tuning a small
// attention problem once, a second process finding it in the cache, and two processes tuning the
// same uncached problem at the same time.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "../../templates/flexjit_params.cuh"
#include "codegen/tma_maps.hpp"
#include "codegen/launch.hpp"
#include "codegen/mod_args.hpp"
#include "common/half.hpp"
#include "flexjit/error.hpp"
#include "jit/compiler.hpp"
#include "support/gpu.hpp"
#include "tune/tuner.hpp"
#include "tune_test_util.hpp"

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;
using codegen::Family;
using codegen::KernelSpec;
using tune::Candidate;

// ---- the built-in kernel: y = a * x + y ----

constexpr long long kAxpyLength = 1 << 24;

KernelSpec axpy_spec(int warps) {
  KernelSpec s;
  s.family = Family::builtin_axpy;
  s.config = codegen::default_config(Family::builtin_axpy, 0, 0);
  s.config.num_warps = warps;
  return s;
}

struct AxpyBuffers {
  DeviceBuffer x = DeviceBuffer::from_host(std::vector<float>(kAxpyLength, 1.0f));
  DeviceBuffer y = DeviceBuffer::from_host(std::vector<float>(kAxpyLength, 2.0f));
};

void launch_axpy(const codegen::ReadyKernel& ready, AxpyBuffers& b, float a, Stream stream) {
  void* x = b.x.data();
  void* y = b.y.data();
  long long n = kAxpyLength;
  codegen::CallShape call;
  call.elements = n;
  codegen::ConfiguredKernel(ready, call).launch(stream, {&a, &x, &y, &n});
}

tune::AutotuneKey axpy_key() {
  tune::AutotuneKey k = sample_key("axpy");
  const DeviceInfo device = current_device();
  k.device_name = device.name;
  k.sm_count = device.sm_count;
  k.cc_major = device.cc_major;
  k.cc_minor = device.cc_minor;
  k.driver_version = device.driver_version;
  k.arch = device.default_arch();
  k.family = "builtin";
  return k;
}

struct GpuTuneTest : ::testing::Test {
  TempDir dir;
  ScopedEnv cache_dir{"FLEXJIT_CACHE_DIR", dir.str().c_str()};
  ScopedEnv cache_on{"FLEXJIT_CACHE", nullptr};
  void SetUp() override {
    tune::reset_autotune_cache_state_for_testing();
    tune::reset_selections_for_testing();
  }
  void TearDown() override {
    tune::reset_autotune_cache_state_for_testing();
    tune::reset_selections_for_testing();
  }
};

TEST_F(GpuTuneTest, TunesWarpCountsThenASecondProcessReusesTheResult) {
  FLEXJIT_REQUIRE_GPU();
  const std::string arch = current_device().default_arch();
  std::vector<Candidate> candidates;
  for (int warps : {1, 2, 4, 8, 33}) candidates.push_back({axpy_spec(warps), arch});
  AxpyBuffers buffers;
  std::atomic<int> launches{0};
  const tune::TuneOutcome outcome = tune::tune(
      candidates,
      [&](const Candidate&, const codegen::ReadyKernel& ready, Stream s) {
        ++launches;
        launch_axpy(ready, buffers, 0.0f, s);  // a = 0 keeps y unchanged however often it runs
      },
      nullptr);
  ASSERT_EQ(outcome.results.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(outcome.results[i].usable()) << outcome.results[i].error;
    EXPECT_GT(*outcome.results[i].ms, 0.0);
    EXPECT_LE(*outcome.results[i].min_ms, *outcome.results[i].ms);
  }
  EXPECT_FALSE(outcome.results[4].usable());
  EXPECT_EQ(outcome.results[4].error, "builtin kernel: warps must be between 1 and 32");
  ASSERT_TRUE(outcome.winner.has_value());
  for (const auto& r : outcome.results)
    if (r.usable()) {
      EXPECT_LE(*outcome.best().ms, *r.ms);
    }
  EXPECT_GE(launches.load(), 4 * 6);  // at least warm-up and estimate runs of each usable candidate
  EXPECT_EQ(buffers.y.to_host<float>(4), std::vector<float>(4, 2.0f));

  const tune::AutotuneEntry entry = tune::make_entry(outcome, axpy_spec(8).config, AutotuneMode::on);
  EXPECT_EQ(entry.default_ms, outcome.results[3].ms);
  ASSERT_TRUE(tune::AutotuneCache().store(axpy_key(), entry));

  std::string output;
  const int rc = run_self({"--gtest_also_run_disabled_tests", "--gtest_filter=GpuTuneChild.DISABLED_ReuseAxpy"},
                          {"FLEXJIT_CACHE_DIR=" + dir.str(), "FLEXJIT_TEST_EXPECT=" + outcome.best().config.str()},
                          &output);
  EXPECT_EQ(rc, 0) << output;
  EXPECT_NE(output.find("reused " + outcome.best().config.str() + " without timing, kernel from the disk cache"),
            std::string::npos)
      << output;
}

// Started by the test above: finds the stored winner, runs it (from the kernel cache, no NVRTC)
// and checks its result.
TEST(GpuTuneChild, DISABLED_ReuseAxpy) {
  FLEXJIT_REQUIRE_GPU();
  const std::optional<tune::AutotuneEntry> hit = tune::AutotuneCache().lookup(axpy_key());
  ASSERT_TRUE(hit.has_value());
  ASSERT_EQ(hit->winner.str(), std::getenv("FLEXJIT_TEST_EXPECT"));
  const auto ready = codegen::ready_kernel(axpy_spec(hit->winner.num_warps), current_device().default_arch());
  EXPECT_EQ(jit::nvrtc_compile_count(), 0);
  AxpyBuffers buffers;
  launch_axpy(*ready, buffers, 1.5f, nullptr);
  EXPECT_EQ(buffers.y.to_host<float>(kAxpyLength / 2), std::vector<float>(kAxpyLength / 2, 3.5f));
  std::printf("reused %s without timing, kernel from the disk cache\n", hit->winner.str().c_str());
}

// ---- attention through select_config ----

// One attention problem on the device, [B, H, S, D] contiguous, bf16, no mods, no block mask.
struct AttentionProblem {
  int B = 1, H = 4, S = 1024, D = 64;
  DeviceBuffer q, k, v, o, lse, dout, delta, dq;
  explicit AttentionProblem(int seq) : S(seq) {
    const size_t n = size_t(B) * H * S * D;
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal;
    auto random_bf16 = [&] {
      std::vector<uint16_t> bits(n);
      for (auto& b : bits) b = float_to_bf16_bits(normal(rng));
      return DeviceBuffer::from_host(bits);
    };
    q = random_bf16(), k = random_bf16(), v = random_bf16(), dout = random_bf16();
    o = random_bf16();
    lse = DeviceBuffer::from_host(std::vector<float>(size_t(B) * H * S, 8.0f));
    delta = DeviceBuffer::from_host(std::vector<float>(size_t(B) * H * S, 0.0f));
    dq = DeviceBuffer::allocate(n * 2);
  }
  long long stride_b() const { return static_cast<long long>(H) * S * D; }
  long long stride_h() const { return static_cast<long long>(S) * D; }
};

KernelSpec attention_base(Family family) {
  KernelSpec s;
  s.family = family;
  s.dtype = DType::bf16;
  s.head_dim = s.head_dim_v = 64;
  return s;
}

// What attention_spec() in src/attention does for a config: is_divisible follows the tiles.
tune::SpecForConfig spec_for(Family family, int seq) {
  return [family, seq](const BlockConfig& c) {
    KernelSpec s = attention_base(family);
    s.config = c;
    s.is_divisible = seq % c.block_m == 0 && seq % c.block_n == 0;
    return s;
  };
}

// Launches one fwd or bwd_dq kernel over the problem, as Attention::forward / backward do.
void launch_attention(const Candidate& c, const codegen::ReadyKernel& ready, AttentionProblem& p, Stream stream) {
  const std::vector<unsigned char> mod_args = codegen::pack_mod_args(
      c.spec.declarations, {}, codegen::names_read({&c.spec.score_mod, &c.spec.mask_mod}), "tune test");
  codegen::CallShape call;
  call.batch = p.B, call.heads = p.H, call.kv_heads = p.H, call.q_len = p.S, call.kv_len = p.S;
  const codegen::ConfiguredKernel configured(ready, call);
  const int tiles = configured.tiles();
  const float scale = 1.0f / std::sqrt(static_cast<float>(p.D));
  if (c.spec.family == Family::fwd) {
    FlexjitFwdParams f;
    std::memset(&f, 0, sizeof(f));
    f.q = p.q.data(), f.k = p.k.data(), f.v = p.v.data(), f.o = p.o.data();
    f.lse = static_cast<float*>(p.lse.data());
    f.q_stride_b = f.k_stride_b = f.v_stride_b = f.o_stride_b = p.stride_b();
    f.q_stride_h = f.k_stride_h = f.v_stride_h = f.o_stride_h = p.stride_h();
    f.q_stride_s = f.k_stride_s = f.v_stride_s = f.o_stride_s = p.D;
    f.lse_stride_b = static_cast<long long>(p.H) * p.S, f.lse_stride_h = p.S, f.lse_stride_s = 1;
    f.batch = p.B, f.num_q_heads = p.H, f.q_len = p.S, f.kv_len = p.S;
    f.num_q_tiles = tiles;
    f.tile_section = 1;
    f.scale = scale, f.scale_log2 = scale * FLEXJIT_LOG2E;
    f.score_scale = scale * static_cast<float>(c.spec.score_mod.score_prescale());
    if (c.spec.config.warp_specialized) {
      // The warp-specialised kernel also takes its TMA maps (its grid covers every work tile here,
      // so it needs no ticket counter).
      const auto view = [&](DeviceBuffer& buffer) {
        return TensorView::strided(buffer.data(), DType::bf16, {p.B, p.H, p.S, p.D}, {p.stride_b(), p.stride_h(), p.D, 1});
      };
      FlexjitFwdTma maps = codegen::encode_forward_tma(view(p.q), view(p.k), view(p.v), view(p.o), c.spec.config);
      configured.launch(stream, {&f, const_cast<unsigned char*>(mod_args.data()), &maps});
      return;
    }
    configured.launch(stream, {&f, const_cast<unsigned char*>(mod_args.data())});
    return;
  }
  FlexjitBwdParams b;
  std::memset(&b, 0, sizeof(b));
  b.q = p.q.data(), b.k = p.k.data(), b.v = p.v.data(), b.o = p.o.data(), b.dout = p.dout.data();
  b.lse = static_cast<const float*>(p.lse.data());
  b.delta = static_cast<float*>(p.delta.data());
  b.dq = p.dq.data();
  b.q_stride_b = b.k_stride_b = b.v_stride_b = b.o_stride_b = b.do_stride_b = b.dq_stride_b = p.stride_b();
  b.q_stride_h = b.k_stride_h = b.v_stride_h = b.o_stride_h = b.do_stride_h = b.dq_stride_h = p.stride_h();
  b.q_stride_s = b.k_stride_s = b.v_stride_s = b.o_stride_s = b.do_stride_s = b.dq_stride_s = p.D;
  b.lse_stride_b = static_cast<long long>(p.H) * p.S, b.lse_stride_h = p.S, b.lse_stride_s = 1;
  b.batch = p.B, b.num_q_heads = p.H, b.num_kv_heads = p.H, b.q_len = p.S, b.kv_len = p.S;
  b.num_q_tiles = tiles;
  b.scale = scale, b.scale_log2 = scale * FLEXJIT_LOG2E;
  b.score_scale = scale * static_cast<float>(c.spec.score_mod.score_prescale());
  configured.launch(stream, {&b, const_cast<unsigned char*>(mod_args.data())});
}

Family family_from_env() { return codegen::parse_family(std::getenv("FLEXJIT_TEST_FAMILY")); }

// select_config for the problem; `launches` counts timed launches.
tune::Selection select_attention(Family family, int seq, std::atomic<int>& launches) {
  const std::string arch = current_device().default_arch();
  const KernelSpec base = attention_base(family);
  AttentionProblem problem(seq);
  const tune::AutotuneKey key = tune::make_autotune_key(base, arch, current_device(), problem.B * problem.H, seq, seq);
  return tune::select_config(
      base, arch, key, spec_for(family, seq),
      [&](const Candidate& c, const codegen::ReadyKernel& ready, Stream s) {
        ++launches;
        launch_attention(c, ready, problem, s);
      },
      nullptr, autotune_mode());
}

// Started by the tests below: prints how select_config decided.
TEST(GpuTuneChild, DISABLED_SelectAttention) {
  FLEXJIT_REQUIRE_GPU();
  std::atomic<int> launches{0};
  const tune::Selection s = select_attention(family_from_env(), std::atoi(std::getenv("FLEXJIT_TEST_SEQ")), launches);
  const char* source = s.source == tune::ConfigSource::tuned ? "tuned" : s.source == tune::ConfigSource::cache ? "cache" : "defaults";
  std::printf("selected %s from %s after %d launches\n", s.config.str().c_str(), source, launches.load());
}

class SelectAttentionGpu : public GpuTuneTest, public ::testing::WithParamInterface<Family> {};

TEST_P(SelectAttentionGpu, TunesOnceAndASecondProcessReusesIt) {
  FLEXJIT_REQUIRE_GPU();
  ScopedEnv mode("FLEXJIT_AUTOTUNE", "on");
  const Family family = GetParam();
  const int seq = 1024;
  std::atomic<int> launches{0};
  const tune::Selection first = select_attention(family, seq, launches);
  ASSERT_EQ(first.source, tune::ConfigSource::tuned);
  ASSERT_TRUE(first.outcome.has_value());
  const std::string arch = current_device().default_arch();
  const auto small = tune::candidate_configs(attention_base(family), tune::SearchSpace::small, arch);
  ASSERT_EQ(first.outcome->results.size(), small.size());
  for (const auto& r : first.outcome->results) EXPECT_TRUE(r.usable()) << r.config.str() << ": " << r.error;
  EXPECT_GT(launches.load(), 0);
  for (const auto& r : first.outcome->results) {
    std::printf("  %-14s %8.4f ms  %3d regs  %s\n", r.config.str().c_str(), r.ms.value_or(-1), r.registers,
                r.error.substr(0, r.error.find('\n')).c_str());
  }

  // In this process: the memo answers.
  launches = 0;
  const tune::Selection again = select_attention(family, seq, launches);
  EXPECT_EQ(again.source, tune::ConfigSource::cache);
  EXPECT_EQ(again.config, first.config);
  EXPECT_EQ(launches.load(), 0);

  // In another process: the file answers, nothing is timed.
  std::string output;
  const std::vector<std::string> env = {"FLEXJIT_CACHE_DIR=" + dir.str(), "FLEXJIT_AUTOTUNE=on",
                                        "FLEXJIT_TEST_FAMILY=" + std::string(codegen::family_name(family)),
                                        "FLEXJIT_TEST_SEQ=" + std::to_string(seq)};
  EXPECT_EQ(run_self({"--gtest_also_run_disabled_tests", "--gtest_filter=GpuTuneChild.DISABLED_SelectAttention"}, env,
                     &output),
            0)
      << output;
  EXPECT_NE(output.find("selected " + first.config.str() + " from cache after 0 launches\n"), std::string::npos)
      << output;

  // 896 = 7 * 128 is in 1024's bucket and as divisible: the same key.
  launches = 0;
  EXPECT_EQ(select_attention(family, 896, launches).source, tune::ConfigSource::cache);
  EXPECT_EQ(launches.load(), 0);
}

TEST_P(SelectAttentionGpu, TwoProcessesTuningTheSameProblemAtOnce) {
  FLEXJIT_REQUIRE_GPU();
  ScopedEnv mode("FLEXJIT_AUTOTUNE", "on");  // this process reads the cache too, whatever the caller's setting
  const Family family = GetParam();
  const std::vector<std::string> env = {"FLEXJIT_CACHE_DIR=" + dir.str(), "FLEXJIT_AUTOTUNE=on",
                                        "FLEXJIT_TEST_FAMILY=" + std::string(codegen::family_name(family)),
                                        "FLEXJIT_TEST_SEQ=2048"};
  std::string outputs[2];
  int codes[2] = {-1, -1};
  std::vector<std::thread> children;
  for (int i = 0; i < 2; ++i)
    children.emplace_back([&, i] {
      codes[i] = run_self({"--gtest_also_run_disabled_tests", "--gtest_filter=GpuTuneChild.DISABLED_SelectAttention"},
                          env, &outputs[i]);
    });
  for (auto& t : children) t.join();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(codes[i], 0) << outputs[i];
    EXPECT_NE(outputs[i].find("selected "), std::string::npos) << outputs[i];
    EXPECT_EQ(outputs[i].find("flexjit: warning"), std::string::npos) << outputs[i];
  }
  // One valid file with the problem in it; this process finds it without timing.
  const AutotuneListing listing = list_autotune_cache(dir.str());
  EXPECT_EQ(listing.damaged, "");
  EXPECT_EQ(listing.entries.size(), 1u);
  std::atomic<int> launches{0};
  EXPECT_EQ(select_attention(family, 2048, launches).source, tune::ConfigSource::cache);
  EXPECT_EQ(launches.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Families, SelectAttentionGpu, ::testing::Values(Family::fwd, Family::bwd_dq),
                         [](const ::testing::TestParamInfo<Family>& param) {
                           return std::string(codegen::family_name(param.param));
                         });

}  // namespace
}  // namespace flexjit::test
