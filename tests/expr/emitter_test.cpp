// The CUDA emitter: exact output for the common mods, the FlexjitModArgs struct, and the guarantee
// that no user text reaches generated code.
#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

TEST(Emitter, CausalMask) {
  EXPECT_EQ(mask_mod("q_idx >= kv_idx").emit_cuda("flexjit_mask_mod"),
            "__device__ __forceinline__ bool flexjit_mask_mod(int b, int h, int q_idx, int kv_idx, int q_len, "
            "int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {\n"
            "#line 1 \"mask_mod\"\n"
            "  return (q_idx >= kv_idx);\n"
            "}\n");
}

TEST(Emitter, AlibiScore) {
  EXPECT_EQ(score_mod("score + slope[h] * (kv_idx - q_idx)").emit_cuda("flexjit_score_mod"),
            "__device__ __forceinline__ float flexjit_score_mod(float score, int b, int h, int q_idx, int kv_idx, "
            "int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {\n"
            "#line 1 \"score_mod\"\n"
            "  return (score + (flexjit_read(args.buf_slope, flexjit_errors, h) * static_cast<float>(flexjit_isub(kv_idx, q_idx))));\n"
            "}\n");
}

TEST(Emitter, LineFileCanBeChosen) {
  const std::string cuda = score_mod("score").emit_cuda("g", "score_mod_grad");
  EXPECT_NE(cuda.find("#line 1 \"score_mod_grad\"\n"), std::string::npos);
  EXPECT_NE(cuda.find("  return score;\n"), std::string::npos);
}

std::string body(const Expr& expr) {
  const std::string cuda = expr.emit_cuda("f");
  const size_t start = cuda.find("  return ") + 9;
  return cuda.substr(start, cuda.find(";\n}", start) - start);
}

TEST(Emitter, NumbersAreReprintedFromTheirValues) {
  EXPECT_EQ(body(score_mod("30.0 * tanh(score / 30.0)")), "(30.0f * flexjit_tanh(__fdividef(score, 30.0f)))");
  EXPECT_EQ(body(score_mod("score * 0.1")), "(score * 0.100000001f)");
  EXPECT_EQ(body(score_mod("score * 1e-7")), "(score * 1.00000001e-07f)");
  EXPECT_EQ(body(score_mod("score + 000012")), "(score + 12.0f)");
  EXPECT_EQ(body(score_mod("score - -0.5")), "(score - (-0.5f))");
  EXPECT_EQ(body(score_mod("where(q_idx >= kv_idx, score, -inf)")), "((q_idx >= kv_idx) ? score : (-flexjit_inf()))");
  EXPECT_EQ(body(score_mod("score + inf")), "(score + flexjit_inf())");
  EXPECT_EQ(body(score_mod("q_idx + -2147483648")), "static_cast<float>(flexjit_iadd(q_idx, (-2147483647 - 1)))");
  EXPECT_EQ(body(score_mod("q_idx * -3")), "static_cast<float>(flexjit_imul(q_idx, (-3)))");
}

TEST(Emitter, IntegerOperatorsUseWrappingHelpers) {
  EXPECT_EQ(body(score_mod("q_idx / kv_idx + q_idx % kv_idx")),
            "static_cast<float>(flexjit_iadd(flexjit_idiv(q_idx, kv_idx), flexjit_imod(q_idx, kv_idx)))");
  EXPECT_EQ(body(score_mod("-q_idx")), "static_cast<float>(flexjit_ineg(q_idx))");
  EXPECT_EQ(body(score_mod("abs(q_idx) + min(q_idx, 2) + max(q_idx, 2) + clamp(q_idx, 0, 9)")),
            "static_cast<float>(flexjit_iadd(flexjit_iadd(flexjit_iadd(flexjit_iabs(q_idx), flexjit_imin(q_idx, 2)), "
            "flexjit_imax(q_idx, 2)), flexjit_iclamp(q_idx, 0, 9)))");
  EXPECT_EQ(body(mask_mod("(q_idx & 1) == 0 && (q_idx | kv_idx ^ 3) > 0")),
            "static_cast<bool>(((q_idx & 1) == 0) & ((q_idx | (kv_idx ^ 3)) > 0))");
  EXPECT_EQ(body(mask_mod("(q_idx > 0) & (kv_idx > 0) | (b > 0) ^ (h > 0)")),
            "static_cast<bool>(static_cast<bool>((q_idx > 0) & (kv_idx > 0)) | ((b > 0) != (h > 0)))");
}

// && and || evaluate both sides, with no branch around the loads. A right side that reads buffers
// runs in a lambda with its own error word, which counts only when the left side leaves the
// result to it (a guard stays silent, as with a short-circuit).
TEST(Emitter, LogicalOperatorsEvaluateBothSides) {
  EXPECT_EQ(body(mask_mod("q_idx >= kv_idx || kv_idx < 4")), "static_cast<bool>((q_idx >= kv_idx) | (kv_idx < 4))");
  EXPECT_EQ(body(mask_mod("kv_idx < 4096 && doc[kv_idx] > 2")),
            "flexjit_land((kv_idx < 4096), [&](unsigned& flexjit_errors_14) -> bool { return "
            "(flexjit_read(args.buf_doc, flexjit_errors_14, kv_idx) > 2); }, flexjit_errors)");
  EXPECT_EQ(body(mask_mod("kv_idx < 8 || (q_idx > 1 && doc[q_idx] == 0)")),
            "flexjit_lor((kv_idx < 8), [&](unsigned& flexjit_errors_14) -> bool { return flexjit_land((q_idx > 1), "
            "[&](unsigned& flexjit_errors_17) -> bool { return (flexjit_read(args.buf_doc, flexjit_errors_17, q_idx) == "
            "0); }, flexjit_errors_14); }, flexjit_errors)");
}

