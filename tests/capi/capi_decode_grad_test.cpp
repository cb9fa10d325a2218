// C API 1001: learnable buffers (FLEXJIT_BUFFER_LEARNABLE, flexjit_call_options.buffer_grads) and
// decoding (flexjit_decode, flexjit_reference_decode). The reference paths run on cases computed
// by hand; the GPU entry points are checked for their argument errors only (no kernel runs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
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

DLTensor device(void* fake, DLDataType dtype, int ndim, int64_t* shape) {
  DLTensor t = host(fake, dtype, ndim, shape);
  t.device = {kDLCUDA, 0};
  return t;
}

struct Variant {
  flexjit_variant* handle = nullptr;
  explicit Variant(const flexjit_variant_desc& d) {
    EXPECT_EQ(flexjit_variant_create(&d, &handle), FLEXJIT_OK) << last_error();
  }
  ~Variant() { flexjit_variant_destroy(handle); }
};

// score + bias[q_idx - kv_idx + 1] on Sq = Skv = 2, D = Dv = 1, with q = 0 and bias = 0: every
// row is a uniform softmax over v = (1, 3), so out = 2 and dS = p (dout v - out) = (-1/2, +1/2)
// per row for dout = 1. Row 0 reads bias[1], bias[0]; row 1 reads bias[2], bias[1]:
// d bias = (+1/2, -1/2 + 1/2, -1/2) = (0.5, 0, -0.5). dv = sum over rows of p dout = (1, 1).
struct RelativeBias {
  int64_t bias_shape[1] = {3};
  flexjit_buffer_decl decl{"bias", FLEXJIT_F32, 1, bias_shape, FLEXJIT_BUFFER_LEARNABLE};
  flexjit_variant_desc desc{};
  float q[2] = {0, 0}, k[2] = {1, 1}, v[2] = {1, 3}, dout[2] = {1, 1}, bias[3] = {0, 0, 0};
  double dq[2], dk[2], dv[2], grad[3] = {9, 9, 9};
  int64_t shape[4] = {1, 1, 2, 1};
  DLTensor tq = host(q, kF32, 4, shape), tk = host(k, kF32, 4, shape), tv = host(v, kF32, 4, shape),
           tdo = host(dout, kF32, 4, shape), tdq = host(dq, kF64, 4, shape), tdk = host(dk, kF64, 4, shape),
           tdv = host(dv, kF64, 4, shape), tbias = host(bias, kF32, 1, bias_shape),
           tgrad = host(grad, kF64, 1, bias_shape);
  flexjit_buffer_value value{"bias", &tbias}, gradient{"bias", &tgrad};
  flexjit_call_options options{};

  RelativeBias() {
    desc.struct_size = sizeof desc;
    desc.score_mod = "score + bias[q_idx - kv_idx + 1]";
    desc.buffers = &decl;
    desc.num_buffers = 1;
    options.struct_size = sizeof options;
    options.buffers = &value;
    options.num_buffers = 1;
    options.buffer_grads = &gradient;
    options.num_buffer_grads = 1;
  }
  flexjit_status backward(const flexjit_variant* variant) {
    return flexjit_reference_backward(variant, &tq, &tk, &tv, &tdo, &tdq, &tdk, &tdv, &options);
  }
};

TEST(CApiLearnable, ReferenceBackwardWritesTheBufferGradient) {
  EXPECT_EQ(flexjit_c_api_version(), 1004);
  RelativeBias c;
  Variant variant(c.desc);
  ASSERT_EQ(c.backward(variant.handle), FLEXJIT_OK) << last_error();
  EXPECT_NEAR(c.grad[0], 0.5, 1e-12);
  EXPECT_NEAR(c.grad[1], 0.0, 1e-12);
  EXPECT_NEAR(c.grad[2], -0.5, 1e-12);
  EXPECT_NEAR(c.dv[0], 1.0, 1e-12);
  EXPECT_NEAR(c.dv[1], 1.0, 1e-12);
  // A float32 gradient output works too.
  float grad32[3] = {9, 9, 9};
  DLTensor t32 = host(grad32, kF32, 1, c.bias_shape);
  c.gradient.tensor = &t32;
  ASSERT_EQ(c.backward(variant.handle), FLEXJIT_OK) << last_error();
  EXPECT_FLOAT_EQ(grad32[0], 0.5f);
  EXPECT_FLOAT_EQ(grad32[2], -0.5f);
}

