// The tuner without a GPU: compile-only tuning records failures and keeps the rest, a failed
// load or launch is unusable, and select_config's policy: FLEXJIT_AUTOTUNE=off uses the default
// without compiling or timing, a cached result is used without timing, a result tuned with "on"
// or a winner no longer valid is tuned again.
#include "tune/tuner.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "flexjit/error.hpp"
#include "jit/compiler.hpp"
#include "jit/driver.hpp"
#include "tune_test_util.hpp"

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;
using codegen::Family;
using codegen::KernelSpec;
using tune::Candidate;

KernelSpec dq_spec(const std::string& config) {
  KernelSpec s;
  s.family = Family::bwd_dq;
  s.dtype = DType::bf16;
  s.head_dim = s.head_dim_v = 64;
  s.config = BlockConfig::parse(config);
  return s;
}

struct TunerTest : ::testing::Test {
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

TEST_F(TunerTest, CompileOnlyRecordsFailuresAndKeepsTheRest) {
  const std::vector<Candidate> candidates = {
      {dq_spec("m64n64w4s2"), "sm_80"},
      {dq_spec("m64n64w3s2"), "sm_80"},   // rejected by validation
      {dq_spec("m64n128w4s3"), "sm_86"},  // 112 KiB of shared memory
  };
  const long before = jit::nvrtc_compile_count();
  const tune::TuneOutcome first = tune::compile_candidates(candidates);
  EXPECT_EQ(jit::nvrtc_compile_count(), before + 1);
  ASSERT_EQ(first.results.size(), 3u);
  EXPECT_FALSE(first.winner.has_value());
  const tune::CandidateResult& ok = first.results[0];
  EXPECT_EQ(ok.config.str(), "m64n64w4s2");
  EXPECT_TRUE(ok.compiled);
  EXPECT_EQ(ok.error, "");
  EXPECT_FALSE(ok.from_disk_cache);
  EXPECT_GT(ok.registers, 0);
  EXPECT_GT(ok.compile_ms, 0);
  EXPECT_FALSE(ok.usable());  // compiled, not timed
  EXPECT_FALSE(first.results[1].compiled);
  EXPECT_EQ(first.results[1].error, "config m64n64w3s2: warps must be 1, 2, 4 or 8");
  EXPECT_FALSE(first.results[2].compiled);
  EXPECT_EQ(first.results[2].error,
            "bwd_dq config m64n128w4s3 needs 112 KiB of shared memory; sm_86 allows 99 KiB per block — use fewer "
            "stages or smaller tiles");
  // The kernel cache is warm now.
  const tune::TuneOutcome second = tune::compile_candidates(candidates);
  EXPECT_EQ(jit::nvrtc_compile_count(), before + 1);
  EXPECT_TRUE(second.results[0].from_disk_cache);
}

TEST_F(TunerTest, NoCandidates) {
  try {
    tune::tune({}, [](const Candidate&, const codegen::ReadyKernel&, Stream) {}, nullptr);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "autotune: no candidates to tune");
  }
}

// Without a GPU the compiled candidate fails to load: every candidate is unusable and the error
// lists each one's reason.
TEST_F(TunerTest, EveryCandidateUnusableListsEachError) {
  std::string why;
  if (jit::driver_available(&why)) GTEST_SKIP() << "a CUDA driver is present; this test needs its absence";
  const std::vector<Candidate> candidates = {{dq_spec("m64n64w4s2"), "sm_80"}, {dq_spec("m64n64w3s2"), "sm_80"}};
  int launches = 0;
  try {
    tune::tune(candidates, [&](const Candidate&, const codegen::ReadyKernel&, Stream) { ++launches; }, nullptr);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string text = e.what();
    const std::string head = "autotune bwd_dq: none of the 2 candidates is usable:\n  m64n64w4s2: no CUDA driver found (";
    EXPECT_EQ(text.substr(0, head.size()), head) << text;
    const std::string tail = "\n  m64n64w3s2: config m64n64w3s2: warps must be 1, 2, 4 or 8";
    ASSERT_GE(text.size(), tail.size());
    EXPECT_EQ(text.substr(text.size() - tail.size()), tail) << text;
  }
  EXPECT_EQ(launches, 0);
}