TEST(Emitter, FloatFunctionsUseTheDocumentedIntrinsics) {
  EXPECT_EQ(body(score_mod("exp(score) + exp2(score) + log(score) + log2(score)")),
            "(((__expf(score) + exp2f(score)) + __logf(score)) + __log2f(score))");
  EXPECT_EQ(body(score_mod("sqrt(score) + rsqrt(score) + tanh(score) + sigmoid(score)")),
            "(((sqrtf(score) + rsqrtf(score)) + flexjit_tanh(score)) + flexjit_sigmoid(score))");
  EXPECT_EQ(body(score_mod("sin(score) + cos(score) + floor(score) + ceil(score) + pow(score, 3)")),
            "((((sinf(score) + cosf(score)) + floorf(score)) + ceilf(score)) + powf(score, 3.0f))");
  EXPECT_EQ(body(score_mod("abs(score) + min(score, 1) + max(score, cap) + clamp(score, 0, 1)")),
            "(((fabsf(score) + fminf(score, 1.0f)) + fmaxf(score, args.p_cap)) + flexjit_fclamp(score, 0.0f, 1.0f))");
  // Division by a literal in the safe range uses __fdividef; anything else the IEEE division.
  EXPECT_EQ(body(score_mod("score / 3 + score / cap + score / 1e-40")),
            "((__fdividef(score, 3.0f) + (score / args.p_cap)) + (score / 9.9999461e-41f))");
}

TEST(Emitter, ConversionsAndParameters) {
  EXPECT_EQ(body(score_mod("float(q_idx > 0)")), "((q_idx > 0) ? 1.0f : 0.0f)");
  EXPECT_EQ(body(score_mod("int(kv_idx > 0)")), "static_cast<float>(((kv_idx > 0) ? 1 : 0))");
  EXPECT_EQ(body(score_mod("int(score)")), "static_cast<float>(flexjit_f2i(score))");
  EXPECT_EQ(body(score_mod("score * cap + window")), "((score * args.p_cap) + static_cast<float>(args.p_window))");
  EXPECT_EQ(body(score_mod("bias[h][q_idx - kv_idx + 4095]")),
            "flexjit_read(args.buf_bias, flexjit_errors, h, flexjit_iadd(flexjit_isub(q_idx, kv_idx), 4095))");
}

TEST(Emitter, ModArgsStruct) {
  EXPECT_EQ(emit_mod_args_struct({}), "struct FlexjitModArgs {\n  int unused;\n};\n");
  EXPECT_EQ(emit_mod_args_struct(standard_declarations()),
            "struct FlexjitModArgs {\n"
            "  float p_cap;\n"
            "  int p_window;\n"
            "  FlexjitBuffer<int, 1> buf_doc;\n"
            "  FlexjitBuffer<float, 2> buf_bias;\n"
            "  FlexjitBuffer<float, 1> buf_slope;\n"
            "  FlexjitBuffer<flexjit_bf16, 1> buf_table;\n"
            "  FlexjitBuffer<flexjit_f16, 1> buf_halfs;\n"
            "  FlexjitBuffer<unsigned char, 1> buf_flags;\n"
            "};\n");
}

TEST(Emitter, ModArgsLayout) {
  const ModArgsLayout empty = mod_args_layout({});
  EXPECT_TRUE(empty.fields.empty());
  EXPECT_EQ(empty.size, 4u);
  EXPECT_EQ(empty.alignment, 4u);
  const ModArgsLayout layout = mod_args_layout(standard_declarations());
  ASSERT_EQ(layout.fields.size(), 8u);
  EXPECT_EQ(layout.fields[0].name, "cap");
  EXPECT_FALSE(layout.fields[0].is_buffer);
  EXPECT_EQ(layout.fields[0].type, ScalarType::floating);
  EXPECT_EQ(layout.fields[0].offset, 0u);
  EXPECT_EQ(layout.fields[1].name, "window");
  EXPECT_EQ(layout.fields[1].type, ScalarType::integer);
  EXPECT_EQ(layout.fields[1].offset, 4u);
  EXPECT_EQ(layout.fields[2].name, "doc");
  EXPECT_TRUE(layout.fields[2].is_buffer);
  EXPECT_EQ(layout.fields[2].type, ScalarType::integer);
  EXPECT_EQ(layout.fields[2].offset, 8u);
  EXPECT_EQ(layout.fields[2].rank, 1u);
  EXPECT_EQ(layout.fields[3].offset, 8u + 24u);  // doc: pointer + 1 extent + 1 stride
  EXPECT_EQ(layout.fields[3].rank, 2u);
  EXPECT_EQ(layout.fields[4].offset, 32u + 40u);
  EXPECT_EQ(layout.size, 72u + 4 * 24u);
  EXPECT_EQ(layout.alignment, 8u);
  Declarations one_param;
  one_param.params = {ParamDecl::parse("a:int"), ParamDecl::parse("c:float"), ParamDecl::parse("d:int")};
  EXPECT_EQ(mod_args_layout(one_param).size, 12u);
  EXPECT_EQ(mod_args_layout(one_param).alignment, 4u);
  one_param.buffers = {BufferDecl::parse("z:f32:?")};
  EXPECT_EQ(mod_args_layout(one_param).fields[3].offset, 16u);  // padded to 8
  EXPECT_EQ(mod_args_layout(one_param).size, 40u);
}

