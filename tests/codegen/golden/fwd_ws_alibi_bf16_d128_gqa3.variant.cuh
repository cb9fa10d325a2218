// Per-variant code emitted by flexjit's expression compiler.
#pragma once
struct FlexjitModArgs {
  FlexjitBuffer<float, 1> buf_slope;
};

__device__ __forceinline__ float flexjit_score_mod_log2(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {
  const float score = flexjit_acc * flexjit_score_scale;
#line 1 "score_mod"
  return ((score + (flexjit_read(args.buf_slope, flexjit_errors, h) * static_cast<float>(flexjit_isub(kv_idx, q_idx)))) * 1.44269502f);
}

constexpr float FLEXJIT_SCORE_KV_AFFINE_ACC_FACTOR = 1.442695022e+00f;
constexpr int FLEXJIT_SCORE_KV_AFFINE_MAX_LEN = 1073741823;
__device__ __forceinline__ float flexjit_score_mod_log2_kv_slope(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {
#line 1 "score_mod_kv_slope"
  return (flexjit_read(args.buf_slope, flexjit_errors, h) * 1.44269502f);
}

__device__ __forceinline__ bool flexjit_mask_mod(int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {
#line 1 "mask_mod"
  return (q_idx >= kv_idx);
}

