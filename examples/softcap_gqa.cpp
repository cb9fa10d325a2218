// Logit soft-capping (as in Gemma 2), 30 * tanh(score / 30), with grouped-query attention: 8 query
// heads share 2 key/value heads (query head h reads kv head h / 4). Causal.
//
// With a GPU: forward and backward on fresh random data, checked against flexjit's float64 CPU
// reference (the backward differentiates the soft-cap symbolically; dk and dv sum over the query
// heads of each group). Without one: compiles the kernels for sm_90a and runs the reference on a
// small problem.
#include <flexjit/attention.hpp>
#include <flexjit/device.hpp>
#include <flexjit/reference.hpp>

#include <cmath>
#include <cstdio>

#include "example_support.hpp"

int main() {
  const bool gpu = example::gpu_or_explain();
  const int B = 2, Hq = 8, Hkv = 2, S = gpu ? 1000 : 96, D = 128;

  flexjit::AttentionSpec spec;
  spec.score_mod = flexjit::mods::softcap(30);  // "30 * tanh(score / 30)"
  spec.mask_mod = flexjit::mods::causal();
  spec.head_dim = D;
  const flexjit::Attention attention(spec);
  std::printf("score_mod %s, its derivative %s\n", attention.score_mod().canonical().c_str(),
              attention.score_mod().gradient().canonical().c_str());
  if (!gpu) example::show_kernels(attention, {B, Hq, Hkv, S, S}, /*backward=*/true);

  const size_t nq = size_t(B) * Hq * S * D, nkv = size_t(B) * Hkv * S * D;
  const auto q = example::random_bf16_values(nq), k = example::random_bf16_values(nkv),
             v = example::random_bf16_values(nkv), dout = example::random_bf16_values(nq);
  const flexjit::ReferenceShape shape{B, Hq, Hkv, S, S, D, D};
  const double scale = 1.0 / std::sqrt(double(D));
  const auto ref = flexjit::reference_forward(attention.score_mod(), attention.mask_mod(), {}, shape, q, k, v, scale);
  const auto grads =
      flexjit::reference_backward(attention.score_mod(), attention.mask_mod(), {}, shape, q, k, v, dout, scale);
  if (!gpu) {
    std::printf("CPU reference (B=%d Hq=%d Hkv=%d S=%d D=%d): |out| = %.3f, |dk| = %.3f\n", B, Hq, Hkv, S, D,
                example::norm(ref.out), example::norm(grads.dk));
    std::printf("softcap_gqa: done without a GPU\n");
    return 0;
  }

  using flexjit::DType;
  const auto gpu_q = example::upload_bf16(q, {B, Hq, S, D}), gpu_k = example::upload_bf16(k, {B, Hkv, S, D}),
             gpu_v = example::upload_bf16(v, {B, Hkv, S, D}), gpu_dout = example::upload_bf16(dout, {B, Hq, S, D});
  const auto out = example::allocate_output(DType::bf16, {B, Hq, S, D}), lse = example::allocate_output(DType::f32, {B, Hq, S});
  const auto dq = example::allocate_output(DType::bf16, {B, Hq, S, D}), dk = example::allocate_output(DType::bf16, {B, Hkv, S, D}),
             dv = example::allocate_output(DType::bf16, {B, Hkv, S, D});

  // The mask is over query heads (here it ignores b and h, so the tables are shared by all).
  const flexjit::BlockMask mask = attention.block_mask(B, Hq, S, S);
  attention.forward(gpu_q.view, gpu_k.view, gpu_v.view, out.view, lse.view, &mask);
  attention.backward(gpu_q.view, gpu_k.view, gpu_v.view, out.view, lse.view, gpu_dout.view, dq.view, dk.view, dv.view,
                     &mask);
  flexjit::synchronize();
  std::printf("softcap_gqa B=%d Hq=%d Hkv=%d S=%d D=%d bf16, block mask density %.3f\n", B, Hq, Hkv, S, D, mask.density());

  bool ok = example::check("out", out, ref.out);
  ok &= example::check("lse", lse, ref.lse);
  ok &= example::check("dq", dq, grads.dq);
  ok &= example::check("dk", dk, grads.dk);
  ok &= example::check("dv", dv, grads.dv);
  std::printf("softcap_gqa: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
