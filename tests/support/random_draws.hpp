// Draws for the tests that pick their problems at random from one seed.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "support/attention_harness.hpp"

namespace flexjit::test {

// How many problems a random-problem test draws: FLEXJIT_RANDOM_PROBLEMS, or the test's default.
inline int random_problem_count(int by_default) {
  const char* n = std::getenv("FLEXJIT_RANDOM_PROBLEMS");
  return n != nullptr && *n != '\0' ? std::max(1, std::atoi(n)) : by_default;
}

inline int uniform(std::mt19937_64& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
inline bool chance(std::mt19937_64& rng, double p) { return std::bernoulli_distribution(p)(rng); }
template <typename T>
T pick(std::mt19937_64& rng, const std::vector<T>& from) {
  return from[static_cast<size_t>(uniform(rng, 0, static_cast<int>(from.size()) - 1))];
}

// A float buffer of the given shape, its values drawn uniformly from [lo, hi].
inline TestBuffer f32_buffer(const std::string& name, const std::vector<int64_t>& shape, std::mt19937_64& rng,
                             double lo, double hi) {
  TestBuffer b;
  b.decl = BufferDecl{name, DType::f32, shape};
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  std::uniform_real_distribution<double> value(lo, hi);
  for (int64_t i = 0; i < n; ++i) b.values.push_back(value(rng));
  return b;
}

// A float buffer of n values drawn uniformly from [lo, hi].
inline TestBuffer f32_buffer(const std::string& name, int n, std::mt19937_64& rng, double lo, double hi) {
  return f32_buffer(name, std::vector<int64_t>{n}, rng, lo, hi);
}

}  // namespace flexjit::test
