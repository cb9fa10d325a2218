// Packing call-time parameter values into the kernels' argument bytes (src/codegen/mod_args.cpp):
// the values the kernels read, and the values refused by name because the kernel's 32-bit field
// could not hold them (a finite double beyond a float's range would silently become an infinity).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "codegen/mod_args.hpp"
#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"

namespace flexjit::codegen {
namespace {

Declarations one_param(const char* text) {
  Declarations d;
  d.params.push_back(ParamDecl::parse(text));
  return d;
}

// The packed bytes of one parameter (the struct's only field, at offset 0), or the error.
std::string pack_error(const Declarations& d, const std::string& name, double value) {
  try {
    pack_mod_args(d, ModValues().param(name, value), {name}, "forward");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

float packed_float(double value) {
  const std::vector<unsigned char> bytes = pack_mod_args(one_param("cap:float"), ModValues().param("cap", value), {"cap"}, "forward");
  EXPECT_GE(bytes.size(), sizeof(float));
  float out = 0;
  std::memcpy(&out, bytes.data(), sizeof out);
  return out;
}

TEST(ModArgs, FloatParametersAreNarrowedOnlyWithinRange) {
  EXPECT_EQ(packed_float(30.0), 30.0f);
  EXPECT_EQ(packed_float(-0.5), -0.5f);
  EXPECT_EQ(packed_float(3.0e38), 3.0e38f);
  // Infinities and NaN are values a caller may mean: they pass as given.
  EXPECT_EQ(packed_float(std::numeric_limits<double>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(packed_float(-std::numeric_limits<double>::infinity()), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(packed_float(std::nan(""))));
  const Declarations cap = one_param("cap:float");
  EXPECT_EQ(pack_error(cap, "cap", 1e300),
            "forward: parameter 'cap' is a float, but 1e+300 is beyond the range of a 32-bit float (largest magnitude "
            "about 3.4e38)");
  EXPECT_EQ(pack_error(cap, "cap", -1e39),
            "forward: parameter 'cap' is a float, but -1e+39 is beyond the range of a 32-bit float (largest magnitude "
            "about 3.4e38)");
}

TEST(ModArgs, IntParametersMustBeWhole32BitNumbers) {
  const Declarations n = one_param("n:int");
  const std::vector<unsigned char> bytes = pack_mod_args(n, ModValues().param("n", -7), {"n"}, "forward");
  int32_t out = 0;
  std::memcpy(&out, bytes.data(), sizeof out);
  EXPECT_EQ(out, -7);
  EXPECT_EQ(pack_error(n, "n", 2147483648.0), "forward: parameter 'n' is an int, but 2147483648.000000 is not a 32-bit integer");
  EXPECT_EQ(pack_error(n, "n", 1.5), "forward: parameter 'n' is an int, but 1.500000 is not a 32-bit integer");
  EXPECT_EQ(pack_error(n, "m", 1.0), "forward: value given for parameter 'm', which the variant does not declare");
  try {
    pack_mod_args(n, ModValues(), {"n"}, "forward");
    ADD_FAILURE() << "a missing value was packed";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "forward: no value for parameter 'n' (pass it in ModValues::params, or --param n=VALUE)");
  }
}

// When the kernels' buffer reads may take 32-bit offsets (KernelSpec::buffer_offsets_32): every
// buffer read is non-empty and its largest in-bounds offset, sum of (extent - 1) * stride, is at
// most 2^31 - 1, with no negative stride. The expectations are worked out by hand.
TEST(ModArgs, BufferOffsetsFit32BitsOnlyWhenEveryReadBufferDoes) {
  int word = 0;
  void* p = &word;
  const auto one = [&](TensorView view) { return ModValues().buffer("b", view); };
  const std::set<std::string> read_b = {"b"};
  EXPECT_TRUE(buffer_offsets_fit_32_bits(one(TensorView::contiguous(p, DType::i32, {4096})), read_b));
  EXPECT_TRUE(buffer_offsets_fit_32_bits(one(TensorView::contiguous(p, DType::f32, {16, 8191})), read_b));
  // The longest extent there is, 2^31 - 1 elements (last offset 2^31 - 2).
  EXPECT_TRUE(buffer_offsets_fit_32_bits(one(TensorView::contiguous(p, DType::u8, {2147483647})), read_b));
  // [2][2^30] has its last element at 2^31 - 1, the largest offset that fits; [2][2^30 + 1] at 2^31 + 1.
  EXPECT_TRUE(buffer_offsets_fit_32_bits(one(TensorView::contiguous(p, DType::u8, {2, 1073741824})), read_b));
  EXPECT_FALSE(buffer_offsets_fit_32_bits(one(TensorView::contiguous(p, DType::u8, {2, 1073741825})), read_b));
  // A stride of 0 (a broadcast dimension) adds nothing; its extent must still fit 31 bits.
  EXPECT_TRUE(buffer_offsets_fit_32_bits(one(TensorView::strided(p, DType::i32, {1000, 64}, {0, 1})), read_b));
  EXPECT_FALSE(buffer_offsets_fit_32_bits(one(TensorView::strided(p, DType::i32, {int64_t(1) << 31, 64}, {0, 1})), read_b));
  // A strided view whose span passes 2^31 although it holds few elements: offset 3 * 2^30.
  EXPECT_FALSE(buffer_offsets_fit_32_bits(one(TensorView::strided(p, DType::i32, {4}, {int64_t(1) << 30})), read_b));
  // A reversed view (negative stride) and an empty buffer take the 64-bit reads.
  EXPECT_FALSE(buffer_offsets_fit_32_bits(one(TensorView::strided(p, DType::i32, {8}, {-1})), read_b));
  EXPECT_FALSE(buffer_offsets_fit_32_bits(one(TensorView::contiguous(p, DType::i32, {0})), read_b));
  // Only the buffers the mods read count, and without any there is nothing to specialise.
  EXPECT_FALSE(buffer_offsets_fit_32_bits(one(TensorView::contiguous(p, DType::i32, {8})), {"other"}));
  ModValues two = one(TensorView::contiguous(p, DType::i32, {8}));
  two.buffer("c", TensorView::strided(p, DType::i32, {8}, {-1}));
  EXPECT_TRUE(buffer_offsets_fit_32_bits(two, read_b));
  EXPECT_FALSE(buffer_offsets_fit_32_bits(two, {"b", "c"}));
}

// Which kernels take the 32-bit reads where the call's buffers fit them: every kernel but the
// dK/dV kernel that sums dQ, which takes them where the score_mod reads a table by position, and
// where it reads any buffer beside a mask_mod that reads none (the classes measured faster and
// slower in notes/perf.md "(zzt)" and "(zzu)").
TEST(ModArgs, ThirtyTwoBitReadsInTheDkDvKernelForScoreTablesAndForScoreBuffersBesideAMaskWithout) {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("bias:f32:?x?"));
  d.buffers.push_back(BufferDecl::parse("rel:f32:?"));
  d.buffers.push_back(BufferDecl::parse("slope:f32:?"));
  d.buffers.push_back(BufferDecl::parse("doc:i32:?"));
  d.params.push_back(ParamDecl::parse("cap:float"));
  const Expr table = Expr::parse(ModKind::score, "score + bias[q_idx][kv_idx]", d);
  const Expr diagonal = Expr::parse(ModKind::score, "score + rel[kv_idx - q_idx + 4095]", d);
  const Expr by_document = Expr::parse(ModKind::score, "score + rel[doc[kv_idx]]", d);
  const Expr alibi = Expr::parse(ModKind::score, "score + slope[h] * (kv_idx - q_idx)", d);
  const Expr capped = Expr::parse(ModKind::score, "cap * tanh(score / cap)", d);
  const Expr identity = Expr::parse(ModKind::score, "score", d);
  const Expr causal = Expr::parse(ModKind::mask, "q_idx >= kv_idx", d);
  const Expr documents = Expr::parse(ModKind::mask, "doc[q_idx] == doc[kv_idx]", d);
  // Every other kernel: always (the call's buffers decide the rest).
  EXPECT_TRUE(kernel_takes_32_bit_reads(false, table, documents));
  EXPECT_TRUE(kernel_takes_32_bit_reads(false, identity, documents));
  EXPECT_TRUE(kernel_takes_32_bit_reads(false, alibi, documents));
  EXPECT_TRUE(kernel_takes_32_bit_reads(false, table, causal));
  // The dK/dV kernel that sums dQ: tables whatever the mask reads.
  EXPECT_TRUE(kernel_takes_32_bit_reads(true, table, causal));
  EXPECT_TRUE(kernel_takes_32_bit_reads(true, table, documents));
  EXPECT_TRUE(kernel_takes_32_bit_reads(true, diagonal, documents));
  EXPECT_TRUE(kernel_takes_32_bit_reads(true, by_document, documents));  // indexed through doc[kv_idx]
  // Per-head buffers only beside a mask without buffers.
  EXPECT_TRUE(kernel_takes_32_bit_reads(true, alibi, causal));
  EXPECT_FALSE(kernel_takes_32_bit_reads(true, alibi, documents));
  EXPECT_FALSE(kernel_takes_32_bit_reads(true, identity, documents));  // documents alone
  EXPECT_FALSE(kernel_takes_32_bit_reads(true, capped, causal));       // a parameter is no buffer
  EXPECT_FALSE(kernel_takes_32_bit_reads(true, identity, causal));
}

}  // namespace
}  // namespace flexjit::codegen
