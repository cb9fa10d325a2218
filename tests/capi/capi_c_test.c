/* The C API from C: links libflexjit.so, checks an expression, emits a kernel, runs the CPU
   reference on a case computed by hand and gets named errors with their messages for bad input.
   Prints one line per failed expectation and exits non-zero when any failed. No GPU needed. */
#include <flexjit/flexjit.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond)                                                         \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);   \
      ++failures;                                                            \
    }                                                                        \
  } while (0)

static void expect_text(const char* text, const char* needle, int line) {
  if (text == NULL || strstr(text, needle) == NULL) {
    fprintf(stderr, "%s:%d: expected the text to contain\n  %s\nbut it is\n  %s\n", __FILE__, line, needle,
            text ? text : "(null)");
    ++failures;
  }
}
#define EXPECT_TEXT(text, needle) expect_text((text), (needle), __LINE__)

static void expect_near(double got, double want, int line) {
  if (!(fabs(got - want) <= 1e-6 * (1.0 + fabs(want)))) {
    fprintf(stderr, "%s:%d: got %.9f, want %.9f\n", __FILE__, line, got, want);
    ++failures;
  }
}
#define EXPECT_NEAR(got, want) expect_near((got), (want), __LINE__)

static DLTensor host_tensor(void* data, DLDataType dtype, int ndim, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = NULL;
  t.byte_offset = 0;
  return t;
}

