// Per-variant code emitted by flexjit's expression compiler.
#pragma once
struct FlexjitModArgs {
  int unused;
};

__device__ __forceinline__ float flexjit_score_mod_log2(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {
  const float score = flexjit_acc * flexjit_score_scale;
#line 1 "score_mod"
  return (score * 1.44269502f);
}

__device__ __forceinline__ bool flexjit_mask_mod(int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {
#line 1 "mask_mod"
  return (q_idx >= kv_idx);
}

__device__ __forceinline__ float flexjit_score_grad(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {
#line 1 "score_mod_gradient"
  return 1.0f;
}

