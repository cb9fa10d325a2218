// Per-sequence lengths of forward / backward (CallOptions::seq_lens), the CPU side: every argument
// check with its message (the checks run before anything touches the GPU, and the tensors'
// pointers are never read, so these run with or without a GPU), and the float64 reference with
// lengths on problems small enough to compute by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "flexjit/attention.hpp"
#include "flexjit/block_mask.hpp"
#include "flexjit/error.hpp"
#include "flexjit/reference.hpp"

namespace flexjit {
namespace {

void* const kFake = reinterpret_cast<void*>(uintptr_t{1} << 20);  // never dereferenced

// B = 2, H = 1, Sq = Skv = 16, D = 64.
TensorView operand() { return TensorView::contiguous(kFake, DType::bf16, {2, 1, 16, 64}); }
TensorView lse_view() { return TensorView::contiguous(kFake, DType::f32, {2, 1, 16}); }
TensorView lengths(int64_t n = 2, DType dtype = DType::i32) { return TensorView::contiguous(kFake, dtype, {n}); }

std::string forward_error(const std::string& mask, const SeqLens& lens, bool with_block_mask = false) {
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = 64;
  spec.mask_mod = mask;
  const Attention attention(spec);
  CallOptions call;
  call.seq_lens = lens;
  try {
    if (with_block_mask) {
      const BlockMask m = BlockMask::build_on_cpu(attention.mask_mod(), 2, 1, 16, 16);
      attention.forward(operand(), operand(), operand(), operand(), lse_view(), &m, nullptr, call);
    } else {
      attention.forward(operand(), operand(), operand(), operand(), lse_view(), nullptr, nullptr, call);
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SeqLensChecks, DeviceArraysMustBeBInt32WithStrideOne) {
  SeqLens lens;
  lens.q_lens = lengths(2, DType::f32);
  EXPECT_EQ(forward_error("", lens), "forward: seq_lens.q_lens must be i32, got f32 (f32[2] strides [1])");
  lens.q_lens = lengths(3);
  EXPECT_EQ(forward_error("", lens), "forward: seq_lens.q_lens must be [B] = [2] int32, got i32[3] strides [1]");
  lens.q_lens = TensorView::contiguous(kFake, DType::i32, {2, 1});
  EXPECT_EQ(forward_error("", lens),
            "forward: seq_lens.q_lens must be [B] = [2] int32, got i32[2, 1] strides [1, 1]");
  lens.q_lens = {};
  lens.kv_lens = TensorView::strided(kFake, DType::i32, {2}, {2});
  EXPECT_EQ(forward_error("", lens), "forward: seq_lens.kv_lens must be contiguous (stride 1), got i32[2] strides [2]");
}

TEST(SeqLensChecks, HostCopiesAreCheckedAgainstThePaddedLengths) {
  const int32_t too_long[] = {16, 17}, negative[] = {-1, 4}, fine[] = {0, 16};
  SeqLens lens;
  lens.q_lens = lengths();
  lens.kv_lens = lengths();
  lens.host_q_lens = fine;
  lens.host_kv_lens = too_long;
  EXPECT_EQ(forward_error("", lens),
            "forward: seq_lens.host_kv_lens[1] = 17 is outside [0, 16] (Skv, the padded length of k and v)");
  lens.host_kv_lens = fine;
  lens.host_q_lens = negative;
  EXPECT_EQ(forward_error("", lens),
            "forward: seq_lens.host_q_lens[0] = -1 is outside [0, 16] (Sq, the padded length of q)");
  // A host copy without the device array the kernels read.
  SeqLens host_only;
  host_only.host_q_lens = fine;
  EXPECT_EQ(forward_error("", host_only),
            "forward: seq_lens.host_q_lens is given without seq_lens.q_lens (the kernels read the device array): "
            "pass both");
}

TEST(SeqLensChecks, BlockMaskOfALengthDependentMaskIsRefused) {
  SeqLens lens;
  lens.kv_lens = lengths();
  const std::string tail =
      ", so block-mask tables built for the padded lengths are wrong for shorter sequences; build them with the "
      "lengths (Attention::block_mask with seq_lens) or pass no block mask";
  EXPECT_EQ(forward_error("q_idx + kv_len - q_len >= kv_idx", lens, true),
            "forward: mask_mod reads q_len and kv_len" + tail);
  EXPECT_EQ(forward_error("kv_idx >= kv_len - 4", lens, true), "forward: mask_mod reads kv_len" + tail);
  EXPECT_EQ(forward_error("q_idx < q_len / 2", lens, true), "forward: mask_mod reads q_len" + tail);
  // Without lengths the same tables are fine: the call goes on to the next check (the mask's
  // buffer `w`, declared but not passed), before any launch.
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = 64;
  spec.mask_mod = "kv_idx >= kv_len - 4 + w[0]";
  spec.declarations.buffers.push_back(BufferDecl{"w", DType::i32, {1}});
  const Attention attention(spec);
  const BlockMask tables = BlockMask::build_on_cpu(Expr::parse(ModKind::mask, "kv_idx >= kv_len - 4", {}), 1, 1, 16, 16);
  for (bool with_lengths : {false, true}) {
    CallOptions call;
    if (with_lengths) call.seq_lens = lens;
    try {
      attention.forward(operand(), operand(), operand(), operand(), lse_view(), &tables, nullptr, call);
      FAIL() << "a launch was reached";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find("forward: mask_mod reads kv_len"), with_lengths ? 0u : std::string::npos)
          << e.what();
    }
  }
}

TEST(SeqLensChecks, BlockMaskBuilderChecksTheLengthsBeforeTheDevice) {
  const int32_t too_long[] = {8, 9};
  SeqLens lens;
  lens.kv_lens = lengths();
  lens.host_kv_lens = too_long;
  const Expr mask = Expr::parse(ModKind::mask, "q_idx + kv_len - q_len >= kv_idx", {});
  try {
    BlockMask::build_on_gpu(mask, 2, 1, 8, 8, lens);
    FAIL() << "lengths beyond the padded ones were accepted";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "block mask: seq_lens.host_kv_lens[1] = 9 is outside [0, 8] (Skv, the padded length of k and v)");
  }
  lens.host_kv_lens = nullptr;
  lens.kv_lens = lengths(2, DType::u8);
  try {
    BlockMask::build_on_gpu(mask, 2, 1, 8, 8, lens);
    FAIL() << "u8 lengths were accepted";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "block mask: seq_lens.kv_lens must be i32, got u8 (u8[2] strides [1])");
  }
}

TEST(SeqLensChecks, BackwardChecksTheLengthsAndRefusesLearnableBuffers) {
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = 64;
  spec.score_mod = "score + bias[h]";
  spec.declarations.buffers.push_back(BufferDecl{"bias", DType::f32, {1}, /*learnable=*/true});
  const Attention learnable(spec);
  spec.declarations.buffers[0].learnable = false;
  const Attention fixed(spec);
  const int32_t too_long[] = {3, 20};
  CallOptions call;
  call.seq_lens.kv_lens = lengths();
  call.seq_lens.host_kv_lens = too_long;
  auto backward_error = [&](const Attention& a) -> std::string {
    try {
      a.backward(operand(), operand(), operand(), operand(), lse_view(), operand(), operand(), operand(), operand(),
                 nullptr, nullptr, call);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(backward_error(learnable),
            "backward: learnable-buffer gradients are not computed with seq_lens (per-sequence lengths); call "
            "without seq_lens, or declare the buffers without learnable");
  EXPECT_EQ(backward_error(fixed),
            "backward: seq_lens.host_kv_lens[1] = 20 is outside [0, 16] (Skv, the padded length of k and v)");
}

TEST(SeqLensChecks, DecodeTakesItsLengthsFromTheCache) {
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = 64;
  const Attention attention(spec);
  CallOptions call;
  call.seq_lens.kv_lens = lengths();
  const KVCache kv = KVCache::contiguous(operand(), operand(), lengths());
  try {
    attention.decode(operand(), kv, operand(), lse_view(), nullptr, call);
    FAIL() << "decode accepted CallOptions::seq_lens";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "decode takes each sequence's length from the cache (KVCache::seq_lens); CallOptions::seq_lens is "
                 "for forward and backward");
  }
}

// Reference with lengths, B = 2, one head, D = Dv = 1, Sq = 2, Skv = 3, scale 1.
//   sequence 0: q_len 1, kv_len 2; sequence 1: q_len 2, kv_len 0.
struct Tiny {
  ReferenceShape shape{2, 1, 1, 2, 3, 1, 1};
  std::vector<double> q{0.5, 9.0, /*b1*/ 1.0, 2.0};
  std::vector<double> k{0.0, 0.0, 7.0, /*b1*/ 1.0, 1.0, 1.0};
  std::vector<double> v{1.0, 3.0, 100.0, /*b1*/ 5.0, 5.0, 5.0};
  std::vector<int32_t> q_lens{1, 2}, kv_lens{2, 0};
};

TEST(SeqLensReference, ForwardUsesEachSequencesRowsAndKeys) {
  const Tiny t;
  const Expr none = Expr::identity_score(), all = Expr::no_mask();
  const ReferenceForward r = reference_forward_varlen(none, all, {}, t.shape, t.q, t.k, t.v, t.q_lens, t.kv_lens, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  // b0 row 0: scores 0, 0 over keys 0, 1 (key 2 = 7.0 is past kv_len) -> mean of v = 2, lse log 2.
  EXPECT_DOUBLE_EQ(r.out[0], 2.0);
  EXPECT_DOUBLE_EQ(r.lse[0], std::log(2.0));
  // b0 row 1 is past q_len; b1 has no keys: out 0, lse -inf everywhere.
  for (int row : {1, 2, 3}) {
    EXPECT_EQ(r.out[row], 0.0) << row;
    EXPECT_EQ(r.lse[row], -inf) << row;
  }
  // kv_len in the mask is the sequence's: only the last of its keys (key 1, v = 3) is kept.
  const Expr last = Expr::parse(ModKind::mask, "kv_idx >= kv_len - 1", {});
  const ReferenceForward m = reference_forward_varlen(none, last, {}, t.shape, t.q, t.k, t.v, t.q_lens, t.kv_lens, 1.0);
  EXPECT_DOUBLE_EQ(m.out[0], 3.0);
  EXPECT_DOUBLE_EQ(m.lse[0], 0.0);
  // q_len in score_mod is the sequence's: score + q_len = 0 + 1 on both keys -> lse 1 + log 2.
  const Expr plus_q = Expr::parse(ModKind::score, "score + q_len", {});
  const ReferenceForward s = reference_forward_varlen(plus_q, all, {}, t.shape, t.q, t.k, t.v, t.q_lens, t.kv_lens, 1.0);
  EXPECT_DOUBLE_EQ(s.lse[0], 1.0 + std::log(2.0));
}

TEST(SeqLensReference, BackwardGivesZerosPastEachSequence) {
  const Tiny t;
  // dout: b0 row 0 = 4; every other row (past q_len, or without keys) holds values never read.
  const std::vector<double> dout{4.0, 50.0, 60.0, 70.0};
  const ReferenceBackward g = reference_backward_varlen(Expr::identity_score(), Expr::no_mask(), {}, t.shape, t.q, t.k,
                                                        t.v, dout, t.q_lens, t.kv_lens, 1.0);
  // p = (1/2, 1/2); dv_j = p_j * 4 = 2; dp = (4, 12), delta = 8, ds = (-2, 2); dk_j = ds_j * q = (-1, 1);
  // dq = sum ds_j k_j = 0.
  EXPECT_DOUBLE_EQ(g.dv[0], 2.0);
  EXPECT_DOUBLE_EQ(g.dv[1], 2.0);
  EXPECT_DOUBLE_EQ(g.dk[0], -1.0);
  EXPECT_DOUBLE_EQ(g.dk[1], 1.0);
  EXPECT_EQ(g.dq[0], 0.0);
  // Key 2 of b0 is past kv_len, b1 has no keys, and row 1 of b0 is past q_len: all zero.
  EXPECT_EQ(g.dk[2], 0.0);
  EXPECT_EQ(g.dv[2], 0.0);
  EXPECT_EQ(g.dq[1], 0.0);
  for (int i = 3; i < 6; ++i) {
    EXPECT_EQ(g.dk[i], 0.0) << i;
    EXPECT_EQ(g.dv[i], 0.0) << i;
  }
  EXPECT_EQ(g.dq[2], 0.0);
  EXPECT_EQ(g.dq[3], 0.0);
}

TEST(SeqLensReference, LengthsOutOfRangeAreNamed) {
  const Tiny t;
  const Expr none = Expr::identity_score(), all = Expr::no_mask();
  auto error = [&](const std::vector<int32_t>& q_lens, const std::vector<int32_t>& kv_lens) -> std::string {
    try {
      reference_forward_varlen(none, all, {}, t.shape, t.q, t.k, t.v, q_lens, kv_lens, 1.0);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(error({1, 3}, {2, 0}), "reference attention: q length 3 of sequence 1 is outside [0, 2]");
  EXPECT_EQ(error({1, 2}, {-1, 0}), "reference attention: kv length -1 of sequence 0 is outside [0, 3]");
  EXPECT_EQ(error({1}, {2, 0}), "reference attention: 1 q lengths for a batch of 2");
}

}  // namespace
}  // namespace flexjit
