// ALiBi (attention with linear biases) on causal attention: score + slope[h] * (kv_idx - q_idx),
// with one slope per head in a float32 device buffer. The slopes are a call-time value: new
// slopes need no recompilation.
//
// With a GPU: the forward pass on fresh random data, checked against flexjit's float64 CPU
// reference. Without one: compiles the kernels for sm_90a and runs the reference on a small problem.
#include <flexjit/attention.hpp>
#include <flexjit/device.hpp>
#include <flexjit/reference.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#include "example_support.hpp"

int main() {
  const bool gpu = example::gpu_or_explain();
  const int B = 2, H = 8, S = gpu ? 2048 : 128, D = 64;

  flexjit::AttentionSpec spec;
  spec.score_mod = flexjit::mods::alibi("slope");  // "score + slope[h] * (kv_idx - q_idx)"
  spec.mask_mod = flexjit::mods::causal();
  spec.declarations.buffers.push_back({"slope", flexjit::DType::f32, {H}});  // name, dtype, shape
  spec.head_dim = D;
  const flexjit::Attention attention(spec);
  if (!gpu) example::show_kernels(attention, {B, H, H, S, S}, /*backward=*/false);

  // The standard ALiBi slopes 2^(-8 (h+1) / H), on the host for the reference.
  std::vector<float> slopes(H);
  for (int h = 0; h < H; ++h) slopes[h] = static_cast<float>(std::exp2(-8.0 * (h + 1) / H));
  flexjit::EvalInputs host_values;
  host_values.buffers["slope"] = flexjit::HostBufferView{slopes.data(), flexjit::DType::f32, {H}};

  const size_t n = size_t(B) * H * S * D;
  const auto q = example::random_bf16_values(n), k = example::random_bf16_values(n), v = example::random_bf16_values(n);
  const flexjit::ReferenceShape shape{B, H, H, S, S, D, D};
  const double scale = 1.0 / std::sqrt(double(D));
  const auto ref =
      flexjit::reference_forward(attention.score_mod(), attention.mask_mod(), host_values, shape, q, k, v, scale);
  if (!gpu) {
    std::printf("CPU reference (B=%d H=%d S=%d D=%d): |out| = %.3f\n", B, H, S, D, example::norm(ref.out));
    std::printf("alibi: done without a GPU\n");
    return 0;
  }

  // The slopes on the device, passed by name with every call.
  const flexjit::DeviceBuffer gpu_slopes = flexjit::DeviceBuffer::from_host(slopes);
  flexjit::CallOptions call;
  call.values.buffer("slope", flexjit::TensorView::contiguous(gpu_slopes.data(), flexjit::DType::f32, {H}));

  const auto gpu_q = example::upload_bf16(q, {B, H, S, D}), gpu_k = example::upload_bf16(k, {B, H, S, D}),
             gpu_v = example::upload_bf16(v, {B, H, S, D});
  const auto out = example::allocate_output(flexjit::DType::bf16, {B, H, S, D});
  const auto lse = example::allocate_output(flexjit::DType::f32, {B, H, S});

  const flexjit::BlockMask mask = attention.block_mask(B, H, S, S, nullptr, call.values);
  attention.forward(gpu_q.view, gpu_k.view, gpu_v.view, out.view, lse.view, &mask, nullptr, call);
  flexjit::synchronize();
  std::printf("alibi B=%d H=%d S=%d D=%d bf16, block mask density %.3f\n", B, H, S, D, mask.density());

  bool ok = example::check("out", out, ref.out);
  ok &= example::check("lse", lse, ref.lse);
  std::printf("alibi: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
