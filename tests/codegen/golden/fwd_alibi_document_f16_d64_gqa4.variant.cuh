// Per-variant code emitted by flexjit's expression compiler.
#pragma once
struct FlexjitModArgs {
  FlexjitBuffer<float, 1> buf_slope;
  FlexjitBuffer<int, 1> buf_doc;
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
  return (flexjit_read(args.buf_doc, flexjit_errors, q_idx) == flexjit_read(args.buf_doc, flexjit_errors, kv_idx));
}

__device__ __forceinline__ void flexjit_mask_columns(int b, int h, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned (&flexjit_values)[1], unsigned (&flexjit_value_errors)[1]) {
#line 1 "mask_mod"
  {
    unsigned flexjit_errors = 0u;
    flexjit_values[0] = static_cast<unsigned>(flexjit_read(args.buf_doc, flexjit_errors, kv_idx));
    flexjit_value_errors[0] = flexjit_errors;
  }
}

__device__ __forceinline__ bool flexjit_mask_mod_columns(int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors, const unsigned (&flexjit_values)[1], const unsigned (&flexjit_value_errors)[1]) {
  const int flexjit_v0 = static_cast<int>(flexjit_values[0]);
#line 1 "mask_mod"
  return (flexjit_read(args.buf_doc, flexjit_errors, q_idx) == flexjit_column_value(flexjit_v0, flexjit_value_errors[0], flexjit_errors));
}

