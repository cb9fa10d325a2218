// C API 1002: per-sequence lengths of padded tensors (flexjit_call_options.q_lens / kv_lens). The
// reference paths run on a case computed by hand; the GPU entry points are checked for their
// argument errors only (no kernel runs); calls that take no lengths refuse them by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "flexjit/flexjit.h"

namespace {

std::string last_error() { return flexjit_last_error(); }

const DLDataType kF32{kDLFloat, 32, 1}, kF64{kDLFloat, 64, 1}, kI32{kDLInt, 32, 1}, kBF16{kDLBfloat, 16, 1};

DLTensor host(void* data, DLDataType dtype, int ndim, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  return t;
}

struct Variant {
  flexjit_variant* handle = nullptr;
  explicit Variant(const flexjit_variant_desc& d) {
    EXPECT_EQ(flexjit_variant_create(&d, &handle), FLEXJIT_OK) << last_error();
  }
  ~Variant() { flexjit_variant_destroy(handle); }
};

// B = 2, one head, D = Dv = 1, Sq = 2, Skv = 3, scale 1. Sequence 0: one query row (q = 0.5) and
// two keys (k = 0, v = 1, 3; key 2 holds v = 100, past its length); sequence 1: no keys. Row 0
// of sequence 0 averages v = 1 and 3: out 2, lse log 2; the other rows get out 0, lse -inf.
// Backward with dout = 4 on row 0: dv = (2, 2), ds = (-2, 2), dk = ds * q = (-1, 1), dq = 0.
struct Tiny {
  flexjit_variant_desc desc{};
  float q[4] = {0.5f, 9.f, 1.f, 2.f}, k[6] = {0, 0, 7, 1, 1, 1}, v[6] = {1, 3, 100, 5, 5, 5};
  float dout[4] = {4, 50, 60, 70};
  int32_t q_lens[2] = {1, 2}, kv_lens[2] = {2, 0};
  double out[4], lse[4], dq[4], dk[6], dv[6];
  int64_t q_shape[4] = {2, 1, 2, 1}, kv_shape[4] = {2, 1, 3, 1}, lse_shape[3] = {2, 1, 2}, b_shape[1] = {2};
  DLTensor tq = host(q, kF32, 4, q_shape), tk = host(k, kF32, 4, kv_shape), tv = host(v, kF32, 4, kv_shape),
           tdo = host(dout, kF32, 4, q_shape), tout = host(out, kF64, 4, q_shape), tlse = host(lse, kF64, 3, lse_shape),
           tdq = host(dq, kF64, 4, q_shape), tdk = host(dk, kF64, 4, kv_shape), tdv = host(dv, kF64, 4, kv_shape),
           tql = host(q_lens, kI32, 1, b_shape), tkvl = host(kv_lens, kI32, 1, b_shape);
  flexjit_call_options options{};

  Tiny() {
    desc.struct_size = sizeof desc;
    desc.dtype = FLEXJIT_BF16;
    desc.head_dim = 64;  // the reference takes the tensors' D; the variant's is for kernels
    options.struct_size = sizeof options;
    options.has_scale = 1;
    options.scale = 1.f;
    options.q_lens = &tql;
    options.kv_lens = &tkvl;
  }
};

TEST(CApiSeqLens, ReferenceForwardAndBackwardUseEachSequencesLengths) {
  Tiny t;
  Variant variant(t.desc);
  ASSERT_EQ(flexjit_reference_forward(variant.handle, &t.tq, &t.tk, &t.tv, &t.tout, &t.tlse, &t.options), FLEXJIT_OK)
      << last_error();
  EXPECT_DOUBLE_EQ(t.out[0], 2.0);
  EXPECT_DOUBLE_EQ(t.lse[0], std::log(2.0));
  for (int row : {1, 2, 3}) {
    EXPECT_EQ(t.out[row], 0.0) << row;
    EXPECT_EQ(t.lse[row], -INFINITY) << row;
  }
  ASSERT_EQ(flexjit_reference_backward(variant.handle, &t.tq, &t.tk, &t.tv, &t.tdo, &t.tdq, &t.tdk, &t.tdv, &t.options),
            FLEXJIT_OK)
      << last_error();
  const double want_dv[6] = {2, 2, 0, 0, 0, 0}, want_dk[6] = {-1, 1, 0, 0, 0, 0};
  for (int i = 0; i < 6; ++i) {
    EXPECT_DOUBLE_EQ(t.dv[i], want_dv[i]) << i;
    EXPECT_DOUBLE_EQ(t.dk[i], want_dk[i]) << i;
  }
  for (double x : t.dq) EXPECT_EQ(x, 0.0);
  // Without q_lens every sequence has Sq rows: row 1 of sequence 0 is then written.
  t.options.q_lens = nullptr;
  ASSERT_EQ(flexjit_reference_forward(variant.handle, &t.tq, &t.tk, &t.tv, &t.tout, &t.tlse, &t.options), FLEXJIT_OK);
  EXPECT_TRUE(std::isfinite(t.lse[1]));
}

TEST(CApiSeqLens, BadLengthsAndCallsWithoutLengthsAreNamed) {
  Tiny t;
  Variant variant(t.desc);
  float wrong[2] = {1, 2};
  DLTensor as_float = host(wrong, kF32, 1, t.b_shape);
  t.options.q_lens = &as_float;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &t.tq, &t.tk, &t.tv, &t.tout, &t.tlse, &t.options),
            FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "flexjit_reference_forward: options->q_lens must be [B] int32, got f32 of 1 dimensions");
  t.options.q_lens = &t.tql;
  t.kv_lens[1] = 4;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &t.tq, &t.tk, &t.tv, &t.tout, &t.tlse, &t.options),
            FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "reference attention: kv length 4 of sequence 1 is outside [0, 3]");
  // The CPU block-mask builder takes no lengths (the GPU one does).
  flexjit_block_mask_desc mask_desc{};
  mask_desc.struct_size = sizeof mask_desc;
  mask_desc.batch = 2;
  mask_desc.q_heads = 1;
  mask_desc.q_len = 2;
  mask_desc.kv_len = 3;
  mask_desc.device = FLEXJIT_MASK_CPU;
  flexjit_block_mask* mask = nullptr;
  EXPECT_EQ(flexjit_block_mask_create(variant.handle, &mask_desc, &t.options, nullptr, &mask), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(),
            "flexjit_block_mask_create: options->q_lens / kv_lens (per-sequence lengths) are taken by flexjit_forward, "
            "flexjit_backward, their references and GPU block masks only: set them to NULL");
  EXPECT_EQ(mask, nullptr);
}

