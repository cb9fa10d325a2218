// The emitted CUDA compiles with NVRTC (no GPU needed) for the portable and the Hopper targets:
// every suite mod and its gradient, every built-in, every buffer dtype; and FlexjitModArgs as NVRTC
// lays it out matches mod_args_layout byte for byte.
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <fstream>
#include <sstream>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct CompileResult {
  bool ok = false;
  std::string log;
};

CompileResult nvrtc_compile(const std::string& source, const std::string& arch) {
  static const std::string header = read_file(FLEXJIT_SOURCE_DIR "/templates/flexjit_expr.cuh");
  const char* headers[] = {header.c_str()};
  const char* header_names[] = {"flexjit_expr.cuh"};
  nvrtcProgram program = nullptr;
  EXPECT_EQ(nvrtcCreateProgram(&program, source.c_str(), "expr_test.cu", 1, headers, header_names), NVRTC_SUCCESS);
  const std::string arch_option = "-arch=" + arch;
  const char* options[] = {arch_option.c_str(), "-std=c++17", "-default-device"};
  CompileResult result;
  result.ok = nvrtcCompileProgram(program, 3, options) == NVRTC_SUCCESS;
  size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  result.log.resize(log_size);
  if (log_size) nvrtcGetProgramLog(program, result.log.data());
  nvrtcDestroyProgram(&program);
  return result;
}

// A program calling every function it defines, so that nothing is compiled away unchecked.
std::string kernel_program(const Declarations& declarations, const std::vector<Expr>& mods) {
  std::string source = "#include \"flexjit_expr.cuh\"\n";
  source += emit_mod_args_struct(declarations);
  std::string calls;
  for (size_t i = 0; i < mods.size(); ++i) {
    const std::string name = "mod_" + std::to_string(i);
    source += mods[i].emit_cuda(name);
    source += "#line 1000 \"expr_test.cu\"\n";
    if (mods[i].kind() == ModKind::score)
      calls += "  acc += " + name + "(acc, blockIdx.x, blockIdx.y, i, i + 1, 4096, 4096, args, errors);\n";
    else
      calls += "  acc += " + name + "(blockIdx.x, blockIdx.y, i, i + 1, 4096, 4096, args, errors) ? 1.0f : 0.0f;\n";
  }
  source += "extern \"C\" __global__ void expr_test_kernel(FlexjitModArgs args, float* out, unsigned* error_word) {\n"
            "  const int i = threadIdx.x;\n  float acc = 0.0f;\n  unsigned errors = 0;\n" +
            calls + "  out[i] = acc;\n  flexjit_report_errors(errors, error_word);\n}\n";
  return source;
}

const char* const kArchitectures[] = {"sm_80", "sm_90a"};

TEST(NvrtcCompile, SuiteModsAndTheirGradients) {
  std::vector<Expr> mods;
  for (const auto& mod : suite_mods()) {
    mods.push_back(Expr::parse(mod.kind, mod.text, suite_declarations()));
    if (mod.kind == ModKind::score) mods.push_back(mods.back().gradient());
  }
  ASSERT_GE(mods.size(), 15u);
  const std::string source = kernel_program(suite_declarations(), mods);
  for (const char* arch : kArchitectures) {
    const CompileResult result = nvrtc_compile(source, arch);
    EXPECT_TRUE(result.ok) << arch << "\n" << result.log << "\n" << source;
  }
}

TEST(NvrtcCompile, EveryBuiltinEveryDtypeAndTheirGradients) {
  const Declarations declarations = standard_declarations();
  const char* scores[] = {
      "abs(score) + abs(q_idx) + min(score, cap) + min(q_idx, kv_idx) + max(score, 0.0) + max(b, h)",
      "clamp(score, -cap, cap) + clamp(q_idx - kv_idx, -window, window)",
      "exp(score) + exp2(score) + log(score) + log2(score) + sqrt(score) + rsqrt(score)",
      "tanh(score) + sigmoid(score) + sin(score) + cos(score) + floor(score) + ceil(score)",
      "pow(score, 2.0) + pow(2.0, score) + pow(score, score)",
      "where(q_idx >= kv_idx, score, -inf) + (q_idx > 0 ? 1 : 2)",
      "int(score) + float(q_idx) + float(q_idx > 0) + int(kv_idx > 0) + int(q_idx)",
      "score + bias[h][q_idx - kv_idx + 4095] + slope[h] + table[kv_idx] + halfs[h % 8] + flags[q_idx] + doc[q_idx]",
      "q_idx / kv_idx + q_idx % 7 + -q_idx * 3 - 2147483647 + (-2147483648) + (q_idx & 3) + (q_idx | 4) + (q_idx ^ kv_idx)",
      "score / cap + score / 3.0 + score / 0.5 + score / 1e-40 + q_idx / 2.0 + 1e-45 + 3.4028235e38",
      "where((q_idx > 0 & kv_idx > 0) | (b == 0 ^ h == 1), score, inf) * window",
      "30.0 * tanh(score / 30.0)",
  };
  const char* masks[] = {
      "q_idx >= kv_idx && q_idx - kv_idx <= window || !(b == h)",
      "doc[q_idx] == doc[kv_idx] && flags[kv_idx] != 0 && table[q_idx] < 0.5",
      "true", "false", "q_idx > 0 ? kv_idx > 0 : false",
  };
  std::vector<Expr> mods;
  for (const char* score : scores) {
    mods.push_back(score_mod(score, declarations));
    mods.push_back(mods.back().gradient());
  }
  for (const char* mask : masks) mods.push_back(mask_mod(mask, declarations));
  const std::string source = kernel_program(declarations, mods);
  for (const char* arch : kArchitectures) {
    const CompileResult result = nvrtc_compile(source, arch);
    EXPECT_TRUE(result.ok) << arch << "\n" << result.log << "\n" << source;
  }
}

