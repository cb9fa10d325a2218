// The host interpreter: integer semantics identical to the device, double-precision floats,
// short-circuiting, bounds-checked buffer reads, input validation, speed.
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <vector>

#include "expr/interpreter.hpp"
#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

struct Inputs {
  std::vector<int32_t> doc = std::vector<int32_t>(4096);
  std::vector<float> bias = std::vector<float>(16 * 8191);
  std::vector<float> slope = std::vector<float>(16);
  std::vector<uint16_t> table = std::vector<uint16_t>(100);
  std::vector<uint16_t> halfs = std::vector<uint16_t>(8);
  std::vector<uint8_t> flags = std::vector<uint8_t>(4096);
  EvalInputs view;

  Inputs() {
    for (size_t i = 0; i < doc.size(); ++i) doc[i] = static_cast<int32_t>(i / 1000);
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i) * 0.5f;
    for (size_t i = 0; i < slope.size(); ++i) slope[i] = std::exp2(-static_cast<float>(i + 1) / 2.0f);
    for (size_t i = 0; i < table.size(); ++i) {
      const float value = static_cast<float>(i) + 0.5f;  // exact in bf16 up to 128
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      table[i] = static_cast<uint16_t>(bits >> 16);
    }
    halfs = {0x3c00, 0xc000, 0x3555, 0x0001, 0x7bff, 0x7c00, 0xfc00, 0x0000};  // 1, -2, 0.333, min subnormal, 65504, inf, -inf, 0
    for (size_t i = 0; i < flags.size(); ++i) flags[i] = static_cast<uint8_t>(i % 256);
    view.buffers["doc"] = {doc.data(), DType::i32, {4096}};
    view.buffers["bias"] = {bias.data(), DType::f32, {16, 8191}};
    view.buffers["slope"] = {slope.data(), DType::f32, {16}};
    view.buffers["table"] = {table.data(), DType::bf16, {100}};
    view.buffers["halfs"] = {halfs.data(), DType::f16, {8}};
    view.buffers["flags"] = {flags.data(), DType::u8, {4096}};
    view.params["cap"] = 2.5;
    view.params["window"] = 7;
  }
};

double eval(const std::string& text, EvalPoint point = {}, ModKind kind = ModKind::score) {
  static const Inputs inputs;
  return Expr::parse(kind, text, standard_declarations()).evaluate(point, inputs.view);
}

EvalPoint at(int q_idx, int kv_idx, double score = 0.0) {
  EvalPoint p;
  p.q_idx = q_idx;
  p.kv_idx = kv_idx;
  p.score = score;
  p.q_len = 4096;
  p.kv_len = 4096;
  return p;
}

TEST(Interpreter, IntegerArithmeticWrapsLikeTheDevice) {
  EXPECT_EQ(eval("q_idx + kv_idx", at(INT_MAX, 1)), INT_MIN);
  EXPECT_EQ(eval("q_idx - kv_idx", at(INT_MIN, 1)), INT_MAX);
  EXPECT_EQ(eval("q_idx * kv_idx", at(65536, 65536)), 0);
  EXPECT_EQ(eval("q_idx * kv_idx", at(46341, 46341)), -2147479015);
  EXPECT_EQ(eval("-q_idx", at(INT_MIN, 0)), INT_MIN);
  EXPECT_EQ(eval("abs(q_idx)", at(INT_MIN, 0)), INT_MIN);
  EXPECT_EQ(eval("2147483647 + 1"), INT_MIN);
}

TEST(Interpreter, IntegerDivisionTruncatesAndNeverTraps) {
  EXPECT_EQ(eval("q_idx / kv_idx", at(-7, 2)), -3);
  EXPECT_EQ(eval("q_idx % kv_idx", at(-7, 2)), -1);
  EXPECT_EQ(eval("q_idx / kv_idx", at(7, -2)), -3);
  EXPECT_EQ(eval("q_idx % kv_idx", at(7, -2)), 1);
  EXPECT_EQ(eval("q_idx / kv_idx", at(7, 0)), 0);
  EXPECT_EQ(eval("q_idx % kv_idx", at(7, 0)), 0);
  EXPECT_EQ(eval("q_idx / kv_idx", at(INT_MIN, -1)), INT_MIN);
  EXPECT_EQ(eval("q_idx % kv_idx", at(INT_MIN, -1)), 0);
}