TEST(MakeEntry, KeepsEveryCandidateAndTheDefaultsTime) {
  tune::TuneOutcome outcome;
  outcome.results.resize(3);
  outcome.results[0].config = BlockConfig::parse("m128n32w4s2");
  outcome.results[0].ms = 0.5;
  outcome.results[1].config = BlockConfig::parse("m128n64w4s2");
  outcome.results[1].ms = 0.25;
  outcome.results[2].config = BlockConfig::parse("m128n128w8s2");
  outcome.results[2].error = "NVRTC failed to compile attention_fwd.cu: boom\n  log...";
  outcome.winner = 1;
  const tune::AutotuneEntry e = tune::make_entry(outcome, BlockConfig::parse("m128n32w4s2"), AutotuneMode::max);
  EXPECT_EQ(e.winner.str(), "m128n64w4s2");
  EXPECT_EQ(e.winner_ms, 0.25);
  EXPECT_EQ(e.default_config.str(), "m128n32w4s2");
  EXPECT_EQ(e.default_ms, 0.5);
  EXPECT_EQ(e.mode, AutotuneMode::max);
  ASSERT_EQ(e.candidates.size(), 3u);
  EXPECT_EQ(e.candidates[2].error, "NVRTC failed to compile attention_fwd.cu: boom");
  EXPECT_FALSE(e.candidates[2].ms.has_value());
  // A default that was not among the candidates has no time.
  EXPECT_FALSE(tune::make_entry(outcome, BlockConfig::parse("m64n64w4s2"), AutotuneMode::on).default_ms.has_value());
}

// ---- select_config ----

struct SelectTest : TunerTest {
  KernelSpec base = [] {
    KernelSpec s;
    s.family = Family::fwd;
    s.head_dim = s.head_dim_v = 128;
    return s;
  }();
  tune::AutotuneKey key = sample_key("select");
  std::atomic<int> launches{0};
  tune::Launcher launcher() {
    return [this](const Candidate&, const codegen::ReadyKernel&, Stream) { ++launches; };
  }
  tune::SpecForConfig spec_for() const {
    return [this](const BlockConfig& c) {
      KernelSpec s = base;
      s.config = c;
      return s;
    };
  }
  tune::Selection select(AutotuneMode mode, const std::string& arch = "sm_80") {
    return tune::select_config(base, arch, key, spec_for(), launcher(), nullptr, mode);
  }
};

TEST_F(SelectTest, OffUsesTheDefaultWithoutCompilingOrTiming) {
  ASSERT_TRUE(tune::AutotuneCache().store(key, sample_entry()));  // ignored when off
  const long before = jit::nvrtc_compile_count();
  const tune::Selection s = select(AutotuneMode::off, "sm_86");
  EXPECT_EQ(s.config.str(), "m128n32w4s2");
  EXPECT_EQ(s.source, tune::ConfigSource::defaults);
  EXPECT_FALSE(s.outcome.has_value());
  EXPECT_EQ(launches, 0);
  EXPECT_EQ(jit::nvrtc_compile_count(), before);
  // The default follows the device class: d256 dK/dV on sm_86.
  base.family = Family::bwd_dkdv;
  base.head_dim = base.head_dim_v = 256;
  EXPECT_EQ(select(AutotuneMode::off, "sm_86").config.str(), "m16n64w4s2");
}