TEST(NvrtcCompile, ErrorsInsideTheSnippetPointAtTheMod) {
  // A deliberately broken use of the emitted function shows that the #line directive names the
  // mod: the caller resets #line afterwards and its own lines are reported under its own name.
  const Expr mask = mask_mod("q_idx >= kv_idx");
  std::string source = "#include \"flexjit_expr.cuh\"\n" + emit_mod_args_struct({}) + mask.emit_cuda("m");
  source += "#line 50 \"kernel.cu\"\nextern \"C\" __global__ void k() { undefined_symbol(); }\n";
  const CompileResult result = nvrtc_compile(source, "sm_80");
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("kernel.cu(50)"), std::string::npos) << result.log;
}

TEST(NvrtcCompile, ModArgsLayoutMatchesTheCompiler) {
  std::vector<Declarations> cases;
  cases.push_back({});
  cases.push_back(standard_declarations());
  Declarations only_params;
  only_params.params = {ParamDecl::parse("a:int"), ParamDecl::parse("c:float"), ParamDecl::parse("d:int")};
  cases.push_back(only_params);
  Declarations odd;
  odd.params = {ParamDecl::parse("x:float")};
  odd.buffers = {BufferDecl::parse("r8:u8:1x2x3x4x5x6x7x8"), BufferDecl::parse("h1:f16:7"),
                 BufferDecl::parse("b3:bf16:2x?x4")};
  cases.push_back(odd);
  for (const Declarations& declarations : cases) {
    const ModArgsLayout layout = mod_args_layout(declarations);
    // NVRTC has no offsetof; __INTADDR__ is its front end's constant-address builtin.
    std::string source = "#include \"flexjit_expr.cuh\"\n" + emit_mod_args_struct(declarations) +
                         "#define OFFSET_OF(member) __INTADDR__(&(((FlexjitModArgs*)0)->member))\n";
    source += "static_assert(sizeof(FlexjitModArgs) == " + std::to_string(layout.size) + ", \"size\");\n";
    source += "static_assert(alignof(FlexjitModArgs) == " + std::to_string(layout.alignment) + ", \"align\");\n";
    for (const auto& field : layout.fields) {
      const std::string member = (field.is_buffer ? "buf_" : "p_") + field.name;
      source += "static_assert(OFFSET_OF(" + member + ") == " +
                std::to_string(field.offset) + ", \"" + member + "\");\n";
      if (field.is_buffer) {
        source += "static_assert(OFFSET_OF(" + member + ".extent) == " +
                  std::to_string(field.offset + 8) + ", \"extent\");\n";
        source += "static_assert(OFFSET_OF(" + member + ".stride) == " +
                  std::to_string(field.offset + 8 + 8 * field.rank) + ", \"stride\");\n";
      }
    }
    const CompileResult result = nvrtc_compile(source, "sm_80");
    EXPECT_TRUE(result.ok) << result.log << "\n" << source;
    if (!layout.fields.empty()) {
      // The assertions do check: one wrong offset fails to compile.
      const auto& last = layout.fields.back();
      const std::string wrong = source + "static_assert(OFFSET_OF(" + (last.is_buffer ? "buf_" : "p_") +
                                last.name + ") == " + std::to_string(last.offset + 4) + ", \"wrong\");\n";
      EXPECT_FALSE(nvrtc_compile(wrong, "sm_80").ok);
    }
  }
}

}  // namespace
}  // namespace flexjit::test
