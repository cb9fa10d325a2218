// Issue 17 item 6 in the C++ API: CallOptions::scale is used as given or refused by name (0, NaN,
// infinities); a negative scale is legal. The scale is checked before anything touches the GPU,
// and the block mask given is built for other lengths, so even an accepted scale stops at the
// next check (a ShapeError) before a launch: these run with or without a GPU, and the tensors'
// pointers are never read.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "flexjit/attention.hpp"
#include "flexjit/block_mask.hpp"
#include "flexjit/error.hpp"

namespace flexjit {
namespace {

std::string forward_error(float scale) {
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = 64;
  const Attention attention(spec);
  void* const fake = reinterpret_cast<void*>(uintptr_t{1} << 20);  // never dereferenced
  const TensorView qkv = TensorView::contiguous(fake, DType::bf16, {1, 1, 16, 64});
  const TensorView lse = TensorView::contiguous(fake, DType::f32, {1, 1, 16});
  CallOptions call;
  call.scale = scale;
  try {
    const BlockMask other_lengths = BlockMask::build_on_cpu(Expr::no_mask(), 1, 1, 32, 32);
    attention.forward(qkv, qkv, qkv, qkv, lse, &other_lengths, nullptr, call);
  } catch (const UsageError& e) {
    return e.what();
  } catch (const ShapeError& e) {
    return std::string("(the scale passed) ") + e.what();
  }
  return "(no error)";
}

TEST(CallScale, ZeroNanAndInfinityAreRefusedByName) {
  const std::string prefix = "forward: scale must be a finite non-zero number (negative is allowed), got ";
  EXPECT_EQ(forward_error(0.f), prefix + "0");
  EXPECT_EQ(forward_error(-0.f), prefix + "0");
  EXPECT_EQ(forward_error(NAN), prefix + "nan");
  EXPECT_EQ(forward_error(INFINITY), prefix + "inf");
  EXPECT_EQ(forward_error(-INFINITY), prefix + "-inf");
}

TEST(CallScale, NegativeScaleIsAccepted) {
  for (float scale : {-0.125f, 0.125f, -8.f})
    EXPECT_EQ(forward_error(scale).rfind("(the scale passed) block mask was built for q_len 32", 0), 0u)
        << forward_error(scale);
}

}  // namespace
}  // namespace flexjit