int main(void) {
  const DLDataType f32 = {kDLFloat, 32, 1}, f64 = {kDLFloat, 64, 1};
  flexjit_param_decl param = {"s", FLEXJIT_SCALAR_FLOAT};
  flexjit_variant_desc desc;
  flexjit_variant* variant = NULL;
  flexjit_check_result check;
  flexjit_emit_options emit;
  flexjit_param_value s_value;
  flexjit_call_options options;
  char* text = NULL;
  size_t size = 0;

  EXPECT(flexjit_c_api_version() == FLEXJIT_C_API_VERSION);
  EXPECT(strlen(flexjit_version_string()) >= 5);
  EXPECT(strcmp(flexjit_last_error(), "") == 0);
  EXPECT(strcmp(flexjit_status_name(FLEXJIT_ERROR_SHAPE), "ShapeError") == 0);

  /* 1. Check: canonical form, gradient and generated CUDA. */
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.score_mod = "score*s";
  desc.mask_mod = "q_idx>=kv_idx";
  desc.params = &param;
  desc.num_params = 1;
  memset(&check, 0, sizeof check);
  check.struct_size = sizeof check;
  EXPECT(flexjit_check(&desc, &check) == FLEXJIT_OK);
  EXPECT(check.score_canonical && strcmp(check.score_canonical, "score * s") == 0);
  EXPECT(check.mask_canonical && strcmp(check.mask_canonical, "q_idx >= kv_idx") == 0);
  EXPECT(check.score_gradient && strcmp(check.score_gradient, "s") == 0);
  EXPECT_TEXT(check.cuda, "float p_s;");
  EXPECT_TEXT(check.cuda, "#line 1 \"score_mod\"");
  EXPECT_TEXT(check.report, "score * s");
  flexjit_check_result_free(&check);
  EXPECT(check.report == NULL && check.cuda == NULL);

  /* 2. A variant; emit its forward kernel's source and the block-mask kernel's PTX. */
  EXPECT(flexjit_variant_create(&desc, &variant) == FLEXJIT_OK);
  EXPECT(variant != NULL);
  memset(&emit, 0, sizeof emit);
  emit.struct_size = sizeof emit;
  emit.family = "fwd";
  emit.format = "cu";
  EXPECT(flexjit_emit(variant, &emit, &text, &size) == FLEXJIT_OK);
  EXPECT(text != NULL && size == strlen(text));
  EXPECT_TEXT(text, "extern \"C\" __global__");
  EXPECT_TEXT(text, "score * args.p_s");
  flexjit_free(text);
  emit.family = "block_mask";
  emit.format = "ptx";
  emit.arch = "sm_80";
  EXPECT(flexjit_emit(variant, &emit, &text, &size) == FLEXJIT_OK);
  EXPECT_TEXT(text, ".target sm_80");
  EXPECT_TEXT(text, ".entry");
  flexjit_free(text);

  /* 3. The CPU reference on B=1, H=1, S=2, D=2 (hand-computed below). q = k = identity rows,
     v = [[1, 2], [3, 4]], causal, score_mod score * s with s = 2 and scale 0.5, so the scores are
     the plain dot products: row 0 sees kv 0 only (score 1): out = [1, 2], lse = 1. Row 1 sees
     kv 0 (score 0) and kv 1 (score 1): weights 1/(1+e), e/(1+e):
     out = [(1 + 3e)/(1 + e), (2 + 4e)/(1 + e)] = [2.462117157, 3.462117157], lse = log(1 + e) =
     1.313261687. */
  {
    float q[4] = {1, 0, 0, 1}, k[4] = {1, 0, 0, 1}, v[4] = {1, 2, 3, 4};
    double out[4], lse[2];
    int64_t shape4[4] = {1, 1, 2, 2}, shape3[3] = {1, 1, 2};
    DLTensor tq = host_tensor(q, f32, 4, shape4), tk = host_tensor(k, f32, 4, shape4),
             tv = host_tensor(v, f32, 4, shape4), tout = host_tensor(out, f64, 4, shape4),
             tlse = host_tensor(lse, f64, 3, shape3);
    memset(&s_value, 0, sizeof s_value);
    s_value.name = "s";
    s_value.type = FLEXJIT_SCALAR_FLOAT;
    s_value.float_value = 2.0;
    memset(&options, 0, sizeof options);
    options.struct_size = sizeof options;
    options.params = &s_value;
    options.num_params = 1;
    options.has_scale = 1;
    options.scale = 0.5f;
    EXPECT(flexjit_reference_forward(variant, &tq, &tk, &tv, &tout, &tlse, &options) == FLEXJIT_OK);
    EXPECT_NEAR(out[0], 1.0);
    EXPECT_NEAR(out[1], 2.0);
    EXPECT_NEAR(out[2], 2.462117157);
    EXPECT_NEAR(out[3], 3.462117157);
    EXPECT_NEAR(lse[0], 1.0);
    EXPECT_NEAR(lse[1], 1.313261687);

    /* The same v as a strided view with a byte_offset: the second and fourth float of
       [9, 1, 9, 2, 9, 3, 9, 4, ...] read as [[1, 2], [3, 4]] with strides {8, 8, 4, 2} elements. */
    {
      float padded[9] = {0, 9, 1, 9, 2, 9, 3, 9, 4};
      int64_t strides[4] = {8, 8, 4, 2};
      DLTensor strided = host_tensor(padded, f32, 4, shape4);
      strided.strides = strides;
      strided.byte_offset = 2 * sizeof(float);
      out[2] = out[3] = 0;
      EXPECT(flexjit_reference_forward(variant, &tq, &tk, &strided, &tout, &tlse, &options) == FLEXJIT_OK);
      EXPECT_NEAR(out[2], 2.462117157);
      EXPECT_NEAR(out[3], 3.462117157);
      strided.byte_offset = 3; /* not a multiple of 4 */
      EXPECT(flexjit_reference_forward(variant, &tq, &tk, &strided, &tout, &tlse, &options) == FLEXJIT_ERROR_SHAPE);
      EXPECT_TEXT(flexjit_last_error(),
                  "flexjit_reference_forward: v.byte_offset 3 is not a multiple of the element size 4 bytes");
      strided.byte_offset = 0;
      strides[1] = -8;
      EXPECT(flexjit_reference_forward(variant, &tq, &tk, &strided, &tout, &tlse, &options) == FLEXJIT_ERROR_SHAPE);
      EXPECT_TEXT(flexjit_last_error(), "flexjit_reference_forward: v has a negative stride -8 in dimension 1");
    }
    /* a 3-d q, a NULL k, a NULL variant, a float16 output: */
    tq.ndim = 3;
    EXPECT(flexjit_reference_forward(variant, &tq, &tk, &tv, &tout, &tlse, &options) == FLEXJIT_ERROR_SHAPE);
    EXPECT_TEXT(flexjit_last_error(), "flexjit_reference_forward: q has ndim 3: expected 4 ([B, H, S, D])");
    tq.ndim = 4;
    EXPECT(flexjit_reference_forward(variant, &tq, NULL, &tv, &tout, &tlse, &options) == FLEXJIT_ERROR_USAGE);
    EXPECT_TEXT(flexjit_last_error(), "flexjit_reference_forward: k is NULL: pass a DLTensor");
    EXPECT(flexjit_reference_forward(NULL, &tq, &tk, &tv, &tout, &tlse, &options) == FLEXJIT_ERROR_USAGE);
    EXPECT_TEXT(flexjit_last_error(), "flexjit_reference_forward: variant is NULL");
    tout.dtype.bits = 16;
    EXPECT(flexjit_reference_forward(variant, &tq, &tk, &tv, &tout, &tlse, &options) == FLEXJIT_ERROR_SHAPE);
    EXPECT_TEXT(flexjit_last_error(),
                "flexjit_reference_forward: out has dtype float16: the CPU reference writes float32 or float64");
    tout.dtype.bits = 64;

    /* 4. Named errors with their messages. A tensor in GPU memory for the CPU reference: */
    tq.device.device_type = kDLCUDA;
    EXPECT(flexjit_reference_forward(variant, &tq, &tk, &tv, &tout, &tlse, &options) == FLEXJIT_ERROR_SHAPE);
    EXPECT(flexjit_last_status() == FLEXJIT_ERROR_SHAPE);
    EXPECT_TEXT(flexjit_last_error(),
                "flexjit_reference_forward: q is in kDLCUDA memory (device_type 2): the CPU reference needs host "
                "tensors (kDLCPU)");
    tq.device.device_type = kDLCPU;
    /* a parameter of the wrong type: */
    s_value.type = FLEXJIT_SCALAR_INT;
    EXPECT(flexjit_reference_forward(variant, &tq, &tk, &tv, &tout, &tlse, &options) == FLEXJIT_ERROR_USAGE);
    EXPECT_TEXT(flexjit_last_error(),
                "flexjit_reference_forward: options->params[0]: parameter 's' is declared float: pass "
                "FLEXJIT_SCALAR_FLOAT and float_value");
    /* a GPU call on host tensors: */
    EXPECT(flexjit_forward(variant, &tq, &tk, &tv, &tout, NULL, NULL, NULL, NULL) == FLEXJIT_ERROR_SHAPE);
    EXPECT_TEXT(flexjit_last_error(), "flexjit_forward: q is in kDLCPU memory (device_type 1): GPU calls need CUDA "
                                      "tensors (kDLCUDA)");
  }
  /* an expression with a typo: the C++ ExprError's text, caret and hint included. */
  desc.mask_mod = "q_idx >= kv_id";
  {
    flexjit_variant* bad = (flexjit_variant*)&desc; /* must be reset to NULL on failure */
    EXPECT(flexjit_variant_create(&desc, &bad) == FLEXJIT_ERROR_EXPR);
    EXPECT(bad == NULL);
  }
  EXPECT(flexjit_last_status() == FLEXJIT_ERROR_EXPR);
  EXPECT_TEXT(flexjit_last_error(), "mask_mod:1:10: unknown variable 'kv_id' (did you mean 'kv_idx'?)");
  EXPECT_TEXT(flexjit_last_error(), "q_idx >= kv_id\n");
  EXPECT_TEXT(flexjit_last_error(), "^~~~~");
  /* a struct_size that is not this header's: */
  desc.mask_mod = "q_idx >= kv_idx";
  desc.struct_size = 8;
  check.struct_size = 3;
  EXPECT(flexjit_check(&desc, &check) == FLEXJIT_ERROR_USAGE);
  EXPECT_TEXT(flexjit_last_error(), "flexjit_check: result->struct_size is");
  check.struct_size = sizeof check;
  EXPECT(flexjit_check(&desc, &check) == FLEXJIT_ERROR_USAGE);
  EXPECT_TEXT(flexjit_last_error(), "flexjit_check: desc->struct_size is 8, not a size of flexjit_variant_desc");

  flexjit_variant_destroy(variant);

  /* C API 1001: a learnable buffer's gradient from the reference backward. score + bias[kv_idx] with
     q = 0, bias = 0 over v = (1, 3): p = (1/2, 1/2), out = 2; for dout = 1, d bias = p (v - out) =
     (-1/2, +1/2). */
  EXPECT(flexjit_c_api_version() == FLEXJIT_C_API_VERSION);
  {
    int64_t b_shape[1] = {2}, qkv_shape[4] = {1, 1, 1, 1}, kv_shape[4] = {1, 1, 2, 1};
    flexjit_buffer_decl b_decl = {"bias", FLEXJIT_F32, 1, NULL, FLEXJIT_BUFFER_LEARNABLE};
    float q0[1] = {0}, k0[2] = {1, 1}, v0[2] = {1, 3}, dout0[1] = {1}, b0[2] = {0, 0};
    double dq0[1], dk0[2], dv0[2], db0[2] = {9, 9};
    DLTensor tq, tk, tv, tdo, tdq, tdk, tdv, tb, tdb;
    flexjit_buffer_value b_value, b_grad;
    flexjit_variant* learn = NULL;
    b_decl.shape = b_shape;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.score_mod = "score + bias[kv_idx]";
    desc.buffers = &b_decl;
    desc.num_buffers = 1;
    EXPECT(flexjit_variant_create(&desc, &learn) == FLEXJIT_OK);
    tq = host_tensor(q0, f32, 4, qkv_shape);
    tk = host_tensor(k0, f32, 4, kv_shape);
    tv = host_tensor(v0, f32, 4, kv_shape);
    tdo = host_tensor(dout0, f32, 4, qkv_shape);
    tdq = host_tensor(dq0, f64, 4, qkv_shape);
    tdk = host_tensor(dk0, f64, 4, kv_shape);
    tdv = host_tensor(dv0, f64, 4, kv_shape);
    tb = host_tensor(b0, f32, 1, b_shape);
    tdb = host_tensor(db0, f64, 1, b_shape);
    b_value.name = "bias";
    b_value.tensor = &tb;
    b_grad.name = "bias";
    b_grad.tensor = &tdb;
    memset(&options, 0, sizeof options);
    options.struct_size = sizeof options;
    options.buffers = &b_value;
    options.num_buffers = 1;
    EXPECT(flexjit_reference_backward(learn, &tq, &tk, &tv, &tdo, &tdq, &tdk, &tdv, &options) == FLEXJIT_ERROR_USAGE);
    EXPECT_TEXT(flexjit_last_error(), "flexjit_reference_backward: learnable buffer 'bias' has no gradient output");
    options.buffer_grads = &b_grad;
    options.num_buffer_grads = 1;
    EXPECT(flexjit_reference_backward(learn, &tq, &tk, &tv, &tdo, &tdq, &tdk, &tdv, &options) == FLEXJIT_OK);
    EXPECT_NEAR(db0[0], -0.5);
    EXPECT_NEAR(db0[1], 0.5);
    flexjit_variant_destroy(learn);
  }
  /* flexjit_reference_decode on a paged cache: one sequence of length 3 in pages of 2 (pages 1
     then 0 of the pool), q = 0: out = mean of its 3 values = (2 + 4 + 6) / 3 = 4. */
  {
    const DLDataType i32 = {kDLInt, 32, 1};
    int64_t q_shape[4] = {1, 1, 1, 1}, pages_shape[4] = {2, 2, 1, 1}, lens_shape[1] = {1}, table_shape[2] = {1, 2};
    float q0[1] = {0}, k_pages[4] = {1, 1, 1, 1}, v_pages[4] = {6, 100, 2, 4};
    int32_t lens[1] = {3}, table[2] = {1, 0};
    double out0[1] = {-1};
    DLTensor tq = host_tensor(q0, f32, 4, q_shape), tk = host_tensor(k_pages, f32, 4, pages_shape),
             tv = host_tensor(v_pages, f32, 4, pages_shape), tl = host_tensor(lens, i32, 1, lens_shape),
             tt = host_tensor(table, i32, 2, table_shape), to = host_tensor(out0, f64, 4, q_shape);
    flexjit_decode_args args;
    flexjit_variant* plain = NULL;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    EXPECT(flexjit_variant_create(&desc, &plain) == FLEXJIT_OK);
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.q = &tq;
    args.k = &tk;
    args.v = &tv;
    args.seq_lens = &tl;
    args.page_table = &tt;
    args.out = &to;
    EXPECT(flexjit_reference_decode(plain, &args, NULL) == FLEXJIT_OK);
    EXPECT_NEAR(out0[0], 4.0);
    table[1] = 2; /* outside the pool of 2 pages */
    EXPECT(flexjit_reference_decode(plain, &args, NULL) == FLEXJIT_ERROR_SHAPE);
    EXPECT_TEXT(flexjit_last_error(), "page_table[0][1] = 2");
    flexjit_variant_destroy(plain);
  }
  if (failures == 0) printf("capi_c_test: all expectations met\n");
  return failures == 0 ? 0 : 1;
}