TEST(Emitter, RejectsUnsafeFunctionAndFileNames) {
  const Expr mask = mask_mod("true");
  EXPECT_EQ(usage_error_of([&] { mask.emit_cuda("f() { asm(\"trap;\"); } bool g"); }),
            "function name 'f() { asm(\"trap;\"); } bool g' is not a valid C++ identifier");
  EXPECT_EQ(usage_error_of([&] { mask.emit_cuda("f", "x\"\nasm"); }),
            "#line file name 'x\"\nasm' may only contain letters, digits and _ - . /");
}

// The identifiers generated code may contain besides the declared names (prefixed p_ / buf_).
const std::set<std::string> kEmitterVocabulary = {
    "__device__", "__forceinline__", "float", "int", "bool", "const", "FlexjitModArgs", "args", "return",
    "true", "false", "static_cast", "line", "score", "b", "h", "q_idx", "kv_idx", "q_len", "kv_len",
    "unsigned", "flexjit_errors",
    "flexjit_read", "flexjit_iadd", "flexjit_isub", "flexjit_imul", "flexjit_ineg", "flexjit_idiv",
    "flexjit_imod", "flexjit_iabs", "flexjit_imin", "flexjit_imax", "flexjit_iclamp", "flexjit_fclamp",
    "flexjit_tanh", "flexjit_sigmoid", "flexjit_f2i", "flexjit_inf", "fabsf", "fminf", "fmaxf", "__expf",
    "exp2f", "__logf", "__log2f", "sqrtf", "rsqrtf", "sinf", "cosf", "floorf", "ceilf", "powf",
    "__fdividef", "__int_as_float", "f", "e", "score_mod", "mask_mod", "p_cap", "p_window", "buf_doc",
    "buf_bias", "buf_slope", "buf_table", "buf_halfs", "buf_flags"};

// Every identifier in `cuda` (outside string literals, numbers included in tokens).
std::vector<std::string> identifiers_in(const std::string& cuda) {
  std::vector<std::string> out;
  for (size_t i = 0; i < cuda.size();) {
    const char c = cuda[i];
    if (c == '"') {
      i = cuda.find('"', i + 1) + 1;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < cuda.size() && (std::isalnum(static_cast<unsigned char>(cuda[i])) || cuda[i] == '.' ||
                                 ((cuda[i] == '-' || cuda[i] == '+') && (cuda[i - 1] == 'e'))))
        ++i;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = i;
      while (i < cuda.size() && (std::isalnum(static_cast<unsigned char>(cuda[i])) || cuda[i] == '_')) ++i;
      out.push_back(cuda.substr(start, i - start));
      continue;
    }
    ++i;
  }
  return out;
}

TEST(Emitter, GeneratedCodeUsesOnlyItsOwnVocabulary) {
  const char* sources[] = {
      "score + slope[h] * (kv_idx - q_idx)", "30.0 * tanh(score / 30.0)",
      "where(q_idx >= kv_idx, score, -inf) + cap * window",
      "exp(score) + exp2(score) + log(score) + log2(score) + sqrt(score) + rsqrt(score) + sigmoid(score)",
      "sin(score) + cos(score) + floor(score) + ceil(score) + pow(score, 2) + abs(score) + clamp(score, 0, 1)",
      "bias[h][q_idx] + doc[q_idx] + table[0] + halfs[1] + flags[2] + int(score) + float(q_idx > 0)",
      "q_idx / kv_idx % 3 + -q_idx + min(q_idx, kv_idx) + max(b, h) + abs(q_len - kv_len)"};
  for (const char* source : sources) {
    const Expr expr = score_mod(source);
    for (const Expr& e : {expr, expr.gradient()})
      for (const auto& identifier : identifiers_in(e.emit_cuda("f"))) {
        // Locals of shared subexpressions: flexjit_t0, flexjit_t1, ...
        const bool local = identifier.rfind("flexjit_t", 0) == 0 && identifier.size() > 9 &&
                           identifier.find_first_not_of("0123456789", 9) == std::string::npos;
        EXPECT_TRUE(local || kEmitterVocabulary.count(identifier)) << identifier << " in " << e.emit_cuda("f");
      }
  }
}

// Issue 17 item 5: a derivative refers to its operands more than once, and printed as a tree a
// nested chain's gradient grew with the square of the nesting (a 539-character expression took
// NVRTC 43 s). Shared subexpressions become locals, so the code grows linearly.
std::string nested_softcap(int depth) {
  std::string text = "score";
  for (int i = 0; i < depth; ++i) text = "30.0 * tanh(" + text + " / 30.0)";
  return text;
}

TEST(Emitter, GradientOfADeepChainStaysLinear) {
  const size_t g20 = score_mod(nested_softcap(20)).gradient().emit_cuda("g").size();
  const size_t g40 = score_mod(nested_softcap(40)).gradient().emit_cuda("g").size();
  const size_t g80 = score_mod(nested_softcap(80)).gradient().emit_cuda("g").size();
  // Linear: doubling the depth about doubles the code (quadratic would quadruple it).
  EXPECT_LT(g40, 2 * g20 + 400) << g20 << " " << g40;
  EXPECT_LT(g80, 2 * g40 + 400) << g40 << " " << g80;
  EXPECT_LT(g80, 16000u);  // about 150 bytes a level; a tree print of depth 80 is over 600 KB
  // The forward function of the same chain was already linear and is unchanged in form.
  const std::string forward = score_mod(nested_softcap(2)).emit_cuda("f");
  EXPECT_NE(forward.find("  return (30.0f * flexjit_tanh(__fdividef((30.0f * flexjit_tanh(__fdividef(score, 30.0f))), 30.0f)));"),
            std::string::npos)
      << forward;
}