TEST(CApiLearnable, GradientOutputsAreChecked) {
  RelativeBias c;
  Variant variant(c.desc);
  const char* fn = "flexjit_reference_backward";
  c.options.num_buffer_grads = 0;
  EXPECT_EQ(c.backward(variant.handle), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), std::string(fn) + ": learnable buffer 'bias' has no gradient output: add {\"bias\", tensor} "
                                            "to options->buffer_grads (float32, the shape of the buffer's value)");
  // A caller of C API 1000 cannot name gradients: the same error, not a silent skip.
  c.options.num_buffer_grads = 1;
  c.options.struct_size = offsetof(flexjit_call_options, buffer_grads);
  EXPECT_EQ(c.backward(variant.handle), FLEXJIT_ERROR_USAGE);
  EXPECT_NE(last_error().find("learnable buffer 'bias' has no gradient output"), std::string::npos) << last_error();
  c.options.struct_size = sizeof c.options;
  int64_t wrong[1] = {4};
  double grad4[4];
  DLTensor t4 = host(grad4, kF64, 1, wrong);
  c.gradient.tensor = &t4;
  EXPECT_EQ(c.backward(variant.handle), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + ": the gradient of buffer 'bias' has shape [4]: expected [3]");
  int32_t grad_i[3];
  DLTensor ti = host(grad_i, kI32, 1, c.bias_shape);
  c.gradient.tensor = &ti;
  EXPECT_EQ(c.backward(variant.handle), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + ": the gradient of buffer 'bias' has dtype int32: the CPU reference writes "
                                            "float32 or float64");
  c.gradient.tensor = nullptr;
  EXPECT_EQ(c.backward(variant.handle), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), std::string(fn) + ": options->buffer_grads[0].tensor is NULL: pass a float32 DLTensor of the "
                                            "buffer's shape");
  c.gradient.tensor = &c.tgrad;
  flexjit_buffer_value twice[2] = {c.gradient, c.gradient};
  c.options.buffer_grads = twice;
  c.options.num_buffer_grads = 2;
  EXPECT_EQ(c.backward(variant.handle), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), std::string(fn) + ": options->buffer_grads[1] names buffer 'bias' a second time: give one "
                                            "gradient per buffer");
  twice[0].name = "slope";
  c.options.num_buffer_grads = 1;
  EXPECT_EQ(c.backward(variant.handle), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), std::string(fn) + ": options->buffer_grads[0]: the variant declares no buffer 'slope'");
  c.options.buffer_grads = &c.gradient;
  c.options.num_buffers = 0;  // the gradient, but no value
  EXPECT_EQ(c.backward(variant.handle), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), std::string(fn) + ": learnable buffer 'bias' has a gradient output but no value in "
                                            "options->buffers");
  // Only the backward calls write gradients; the others refuse them rather than ignore them.
  c.options.num_buffers = 1;
  double out[2], lse[2];
  int64_t lse_shape[3] = {1, 1, 2};
  DLTensor to = host(out, kF64, 4, c.shape), tl = host(lse, kF64, 3, lse_shape);
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &c.tq, &c.tk, &c.tv, &to, &tl, &c.options), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_reference_forward: options->num_buffer_grads is 1, but only flexjit_backward and "
                          "flexjit_reference_backward write buffer gradients: pass 0");
}

TEST(CApiLearnable, CallOptionsOfApi1000AreRead) {
  // A 1000 caller's options end before buffer_grads: read, with the bias value, when no buffer is
  // learnable. Same case as above: out = 2 in both rows.
  RelativeBias c;
  c.decl.flags = 0;
  Variant variant(c.desc);
  c.options.struct_size = offsetof(flexjit_call_options, buffer_grads);
  double out[2] = {0, 0};
  DLTensor to = host(out, kF64, 4, c.shape);
  ASSERT_EQ(flexjit_reference_forward(variant.handle, &c.tq, &c.tk, &c.tv, &to, nullptr, &c.options), FLEXJIT_OK)
      << last_error();
  EXPECT_NEAR(out[0], 2.0, 1e-12);
  EXPECT_NEAR(out[1], 2.0, 1e-12);
  c.options.struct_size = offsetof(flexjit_call_options, buffer_grads) - 1;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &c.tq, &c.tk, &c.tv, &to, nullptr, &c.options), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_reference_forward: options->struct_size is " +
                              std::to_string(offsetof(flexjit_call_options, buffer_grads) - 1) +
                              ", not a size of flexjit_call_options (this flexjit's is " +
                              std::to_string(sizeof(flexjit_call_options)) + ", older headers' " +
                              std::to_string(offsetof(flexjit_call_options, buffer_grads)) +
                              "): set it to sizeof(flexjit_call_options)");
}

