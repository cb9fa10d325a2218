// The backward mode asked for by FLEXJIT_DETERMINISTIC (issue 13): unset, empty or 0 is the
// fast mode (the default), 1 the deterministic one, anything else a UsageError that names the variable and the
// values it takes. CPU only.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "flexjit/attention.hpp"
#include "flexjit/error.hpp"
#include "support/scoped.hpp"

namespace flexjit {
namespace {

using test::ScopedEnv;

TEST(BackwardMode, FromTheEnvironment) {
  const ScopedEnv restore("FLEXJIT_DETERMINISTIC", nullptr);  // unset
  EXPECT_EQ(backward_mode_from_env(), BackwardMode::fast);
  ::setenv("FLEXJIT_DETERMINISTIC", "", 1);
  EXPECT_EQ(backward_mode_from_env(), BackwardMode::fast);
  ::setenv("FLEXJIT_DETERMINISTIC", "0", 1);
  EXPECT_EQ(backward_mode_from_env(), BackwardMode::fast);
  ::setenv("FLEXJIT_DETERMINISTIC", "1", 1);
  EXPECT_EQ(backward_mode_from_env(), BackwardMode::deterministic);
  for (const char* bad : {"yes", "2", "true", " 1"}) {
    ::setenv("FLEXJIT_DETERMINISTIC", bad, 1);
    try {
      backward_mode_from_env();
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("FLEXJIT_DETERMINISTIC='") + bad +
                                           "' is not 0 or 1 (1: the deterministic backward; unset or 0: the fast one)");
    }
  }
}

// How the deterministic mode sums dQ (FLEXJIT_DETERMINISTIC_DQ): unset, empty or "auto" the faster
// way per call, "ordered" in the dK/dV kernel in a fixed order, "kernel" with the separate dQ
// kernel, anything else a UsageError.
TEST(BackwardMode, DeterministicDqFromTheEnvironment) {
  const ScopedEnv restore("FLEXJIT_DETERMINISTIC_DQ", nullptr);  // unset
  EXPECT_EQ(deterministic_dq_from_env(), DeterministicDq::automatic);
  ::setenv("FLEXJIT_DETERMINISTIC_DQ", "", 1);
  EXPECT_EQ(deterministic_dq_from_env(), DeterministicDq::automatic);
  ::setenv("FLEXJIT_DETERMINISTIC_DQ", "auto", 1);
  EXPECT_EQ(deterministic_dq_from_env(), DeterministicDq::automatic);
  ::setenv("FLEXJIT_DETERMINISTIC_DQ", "ordered", 1);
  EXPECT_EQ(deterministic_dq_from_env(), DeterministicDq::ordered);
  ::setenv("FLEXJIT_DETERMINISTIC_DQ", "kernel", 1);
  EXPECT_EQ(deterministic_dq_from_env(), DeterministicDq::kernel);
  for (const char* bad : {"1", "Kernel", "ordered ", "atomic", "automatic"}) {
    ::setenv("FLEXJIT_DETERMINISTIC_DQ", bad, 1);
    try {
      deterministic_dq_from_env();
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("FLEXJIT_DETERMINISTIC_DQ='") + bad +
                    "' is not auto, ordered or kernel (auto, the default: each call the faster way; ordered: the dK/dV "
                    "kernel sums dQ in a fixed order wherever it runs; kernel: a separate dQ kernel)");
    }
  }
}

}  // namespace
}  // namespace flexjit
