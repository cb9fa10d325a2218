// Symbols read from a cubin's ELF symbol table (src/jit/cubin_symbols): how flexjit knows whether
// a module has the error word without a failing cuModuleGetGlobal (issue 17 item 12).
#include "jit/cubin_symbols.hpp"

#include <gtest/gtest.h>

#include <string>

#include "jit/compiler.hpp"
#include "test_util.hpp"

namespace flexjit::test {
namespace {

jit::Source with_error_word(bool used) {
  jit::Source s = saxpy_source(used ? "uses the word" : "declares it unused");
  s.text += "__device__ unsigned int flexjit_error_flags;\n"
            "extern \"C\" __global__ void flag(int bit) {\n";
  s.text += used ? "  if (bit) atomicOr(&flexjit_error_flags, 1u << bit);\n" : "";
  s.text += "}\n";
  s.kernel_names.push_back("flag");
  return s;
}

TEST(CubinSymbols, FindsTheErrorWordOnlyWhereTheModuleDefinesIt) {
  const jit::CompiledKernel used = jit::compile(with_error_word(true), jit::CompileOptions{});
  EXPECT_TRUE(jit::cubin_defines_symbol(used.cubin, "flexjit_error_flags"));
  EXPECT_TRUE(jit::cubin_defines_symbol(used.cubin, "saxpy"));  // kernels are symbols too
  EXPECT_FALSE(jit::cubin_defines_symbol(used.cubin, "flexjit_error_flag"));  // no prefix matches
  EXPECT_FALSE(jit::cubin_defines_symbol(used.cubin, "no_such_symbol"));
  const jit::CompiledKernel plain = jit::compile(saxpy_source("no error word"), jit::CompileOptions{});
  EXPECT_FALSE(jit::cubin_defines_symbol(plain.cubin, "flexjit_error_flags"));
}

TEST(CubinSymbols, MalformedImagesAreNoMatchNotACrash) {
  const jit::CompiledKernel used = jit::compile(with_error_word(true), jit::CompileOptions{});
  EXPECT_FALSE(jit::cubin_defines_symbol("", "flexjit_error_flags"));
  EXPECT_FALSE(jit::cubin_defines_symbol("\x7f" "ELF", "flexjit_error_flags"));
  EXPECT_FALSE(jit::cubin_defines_symbol(std::string(4096, '\xff'), "flexjit_error_flags"));
  // Every truncation of a real image, and section offsets pointing past the end.
  for (size_t size = 0; size < used.cubin.size(); size += 61)
    (void)jit::cubin_defines_symbol(used.cubin.substr(0, size), "flexjit_error_flags");
  std::string bad = used.cubin;
  for (int i = 0; i < 8; ++i) bad[0x28 + i] = '\x7f';  // e_shoff far outside
  EXPECT_FALSE(jit::cubin_defines_symbol(bad, "flexjit_error_flags"));
}

}  // namespace
}  // namespace flexjit::test