TEST(CApiLearnable, OnlyLearnableBuffersGetGradients) {
  RelativeBias c;
  c.decl.flags = 0;
  Variant variant(c.desc);
  EXPECT_EQ(c.backward(variant.handle), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_reference_backward: options->buffer_grads[0]: buffer 'bias' is not learnable: set "
                          "FLEXJIT_BUFFER_LEARNABLE in its declaration to get its gradient");
  // Declarations the C++ API refuses: an int buffer, a buffer score_mod does not read.
  RelativeBias ints;
  ints.decl.dtype = FLEXJIT_I32;
  flexjit_variant* v = nullptr;
  EXPECT_NE(flexjit_variant_create(&ints.desc, &v), FLEXJIT_OK);
  EXPECT_NE(last_error().find("bias"), std::string::npos) << last_error();
  EXPECT_EQ(v, nullptr);
  RelativeBias unread;
  unread.desc.score_mod = "score * 2";
  EXPECT_EQ(flexjit_variant_create(&unread.desc, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_NE(last_error().find("bias"), std::string::npos) << last_error();
}

TEST(CApiLearnable, GpuBackwardChecksGradientsBeforeTheDevice) {
  RelativeBias c;
  c.desc.head_dim = 64;
  Variant variant(c.desc);
  uint16_t fake[256];  // never dereferenced
  int64_t shape4[4] = {1, 1, 2, 64}, shape3[3] = {1, 1, 2}, wrong[1] = {4};
  DLTensor x = device(fake, kBF16, 4, shape4), lse = device(fake, kF32, 3, shape3),
           bias = device(fake, kF32, 1, c.bias_shape), grad = device(fake, kF32, 1, wrong);
  c.value.tensor = &bias;
  c.gradient.tensor = &grad;
  auto backward = [&] {
    return flexjit_backward(variant.handle, &x, &x, &x, &x, &lse, &x, &x, &x, &x, nullptr, nullptr, &c.options);
  };
  EXPECT_EQ(backward(), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "flexjit_backward: the gradient of buffer 'bias' has shape [4], not the buffer's [3]");
  grad.shape = c.bias_shape;
  grad.dtype = kBF16;
  EXPECT_EQ(backward(), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "flexjit_backward: the gradient of buffer 'bias' is bf16: buffer gradients are float32");
  grad.dtype = kF32;
  int64_t strided[1] = {2};
  grad.strides = strided;
  EXPECT_EQ(backward(), FLEXJIT_ERROR_SHAPE);
  EXPECT_NE(last_error().find("flexjit_backward: the gradient of buffer 'bias' must be contiguous (row-major), got"),
            std::string::npos)
      << last_error();
  grad.strides = nullptr;
  c.options.num_buffer_grads = 0;
  EXPECT_EQ(backward(), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_backward: learnable buffer 'bias' has no gradient output: add {\"bias\", tensor} to "
                          "options->buffer_grads (float32, the shape of the buffer's value)");
  c.options.num_buffer_grads = 1;
  EXPECT_EQ(flexjit_forward(variant.handle, &x, &x, &x, &x, &lse, nullptr, nullptr, &c.options), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_forward: options->num_buffer_grads is 1, but only flexjit_backward and "
                          "flexjit_reference_backward write buffer gradients: pass 0");
}

// Two sequences of lengths 2 and 3 in a cache of S = 3, q = 0 (uniform weights over the keys a
// sequence holds), D = Dv = 1: out = (1 + 2) / 2 = 1.5 and (10 + 20 + 40) / 3, lse = log 2, log 3.
struct DecodeCase {
  flexjit_variant_desc desc{};
  float q[2] = {0, 0};
  float k[6] = {1, 1, 1, 1, 1, 1}, v[6] = {1, 2, 4, 10, 20, 40};
  int32_t lens[2] = {2, 3};
  double out[2] = {-1, -1}, lse[2] = {-1, -1};
  int64_t q_shape[4] = {2, 1, 1, 1}, kv_shape[4] = {2, 1, 3, 1}, lens_shape[1] = {2}, lse_shape[3] = {2, 1, 1};
  DLTensor tq = host(q, kF32, 4, q_shape), tk = host(k, kF32, 4, kv_shape), tv = host(v, kF32, 4, kv_shape),
           tlens = host(lens, kI32, 1, lens_shape), tout = host(out, kF64, 4, q_shape), tlse = host(lse, kF64, 3, lse_shape);
  // The same cache in pages of 2 tokens, out of order: sequence 0 in page 3, sequence 1 in pages
  // 0 and 2; page 1 and the tail of page 2 hold values no sequence reaches (999).
  float k_pages[8] = {1, 1, 1, 1, 1, 999, 1, 1}, v_pages[8] = {10, 20, 999, 999, 40, 999, 1, 2};
  int32_t table[4] = {3, 1, 0, 2};
  int64_t pages_shape[4] = {4, 2, 1, 1}, table_shape[2] = {2, 2};
  DLTensor tkp = host(k_pages, kF32, 4, pages_shape), tvp = host(v_pages, kF32, 4, pages_shape),
           ttable = host(table, kI32, 2, table_shape);
  flexjit_decode_args args{};

  DecodeCase() {
    desc.struct_size = sizeof desc;
    args.struct_size = sizeof args;
    args.q = &tq;
    args.k = &tk;
    args.v = &tv;
    args.seq_lens = &tlens;
    args.out = &tout;
    args.lse = &tlse;
  }
  void page() {
    args.k = &tkp;
    args.v = &tvp;
    args.page_table = &ttable;
  }
  void expect_result() const {
    EXPECT_NEAR(out[0], 1.5, 1e-12);
    EXPECT_NEAR(out[1], 70.0 / 3, 1e-12);
    EXPECT_NEAR(lse[0], std::log(2.0), 1e-12);
    EXPECT_NEAR(lse[1], std::log(3.0), 1e-12);
  }
};

TEST(CApiDecode, ReferenceOnAContiguousAndAPagedCache) {
  DecodeCase c;
  Variant variant(c.desc);
  ASSERT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_OK) << last_error();
  c.expect_result();
  c.out[0] = c.out[1] = c.lse[0] = c.lse[1] = -1;
  c.page();
  ASSERT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_OK) << last_error();
  c.expect_result();
}

TEST(CApiDecode, ModsSeeEachSequencesLength) {
  // kv_len is the sequence's length: keep only its last key (v = 2 and 40).
  DecodeCase c;
  c.desc.mask_mod = "kv_idx == kv_len - 1";
  Variant variant(c.desc);
  c.page();
  ASSERT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_OK) << last_error();
  EXPECT_NEAR(c.out[0], 2.0, 1e-12);
  EXPECT_NEAR(c.out[1], 40.0, 1e-12);
  EXPECT_NEAR(c.lse[0], 0.0, 1e-12);
}

