#pragma once
// Shared by the jit tests: environment and temporary-directory scopes, and small kernel sources.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "jit/source.hpp"
#include "support/scoped.hpp"

namespace flexjit::test {

// y = a*x + y; `salt` goes into a comment, so different salts give different cache keys.
inline jit::Source saxpy_source(const std::string& salt = "") {
  jit::Source s;
  s.name = "saxpy.cu";
  s.text = "// " + salt +
           "\n"
           "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) y[i] = a * x[i] + y[i];\n"
           "}\n";
  s.kernel_names = {"saxpy"};
  return s;
}

}  // namespace flexjit::test
