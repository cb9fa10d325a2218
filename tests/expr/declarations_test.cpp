// Buffer and parameter declarations: the CLI forms and the validation of the declaration table.
#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

TEST(BufferDecl, ParsesTheCliForm) {
  const BufferDecl bias = BufferDecl::parse("bias:f32:16x8191");
  EXPECT_EQ(bias.name, "bias");
  EXPECT_EQ(bias.dtype, DType::f32);
  EXPECT_EQ(bias.shape, (std::vector<int64_t>{16, 8191}));
  const BufferDecl doc = BufferDecl::parse("doc:int32:?");
  EXPECT_EQ(doc.dtype, DType::i32);
  EXPECT_EQ(doc.shape, (std::vector<int64_t>{-1}));
  EXPECT_EQ(BufferDecl::parse("t:bf16:2x?x3").shape, (std::vector<int64_t>{2, -1, 3}));
  EXPECT_EQ(BufferDecl::parse("r:u8:1x1x1x1x1x1x1x1").shape.size(), 8u);
}

TEST(BufferDecl, ExplainsEachMalformedPart) {
  auto error = [](const char* text) { return usage_error_of([&] { BufferDecl::parse(text); }); };
  EXPECT_EQ(error("bias:f32"),
            "buffer declaration 'bias:f32' must have the form NAME:DTYPE:DIM[xDIM...], e.g. bias:f32:16x8191");
  EXPECT_EQ(error("bias:f32:4:5"),
            "buffer declaration 'bias:f32:4:5' must have the form NAME:DTYPE:DIM[xDIM...], e.g. bias:f32:16x8191");
  EXPECT_EQ(error(":f32:4"), "buffer name is empty");
  EXPECT_EQ(error("1bias:f32:4"),
            "buffer name '1bias' is not an identifier (use letters, digits and '_', not starting with a digit)");
  EXPECT_EQ(error("q_idx:f32:4"), "buffer name 'q_idx' is a built-in variable; choose another name");
  EXPECT_EQ(error("exp:f32:4"), "buffer name 'exp' is a built-in function; choose another name");
  EXPECT_EQ(error("inf:f32:4"), "buffer name 'inf' is a keyword of the expression language; choose another name");
  EXPECT_EQ(error("asm:f32:4"), "buffer name 'asm' is a C++/CUDA keyword; choose another name");
  EXPECT_EQ(error("flexjit_read:f32:4"),
            "buffer name 'flexjit_read' is reserved for generated code (no leading '_', no '__', no 'flexjit' "
            "prefix); choose another name");
  EXPECT_EQ(error("bias:f64:4"),
            "unknown dtype 'f64' in buffer declaration 'bias:f64:4' (expected f16, bf16, f32, i32 or u8)");
  EXPECT_EQ(error("bias:f32:"),
            "buffer declaration 'bias:f32:' has no shape; give DIM[xDIM...], e.g. 4096 or 16x8191 ('?' for an "
            "extent given at call time)");
  EXPECT_EQ(error("bias:f32:16xabc"),
            "dimension 'abc' in buffer declaration 'bias:f32:16xabc' is not a positive integer or '?'");
  EXPECT_EQ(error("bias:f32:16x-3"),
            "dimension '-3' in buffer declaration 'bias:f32:16x-3' is not a positive integer or '?'");
  EXPECT_EQ(error("bias:f32:16x"), "dimension '' in buffer declaration 'bias:f32:16x' is not a positive integer or '?'");
  EXPECT_EQ(error("bias:f32:0"), "dimension 0 in buffer declaration 'bias:f32:0' must be positive");
  // Issue 17 item 1: extents whose byte count overflows were accepted (and wrapped later).
  EXPECT_EQ(error("d:i32:4294967296x4294967296x1"),
            "buffer 'd' has shape 4294967296x4294967296x1, more bytes than a 64-bit index can address; check the "
            "extents");
  EXPECT_EQ(error("d:u8:999999999999999x999999999999999"),
            "buffer 'd' has shape 999999999999999x999999999999999, more bytes than a 64-bit index can address; "
            "check the extents");
  EXPECT_EQ(error("d:f32:1048576x1048576x?"), "no error");  // 2^42 bytes: large, but countable
  EXPECT_EQ(error("bias:f32:1x1x1x1x1x1x1x1x1"), "buffer 'bias' has rank 9; the largest supported rank is 8");
}