TEST(CApiDecode, ReferenceErrorsNameTheArgument) {
  DecodeCase c;
  Variant variant(c.desc);
  const char* fn = "flexjit_reference_decode: ";
  c.page();
  c.table[2] = 4;  // sequence 1's first page is outside the pool of 4
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_NE(last_error().find("page_table[1][0] = 4"), std::string::npos) << last_error();
  c.table[2] = 0;
  c.lens[1] = 5;  // two pages of 2 hold 4 keys
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_NE(last_error().find("seq_lens[1] = 5 is beyond the 4 keys its page-table row holds"), std::string::npos)
      << last_error();
  c.lens[1] = 3;
  c.tkp.ndim = 3;
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + "args->k has ndim 3: a paged cache (args->page_table set) is "
                                            "[num_pages, page_size, Hkv, D]");
  c.tkp.ndim = 4;
  c.ttable.dtype = kF32;
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + "args->page_table has dtype float32: it is [B, max_pages] int32");
  c.ttable.dtype = kI32;
  c.ttable.ndim = 1;
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + "args->page_table has ndim 1: it is [B, max_pages] int32");
  c.ttable.ndim = 2;
  c.args.host_seq_lens = c.lens;
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), std::string(fn) + "args->host_seq_lens, host_page_table and max_seq_len are for "
                                            "flexjit_decode; the reference reads seq_lens and page_table from host "
                                            "memory: leave them 0");
  c.args.host_seq_lens = nullptr;
  c.lens_shape[0] = 1;
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + "args->seq_lens has 1 lengths; q has a batch of 2");
  c.lens_shape[0] = 2;
  c.args.seq_lens = nullptr;
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &c.args, nullptr), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), std::string(fn) + "args->seq_lens is NULL: pass a DLTensor [B] int32");
  // Contiguous: lengths beyond S.
  DecodeCase d;
  d.lens[0] = 4;
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &d.args, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_NE(last_error().find("seq_lens[0] = 4 is beyond the cache's 3"), std::string::npos) << last_error();
  d.lens[0] = 2;
  d.tk.ndim = 5;
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &d.args, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + "args->k has ndim 5: a contiguous cache (args->page_table NULL) is "
                                            "[B, Hkv, S, D]");
  d.tk.ndim = 4;
  d.args.struct_size = 8;
  EXPECT_EQ(flexjit_reference_decode(variant.handle, &d.args, nullptr), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), std::string(fn) + "args->struct_size is 8, not a size of flexjit_decode_args (this "
                                            "flexjit's is " + std::to_string(sizeof(flexjit_decode_args)) +
                                            "): set it to sizeof(flexjit_decode_args)");
}

