#pragma once
// Seeds for the fuzz targets (tests/fuzz/), taken from the unit tests: when FLEXJIT_FUZZ_SEED_DIR
// is set (the fuzz tests set it while they run the unit tests once before fuzzing), every input a
// test crafts is also written there, so each fuzzer starts from what the tests already cover.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

namespace flexjit::test {

inline void save_fuzz_seed(const std::string& bytes) {
  const char* dir = std::getenv("FLEXJIT_FUZZ_SEED_DIR");
  if (dir == nullptr || *dir == '\0') return;
  char name[32];
  std::snprintf(name, sizeof name, "/seed-%016zx", std::hash<std::string>{}(bytes));
  if (std::FILE* f = std::fopen((std::string(dir) + name).c_str(), "wb")) {
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
}

}  // namespace flexjit::test
