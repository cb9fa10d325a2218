// The forward's and backward's tensor checks (src/attention/tensor_checks.cpp), each with its
// message: they run before anything touches the GPU and never read the tensors' pointers, so these
// run with or without a GPU. The expectations are the error texts as written in the contract.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "flexjit/attention.hpp"
#include "flexjit/error.hpp"

namespace flexjit {
namespace {

char* const kFake = reinterpret_cast<char*>(uintptr_t{1} << 20);  // never dereferenced

// B = 2, Hq = 4, Hkv = 2, Sq = 16, Skv = 24, D = Dv = 64, bf16.
TensorView q_view() { return TensorView::contiguous(kFake, DType::bf16, {2, 4, 16, 64}); }
TensorView kv_view() { return TensorView::contiguous(kFake, DType::bf16, {2, 2, 24, 64}); }
TensorView lse_view() { return TensorView::contiguous(kFake, DType::f32, {2, 4, 16}); }

struct Call {
  TensorView q = q_view(), k = kv_view(), v = kv_view(), out = q_view(), lse = lse_view();
};

Attention make_attention() {
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = 64;
  return Attention(spec);
}

std::string forward_error(const Call& c, const CallOptions& options = {}) {
  const Attention attention = make_attention();
  try {
    attention.forward(c.q, c.k, c.v, c.out, c.lse, nullptr, nullptr, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TensorChecks, OperandsNameTheTensorAndTheRule) {
  Call c;
  c.q.data = nullptr;
  EXPECT_EQ(forward_error(c), "q has a null data pointer");
  c = Call{};
  c.k = TensorView::contiguous(kFake, DType::bf16, {2, 24, 64});
  EXPECT_EQ(forward_error(c), "k must have 4 dimensions [B, H, S, D], got bf16[2, 24, 64] strides [1536, 64, 1]");
  c = Call{};
  c.v = TensorView::contiguous(kFake, DType::f16, {2, 2, 24, 64});
  EXPECT_EQ(forward_error(c),
            "v is f16 but the variant computes in bf16; convert the tensor or compile the variant for f16");
  c = Call{};
  c.k = TensorView::strided(kFake, DType::bf16, {2, 2, 24, 64}, {3072, 1536, 1, 24});
  EXPECT_EQ(forward_error(c), "k dimension 3 (D) must be contiguous (stride 1), got stride 24 in bf16[2, 2, 24, 64] "
                              "strides [3072, 1536, 1, 24]");
  c = Call{};
  c.q = TensorView::strided(kFake, DType::bf16, {2, 4, 16, 64}, {8200, 1025, 64, 1});
  EXPECT_EQ(forward_error(c), "q stride of dimension 1 (H) is 1025 elements; kernels load 16-byte vectors, so strides "
                              "must be multiples of 8 elements (pad the rows or make the tensor contiguous)");
  c = Call{};
  c.out.data = kFake + 8;
  EXPECT_EQ(forward_error(c), "out data pointer is not 16-byte aligned; kernels load 16-byte vectors (allocations "
                              "from cuMemAlloc/cudaMalloc are aligned)");
  c = Call{};
  c.k = TensorView::contiguous(kFake, DType::bf16, {2, 2, 0, 64});
  EXPECT_EQ(forward_error(c), "k dimension 2 has extent 0; extents must be between 1 and 2^31-1");
}

TEST(TensorChecks, ShapesMustAgreeWithEachOtherAndTheVariant) {
  Call c;
  c.q = TensorView::contiguous(kFake, DType::bf16, {2, 4, 16, 128});
  EXPECT_EQ(forward_error(c), "q dimension 3 (D) is 128, but the variant was compiled for head_dim 64");
  c = Call{};
  c.k = TensorView::contiguous(kFake, DType::bf16, {3, 2, 24, 64});
  EXPECT_EQ(forward_error(c), "k dimension 0 (B) is 3, but q has B = 2");
  c = Call{};
  c.v = TensorView::contiguous(kFake, DType::bf16, {2, 2, 23, 64});
  EXPECT_EQ(forward_error(c), "v dimension 2 (S) is 23, but k has S = 24");
  c = Call{};
  c.k = c.v = TensorView::contiguous(kFake, DType::bf16, {2, 3, 24, 64});
  EXPECT_EQ(forward_error(c),
            "q has 4 heads and k has 3: the query heads must be a multiple of the kv heads (GQA/MQA)");
  c = Call{};
  c.out = TensorView::contiguous(kFake, DType::bf16, {2, 4, 24, 64});
  EXPECT_EQ(forward_error(c), "out must be [B, Hq, Sq, Dv] = [2, 4, 16, 64], got bf16[2, 4, 24, 64] strides "
                              "[6144, 1536, 64, 1]");
  c = Call{};
  c.lse = TensorView::contiguous(kFake, DType::f32, {2, 4, 24});
  EXPECT_EQ(forward_error(c), "lse must be f32 [B, Hq, Sq] = [2, 4, 16], got f32[2, 4, 24] strides [96, 24, 1]");
  c = Call{};
  c.lse.data = kFake + 2;
  EXPECT_EQ(forward_error(c), "lse data pointer is not 4-byte aligned");
}

// Broadcast (stride-0) views cost no memory, so a hostile caller can ask for any length: beyond
// 2^30 the kernels' 32-bit row and key counts would wrap, and the call is refused first.
TEST(TensorChecks, SequenceLengthsBeyond2To30AreRefused) {
  const int64_t too_long = (int64_t{1} << 30) + 1;
  Call c;
  c.k = c.v = TensorView::strided(kFake, DType::bf16, {2, 2, too_long, 64}, {0, 0, 0, 1});
  EXPECT_EQ(forward_error(c), "sequence lengths must be at most 2^30 = 1073741824 (the kernels count rows and keys "
                              "in 32-bit integers), got Sq = 16, Skv = 1073741825");
  c = Call{};
  c.q = TensorView::strided(kFake, DType::bf16, {2, 4, too_long, 64}, {0, 0, 0, 1});
  c.out = TensorView::strided(kFake, DType::bf16, {2, 4, too_long, 64}, {0, 0, 0, 1});
  c.lse.data = nullptr;
  EXPECT_EQ(forward_error(c), "sequence lengths must be at most 2^30 = 1073741824 (the kernels count rows and keys "
                              "in 32-bit integers), got Sq = 1073741825, Skv = 24");
  // The backward checks the same tensors the same way.
  const Attention attention = make_attention();
  c = Call{};
  c.k = c.v = TensorView::strided(kFake, DType::bf16, {2, 2, too_long, 64}, {0, 0, 0, 1});
  std::string backward;
  try {
    attention.backward(c.q, c.k, c.v, c.out, c.lse, c.out, c.q, c.k, c.v, nullptr, nullptr, {});
  } catch (const Error& e) {
    backward = e.what();
  }
  EXPECT_EQ(backward, "sequence lengths must be at most 2^30 = 1073741824 (the kernels count rows and keys in 32-bit "
                      "integers), got Sq = 16, Skv = 1073741825");
}

// Broadcast views are for inputs: an output with stride 0 would have its elements race.
TEST(TensorChecks, OutputsMustNotBroadcast) {
  Call c;
  c.out = TensorView::strided(kFake, DType::bf16, {2, 4, 16, 64}, {4096, 1024, 0, 1});
  EXPECT_EQ(forward_error(c), "out has stride 0 in dimension 2 (extent 16): its elements would overwrite each other; "
                              "pass an output tensor of its own, got bf16[2, 4, 16, 64] strides [4096, 1024, 0, 1]");
  c = Call{};
  c.lse = TensorView::strided(kFake, DType::f32, {2, 4, 16}, {0, 16, 1});
  EXPECT_EQ(forward_error(c), "lse has stride 0 in dimension 0 (extent 2): its elements would overwrite each other; "
                              "pass an output tensor of its own, got f32[2, 4, 16] strides [0, 16, 1]");
  // An extent of 1 may have any stride.
  c = Call{};
  c.q = c.out = TensorView::strided(kFake, DType::bf16, {1, 4, 16, 64}, {0, 1024, 64, 1});
  c.k = c.v = TensorView::strided(kFake, DType::bf16, {1, 2, 24, 64}, {0, 1536, 64, 1});
  c.lse = TensorView::contiguous(kFake, DType::f32, {1, 4, 16});
  EXPECT_EQ(forward_error(c).find("stride 0"), std::string::npos);
  // The backward's gradients likewise.
  const Attention attention = make_attention();
  c = Call{};
  const TensorView shared_dk = TensorView::strided(kFake, DType::bf16, {2, 2, 24, 64}, {3072, 0, 64, 1});
  std::string backward;
  try {
    attention.backward(c.q, c.k, c.v, c.out, c.lse, c.out, c.q, shared_dk, c.v, nullptr, nullptr, {});
  } catch (const Error& e) {
    backward = e.what();
  }
  EXPECT_EQ(backward, "dk has stride 0 in dimension 1 (extent 2): its elements would overwrite each other; pass an "
                      "output tensor of its own, got bf16[2, 2, 24, 64] strides [3072, 0, 64, 1]");
}

TEST(TensorChecks, GridLimitsAreNamed) {
  Call c;
  c.q = c.out = TensorView::strided(kFake, DType::bf16, {65536, 4, 16, 64}, {0, 1024, 64, 1});
  c.k = c.v = TensorView::strided(kFake, DType::bf16, {65536, 2, 24, 64}, {0, 1536, 64, 1});
  c.lse.data = nullptr;
  EXPECT_EQ(forward_error(c), "batch and query heads must each be at most 65535 (grid limits), got B = 65536, Hq = 4");
}

}  // namespace
}  // namespace flexjit