TEST(CApiSeqLens, GpuForwardChecksTheLengthsBeforeTheDevice) {
  Tiny t;
  Variant variant(t.desc);
  uint16_t fake[256];  // never dereferenced
  int64_t shape4[4] = {2, 1, 2, 64}, shape3[3] = {2, 1, 2};
  auto on_device = [&](DLDataType dtype, int ndim, int64_t* shape) {
    DLTensor d = host(fake, dtype, ndim, shape);
    d.device = {kDLCUDA, 0};
    return d;
  };
  DLTensor x = on_device(kBF16, 4, shape4), lse = on_device(kF32, 3, shape3), lens = on_device(kI32, 1, t.b_shape);
  const int32_t host_kv[2] = {2, 3};  // 3 > Sq = Skv = 2
  t.options.q_lens = nullptr;
  t.options.kv_lens = &lens;
  t.options.host_kv_lens = host_kv;
  EXPECT_EQ(flexjit_forward(variant.handle, &x, &x, &x, &x, &lse, nullptr, nullptr, &t.options), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "forward: seq_lens.host_kv_lens[1] = 3 is outside [0, 2] (Skv, the padded length of k and v)");
}

// C API 1003: flexjit_call_options.backward_mode. The GPU forward and the references refuse a mode
// by name (only flexjit_backward takes one); flexjit_backward refuses values outside the three
// named ones before it touches the device.
TEST(CApiBackwardMode, OnlyTheBackwardTakesAModeAndOnlyTheNamedOnes) {
  Tiny t;
  Variant variant(t.desc);
  t.options.q_lens = t.options.kv_lens = nullptr;
  t.options.backward_mode = FLEXJIT_BACKWARD_FAST;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &t.tq, &t.tk, &t.tv, &t.tout, &t.tlse, &t.options),
            FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_reference_forward: options->backward_mode is 2; only flexjit_backward takes a "
                          "backward mode (leave it 0)");
  uint16_t fake[256];  // never dereferenced
  int64_t shape4[4] = {2, 1, 2, 64}, shape3[3] = {2, 1, 2};
  auto on_device = [&](DLDataType dtype, int ndim, int64_t* shape) {
    DLTensor d = host(fake, dtype, ndim, shape);
    d.device = {kDLCUDA, 0};
    return d;
  };
  DLTensor x = on_device(kBF16, 4, shape4), lse = on_device(kF32, 3, shape3);
  EXPECT_EQ(flexjit_forward(variant.handle, &x, &x, &x, &x, &lse, nullptr, nullptr, &t.options), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_forward: options->backward_mode is 2; only flexjit_backward takes a backward "
                          "mode (leave it 0)");
  t.options.backward_mode = 7;
  EXPECT_EQ(flexjit_backward(variant.handle, &x, &x, &x, &x, &lse, &x, &x, &x, &x, nullptr, nullptr, &t.options),
            FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_backward: options->backward_mode is 7, not FLEXJIT_BACKWARD_DEFAULT (0), "
                          "FLEXJIT_BACKWARD_DETERMINISTIC (1) or FLEXJIT_BACKWARD_FAST (2)");
}

}  // namespace