TEST(Interpreter, FloatsAreDoublePrecision) {
  EXPECT_DOUBLE_EQ(eval("score / 3.0", at(0, 0, 1.0)), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(eval("30.0 * tanh(score / 30.0)", at(0, 0, 12.0)), 30.0 * std::tanh(0.4));
  EXPECT_DOUBLE_EQ(eval("q_idx / 2.0", at(7, 0)), 3.5);
  EXPECT_DOUBLE_EQ(eval("sigmoid(score)", at(0, 0, 0.3)), 1.0 / (1.0 + std::exp(-0.3)));
  EXPECT_DOUBLE_EQ(eval("rsqrt(score)", at(0, 0, 4.0)), 0.5);
  EXPECT_DOUBLE_EQ(eval("pow(score, 2)", at(0, 0, -3.0)), 9.0);
  EXPECT_DOUBLE_EQ(eval("exp2(score) + log2(8.0) + exp(0.0) + log(1.0)", at(0, 0, 3.0)), 12.0);
  EXPECT_DOUBLE_EQ(eval("floor(score) + ceil(score)", at(0, 0, -1.5)), -3.0);
  EXPECT_DOUBLE_EQ(eval("sin(score) + cos(score)", at(0, 0, 0.7)), std::sin(0.7) + std::cos(0.7));
  EXPECT_DOUBLE_EQ(eval("sqrt(score) + abs(-score) + min(score, 1) + max(score, 1) + clamp(score, 0, 2)", at(0, 0, 9.0)),
                   3.0 + 9.0 + 1.0 + 9.0 + 2.0);
  EXPECT_EQ(eval("where(q_idx >= kv_idx, score, -inf)", at(1, 2, 5.0)), -HUGE_VAL);
  EXPECT_EQ(eval("min(q_idx, kv_idx) + max(q_idx, kv_idx) + clamp(q_idx, 0, 3)", at(5, -2)), -2 + 5 + 3);
}

TEST(Interpreter, ConversionsTruncateAndSaturate) {
  EXPECT_EQ(eval("int(score)", at(0, 0, -2.7)), -2);
  EXPECT_EQ(eval("int(score)", at(0, 0, 2.7)), 2);
  EXPECT_EQ(eval("int(score)", at(0, 0, 1e20)), INT_MAX);
  EXPECT_EQ(eval("int(score)", at(0, 0, -1e20)), INT_MIN);
  EXPECT_EQ(eval("int(score)", at(0, 0, std::nan(""))), 0);
  EXPECT_EQ(eval("int(q_idx > 3) + float(kv_idx > 3)", at(5, 1)), 1.0);
}

TEST(Interpreter, MasksYieldZeroOrOne) {
  EXPECT_EQ(eval("q_idx >= kv_idx", at(3, 2), ModKind::mask), 1.0);
  EXPECT_EQ(eval("q_idx >= kv_idx", at(2, 3), ModKind::mask), 0.0);
  EXPECT_EQ(eval("(q_idx > 0) ^ (kv_idx > 0)", at(1, 1), ModKind::mask), 0.0);
  EXPECT_EQ(eval("(q_idx > 0) ^ (kv_idx > 0)", at(1, 0), ModKind::mask), 1.0);
  EXPECT_EQ(eval("(q_idx > 0) & (kv_idx > 0) | false", at(1, 1), ModKind::mask), 1.0);
  EXPECT_EQ(eval("!(q_idx > 0) == (kv_idx > 0)", at(1, 0), ModKind::mask), 1.0);
  EXPECT_EQ(eval("q_idx < 1.5", at(1, 0), ModKind::mask), 1.0);
  EXPECT_EQ(eval("(q_idx ^ kv_idx) == 6 && (q_idx | kv_idx) == 7 && (q_idx & kv_idx) == 1", at(3, 5), ModKind::mask), 1.0);
}

TEST(Interpreter, BuffersOfEveryDtype) {
  EXPECT_EQ(eval("doc[q_idx] == doc[kv_idx]", at(10, 999), ModKind::mask), 1.0);
  EXPECT_EQ(eval("doc[q_idx] == doc[kv_idx]", at(10, 1000), ModKind::mask), 0.0);
  EXPECT_EQ(eval("bias[h][q_idx]", at(7, 0)), 3.5);
  EXPECT_EQ(eval("bias[1][q_idx]", at(7, 0)), (8191 + 7) * 0.5);
  EXPECT_DOUBLE_EQ(eval("score + slope[h] * (kv_idx - q_idx)", at(10, 4, 1.0)), 1.0 + static_cast<double>(std::exp2(-0.5f)) * -6.0);
  EXPECT_EQ(eval("table[q_idx]", at(42, 0)), 42.5);
  EXPECT_EQ(eval("halfs[0] + halfs[1]"), -1.0);
  EXPECT_DOUBLE_EQ(eval("halfs[2]"), 0x3555 == 0x3555 ? 0.333251953125 : 0.0);
  EXPECT_EQ(eval("halfs[3]"), std::ldexp(1.0, -24));
  EXPECT_EQ(eval("halfs[4]"), 65504.0);
  EXPECT_EQ(eval("halfs[5]"), HUGE_VAL);
  EXPECT_EQ(eval("halfs[6]"), -HUGE_VAL);
  EXPECT_EQ(eval("flags[q_idx]", at(300, 0)), 44);
  EXPECT_EQ(eval("cap * window"), 17.5);
}

TEST(Interpreter, ShortCircuitsLikeTheDevice) {
  // The out-of-bounds read is never evaluated.
  EXPECT_EQ(eval("q_idx < 4096 && doc[q_idx] == 0", at(5000, 0), ModKind::mask), 0.0);
  EXPECT_EQ(eval("q_idx >= 4096 || doc[q_idx] == 0", at(5000, 0), ModKind::mask), 1.0);
  EXPECT_EQ(eval("where(q_idx < 4096, doc[q_idx], -1)", at(5000, 0)), -1);
  EXPECT_EQ(eval("q_idx < 4096 ? doc[q_idx] : -1", at(5000, 0)), -1);
}

TEST(Interpreter, OutOfBoundsReadsNameTheExpressionIndexAndShape) {
  const Inputs inputs;
  const Expr mask = mask_mod("doc[q_idx] == doc[kv_idx]");
  try {
    mask.evaluate(at(4100, 0), inputs.view);
    FAIL() << "no error";
  } catch (const ExprError& e) {
    EXPECT_STREQ(e.what(),
                 "mask_mod:1:1: buffer read doc[4100] is out of bounds for doc of shape [4096]\n"
                 "  doc[q_idx] == doc[kv_idx]\n"
                 "  ^~~~~~~~~~");
  }
  const Expr score = score_mod("score + bias[h][q_idx - kv_idx + 4095]");
  try {
    EvalPoint p = at(5000, 0);
    p.h = 3;
    score.evaluate(p, inputs.view);
    FAIL() << "no error";
  } catch (const ExprError& e) {
    EXPECT_STREQ(e.what(),
                 "score_mod:1:9: buffer read bias[3][9095] is out of bounds for bias of shape [16, 8191]\n"
                 "  score + bias[h][q_idx - kv_idx + 4095]\n"
                 "          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
  }
  EXPECT_THROW(mask.evaluate(at(-1, 0), inputs.view), ExprError);
}

TEST(Interpreter, InputsAreValidatedAtBind) {
  const Inputs inputs;
  const Expr score = score_mod("score * cap + doc[q_idx] + window");
  EvalInputs missing = inputs.view;
  missing.params.erase("cap");
  EXPECT_EQ(usage_error_of([&] { score.bind(missing); }),
            "score_mod reads parameter 'cap', but no value was given for it");
  EvalInputs fractional = inputs.view;
  fractional.params["window"] = 2.5;
  EXPECT_EQ(usage_error_of([&] { score.bind(fractional); }),
            "parameter 'window' of score_mod is an int, but the value given is 2.500000");
  EvalInputs no_doc = inputs.view;
  no_doc.buffers.erase("doc");
  EXPECT_EQ(usage_error_of([&] { score.bind(no_doc); }),
            "score_mod reads buffer 'doc', but no data was given for it");
  EvalInputs wrong_dtype = inputs.view;
  wrong_dtype.buffers["doc"].dtype = DType::f32;
  EXPECT_EQ(usage_error_of([&] { score.bind(wrong_dtype); }),
            "buffer 'doc' is declared as i32, but the data given is f32");
  EvalInputs wrong_rank = inputs.view;
  wrong_rank.buffers["doc"].shape = {64, 64};
  EXPECT_EQ(usage_error_of([&] { score.bind(wrong_rank); }),
            "buffer 'doc' is declared with rank 1, but the data given has rank 2");
  EvalInputs wrong_extent = inputs.view;
  wrong_extent.buffers["doc"].shape = {4000};
  EXPECT_EQ(usage_error_of([&] { score.bind(wrong_extent); }),
            "buffer 'doc' is declared with shape [4096], but the data given has shape [4000]");
  EvalInputs null_data = inputs.view;
  null_data.buffers["doc"].data = nullptr;
  EXPECT_EQ(usage_error_of([&] { score.bind(null_data); }),
            "buffer 'doc' of score_mod was given no data (a null pointer)");
  // A call-time extent ('?') accepts any size, and bounds follow the data given.
  EvalInputs small_table = inputs.view;
  small_table.buffers["table"].shape = {10};
  const Expr table = score_mod("table[q_idx]");
  EXPECT_EQ(table.evaluate(at(9, 0), small_table), 9.5);
  EXPECT_THROW(table.evaluate(at(10, 0), small_table), ExprError);
  // Inputs the expression does not read need not be given.
  EXPECT_EQ(mask_mod("q_idx >= kv_idx").evaluate(at(1, 0), {}), 1.0);
}

TEST(Interpreter, BoundEvaluatorIsCopyableAndFast) {
  const Inputs inputs;
  const Expr mask = mask_mod("doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx");
  const expr::BoundEvaluator evaluator = mask.bind(inputs.view);
  const expr::BoundEvaluator copy = evaluator;  // NOLINT: copies share the program
  EvalPoint p = at(0, 0);
  const auto start = std::chrono::steady_clock::now();
  double kept = 0;
  constexpr int kSide = 2048;
  for (int q = 0; q < kSide; ++q)
    for (int k = 0; k < kSide; ++k) {
      p.q_idx = q;
      p.kv_idx = k;
      kept += copy(p);
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Rows 0..999 keep q+1 keys, 1000..1999 likewise within their document, 2000..2047 too.
  double expected = 0;
  for (int q = 0; q < kSide; ++q) expected += q % 1000 + 1;
  EXPECT_EQ(kept, expected);
  const double ns_per_eval = seconds * 1e9 / (double(kSide) * kSide);
  std::printf("document-causal mask: %.1f ns per evaluation\n", ns_per_eval);
  EXPECT_LT(ns_per_eval, 1000.0);  // generous: debug and sanitizer builds run this too
}

TEST(Interpreter, DeepDerivedExpressionsUseMoreRegisters) {
  std::string source = "score";
  for (int i = 0; i < 100; ++i) source = "tanh(" + source + " * 1.01)";
  const Expr deep = score_mod(source);
  const Expr gradient = deep.gradient();
  double x = 0.3;
  for (int i = 0; i < 100; ++i) x = std::tanh(x * 1.01);
  EXPECT_NEAR(deep.evaluate(at(0, 0, 0.3), {}), x, 1e-12);
  EXPECT_TRUE(std::isfinite(gradient.evaluate(at(0, 0, 0.3), {})));
}

TEST(Interpreter, FormatShape) {
  EXPECT_EQ(expr::format_shape({16, 8191}), "[16, 8191]");
  EXPECT_EQ(expr::format_shape({-1}), "[?]");
}

}  // namespace
}  // namespace flexjit::test

namespace flexjit::test {
namespace {

TEST(Interpreter, OutOfBoundsInADerivedExpressionPointsAtItsText) {
  const Inputs inputs;
  const Expr gradient = score_mod("score * slope[h]").gradient();
  EXPECT_EQ(gradient.source(), "slope[h]");
  EvalPoint p = at(0, 0);
  p.h = 20;
  try {
    gradient.evaluate(p, inputs.view);
    FAIL() << "no error";
  } catch (const ExprError& e) {
    EXPECT_STREQ(e.what(),
                 "score_mod:1:1: buffer read slope[20] is out of bounds for slope of shape [16]\n"
                 "  slope[h]\n"
                 "  ^~~~~~~~");
  }
  const Expr shifted = score_mod("   score * 2.0 + slope[h]").substitute("q_idx", 1);
  EXPECT_THROW(shifted.evaluate(p, inputs.view), ExprError);
}

}  // namespace
}  // namespace flexjit::test