TEST(Emitter, SharedSubexpressionsBecomeLocalsInOrder) {
  const std::string grad = score_mod("30.0 * tanh(score / 30.0)").gradient().emit_cuda("g");
  EXPECT_NE(grad.find("  const float flexjit_t0 = flexjit_tanh(__fdividef(score, 30.0f));\n"
                      "  return (1.0f - (flexjit_t0 * flexjit_t0));\n"),
            std::string::npos)
      << grad;
  // Written twice by the user, computed once.
  const std::string twice = score_mod("exp(score * 2.0) + exp(score * 2.0)").emit_cuda("f");
  EXPECT_NE(twice.find("  const float flexjit_t0 = __expf((score * 2.0f));\n  return (flexjit_t0 + flexjit_t0);\n"),
            std::string::npos)
      << twice;
}

// The kernels' form of score_mod: its value at acc * scale times log2(e), the constants folded.
constexpr double kLog2e = 1.4426950408889634074;

TEST(Emitter, PrescaledScoreFoldsSoftCappingsConstants) {
  const Expr softcap = score_mod("30.0 * tanh(score / 30.0)");
  EXPECT_EQ(softcap.score_prescale(), 1.0 / 30.0);
  EXPECT_EQ(softcap.emit_cuda_prescaled("f", softcap.score_prescale(), kLog2e),
            "__device__ __forceinline__ float f(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, "
            "int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {\n"
            "  const float score = flexjit_acc * flexjit_score_scale;\n"
            "#line 1 \"score_mod\"\n"
            "  return (flexjit_tanh(score) * 43.2808495f);\n"
            "}\n");
  // Its derivative takes the same prescale, so both compute tanh of the same float.
  const std::string grad = softcap.gradient().emit_cuda_prescaled("g", softcap.score_prescale(), 1.0, "score_mod_gradient");
  EXPECT_NE(grad.find("  const float score = flexjit_acc * flexjit_score_scale;\n"
                      "#line 1 \"score_mod_gradient\"\n"
                      "  const float flexjit_t0 = flexjit_tanh(score);\n"
                      "  return (1.0f - (flexjit_t0 * flexjit_t0));\n"),
            std::string::npos)
      << grad;
}

std::string prescaled_body(const Expr& expr) {
  const std::string cuda = expr.emit_cuda_prescaled("f", expr.score_prescale(), kLog2e);
  const size_t start = cuda.find(") {\n") + 4;
  return cuda.substr(start, cuda.find(";\n}", start) - start);
}

TEST(Emitter, PrescaledScoreTakesOneFactorCommonToEveryScore) {
  // A temperature: folded into the scale, the output is the score times log2(e).
  EXPECT_EQ(score_mod("score / 2.0").score_prescale(), 0.5);
  EXPECT_EQ(prescaled_body(score_mod("score / 2.0")),
            "  const float score = flexjit_acc * flexjit_score_scale;\n#line 1 \"score_mod\"\n  return (score * 1.44269502f)");
  EXPECT_EQ(score_mod("2 * score + score * 2.0").score_prescale(), 2.0);  // int and float literals alike
  // Factors that differ, or a bare score beside a factor: no prescale, the forms stay as written.
  EXPECT_EQ(score_mod("score * 2.0 + score * 3.0").score_prescale(), 1.0);
  EXPECT_EQ(score_mod("where(score > 0.0, score / 4.0, score * 0.25)").score_prescale(), 1.0);
  EXPECT_EQ(prescaled_body(score_mod("where(score > 0.0, score / 4.0, score * 0.25)")),
            "  const float score = flexjit_acc * flexjit_score_scale;\n#line 1 \"score_mod\"\n"
            "  return (((score > 0.0f) ? __fdividef(score, 4.0f) : (score * 0.25f)) * 1.44269502f)");
  // The derivative must fit too: that of (score * 0.5) * (score * 0.5) is 0.25 * score + ...
  EXPECT_EQ(score_mod("score * 0.5 * (score * 0.5)").score_prescale(), 1.0);
  EXPECT_EQ(score_mod("pow(score * 0.5, 2.0)").score_prescale(), 0.5);  // its derivative: score * 0.5
  // A derivative that reads no score (ALiBi's 1) leaves the score_mod's own factor.
  EXPECT_EQ(score_mod("score * 0.5 + slope[h] * (kv_idx - q_idx)").score_prescale(), 0.5);
  // A mask_mod has no score.
  EXPECT_EQ(mask_mod("q_idx >= kv_idx").score_prescale(), 1.0);
}

TEST(Emitter, PrescaledScoreFoldsOnlyTheRootsFloatFactors) {
  // Negation and division by a literal join log2(e); the product of an int stays (it wraps).
  EXPECT_EQ(prescaled_body(score_mod("-(score * score) / 8.0")),
            "  const float score = flexjit_acc * flexjit_score_scale;\n#line 1 \"score_mod\"\n"
            "  return ((score * score) * (-0.180336878f))");
  EXPECT_EQ(prescaled_body(score_mod("h * 2")),
            "#line 1 \"score_mod\"\n  return (static_cast<float>(flexjit_imul(h, 2)) * 1.44269502f)");
  EXPECT_EQ(prescaled_body(score_mod("float(h) * 2.0")),
            "#line 1 \"score_mod\"\n  return (static_cast<float>(h) * 2.88539004f)");
  // A factor inside a sum is not the root's.
  EXPECT_EQ(prescaled_body(score_mod("score + 2.0 * slope[h]")),
            "  const float score = flexjit_acc * flexjit_score_scale;\n#line 1 \"score_mod\"\n"
            "  return ((score + (2.0f * flexjit_read(args.buf_slope, flexjit_errors, h))) * 1.44269502f)");
  // Factors far outside the float range stay in the expression.
  EXPECT_EQ(score_mod("score * 1e-35").score_prescale(), 1.0);
}

