// The C API seen from C++: what is awkward to test in C (threads, byte-level struct versions) and
// the validation messages of the calls' arguments. No GPU needed; the GPU entry points are checked
// only for their argument errors (and, on a machine without a GPU, for the driver's message).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "flexjit/flexjit.h"

namespace {

std::string last_error() { return flexjit_last_error(); }

flexjit_variant_desc causal_desc() {
  flexjit_variant_desc d{};
  d.struct_size = sizeof d;
  d.mask_mod = "q_idx >= kv_idx";
  return d;
}

struct Variant {
  flexjit_variant* handle = nullptr;
  explicit Variant(const flexjit_variant_desc& d) {
    EXPECT_EQ(flexjit_variant_create(&d, &handle), FLEXJIT_OK) << last_error();
  }
  ~Variant() { flexjit_variant_destroy(handle); }
};

DLTensor host(void* data, DLDataType dtype, int ndim, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  return t;
}

TEST(CApi, LastErrorIsPerThread) {
  flexjit_variant_desc d = causal_desc();
  d.mask_mod = "q_idx >= kv_id";
  flexjit_variant* v = nullptr;
  ASSERT_EQ(flexjit_variant_create(&d, &v), FLEXJIT_ERROR_EXPR);
  const std::string mine = last_error();
  std::string theirs_before, theirs_after;
  flexjit_status theirs_status = FLEXJIT_OK;
  std::thread other([&] {
    theirs_before = last_error();  // nothing failed on this thread yet
    flexjit_variant_desc bad = causal_desc();
    bad.dtype = FLEXJIT_F32;
    flexjit_variant* w = nullptr;
    theirs_status = flexjit_variant_create(&bad, &w);
    theirs_after = last_error();
  });
  other.join();
  EXPECT_EQ(theirs_before, "");
  EXPECT_EQ(theirs_status, FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(theirs_after, "flexjit_variant_create: desc->dtype is f32: attention runs on FLEXJIT_BF16 or FLEXJIT_F16 tensors");
  EXPECT_EQ(last_error(), mine);
  EXPECT_EQ(flexjit_last_status(), FLEXJIT_ERROR_EXPR);
}

TEST(CApi, StructsOfANewerHeaderAreReadWhenTheirNewFieldsAreZero) {
  // A caller compiled against a later header: the struct is larger; the fields this library does
  // not know must be zero, or the call refuses rather than ignore a request.
  struct Newer {
    flexjit_variant_desc known;
    uint64_t future_field;
  } newer{};
  newer.known = causal_desc();
  newer.known.struct_size = sizeof newer;
  flexjit_variant* v = nullptr;
  ASSERT_EQ(flexjit_variant_create(&newer.known, &v), FLEXJIT_OK) << last_error();
  flexjit_variant_destroy(v);
  newer.future_field = 1;
  EXPECT_EQ(flexjit_variant_create(&newer.known, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(v, nullptr);
  EXPECT_EQ(last_error(), "flexjit_variant_create: desc sets fields of a newer flexjit_variant_desc (byte " +
                              std::to_string(sizeof(flexjit_variant_desc)) + " of " + std::to_string(sizeof newer) +
                              ") that this flexjit does not know: use a flexjit with a C API at least as new as your header");
  // A caller of C API 1000 (no decode_config) is read; anything shorter is refused.
  flexjit_variant_desc older = causal_desc();
  const size_t v1000 = offsetof(flexjit_variant_desc, decode_config);
  older.struct_size = v1000;
  older.decode_config = "not read";
  ASSERT_EQ(flexjit_variant_create(&older, &v), FLEXJIT_OK) << last_error();
  flexjit_variant_destroy(v);
  older.struct_size = v1000 - 8;
  EXPECT_EQ(flexjit_variant_create(&older, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_variant_create: desc->struct_size is " + std::to_string(v1000 - 8) +
                              ", not a size of flexjit_variant_desc (this flexjit's is " +
                              std::to_string(sizeof older) + ", older headers' " + std::to_string(v1000) +
                              "): set it to sizeof(flexjit_variant_desc)");
}

TEST(CApi, DeclarationErrorsNameTheField) {
  int64_t shape[1] = {16};
  flexjit_buffer_decl buffer{"slope", FLEXJIT_F32, 1, shape, FLEXJIT_BUFFER_LEARNABLE};
  flexjit_variant_desc d = causal_desc();
  d.score_mod = "score + slope[h]";
  d.buffers = &buffer;
  d.num_buffers = 1;
  flexjit_variant* v = nullptr;
  buffer.flags = 2;
  EXPECT_EQ(flexjit_variant_create(&d, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_variant_create: desc->buffers[0].flags is 2: only FLEXJIT_BUFFER_LEARNABLE (1) is "
                          "defined");
  buffer.flags = 0;
  buffer.ndim = 9;
  EXPECT_EQ(flexjit_variant_create(&d, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_variant_create: desc->buffers[0] ('slope') has ndim 9: buffers have rank 1 to 8");
  buffer.ndim = 1;
  buffer.dtype = static_cast<flexjit_dtype>(42);
  EXPECT_EQ(flexjit_variant_create(&d, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_variant_create: desc->buffers[0].dtype is 42, not a flexjit_dtype: use FLEXJIT_BF16, "
                          "FLEXJIT_F16, FLEXJIT_F32, FLEXJIT_I32 or FLEXJIT_U8");
  buffer.dtype = FLEXJIT_F32;
  d.num_params = 1;  // and params == NULL
  EXPECT_EQ(flexjit_variant_create(&d, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_variant_create: desc->params (num_params > 0) is NULL");
  d.num_params = 0;
  d.fwd_config = "m999";
  EXPECT_EQ(flexjit_variant_create(&d, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "bad block config 'm999': expected 'n' at position 5 (the form is "
                          "m<BLOCK_M>n<BLOCK_N>w<WARPS>s<STAGES>, e.g. m128n64w4s2)");
  d.fwd_config = nullptr;
  d.head_dim = 44;
  EXPECT_EQ(flexjit_variant_create(&d, &v), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "head_dim 44 is not supported: head dims are multiples of 8 from 8 to 256");
  EXPECT_EQ(v, nullptr);
}

TEST(CApi, CallValuesAreCheckedAgainstTheDeclarations) {
  flexjit_param_decl window{"window", FLEXJIT_SCALAR_INT};
  flexjit_variant_desc d = causal_desc();
  d.mask_mod = "q_idx >= kv_idx && q_idx - kv_idx <= window";
  d.params = &window;
  d.num_params = 1;
  Variant variant(d);
  float x[4] = {1, 0, 0, 1};
  double out[4];
  int64_t shape[4] = {1, 1, 2, 2};
  const DLDataType f32{kDLFloat, 32, 1}, f64{kDLFloat, 64, 1};
  DLTensor q = host(x, f32, 4, shape), o = host(out, f64, 4, shape);
  flexjit_param_value value{"window", FLEXJIT_SCALAR_INT, int64_t(1) << 40, 0};
  flexjit_call_options options{};
  options.struct_size = sizeof options;
  options.params = &value;
  options.num_params = 1;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &q, &q, &q, &o, nullptr, &options), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_reference_forward: options->params[0]: int parameter 'window' = 1099511627776 "
                          "does not fit in 32 bits");
  value.name = "windows";
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &q, &q, &q, &o, nullptr, &options), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_reference_forward: options->params[0]: the variant declares no parameter 'windows'");
  // A parameter the mask reads but the call does not give: the interpreter's own message.
  options.num_params = 0;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &q, &q, &q, &o, nullptr, &options), FLEXJIT_ERROR_USAGE);
  EXPECT_NE(last_error().find("window"), std::string::npos) << last_error();
  // A buffer the variant does not declare.
  flexjit_buffer_value buffer{"doc", &q};
  options.buffers = &buffer;
  options.num_buffers = 1;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &q, &q, &q, &o, nullptr, &options), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_reference_forward: options->buffers[0]: the variant declares no buffer 'doc'");
}

TEST(CApi, BlockMaskOnTheCpu) {
  Variant variant(causal_desc());
  flexjit_block_mask_desc d{};
  d.struct_size = sizeof d;
  d.batch = 2;
  d.q_heads = 4;
  d.q_len = d.kv_len = 512;
  d.device = FLEXJIT_MASK_CPU;
  flexjit_block_mask* mask = nullptr;
  ASSERT_EQ(flexjit_block_mask_create(variant.handle, &d, nullptr, nullptr, &mask), FLEXJIT_OK) << last_error();
  flexjit_block_mask_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(flexjit_block_mask_get_info(mask, &info), FLEXJIT_OK) << last_error();
  // causal, 4 x 4 blocks of 128: 4 partial (the diagonal) and 6 full of 16; b and h unused.
  EXPECT_EQ(info.batch, 1);
  EXPECT_EQ(info.heads, 1);
  EXPECT_EQ(info.q_block, 128);
  EXPECT_DOUBLE_EQ(info.density, 10.0 / 16);
  EXPECT_DOUBLE_EQ(info.partial_fraction, 4.0 / 16);
  flexjit_block_mask_destroy(mask);
  d.device = static_cast<flexjit_mask_device>(7);
  EXPECT_EQ(flexjit_block_mask_create(variant.handle, &d, nullptr, nullptr, &mask), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_block_mask_create: desc->device is 7: use FLEXJIT_MASK_GPU or FLEXJIT_MASK_CPU");
  EXPECT_EQ(mask, nullptr);
}

// C API 1004: caller-owned storage for a GPU mask's tables. The size query and the checks that
// come before anything runs; the build into the storage is BlockMaskGpu.BuildsIntoCallerStorage.
TEST(CApi, BlockMaskStorageBytesAndChecks) {
  Variant variant(causal_desc());
  flexjit_block_mask_desc d{};
  d.struct_size = sizeof d;
  d.batch = 2;
  d.q_heads = 4;
  d.q_len = d.kv_len = 40 * 128;
  d.device = FLEXJIT_MASK_GPU;
  size_t bytes = 1;
  ASSERT_EQ(flexjit_block_mask_storage_bytes(variant.handle, &d, nullptr, &bytes), FLEXJIT_OK) << last_error();
  // b and h unused: one row of tables over 40 x 40 blocks. Each table starts on 256 bytes: four
  // count tables of 40 int32 (160 -> 256 bytes), four index tables of 1600 (6400, a multiple of
  // 256), then the 1600 one-byte classes: 1024 + 25600 + 1600 = 28224 -> 28416.
  EXPECT_EQ(bytes, 28416u);
  // With per-sequence lengths every sequence has its own row: counts of 80 int32 (320 -> 512),
  // indices of 3200 (12800), 3200 classes: 2048 + 51200 + 3200 = 56448 -> 56576.
  int64_t lens_shape[1] = {2};
  int32_t lens_values[2] = {1, 2};
  DLTensor lens = host(lens_values, DLDataType{kDLInt, 32, 1}, 1, lens_shape);
  flexjit_call_options options{};
  options.struct_size = sizeof options;
  options.kv_lens = &lens;
  ASSERT_EQ(flexjit_block_mask_storage_bytes(variant.handle, &d, &options, &bytes), FLEXJIT_OK) << last_error();
  EXPECT_EQ(bytes, 56576u);
  d.q_len = 0;
  EXPECT_EQ(flexjit_block_mask_storage_bytes(variant.handle, &d, nullptr, &bytes), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "block mask sizes must be positive: batch 2, heads 4, q_len 0, kv_len 5120");
  EXPECT_EQ(bytes, 0u);
  d.q_len = 40 * 128;

  flexjit_block_mask* mask = nullptr;
  alignas(256) static unsigned char storage[28416 + 16];
  d.storage = storage;
  d.storage_bytes = 28415;
  EXPECT_EQ(flexjit_block_mask_create(variant.handle, &d, nullptr, nullptr, &mask), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "block mask storage holds 28415 bytes; these tables need 28416 (BlockMask::gpu_storage_bytes "
                          "says how many)");
  d.storage = storage + 4;
  d.storage_bytes = 28416;
  EXPECT_EQ(flexjit_block_mask_create(variant.handle, &d, nullptr, nullptr, &mask), FLEXJIT_ERROR_SHAPE);
  EXPECT_NE(last_error().find(" is not 16-byte aligned: pass the start of an allocation"), std::string::npos)
      << last_error();
  d.storage = nullptr;
  EXPECT_EQ(flexjit_block_mask_create(variant.handle, &d, nullptr, nullptr, &mask), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_block_mask_create: desc->storage_bytes is 28416 but desc->storage is NULL: pass "
                          "the memory, or 0 bytes for tables the mask allocates");
  d.storage = storage;
  d.device = FLEXJIT_MASK_CPU;
  EXPECT_EQ(flexjit_block_mask_create(variant.handle, &d, nullptr, nullptr, &mask), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_block_mask_create: desc->storage is set for a CPU mask: caller storage is for GPU "
                          "masks (FLEXJIT_MASK_GPU); leave it NULL");
  EXPECT_EQ(mask, nullptr);
  // A caller built against 1003 passes the struct without the storage fields.
  d.struct_size = offsetof(flexjit_block_mask_desc, storage);
  ASSERT_EQ(flexjit_block_mask_create(variant.handle, &d, nullptr, nullptr, &mask), FLEXJIT_OK) << last_error();
  flexjit_block_mask_destroy(mask);
}

TEST(CApi, EmitFormatsAndErrors) {
  Variant variant(causal_desc());
  flexjit_emit_options o{};
  o.struct_size = sizeof o;
  o.family = "block_mask";
  o.format = "cubin";
  o.arch = "sm_80";
  char* data = nullptr;
  size_t size = 0;
  ASSERT_EQ(flexjit_emit(variant.handle, &o, &data, &size), FLEXJIT_OK) << last_error();
  ASSERT_GT(size, 4u);
  EXPECT_EQ(std::memcmp(data, "\x7f" "ELF", 4), 0);
  flexjit_free(data);
  o.format = "sass";
  EXPECT_EQ(flexjit_emit(variant.handle, &o, &data, &size), FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_emit: options->format 'sass' is not a format: use cu, ptx, cubin or context");
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);
}

TEST(CApi, GpuCallsCheckTheirTensors) {
  flexjit_variant_desc d = causal_desc();
  d.head_dim = 64;
  Variant variant(d);
  uint16_t fake[128];  // never dereferenced: no kernel runs in this test
  int64_t shape4[4] = {1, 1, 2, 64}, shape3[3] = {1, 1, 2};
  const DLDataType bf16{kDLBfloat, 16, 1}, f32{kDLFloat, 32, 1};
  DLTensor q{}, lse{};
  q.data = fake;
  q.device = {kDLCUDA, 0};
  q.ndim = 4;
  q.dtype = bf16;
  q.shape = shape4;
  lse = q;
  lse.ndim = 3;
  lse.shape = shape3;
  lse.dtype = f32;
  DLTensor k = q;
  k.device.device_id = 1;
  EXPECT_EQ(flexjit_forward(variant.handle, &q, &k, &q, &q, &lse, nullptr, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "flexjit_forward: k is on CUDA device 1 but q on device 0: every tensor of a call must be on "
                          "one device");
  DLTensor v = q;
  v.dtype = {kDLFloat, 64, 1};
  EXPECT_EQ(flexjit_forward(variant.handle, &q, &q, &v, &q, &lse, nullptr, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "flexjit_forward: v has dtype float64: GPU tensors must be float16, bfloat16, float32, int32 "
                          "or uint8 (one lane)");
  v.dtype = {kDLBfloat, 16, 2};
  EXPECT_EQ(flexjit_forward(variant.handle, &q, &q, &v, &q, &lse, nullptr, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "flexjit_forward: v has dtype bfloat16 x2 lanes: GPU tensors must be float16, bfloat16, "
                          "float32, int32 or uint8 (one lane)");
  DLTensor o = q;
  o.data = nullptr;
  EXPECT_EQ(flexjit_forward(variant.handle, &q, &q, &q, &o, &lse, nullptr, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), "flexjit_forward: out.data is NULL but the tensor has 128 elements");
  EXPECT_EQ(flexjit_backward(variant.handle, &q, &q, &q, &q, nullptr, &q, &q, &q, &q, nullptr, nullptr, nullptr),
            FLEXJIT_ERROR_USAGE);
  EXPECT_EQ(last_error(), "flexjit_backward: lse is NULL: pass a DLTensor");
  if (!flexjit_gpu_available()) {
    // Well-formed tensors reach the C++ API, which reports the missing driver.
    EXPECT_EQ(flexjit_forward(variant.handle, &q, &q, &q, &q, &lse, nullptr, nullptr, nullptr), FLEXJIT_ERROR_DRIVER);
    EXPECT_NE(last_error().find("no CUDA driver found"), std::string::npos) << last_error();
  }
}

// Hostile host tensors for the reference: an empty head, a span no memory holds, a device type
// outside DLPack's enum, and a scale the GPU calls refuse are named errors, never a crash or a
// wrong answer.
TEST(CApi, ReferenceRefusesTensorsNoMemoryHoldsAndBadScales) {
  Variant variant(causal_desc());
  const DLDataType f32{kDLFloat, 32, 1};
  float data[8] = {0.5f, -1, 2, 0.25f, 1, 1, -2, 3};
  int64_t shape[4] = {2, 1, 1, 4}, empty[4] = {1, 0, 1, 4}, out_shape[4] = {2, 1, 1, 4};
  float out[8] = {0};
  DLTensor q = host(data, f32, 4, shape), o = host(out, f32, 4, out_shape);
  const char* fn = "flexjit_reference_forward: ";

  DLTensor e = host(data, f32, 4, empty);
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &e, &e, &e, &o, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + "q has extent 0 in dimension 1 (shape [1, 0, 1, 4]); every extent must be "
                                            "between 1 and 2^31-1");

  int64_t huge[4] = {int64_t{1} << 62, 4, 4, 1};  // batch 1 would wrap onto batch 0's bytes
  DLTensor far = q;
  far.strides = huge;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &far, &q, &q, &o, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + "q spans more than 2^62 bytes (shape [2, 1, 1, 4], strides "
                                            "[4611686018427387904, 4, 4, 1], byte_offset 0): no memory holds it; check "
                                            "the strides and byte_offset");
  DLTensor offset = q;
  offset.byte_offset = uint64_t{1} << 63;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &offset, &q, &q, &o, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_NE(last_error().find("q spans more than 2^62 bytes"), std::string::npos) << last_error();

  DLTensor odd_device = q;
  const int sixteen = 16;  // kDLHexagon in newer DLPack headers; not in this one's enum
  std::memcpy(&odd_device.device.device_type, &sixteen, sizeof sixteen);
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &odd_device, &q, &q, &o, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + "q is in an unknown device type memory (device_type 16): the CPU reference "
                                            "needs host tensors (kDLCPU)");

  int64_t broadcast[4] = {0, 4, 4, 1};  // both batches would write the same row
  DLTensor shared_out = o;
  shared_out.strides = broadcast;
  EXPECT_EQ(flexjit_reference_forward(variant.handle, &q, &q, &q, &shared_out, nullptr, nullptr), FLEXJIT_ERROR_SHAPE);
  EXPECT_EQ(last_error(), std::string(fn) + "out has stride 0 in dimension 0 (extent 2): its elements would overwrite "
                                            "each other; pass an output tensor of its own");

  flexjit_call_options options{};
  options.struct_size = sizeof options;
  options.has_scale = 1;
  for (double bad : {std::nan(""), double(INFINITY), 0.0}) {
    options.scale = bad;
    EXPECT_EQ(flexjit_reference_forward(variant.handle, &q, &q, &q, &o, nullptr, &options), FLEXJIT_ERROR_USAGE);
    EXPECT_EQ(last_error().rfind("reference attention: scale must be a finite non-zero number (negative is allowed), "
                                 "got ", 0),
              0u)
        << last_error();
  }
}

}  // namespace
