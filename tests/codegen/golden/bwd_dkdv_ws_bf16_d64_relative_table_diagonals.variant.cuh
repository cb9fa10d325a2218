// Per-variant code emitted by flexjit's expression compiler.
#pragma once
struct FlexjitModArgs {
  FlexjitBuffer<float, 2> buf_relh;
};

__device__ __forceinline__ float flexjit_score_mod_log2(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {
  const float score = flexjit_acc * flexjit_score_scale;
#line 1 "score_mod"
  return ((score + flexjit_read(args.buf_relh, flexjit_errors, h, flexjit_iadd(flexjit_isub(kv_idx, q_idx), 4096))) * 1.44269502f);
}

__device__ __forceinline__ void flexjit_score_diagonals(int b, int h, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned (&flexjit_values)[1], unsigned (&flexjit_value_errors)[1]) {
#line 1 "score_mod"
  {
    unsigned flexjit_errors = 0u;
    flexjit_values[0] = __float_as_uint((flexjit_read(args.buf_relh, flexjit_errors, h, flexjit_iadd(flexjit_isub(kv_idx, 0), 4096)) * 1.44269502f));
    flexjit_value_errors[0] = flexjit_errors;
  }
}

__device__ __forceinline__ float flexjit_score_mod_log2_columns(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors, const unsigned (&flexjit_values)[1], const unsigned (&flexjit_value_errors)[1]) {
  const float score = flexjit_acc * (flexjit_score_scale * 1.44269502f);
  const float flexjit_v0 = __uint_as_float(flexjit_values[0]);
#line 1 "score_mod"
  return (score + flexjit_column_value(flexjit_v0, flexjit_value_errors[0], flexjit_errors));
}

__device__ __forceinline__ bool flexjit_mask_mod(int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {
#line 1 "mask_mod"
  return (q_idx >= kv_idx);
}

__device__ __forceinline__ float flexjit_score_grad(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors) {
#line 1 "score_mod_gradient"
  return 1.0f;
}