TEST_F(SelectTest, OffTouchesNoFile) {
  ScopedEnv off("FLEXJIT_AUTOTUNE", "off");
  EXPECT_EQ(select(autotune_mode()).source, tune::ConfigSource::defaults);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST_F(SelectTest, CachedResultIsUsedWithoutTiming) {
  ASSERT_TRUE(tune::AutotuneCache().store(key, sample_entry()));
  tune::reset_autotune_cache_state_for_testing();  // as in a new process
  const long before = jit::nvrtc_compile_count();
  const tune::Selection s = select(AutotuneMode::on);
  EXPECT_EQ(s.config.str(), "m128n64w4s2");
  EXPECT_EQ(s.source, tune::ConfigSource::cache);
  EXPECT_EQ(launches, 0);
  EXPECT_EQ(jit::nvrtc_compile_count(), before);
  // A result tuned with "max" serves "max" too.
  tune::AutotuneEntry max_entry = sample_entry();
  max_entry.mode = AutotuneMode::max;
  ASSERT_TRUE(tune::AutotuneCache().store(key, max_entry));
  EXPECT_EQ(select(AutotuneMode::max).source, tune::ConfigSource::cache);
  EXPECT_EQ(launches, 0);
}

TEST_F(SelectTest, AProcessKeepsItsChoice) {
  ASSERT_TRUE(tune::AutotuneCache().store(key, sample_entry()));
  EXPECT_EQ(select(AutotuneMode::on).config.str(), "m128n64w4s2");
  // Another process stores a different winner: this one keeps the kernel it started with ...
  tune::AutotuneEntry other = sample_entry();
  other.winner = BlockConfig::parse("m64n64w4s2");
  ASSERT_TRUE(tune::AutotuneCache().store(key, other));
  EXPECT_EQ(select(AutotuneMode::on).config.str(), "m128n64w4s2");
  // ... and a new process takes the new one.
  tune::reset_selections_for_testing();
  EXPECT_EQ(select(AutotuneMode::on).config.str(), "m64n64w4s2");
  EXPECT_EQ(launches, 0);
}

// The tuning path is recognised by its error: sm_81 passes pruning (it is not a known 99 KiB or
// 163 KiB arch) but NVRTC rejects it at once, so every candidate fails without compiling.
std::string tuning_error(const std::function<void()>& select) {
  try {
    select();
  } catch (const UsageError& e) {
    const std::string text = e.what();
    return text.substr(0, text.find('\n'));
  }
  return "(no error)";
}

TEST_F(SelectTest, AResultTunedWithOnIsTunedAgainUnderMax) {
  ASSERT_TRUE(tune::AutotuneCache().store(key, sample_entry()));  // mode on
  EXPECT_EQ(select(AutotuneMode::on, "sm_81").source, tune::ConfigSource::cache);
  const size_t full = tune::candidate_configs(base, tune::SearchSpace::full, "sm_81").size();
  EXPECT_EQ(tuning_error([&] { select(AutotuneMode::max, "sm_81"); }),
            "autotune fwd: none of the " + std::to_string(full) + " candidates is usable:");
  EXPECT_EQ(launches, 0);
}

TEST_F(SelectTest, ACachedWinnerThatNoLongerFitsIsTunedAgain) {
  tune::AutotuneEntry e = sample_entry();
  e.winner = BlockConfig::parse("m128n128w8s4");  // 288 KiB of shared memory
  ASSERT_TRUE(tune::AutotuneCache().store(key, e));
  const size_t small = tune::candidate_configs(base, tune::SearchSpace::small, "sm_81").size();
  EXPECT_EQ(tuning_error([&] { select(AutotuneMode::on, "sm_81"); }),
            "autotune fwd: none of the " + std::to_string(small) + " candidates is usable:");
}

TEST_F(SelectTest, NothingFits) {
  base.dtype = DType::f32;
  try {
    select(AutotuneMode::on);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "autotune fwd: no block config fits sm_80 (the default: attention kernels take bf16 or f16 inputs "
                 "(got f32))");
  }
}

TEST_F(SelectTest, TheCandidatesErrorsAreListed) {
  try {
    select(AutotuneMode::on, "sm_81");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string text = e.what();
    const std::string line = "\n  m128n32w4s2: unknown GPU architecture 'sm_81'; with NVRTC ";
    EXPECT_NE(text.find(line), std::string::npos) << text;
  }
  // Nothing was stored.
  EXPECT_FALSE(tune::AutotuneCache().lookup(key).has_value());
}

}  // namespace
}  // namespace flexjit::test
