// Causal self-attention in bf16: each query attends to itself and the positions before it.
//
// With a GPU: forward and backward on fresh random data, checked against flexjit's float64 CPU
// reference. Without one: compiles the kernels for sm_90a and runs the reference on a small problem.
#include <flexjit/attention.hpp>
#include <flexjit/device.hpp>
#include <flexjit/reference.hpp>

#include <cmath>
#include <cstdio>

#include "example_support.hpp"

int main() {
  const bool gpu = example::gpu_or_explain();
  const int B = 2, H = 4, S = gpu ? 1024 : 128, D = 128;

  flexjit::AttentionSpec spec;
  spec.mask_mod = flexjit::mods::causal();  // "q_idx >= kv_idx"
  spec.head_dim = D;                         // dtype: bf16 (the default)
  const flexjit::Attention attention(spec);  // parses and checks the expressions
  if (!gpu) example::show_kernels(attention, {B, H, H, S, S}, /*backward=*/true);

  // Inputs [B, H, S, D] and the float64 reference of the forward and backward passes.
  const size_t n = size_t(B) * H * S * D;
  const auto q = example::random_bf16_values(n), k = example::random_bf16_values(n),
             v = example::random_bf16_values(n), dout = example::random_bf16_values(n);
  const flexjit::ReferenceShape shape{B, H, H, S, S, D, D};
  const double scale = 1.0 / std::sqrt(double(D));  // what forward() uses by default
  const auto ref = flexjit::reference_forward(attention.score_mod(), attention.mask_mod(), {}, shape, q, k, v, scale);
  const auto grads =
      flexjit::reference_backward(attention.score_mod(), attention.mask_mod(), {}, shape, q, k, v, dout, scale);
  if (!gpu) {
    std::printf("CPU reference (B=%d H=%d S=%d D=%d): |out| = %.3f, |dq| = %.3f, |dk| = %.3f, |dv| = %.3f\n", B, H, S,
                D, example::norm(ref.out), example::norm(grads.dq), example::norm(grads.dk), example::norm(grads.dv));
    std::printf("causal: done without a GPU\n");
    return 0;
  }

  // The same data in device memory; outputs start as NaN.
  using flexjit::DType;
  const auto gpu_q = example::upload_bf16(q, {B, H, S, D}), gpu_k = example::upload_bf16(k, {B, H, S, D}),
             gpu_v = example::upload_bf16(v, {B, H, S, D}), gpu_dout = example::upload_bf16(dout, {B, H, S, D});
  const auto out = example::allocate_output(DType::bf16, {B, H, S, D}), lse = example::allocate_output(DType::f32, {B, H, S});
  const auto dq = example::allocate_output(DType::bf16, {B, H, S, D}), dk = example::allocate_output(DType::bf16, {B, H, S, D}),
             dv = example::allocate_output(DType::bf16, {B, H, S, D});

  // The block mask lists the (query block, kv block) tiles to visit: about half are skipped.
  const flexjit::BlockMask mask = attention.block_mask(B, H, S, S);
  attention.forward(gpu_q.view, gpu_k.view, gpu_v.view, out.view, lse.view, &mask);
  attention.backward(gpu_q.view, gpu_k.view, gpu_v.view, out.view, lse.view, gpu_dout.view, dq.view, dk.view, dv.view,
                     &mask);
  flexjit::synchronize();
  std::printf("causal B=%d H=%d S=%d D=%d bf16, block mask density %.3f\n", B, H, S, D, mask.density());

  bool ok = example::check("out", out, ref.out);
  ok &= example::check("lse", lse, ref.lse);
  ok &= example::check("dq", dq, grads.dq);
  ok &= example::check("dk", dk, grads.dk);
  ok &= example::check("dv", dv, grads.dv);
  std::printf("causal: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
