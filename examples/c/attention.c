/* flexjit from C: ALiBi + causal attention through the C API (include/flexjit/flexjit.h).
 *
 * Checks the expressions, writes the forward kernel's PTX, computes the float64 CPU reference on
 * host arrays and, when a GPU is present, runs the JIT kernel on device memory (CUDA runtime) and
 * compares. Every call returns a status; flexjit_last_error() says what went wrong.
 *
 *   build/examples/c_attention [out.ptx]
 */
#include <flexjit/flexjit.h>

#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 1, H = 4, S = 256, D = 64 };

#define TRY(call)                                                                                       \
  do {                                                                                                  \
    flexjit_status status_ = (call);                                                                    \
    if (status_ != FLEXJIT_OK) {                                                                        \
      fprintf(stderr, "%s failed (%s):\n%s\n", #call, flexjit_status_name(status_), flexjit_last_error()); \
      exit(1);                                                                                          \
    }                                                                                                   \
  } while (0)

#define TRY_CUDA(call)                                                          \
  do {                                                                          \
    cudaError_t e_ = (call);                                                    \
    if (e_ != cudaSuccess) {                                                    \
      fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));       \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

static DLTensor tensor(void* data, DLDeviceType device, DLDataType dtype, int ndim, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = device;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  return t; /* strides NULL: row-major */
}

/* float -> bfloat16 bits, round to nearest even (inputs here are finite). */
static uint16_t to_bf16(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float x;
  memcpy(&x, &u, 4);
  return x;
}

int main(int argc, char** argv) {
  const DLDataType f32 = {kDLFloat, 32, 1}, bf16 = {kDLBfloat, 16, 1};
  const size_t n = (size_t)B * H * S * D;
  int64_t shape4[4] = {B, H, S, D}, shape_slope[1] = {H};
  float slope[H];
  float *q = malloc(n * sizeof(float)), *k = malloc(n * sizeof(float)), *v = malloc(n * sizeof(float));
  float* reference = malloc(n * sizeof(float));
  size_t i;
  int h;

  /* The variant: expressions, the buffer they read, dtype and head dim. */
  flexjit_buffer_decl slope_decl = {"slope", FLEXJIT_F32, 1, shape_slope, 0};
  flexjit_variant_desc desc = {0};
  flexjit_check_result check = {0};
  flexjit_variant* variant = NULL;
  desc.struct_size = sizeof desc;
  desc.score_mod = "score + slope[h] * (kv_idx - q_idx)";
  desc.mask_mod = "q_idx >= kv_idx";
  desc.buffers = &slope_decl;
  desc.num_buffers = 1;
  desc.dtype = FLEXJIT_BF16;
  desc.head_dim = D;

  printf("flexjit %s, C API %d\n", flexjit_version_string(), flexjit_c_api_version());
  check.struct_size = sizeof check;
  TRY(flexjit_check(&desc, &check));
  printf("score_mod: %s\nmask_mod:  %s\nd(score_mod)/d(score): %s\n", check.score_canonical, check.mask_canonical,
         check.score_gradient);
  flexjit_check_result_free(&check);
  TRY(flexjit_variant_create(&desc, &variant));

  /* The forward kernel's PTX for sm_90a (no GPU needed). */
  {
    flexjit_emit_options emit = {0};
    char* ptx = NULL;
    size_t size = 0;
    const char* path = argc > 1 ? argv[1] : "attention_fwd.ptx";
    FILE* file;
    emit.struct_size = sizeof emit;
    emit.family = "fwd";
    emit.format = "ptx";
    emit.arch = "sm_90a";
    TRY(flexjit_emit(variant, &emit, &ptx, &size));
    file = fopen(path, "wb");
    if (file == NULL || fwrite(ptx, 1, size, file) != size) {
      fprintf(stderr, "cannot write %s\n", path);
      return 1;
    }
    fclose(file);
    printf("wrote %s (%zu bytes of PTX)\n", path, size);
    flexjit_free(ptx);
  }

  /* Inputs, rounded to bf16 so the reference sees what the kernel sees. */
  srand(1);
  for (i = 0; i < n; ++i) {
    q[i] = from_bf16(to_bf16((float)rand() / RAND_MAX * 2.0f - 1.0f));
    k[i] = from_bf16(to_bf16((float)rand() / RAND_MAX * 2.0f - 1.0f));
    v[i] = from_bf16(to_bf16((float)rand() / RAND_MAX * 2.0f - 1.0f));
  }
  for (h = 0; h < H; ++h) slope[h] = (float)pow(2.0, -8.0 * (h + 1) / H);

  /* The float64 CPU reference on host tensors. */
  {
    DLTensor tq = tensor(q, kDLCPU, f32, 4, shape4), tk = tensor(k, kDLCPU, f32, 4, shape4),
             tv = tensor(v, kDLCPU, f32, 4, shape4), tout = tensor(reference, kDLCPU, f32, 4, shape4),
             tslope = tensor(slope, kDLCPU, f32, 1, shape_slope);
    flexjit_buffer_value slope_value = {"slope", NULL};
    flexjit_call_options options = {0};
    slope_value.tensor = &tslope;
    options.struct_size = sizeof options;
    options.buffers = &slope_value;
    options.num_buffers = 1;
    TRY(flexjit_reference_forward(variant, &tq, &tk, &tv, &tout, NULL, &options));
    printf("CPU reference: out[0][0][%d][0] = %.6f\n", S - 1, reference[(size_t)(S - 1) * D]);
  }

  if (!flexjit_gpu_available()) {
    printf("no GPU (%s): skipping the kernel\n", flexjit_last_error());
  } else {
    /* The JIT kernel on device memory, on a stream of our own. */
    uint16_t* host = malloc(n * sizeof(uint16_t));
    void *dq, *dk, *dv, *dout, *dslope;
    cudaStream_t stream;
    double err = 0, norm = 0;
    const float* inputs[3] = {q, k, v};
    void** devices[3] = {&dq, &dk, &dv};
    int t;
    TRY_CUDA(cudaStreamCreate(&stream));
    for (t = 0; t < 3; ++t) {
      TRY_CUDA(cudaMalloc(devices[t], n * 2));
      for (i = 0; i < n; ++i) host[i] = to_bf16(inputs[t][i]);
      TRY_CUDA(cudaMemcpy(*devices[t], host, n * 2, cudaMemcpyHostToDevice));
    }
    TRY_CUDA(cudaMalloc(&dout, n * 2));
    TRY_CUDA(cudaMemset(dout, 0xff, n * 2)); /* NaN: an element the kernel misses fails the check */
    TRY_CUDA(cudaMalloc(&dslope, sizeof slope));
    TRY_CUDA(cudaMemcpy(dslope, slope, sizeof slope, cudaMemcpyHostToDevice));
    {
      DLTensor tq = tensor(dq, kDLCUDA, bf16, 4, shape4), tk = tensor(dk, kDLCUDA, bf16, 4, shape4),
               tv = tensor(dv, kDLCUDA, bf16, 4, shape4), tout = tensor(dout, kDLCUDA, bf16, 4, shape4),
               tslope = tensor(dslope, kDLCUDA, f32, 1, shape_slope);
      flexjit_buffer_value slope_value = {"slope", NULL};
      flexjit_call_options options = {0};
      flexjit_block_mask_desc mask_desc = {0};
      flexjit_block_mask* mask = NULL;
      slope_value.tensor = &tslope;
      options.struct_size = sizeof options;
      options.buffers = &slope_value;
      options.num_buffers = 1;
      mask_desc.struct_size = sizeof mask_desc;
      mask_desc.batch = B;
      mask_desc.q_heads = H;
      mask_desc.q_len = S;
      mask_desc.kv_len = S;
      mask_desc.device = FLEXJIT_MASK_GPU;
      TRY(flexjit_block_mask_create(variant, &mask_desc, &options, stream, &mask));
      TRY(flexjit_forward(variant, &tq, &tk, &tv, &tout, NULL, mask, stream, &options));
      TRY_CUDA(cudaStreamSynchronize(stream));
      TRY(flexjit_check_buffer_errors());
      flexjit_block_mask_destroy(mask);
    }
    TRY_CUDA(cudaMemcpy(host, dout, n * 2, cudaMemcpyDeviceToHost));
    for (i = 0; i < n; ++i) {
      const double d = (double)from_bf16(host[i]) - reference[i];
      err += d * d;
      norm += (double)reference[i] * reference[i];
    }
    err = sqrt(err / norm);
    printf("GPU kernel: relative error against the reference %.2e (%s)\n", err, err < 1e-2 ? "ok" : "TOO LARGE");
    cudaFree(dq);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(dout);
    cudaFree(dslope);
    cudaStreamDestroy(stream);
    free(host);
    if (!(err < 1e-2)) return 1;
  }
  flexjit_variant_destroy(variant);
  free(q);
  free(k);
  free(v);
  free(reference);
  return 0;
}
