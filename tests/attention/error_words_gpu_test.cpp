// Per-call error words: an out-of-bounds buffer read in a call on one stream is reported by
// check_buffer_errors(that stream) and by the whole-context check_buffer_errors(), never by the
// check of another stream; a backward's dQ kernel (run on a side stream) reports to the caller's
// stream. Fresh random inputs; the outputs are not compared (the fwd/bwd tests do that).
#include <gtest/gtest.h>

#include <functional>

#include "flexjit/error.hpp"
#include "jit/driver.hpp"
#include "support/attention_harness.hpp"
#include "support/scoped.hpp"

namespace flexjit::test {
namespace {

std::string thrown_by(const std::function<void()>& check) {
  try {
    check();
  } catch (const ShapeError& e) {
    return e.what();
  }
  return "";
}

TEST(ErrorWordsGpu, EachStreamReadsOnlyItsOwnCalls) {
  FLEXJIT_REQUIRE_GPU();
  jit::ensure_context();
  check_buffer_errors();  // start clean
  const OwnedStream a, b;
  std::mt19937_64 rng(fresh_seed());
  FwdProblem p;
  p.B = 1, p.Hq = p.Hkv = 2, p.Sq = p.Skv = 300, p.D = p.Dv = 64;
  p.buffers.push_back(document_ids(p.Skv, rng));
  FwdProblem bad_problem = p, good_problem = p;
  bad_problem.mask_mod = "doc[q_idx + 10] == doc[kv_idx]";  // past the end for the last 10 queries
  good_problem.mask_mod = "doc[q_idx] == doc[kv_idx]";
  const Attention bad = make_attention(bad_problem), good = make_attention(good_problem);

  auto q = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.D, p.dtype, false);
  auto k = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.D, p.dtype, false);
  auto v = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.Dv, p.dtype, false);
  auto out = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.Dv, p.dtype, false);
  auto dout = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.Dv, p.dtype, false);
  auto dq = DeviceOperand::allocate(p.B, p.Hq, p.Sq, p.D, p.dtype, false);
  auto dk = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.D, p.dtype, false);
  auto dv = DeviceOperand::allocate(p.B, p.Hkv, p.Skv, p.Dv, p.dtype, false);
  q.upload(random_values(size_t(p.B) * p.Hq * p.Sq * p.D, rng, p.dtype));
  k.upload(random_values(size_t(p.B) * p.Hkv * p.Skv * p.D, rng, p.dtype));
  v.upload(random_values(size_t(p.B) * p.Hkv * p.Skv * p.Dv, rng, p.dtype));
  dout.upload(random_values(size_t(p.B) * p.Hq * p.Sq * p.Dv, rng, p.dtype));
  DeviceBuffer lse = DeviceBuffer::allocate(size_t(p.B) * p.Hq * p.Sq * 4);
  const TensorView lse_view = TensorView::contiguous(lse.data(), DType::f32, {p.B, p.Hq, p.Sq});
  std::vector<DeviceBuffer> storage;
  CallOptions options;
  options.values = upload_buffers(p.buffers, storage, p.params);

  // Forward: the bad call on stream a, a clean one on stream b.
  bad.forward(q.view, k.view, v.view, out.view, lse_view, nullptr, a.stream, options);
  good.forward(q.view, k.view, v.view, out.view, lse_view, nullptr, b.stream, options);
  EXPECT_EQ(thrown_by([&] { check_buffer_errors(b.stream); }), "");
  const std::string on_a = thrown_by([&] { check_buffer_errors(a.stream); });
  EXPECT_NE(on_a.find("indexed a buffer out of bounds"), std::string::npos) << on_a;
  EXPECT_NE(on_a.find("fwd bf16 d64/64"), std::string::npos) << on_a;
  EXPECT_NE(on_a.find("mask_mod=doc[q_idx + 10] == doc[kv_idx]"), std::string::npos) << on_a;
  EXPECT_EQ(thrown_by([&] { check_buffer_errors(a.stream); }), "") << "the word was not cleared";
  EXPECT_EQ(thrown_by([] { check_buffer_errors(); }), "") << "a stream's check clears for the context too";

  // The whole-context check still sees every stream's errors.
  bad.forward(q.view, k.view, v.view, out.view, lse_view, nullptr, b.stream, options);
  const std::string on_context = thrown_by([] { check_buffer_errors(); });
  EXPECT_NE(on_context.find("mask_mod=doc[q_idx + 10] == doc[kv_idx]"), std::string::npos) << on_context;
  EXPECT_EQ(thrown_by([&] { check_buffer_errors(b.stream); }), "");

  // Deterministic backward on stream a with the separate dQ kernel: dQ runs on a side stream but
  // reports to a; dK/dV on a itself.
  good.forward(q.view, k.view, v.view, out.view, lse_view, nullptr, a.stream, options);
  CallOptions deterministic = options;
  deterministic.backward_mode = BackwardMode::deterministic;
  const auto bad_backward_on_a = [&](const CallOptions& call) {
    bad.backward(q.view, k.view, v.view, out.view, lse_view, dout.view, dq.view, dk.view, dv.view, nullptr, a.stream,
                 call);
  };
  {
    const ScopedEnv dq_kernel("FLEXJIT_DETERMINISTIC_DQ", "kernel");
    bad_backward_on_a(deterministic);
  }
  EXPECT_EQ(thrown_by([&] { check_buffer_errors(b.stream); }), "");
  const std::string backward = thrown_by([&] { check_buffer_errors(a.stream); });
  EXPECT_NE(backward.find("\n  bwd_dq bf16 d64/64"), std::string::npos) << backward;
  EXPECT_NE(backward.find("\n  bwd_dkdv bf16 d64/64"), std::string::npos) << backward;
  if (current_device().default_arch() == "sm_90a") {
    // With the ordered sums (sm_90a) the one dK/dV kernel sums dQ as well and reports to a.
    {
      const ScopedEnv ordered("FLEXJIT_DETERMINISTIC_DQ", "ordered");
      bad_backward_on_a(deterministic);
    }
    EXPECT_EQ(thrown_by([&] { check_buffer_errors(b.stream); }), "");
    const std::string ordered = thrown_by([&] { check_buffer_errors(a.stream); });
    EXPECT_NE(ordered.find("\n  bwd_dkdv bf16 d64/64"), std::string::npos) << ordered;
    EXPECT_NE(ordered.find("dq_ordered=1"), std::string::npos) << ordered;
    EXPECT_EQ(ordered.find("\n  bwd_dq bf16"), std::string::npos) << ordered;
  }
  // The fast backward (the default where it runs): one dK/dV kernel, which also sums dQ, reports to a.
  bad_backward_on_a(options);
  EXPECT_EQ(thrown_by([&] { check_buffer_errors(b.stream); }), "");
  const std::string fast = thrown_by([&] { check_buffer_errors(a.stream); });
  EXPECT_NE(fast.find("\n  bwd_dkdv bf16 d64/64"), std::string::npos) << fast;
  if (current_device().default_arch() == "sm_90a") {
    EXPECT_EQ(fast.find("\n  bwd_dq bf16"), std::string::npos) << fast;
    EXPECT_NE(fast.find("dq_accumulate=1"), std::string::npos) << fast;
  }
}

}  // namespace
}  // namespace flexjit::test
