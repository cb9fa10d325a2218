// The backward mode asked for by FLEXJIT_DETERMINISTIC (issue 13): unset, empty or 0 is the
// fast mode (the default), 1 the deterministic one, anything else a UsageError that names the variable and the
// values it takes. CPU only.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "flexjit/attention.hpp"
#include "flexjit/error.hpp"

namespace flexjit {
namespace {

struct RestoreEnv {
  std::string saved;
  bool had = false;
  RestoreEnv() {
    if (const char* v = std::getenv("FLEXJIT_DETERMINISTIC")) had = true, saved = v;
  }
  ~RestoreEnv() {
    if (had)
      ::setenv("FLEXJIT_DETERMINISTIC", saved.c_str(), 1);
    else
      ::unsetenv("FLEXJIT_DETERMINISTIC");
  }
};

TEST(BackwardMode, FromTheEnvironment) {
  const RestoreEnv restore;
  ::unsetenv("FLEXJIT_DETERMINISTIC");
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

}  // namespace
}  // namespace flexjit