TEST(ParamDecl, ParsesTheCliForm) {
  EXPECT_EQ(ParamDecl::parse("cap:float").type, ScalarType::floating);
  EXPECT_EQ(ParamDecl::parse("window:int").type, ScalarType::integer);
  EXPECT_EQ(ParamDecl::parse("window:int").name, "window");
}

TEST(ParamDecl, ExplainsEachMalformedPart) {
  auto error = [](const char* text) { return usage_error_of([&] { ParamDecl::parse(text); }); };
  EXPECT_EQ(error("cap"),
            "parameter declaration 'cap' must have the form NAME:TYPE with TYPE int or float, e.g. cap:float");
  EXPECT_EQ(error("cap:float:1"),
            "parameter declaration 'cap:float:1' must have the form NAME:TYPE with TYPE int or float, e.g. cap:float");
  EXPECT_EQ(error("cap:double"), "unknown parameter type 'double' in 'cap:double' (expected int or float)");
  EXPECT_EQ(error("flag:bool"),
            "parameter type 'bool' in 'flag:bool' is not supported; parameters are int or float (use an int 0 or 1 "
            "as a flag)");
  EXPECT_EQ(error("score:float"), "parameter name 'score' is a built-in variable; choose another name");
  EXPECT_EQ(error("my cap:float"),
            "parameter name 'my cap' is not an identifier (use letters, digits and '_', not starting with a digit)");
}

TEST(Declarations, AreValidatedBeforeParsing) {
  auto error = [](const Declarations& d) { return usage_error_of([&] { Expr::parse(ModKind::score, "score", d); }); };
  Declarations duplicate;
  duplicate.params = {ParamDecl::parse("x:int")};
  duplicate.buffers = {BufferDecl::parse("x:f32:4")};
  EXPECT_EQ(error(duplicate), "'x' is declared more than once (buffers and parameters share one namespace)");
  Declarations rank0;
  rank0.buffers = {{"t", DType::f32, {}}};
  EXPECT_EQ(error(rank0), "buffer 't' has rank 0; give it 1 to 8 dimensions");
  Declarations rank9;
  rank9.buffers = {{"t", DType::f32, std::vector<int64_t>(9, 2)}};
  EXPECT_EQ(error(rank9), "buffer 't' has rank 9; the largest supported rank is 8");
  Declarations zero;
  zero.buffers = {{"t", DType::f32, {4, 0}}};
  EXPECT_EQ(error(zero), "buffer 't' has extent 0 in dimension 2; extents must be positive (or -1 for one given at call time)");
  Declarations boolean;
  boolean.params = {{"p", ScalarType::boolean}};
  EXPECT_EQ(error(boolean), "parameter 'p' has type bool; parameters are int or float");
  Declarations bad_name;
  bad_name.buffers = {{"x-y", DType::f32, {4}}};
  EXPECT_EQ(error(bad_name), "buffer name 'x-y' is not an identifier (use letters, digits and '_', not starting with a digit)");
  const Declarations d = standard_declarations();
  EXPECT_EQ(d.find_buffer("bias")->shape.size(), 2u);
  EXPECT_EQ(d.find_buffer("cap"), nullptr);
  EXPECT_EQ(d.find_param("cap")->type, ScalarType::floating);
  EXPECT_EQ(d.find_param("bias"), nullptr);
}

}  // namespace
}  // namespace flexjit::test