TEST(Emitter, PrescaledScoreRejectsAPrescaleThatDoesNotFit) {
  EXPECT_THROW(score_mod("score * 2.0 + score").emit_cuda_prescaled("f", 2.0, kLog2e), UsageError);
  EXPECT_THROW(mask_mod("q_idx >= kv_idx").emit_cuda_prescaled("f", 1.0, 1.0), UsageError);
  EXPECT_THROW(score_mod("score").emit_cuda_prescaled("bad name", 1.0, 1.0), UsageError);
}

TEST(Emitter, BufferReadsAreNeverHoistedOutOfABranch) {
  // Evaluated eagerly, doc[kv_idx] would flag an out-of-bounds read for positions the condition
  // excludes; it stays inside the select, read where the branch is taken.
  const std::string code =
      score_mod("where(kv_idx < 4096, score + doc[kv_idx] + doc[kv_idx], score)").emit_cuda("f");
  EXPECT_EQ(code.find("flexjit_t"), std::string::npos) << code;
  EXPECT_NE(code.find("((kv_idx < 4096) ? "), std::string::npos) << code;
}

TEST(Emitter, HostileInputsNeverReachTheCode) {
  const char* hostile[] = {
      "score); asm(\"trap;\"); (0",
      "score + 1); } __global__ void evil() { asm(\"trap;\"); } __device__ float x(float y) { return y",
      "score /* */ + 1",
      "score // comment\n",
      "score\n#include <cstdio>\n",
      "score + __builtin_trap()",
      "score + args.p_cap",
      "asm(\"trap;\")",
      "score + flexjit_error_flags",
      "score + threadIdx.x",
      "score + 1e999",
      "score + 0x7f800000",
      "score ? 1 : 0",
  };
  for (const char* source : hostile) {
    EXPECT_THROW(score_mod(source), ExprError) << source;
  }
  // The declaration table is the only way to add names, and it refuses anything unsafe.
  for (const char* name : {"a;b", "asm", "__x", "flexjit_read", "threadIdx", "if", "return", "args", "x y",
                           "_private", "int", "exp"}) {
    Declarations d;
    d.params.push_back({name, ScalarType::floating});
    EXPECT_THROW(Expr::parse(ModKind::score, "score", d), UsageError) << name;
    EXPECT_THROW(emit_mod_args_struct(d), UsageError) << name;
  }
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

// A mask's column values: its largest subexpressions that read a buffer and depend on kv_idx but
// not on q_idx, each distinct tree once, in the order they first appear.
TEST(Emitter, ColumnValuesAreTheKeyOnlyReads) {
  EXPECT_EQ(mask_mod("doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx").column_value_count(), 1);
  EXPECT_EQ(mask_mod("doc[kv_idx] == 3 || doc[kv_idx] == 5").column_value_count(), 1);  // the whole mask
  EXPECT_EQ(mask_mod("bias[h][kv_idx] > bias[h][q_idx] && flags[kv_idx] == 1").column_value_count(), 2);
  EXPECT_EQ(mask_mod("doc[q_idx] >= 0 && q_idx >= kv_idx").column_value_count(), 0);  // rows only
  EXPECT_EQ(mask_mod("kv_idx * 2 <= q_idx").column_value_count(), 0);                 // no read
  EXPECT_EQ(mask_mod("doc[q_idx - kv_idx + 9] > 0").column_value_count(), 0);         // both positions
  EXPECT_EQ(score_mod("score + bias[h][kv_idx] * 0.5").column_value_count(), 1);    // a score_mod's
  EXPECT_EQ(score_mod("score * bias[h][kv_idx] + table[kv_idx - q_idx + 9]").column_value_count(), 1);
  EXPECT_EQ(score_mod("score + bias[h][int(score)]").column_value_count(), 0);       // reads the score
}

// Float values travel as their bits and bool values as 0 / 1; a value on the right of && reports
// its reads' errors into the && 's own word, which counts them only where the left side does not
// decide.
TEST(Emitter, ColumnValuesOfEveryTypeKeepTheirErrorRules) {
  const std::string cuda = mask_mod("q_idx >= kv_idx && (bias[h][kv_idx] * 2.0 < q_idx || flags[kv_idx] == 1)")
                               .emit_cuda_columns("cols", "masked");
  EXPECT_NE(cuda.find("flexjit_values[0] = __float_as_uint((flexjit_read(args.buf_bias, flexjit_errors, h, kv_idx) * 2.0f));"),
            std::string::npos) << cuda;
  EXPECT_NE(cuda.find("flexjit_values[1] = ((flexjit_read(args.buf_flags, flexjit_errors, kv_idx) == 1)) ? 1u : 0u;"),
            std::string::npos) << cuda;
  EXPECT_NE(cuda.find("  const float flexjit_v0 = __uint_as_float(flexjit_values[0]);\n"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("  const bool flexjit_v1 = flexjit_values[1] != 0u;\n"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("flexjit_land((q_idx >= kv_idx), [&](unsigned& flexjit_errors_14) -> bool { return "
                      "flexjit_lor((flexjit_column_value(flexjit_v0, flexjit_value_errors[0], flexjit_errors_14) < "
                      "static_cast<float>(q_idx)), [&](unsigned& flexjit_errors_17) -> bool { return "
                      "flexjit_column_value(flexjit_v1, flexjit_value_errors[1], flexjit_errors_17); }, flexjit_errors_14); }, "
                      "flexjit_errors)"),
            std::string::npos)
      << cuda;
}

// A score_mod's column values: the values function as a mask's, and the prescaled score function
// reading them, its root's literal factor folded into the output factor as emit_cuda_prescaled
// folds it.
TEST(Emitter, ScoreColumnValuesFeedThePrescaledScore) {
  const std::string cuda =
      score_mod("(score * 0.5 + bias[h][kv_idx]) * 4.0").emit_cuda_prescaled_columns("cols", "scored", 0.5, 2.0);
  EXPECT_NE(cuda.find("__device__ __forceinline__ void cols(int b, int h, int kv_idx, int q_len, int kv_len, const "
                      "FlexjitModArgs& args, unsigned (&flexjit_values)[1], unsigned (&flexjit_value_errors)[1]) {\n"
                      "#line 1 \"score_mod\"\n"),
            std::string::npos) << cuda;
  // The output factor (2.0 times the root's 4.0) distributed over the sum: the value is staged
  // times 8, and the score carries 8 in its scale, so the score is one FFMA.
  EXPECT_NE(cuda.find("flexjit_values[0] = __float_as_uint((flexjit_read(args.buf_bias, flexjit_errors, h, kv_idx) * 8.0f));"),
            std::string::npos) << cuda;
  EXPECT_NE(cuda.find("__device__ __forceinline__ float scored(float flexjit_acc, float flexjit_score_scale, int b, "
                      "int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& "
                      "flexjit_errors, const unsigned (&flexjit_values)[1], const unsigned (&flexjit_value_errors)[1]) {\n"
                      "  const float score = flexjit_acc * (flexjit_score_scale * 8.0f);\n"
                      "  const float flexjit_v0 = __uint_as_float(flexjit_values[0]);\n"),
            std::string::npos) << cuda;
  EXPECT_NE(cuda.find("return (score + flexjit_column_value(flexjit_v0, flexjit_value_errors[0], flexjit_errors));"),
            std::string::npos) << cuda;
  EXPECT_EQ(cuda.find("buf_bias", cuda.find("scored(")), std::string::npos) << cuda;  // no read in the score
}

TEST(Emitter, ScoreColumnValuesDistributeTheFactorOverSumsOfTheScoreOnly) {
  // A left-nested sum and a difference: each term scaled, a literal factor folded into its term's.
  const std::string sum = score_mod("bias[h][kv_idx] + score - 0.5 * table[kv_idx]")
                              .emit_cuda_prescaled_columns("cols", "scored", 1.0, 2.0);
  EXPECT_NE(sum.find("flexjit_values[0] = __float_as_uint((flexjit_read(args.buf_bias, flexjit_errors, h, kv_idx) * 2.0f));"),
            std::string::npos) << sum;
  EXPECT_NE(sum.find("flexjit_values[1] = __float_as_uint((flexjit_read(args.buf_table, flexjit_errors, kv_idx) * 1.0f));"),
            std::string::npos) << sum;
  EXPECT_NE(sum.find("  const float score = flexjit_acc * (flexjit_score_scale * 2.0f);\n"), std::string::npos) << sum;
  EXPECT_NE(sum.find("return ((flexjit_column_value(flexjit_v0, flexjit_value_errors[0], flexjit_errors) + score) - "
                     "flexjit_column_value(flexjit_v1, flexjit_value_errors[1], flexjit_errors));"),
            std::string::npos) << sum;
  // The score inside a product, or subtracted: the factor stays outside, the values unscaled.
  for (const char* text : {"score * score + bias[h][kv_idx]", "bias[h][kv_idx] - score"}) {
    const std::string kept = score_mod(text).emit_cuda_prescaled_columns("cols", "scored", 1.0, 2.0);
    EXPECT_NE(kept.find("flexjit_values[0] = __float_as_uint(flexjit_read(args.buf_bias, flexjit_errors, h, kv_idx));"),
              std::string::npos) << text << "\n" << kept;
    EXPECT_NE(kept.find("  const float score = flexjit_acc * flexjit_score_scale;\n"), std::string::npos) << text;
    EXPECT_NE(kept.find(") * 2.0f);\n}"), std::string::npos) << text << "\n" << kept;
  }
  // The score function without columns keeps the factor outside the sum.
  const std::string plain = score_mod("score + bias[h][kv_idx]").emit_cuda_prescaled("f", 1.0, 2.0);
  EXPECT_NE(plain.find("return ((score + flexjit_read(args.buf_bias, flexjit_errors, h, kv_idx)) * 2.0f);"),
            std::string::npos) << plain;
}

// A score_mod's diagonal values: its largest buffer-reading subexpressions free of the score whose
// positions enter only as kv_idx - q_idx (in any linear int form whose two coefficients cancel).
TEST(Emitter, DiagonalValuesAreTheReadsOfKvMinusQ) {
  EXPECT_EQ(score_mod("score + table[kv_idx - q_idx + 4096]").diagonal_value_count(), 1);
  EXPECT_EQ(score_mod("score + bias[h][q_idx - kv_idx + 4095]").diagonal_value_count(), 1);       // -(kv - q)
  EXPECT_EQ(score_mod("score + bias[h][2 * kv_idx + 9 - 2 * q_idx]").diagonal_value_count(), 1);  // 2 (kv - q) + 9
  EXPECT_EQ(score_mod("score + bias[h][-(q_idx - kv_idx) + window]").diagonal_value_count(), 1);  // a param beside
  // A T5-style bucket: comparisons, abs and float work on the difference, one read around them.
  EXPECT_EQ(score_mod("score + bias[h][where(kv_idx - q_idx > 0, 16, 0) + min(abs(kv_idx - q_idx), 15)]")
                .diagonal_value_count(), 1);
  // Two reads of the same tree are one value; two trees two.
  EXPECT_EQ(score_mod("score * table[kv_idx - q_idx + 9] + table[kv_idx - q_idx + 9]").diagonal_value_count(), 1);
  EXPECT_EQ(score_mod("score * table[kv_idx - q_idx + 9] + bias[h][q_idx - kv_idx + 9]").diagonal_value_count(), 2);
  // Inside a select on the positions, the read is the value (the select is not one).
  EXPECT_EQ(score_mod("where(q_idx >= kv_idx, score + table[kv_idx - q_idx + 9], score)").diagonal_value_count(), 1);
  EXPECT_EQ(score_mod("score + table[kv_idx + q_idx]").diagonal_value_count(), 0);      // a sum
  EXPECT_EQ(score_mod("score + table[kv_idx - 2 * q_idx]").diagonal_value_count(), 0);  // unequal coefficients
  EXPECT_EQ(score_mod("score + table[q_idx]").diagonal_value_count(), 0);               // a row value
  EXPECT_EQ(score_mod("score + bias[h][kv_idx]").diagonal_value_count(), 0);            // a column value
  EXPECT_EQ(score_mod("score + bias[q_idx % 16][kv_idx]").diagonal_value_count(), 0);   // both, apart
  EXPECT_EQ(score_mod("score + table[(kv_idx - q_idx) * q_idx]").diagonal_value_count(), 0);
  EXPECT_EQ(score_mod("score + slope[h] * float(kv_idx - q_idx)").diagonal_value_count(), 1);  // (ALiBi: affine first)
  EXPECT_EQ(score_mod("score + float(kv_idx - q_idx)").diagonal_value_count(), 0);      // no read
  EXPECT_EQ(score_mod("score + table[int(score) + kv_idx - q_idx]").diagonal_value_count(), 0);  // reads the score
  EXPECT_EQ(mask_mod("table[kv_idx - q_idx + 9] > 0.0").diagonal_value_count(), 0);     // a mask_mod's: none
}

// What a kernel asks before staging a score_mod's diagonal values: whether its derivative reads
// diagonal values of its own (the backward's would stay per score), and whether the mod is affine
// in kv_idx (ALiBi keeps its two FFMAs a score).
TEST(Emitter, DiagonalValuesOfTheDerivativeAndAffineScores) {
  EXPECT_FALSE(score_mod("score + table[kv_idx - q_idx + 4096]").gradient_has_diagonal_values());  // derivative 1
  EXPECT_TRUE(score_mod("score * table[kv_idx - q_idx + 4096]").gradient_has_diagonal_values());
  EXPECT_TRUE(score_mod("score + table[kv_idx - q_idx + 9] * tanh(score)").gradient_has_diagonal_values());
  EXPECT_FALSE(score_mod("score * 0.5 + bias[h][q_idx - kv_idx + 9]").gradient_has_diagonal_values());
  EXPECT_FALSE(score_mod("score * bias[h][kv_idx]").gradient_has_diagonal_values());  // no diagonal values at all
  EXPECT_TRUE(score_mod("score + slope[h] * float(kv_idx - q_idx)").diagonal_values_are_kv_affine());
  EXPECT_FALSE(score_mod("score + table[kv_idx - q_idx + 4096]").diagonal_values_are_kv_affine());
  EXPECT_FALSE(score_mod("score + slope[h] * float(kv_idx)").diagonal_values_are_kv_affine());  // no diagonal values
  EXPECT_FALSE(mask_mod("table[kv_idx - q_idx + 9] > 0.0").gradient_has_diagonal_values());
  EXPECT_FALSE(mask_mod("table[kv_idx - q_idx + 9] > 0.0").diagonal_values_are_kv_affine());
}

// The one form whose diagonal value the forward adds to the scores' accumulators ahead of Q K^T:
// `score + V` or `V + score`, V the only diagonal value and a float.
TEST(Emitter, DiagonalValueAddedToTheScore) {
  EXPECT_TRUE(score_mod("score + bias[h][kv_idx - q_idx + 4096]").diagonal_value_is_added_to_score());
  EXPECT_TRUE(score_mod("bias[h][kv_idx - q_idx + 4096] + score").diagonal_value_is_added_to_score());
  EXPECT_TRUE(score_mod("score + table[kv_idx - q_idx + 9]").diagonal_value_is_added_to_score());  // bf16, read as float
  EXPECT_TRUE(score_mod("score + bias[h][where(kv_idx - q_idx > 0, 16, 0) + min(15, abs(kv_idx - q_idx))]")
                  .diagonal_value_is_added_to_score());  // a bucket
  EXPECT_FALSE(score_mod("score - bias[h][kv_idx - q_idx + 4096]").diagonal_value_is_added_to_score());
  EXPECT_FALSE(score_mod("score * 0.5 + bias[h][kv_idx - q_idx + 4096]").diagonal_value_is_added_to_score());
  EXPECT_FALSE(score_mod("score * bias[h][kv_idx - q_idx + 4096]").diagonal_value_is_added_to_score());
  EXPECT_FALSE(score_mod("score + bias[h][kv_idx - q_idx + 4096] + bias[h][q_idx - kv_idx + 4096]")
                   .diagonal_value_is_added_to_score());  // two values
  EXPECT_TRUE(score_mod("score + 2.0 * bias[h][kv_idx - q_idx + 4096]").diagonal_value_is_added_to_score());  // V is the product
  EXPECT_TRUE(score_mod("score + float(doc[kv_idx - q_idx + 9])").diagonal_value_is_added_to_score());
  EXPECT_FALSE(score_mod("score + doc[kv_idx - q_idx + 9]").diagonal_value_is_added_to_score());  // an int value
  EXPECT_FALSE(score_mod("score + bias[h][kv_idx]").diagonal_value_is_added_to_score());  // a column value
  EXPECT_FALSE(score_mod("score").diagonal_value_is_added_to_score());
  EXPECT_FALSE(mask_mod("table[kv_idx - q_idx + 9] > 0.0").diagonal_value_is_added_to_score());
}

// Whether a diagonal value reads b, q_len or kv_len: then no table per head and diagonal holds it
// (the kernels' diagonal tables). Reads of them outside the values do not count.
TEST(Emitter, DiagonalValuesReadingTheBatchOrLengths) {
  EXPECT_FALSE(score_mod("score + bias[h][kv_idx - q_idx + 4096]").diagonal_values_read_batch_or_lengths());
  EXPECT_FALSE(score_mod("score + bias[h][where(kv_idx - q_idx > 0, 16, 0) + min(15, abs(kv_idx - q_idx))]")
                   .diagonal_values_read_batch_or_lengths());
  EXPECT_TRUE(score_mod("score + bias[h][kv_idx - q_idx + q_len - 1]").diagonal_values_read_batch_or_lengths());
  EXPECT_TRUE(score_mod("score + bias[h][kv_idx - q_idx + kv_len]").diagonal_values_read_batch_or_lengths());
  EXPECT_TRUE(score_mod("score + bias[b][kv_idx - q_idx + 4096]").diagonal_values_read_batch_or_lengths());
  EXPECT_TRUE(score_mod("score + table[kv_idx - q_idx + 9] + bias[b][q_idx - kv_idx + 4096]")
                  .diagonal_values_read_batch_or_lengths());  // the second value
  EXPECT_FALSE(score_mod("score * float(q_len) + bias[h][kv_idx - q_idx + 4096]").diagonal_values_read_batch_or_lengths());
  EXPECT_FALSE(score_mod("score + bias[b][kv_idx]").diagonal_values_read_batch_or_lengths());  // no diagonal value
  EXPECT_FALSE(mask_mod("table[kv_idx - q_idx + 9 + q_len] > 0.0").diagonal_values_read_batch_or_lengths());
}

// The diagonal values function evaluates each value with q_idx at 0 and the diagonal passed as
// kv_idx; the score function is the column form's, reading the values from the arrays.
TEST(Emitter, DiagonalValuesFeedThePrescaledScore) {
  const std::string cuda =
      score_mod("score + bias[h][q_idx - kv_idx + 4095]").emit_cuda_prescaled_diagonals("diags", "scored", 1.0, 2.0);
  EXPECT_NE(cuda.find("__device__ __forceinline__ void diags(int b, int h, int kv_idx, int q_len, int kv_len, const "
                      "FlexjitModArgs& args, unsigned (&flexjit_values)[1], unsigned (&flexjit_value_errors)[1]) {\n"
                      "#line 1 \"score_mod\"\n"),
            std::string::npos) << cuda;
  // The factor 2 is distributed over score + R: the value is staged times 2.
  EXPECT_NE(cuda.find("flexjit_values[0] = __float_as_uint((flexjit_read(args.buf_bias, flexjit_errors, h, "
                      "flexjit_iadd(flexjit_isub(0, kv_idx), 4095)) * 2.0f));"),
            std::string::npos) << cuda;
  EXPECT_NE(cuda.find("__device__ __forceinline__ float scored(float flexjit_acc, float flexjit_score_scale, int b, "
                      "int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& "
                      "flexjit_errors, const unsigned (&flexjit_values)[1], const unsigned (&flexjit_value_errors)[1]) {\n"),
            std::string::npos) << cuda;
  EXPECT_NE(cuda.find("flexjit_column_value(flexjit_v0, flexjit_value_errors[0], flexjit_errors)"), std::string::npos)
      << cuda;
  EXPECT_EQ(cuda.find("buf_bias", cuda.find("scored(")), std::string::npos) << cuda;  // no read in the score
  EXPECT_EQ(usage_error_of([] { score_mod("score + bias[h][kv_idx]").emit_cuda_prescaled_diagonals("d", "s", 1.0, 1.0); }),
            "the score_mod has no diagonal values (no buffer read that depends on kv_idx - q_idx alone)");
  EXPECT_EQ(usage_error_of([] { mask_mod("table[kv_idx - q_idx] > 0.0").emit_cuda_prescaled_diagonals("d", "s", 1.0, 1.0); }),
            "emit_cuda_prescaled_diagonals needs a score_mod; a mask_mod has no score");
}

TEST(Emitter, ColumnFunctionsNeedColumnValues) {
  EXPECT_EQ(usage_error_of([] { mask_mod("q_idx >= kv_idx").emit_cuda_columns("cols", "masked"); }),
            "the mask_mod has no column values (no buffer read that depends on kv_idx alone)");
  EXPECT_EQ(usage_error_of([] { score_mod("score + slope[kv_idx % 16]").emit_cuda_columns("cols", "masked"); }),
            "emit_cuda_columns needs a mask_mod; a score_mod's take emit_cuda_prescaled_columns");
  EXPECT_EQ(usage_error_of([] { score_mod("score + slope[h]").emit_cuda_prescaled_columns("cols", "scored", 1.0, 1.0); }),
            "the score_mod has no column values (no buffer read that depends on kv_idx alone)");
  EXPECT_EQ(usage_error_of([] { mask_mod("doc[kv_idx] > 0").emit_cuda_prescaled_columns("cols", "scored", 1.0, 1.0); }),
            "emit_cuda_prescaled_columns needs a score_mod; a mask_mod has no score");
  EXPECT_EQ(usage_error_of([] { mask_mod("doc[kv_idx] > 0").emit_cuda_columns("cols()", "masked"); }),
            "function name 'cols()' is not a valid C++ identifier");
}

}  // namespace
}  // namespace flexjit::test