TEST(CApiDecode, GpuCallChecksItsArgumentsBeforeTheDevice) {
  flexjit_variant_desc desc{};
  desc.struct_size = sizeof desc;
  desc.head_dim = 64;
  Variant variant(desc);
  uint16_t fake[256];  // never dereferenced
  int64_t q_shape[4] = {2, 4, 1, 64}, pages[4] = {8, 16, 1, 64}, lens_shape[1] = {2}, table_shape[2] = {2, 4};
  DLTensor q = device(fake, kBF16, 4, q_shape), kp = device(fake, kBF16, 4, pages),
           lens = device(fake, kI32, 1, lens_shape), table = device(fake, kI32, 2, table_shape);
  flexjit_decode_args a{};
  a.struct_size = sizeof a;
  a.q = &q;
  a.k = &kp;
  a.v = &kp;
  a.seq_lens = &lens;
  a.page_table = &table;
  a.out = &q;
  kp.ndim = 3;
  EXPECT_EQ(flexjit_decode(variant.handle, &a, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "flexjit_decode: args->k has ndim 3: a paged cache (args->page_table set) is "
                          "[num_pages, page_size, Hkv, D]");
  kp.ndim = 4;
  lens.dtype = {kDLInt, 64, 1};
  EXPECT_EQ(flexjit_decode(variant.handle, &a, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "flexjit_decode: args->seq_lens has dtype int64: it is [B] int32");
  lens.dtype = kI32;
  lens.device = {kDLCPU, 0};
  EXPECT_EQ(flexjit_decode(variant.handle, &a, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_NE(last_error().find("flexjit_decode: args->seq_lens is in kDLCPU memory"), std::string::npos) << last_error();
  lens.device = {kDLCUDA, 0};
  a.max_seq_len = -1;
  EXPECT_EQ(flexjit_decode(variant.handle, &a, nullptr, nullptr), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_decode: args->max_seq_len is -1: give 0 (the cache's capacity) or an upper bound "
                          "of the lengths");
  a.max_seq_len = 0;
  int32_t host_table[8] = {0};
  a.page_table = nullptr;
  a.host_page_table = host_table;
  a.k = a.v = &q;  // a contiguous cache of the right rank
  EXPECT_EQ(flexjit_decode(variant.handle, &a, nullptr, nullptr), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_decode: args->host_page_table is set but args->page_table is NULL (a contiguous "
                          "cache has no page table): set both or neither");
  a.host_page_table = nullptr;
  flexjit_call_options options{};
  options.struct_size = sizeof options;
  flexjit_buffer_value g{"x", &q};
  options.buffer_grads = &g;
  options.num_buffer_grads = 1;
  EXPECT_EQ(flexjit_decode(variant.handle, &a, nullptr, &options), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_decode: options->num_buffer_grads is 1, but only flexjit_backward and "
                          "flexjit_reference_backward write buffer gradients: pass 0");
  EXPECT_EQ(flexjit_decode(variant.handle, nullptr, nullptr, nullptr), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_decode: args is NULL");
  if (!flexjit_gpu_available()) {
    EXPECT_EQ(flexjit_decode(variant.handle, &a, nullptr, nullptr), FLEXJIT_ERROR_DRIVER);
    EXPECT_NE(last_error().find("no CUDA driver found"), std::string::npos) << last_error();
  }
}

TEST(CApiDecode, DecodeConfigIsParsed) {
  flexjit_variant_desc desc{};
  desc.struct_size = sizeof desc;
  desc.decode_config = "m999";
  flexjit_variant* v = nullptr;
  EXPECT_EQ(flexjit_variant_create(&desc, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "bad block config 'm999': expected 'n' at position 5 (the form is "
                          "m<BLOCK_M>n<BLOCK_N>w<WARPS>s<STAGES>, e.g. m128n64w4s2)");
  EXPECT_EQ(v, nullptr);
}

}  // namespace
