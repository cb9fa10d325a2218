// Document packing: several documents concatenated into one sequence, each attending causally
// within itself only. The document id of every position is an int32 device buffer `doc` [S];
// lengths need not be multiples of the 128-row blocks.
//
// With a GPU: forward and backward on fresh random data, checked against flexjit's float64 CPU
// reference. Without one: compiles the kernels for sm_90a and runs the reference on a small problem.
#include <flexjit/attention.hpp>
#include <flexjit/device.hpp>
#include <flexjit/reference.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "example_support.hpp"

int main() {
  const bool gpu = example::gpu_or_explain();
  const std::vector<int> lengths = gpu ? std::vector<int>{300, 77, 410, 213} : std::vector<int>{50, 30, 70};
  const int B = 1, H = 4, D = 128;

  // doc[i] = the document position i belongs to.
  std::vector<int32_t> doc;
  for (size_t d = 0; d < lengths.size(); ++d) doc.insert(doc.end(), lengths[d], static_cast<int32_t>(d));
  const int S = static_cast<int>(doc.size());

  flexjit::AttentionSpec spec;
  spec.mask_mod = flexjit::mods::and_masks({flexjit::mods::document("doc"), flexjit::mods::causal()});
  spec.declarations.buffers.push_back({"doc", flexjit::DType::i32, {S}});
  spec.head_dim = D;
  const flexjit::Attention attention(spec);
  if (!gpu) example::show_kernels(attention, {B, H, H, S, S}, /*backward=*/true);

  flexjit::EvalInputs host_values;
  host_values.buffers["doc"] = flexjit::HostBufferView{doc.data(), flexjit::DType::i32, {S}};
  const size_t n = size_t(B) * H * S * D;
  const auto q = example::random_bf16_values(n), k = example::random_bf16_values(n),
             v = example::random_bf16_values(n), dout = example::random_bf16_values(n);
  const flexjit::ReferenceShape shape{B, H, H, S, S, D, D};
  const double scale = 1.0 / std::sqrt(double(D));
  const auto& score = attention.score_mod();
  const auto& mask_mod = attention.mask_mod();
  const auto ref = flexjit::reference_forward(score, mask_mod, host_values, shape, q, k, v, scale);
  const auto grads = flexjit::reference_backward(score, mask_mod, host_values, shape, q, k, v, dout, scale);
  if (!gpu) {
    std::printf("CPU reference (%zu documents, S=%d H=%d D=%d): |out| = %.3f, |dq| = %.3f\n", lengths.size(), S, H, D,
                example::norm(ref.out), example::norm(grads.dq));
    std::printf("document_packing: done without a GPU\n");
    return 0;
  }

  const flexjit::DeviceBuffer gpu_doc = flexjit::DeviceBuffer::from_host(doc);
  flexjit::CallOptions call;
  call.values.buffer("doc", flexjit::TensorView::contiguous(gpu_doc.data(), flexjit::DType::i32, {S}));

  using flexjit::DType;
  const auto gpu_q = example::upload_bf16(q, {B, H, S, D}), gpu_k = example::upload_bf16(k, {B, H, S, D}),
             gpu_v = example::upload_bf16(v, {B, H, S, D}), gpu_dout = example::upload_bf16(dout, {B, H, S, D});
  const auto out = example::allocate_output(DType::bf16, {B, H, S, D}), lse = example::allocate_output(DType::f32, {B, H, S});
  const auto dq = example::allocate_output(DType::bf16, {B, H, S, D}), dk = example::allocate_output(DType::bf16, {B, H, S, D}),
             dv = example::allocate_output(DType::bf16, {B, H, S, D});

  // Blocks entirely inside one document are "full" (the mask is not evaluated there); blocks
  // spanning documents are "partial"; the rest are skipped.
  const flexjit::BlockMask mask = attention.block_mask(B, H, S, S, nullptr, call.values);
  attention.forward(gpu_q.view, gpu_k.view, gpu_v.view, out.view, lse.view, &mask, nullptr, call);
  attention.backward(gpu_q.view, gpu_k.view, gpu_v.view, out.view, lse.view, gpu_dout.view, dq.view, dk.view, dv.view,
                     &mask, nullptr, call);
  flexjit::synchronize();
  std::printf("document_packing %zu documents S=%d H=%d D=%d bf16, block mask density %.3f (partial %.3f)\n",
              lengths.size(), S, H, D, mask.density(), mask.partial_fraction());

  bool ok = example::check("out", out, ref.out);
  ok &= example::check("lse", lse, ref.lse);
  ok &= example::check("dq", dq, grads.dq);
  ok &= example::check("dk", dk, grads.dk);
  ok &= example::check("dv", dv, grads.dv);
  std::printf("document_packing: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
