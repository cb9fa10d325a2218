// Equality propagation in the emitted code (src/expr/equalities.cpp): in `A && B`, an integer
// equality among A's conjuncts lets B read the side that does not depend on kv_idx. Expected
// bodies are written out by hand; the cases that must stay as written are checked too (float
// equalities, `||`, an equality on the right side, both sides depending on the key).
#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

std::string body(const Expr& expr) {
  const std::string cuda = expr.emit_cuda("f");
  const size_t start = cuda.find("  return ") + 9;
  return cuda.substr(start, cuda.find(";\n}", start) - start);
}

// The lambda of an eager `&&` whose right side reads buffers (emitter.cpp, emit_logical).
std::string land(const std::string& lhs, const std::string& rhs) {
  return "flexjit_land(" + lhs + ", [&](unsigned& flexjit_errors_14) -> bool { return " + rhs + "; }, flexjit_errors)";
}

TEST(Equalities, NestedDocumentOffsetsReadTheRowsDocument) {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("doc:i32:4096"));
  d.buffers.push_back(BufferDecl::parse("start:i32:64"));
  const Expr nested =
      mask_mod("doc[q_idx] == doc[kv_idx] && q_idx - start[doc[q_idx]] >= kv_idx - start[doc[kv_idx]]", d);
  const std::string doc_q14 = "flexjit_read(args.buf_doc, flexjit_errors_14, q_idx)";
  const std::string start_q14 = "flexjit_read(args.buf_start, flexjit_errors_14, " + doc_q14 + ")";
  EXPECT_EQ(body(nested),
            land("(flexjit_read(args.buf_doc, flexjit_errors, q_idx) == flexjit_read(args.buf_doc, flexjit_errors, kv_idx))",
                 "(flexjit_isub(q_idx, " + start_q14 + ") >= flexjit_isub(kv_idx, " + start_q14 + "))"));
  // The canonical text (cache keys, messages) keeps what the user wrote.
  EXPECT_EQ(nested.canonical(), "doc[q_idx] == doc[kv_idx] && q_idx - start[doc[q_idx]] >= kv_idx - start[doc[kv_idx]]");
}

TEST(Equalities, VariablesAndChainsOfConjuncts) {
  EXPECT_EQ(body(mask_mod("q_idx == kv_idx && flags[kv_idx] > 0")),
            land("(q_idx == kv_idx)", "(flexjit_read(args.buf_flags, flexjit_errors_14, q_idx) > 0)"));
  // ((h == 1 && doc[q] == doc[k]) && doc[k] > 2): the equality is a conjunct of the left side.
  EXPECT_EQ(body(mask_mod("h == 1 && doc[q_idx] == doc[kv_idx] && doc[kv_idx] > 2")),
            land(land("(h == 1)", "(flexjit_read(args.buf_doc, flexjit_errors_14, q_idx) == "
                                  "flexjit_read(args.buf_doc, flexjit_errors_14, kv_idx))"),
                 "(flexjit_read(args.buf_doc, flexjit_errors_14, q_idx) > 2)"));
}

TEST(Equalities, WhatMustStayAsWritten) {
  // A float equality (NaN, -0.0): not used.
  EXPECT_EQ(body(mask_mod("bias[h][kv_idx] == slope[h] && bias[h][kv_idx] > 0.0")),
            land("(flexjit_read(args.buf_bias, flexjit_errors, h, kv_idx) == flexjit_read(args.buf_slope, flexjit_errors, h))",
                 "(flexjit_read(args.buf_bias, flexjit_errors_14, h, kv_idx) > 0.0f)"));
  // `||`: the right side matters exactly when the equality is false.
  EXPECT_EQ(body(mask_mod("doc[q_idx] == doc[kv_idx] || doc[kv_idx] > 3")),
            "flexjit_lor((flexjit_read(args.buf_doc, flexjit_errors, q_idx) == flexjit_read(args.buf_doc, "
            "flexjit_errors, kv_idx)), [&](unsigned& flexjit_errors_14) -> bool { return "
            "(flexjit_read(args.buf_doc, flexjit_errors_14, kv_idx) > 3); }, flexjit_errors)");
  // An equality on the right side says nothing about the left.
  EXPECT_EQ(body(mask_mod("doc[kv_idx] > 3 && doc[q_idx] == doc[kv_idx]")),
            land("(flexjit_read(args.buf_doc, flexjit_errors, kv_idx) > 3)",
                 "(flexjit_read(args.buf_doc, flexjit_errors_14, q_idx) == flexjit_read(args.buf_doc, flexjit_errors_14, "
                 "kv_idx))"));
  // Both sides depend on the key: nothing to gain.
  EXPECT_EQ(body(mask_mod("doc[kv_idx] == doc[kv_idx + 1] && doc[kv_idx + 1] > 0")),
            land("(flexjit_read(args.buf_doc, flexjit_errors, kv_idx) == flexjit_read(args.buf_doc, flexjit_errors, "
                 "flexjit_iadd(kv_idx, 1)))",
                 "(flexjit_read(args.buf_doc, flexjit_errors_14, flexjit_iadd(kv_idx, 1)) > 0)"));
}

}  // namespace
}  // namespace flexjit::test
