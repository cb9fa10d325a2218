#include "codegen/buffer_grad.hpp"

#include <algorithm>
#include <map>

namespace flexjit::codegen {

BufferGradPlan buffer_grad_plan(const Expr& score_mod) {
  BufferGradPlan plan;
  plan.reads = score_mod.buffer_gradients();
  std::map<std::string, int> reads_of;
  for (const auto& r : plan.reads) ++reads_of[r.buffer];
  for (const auto& r : plan.reads) {
    expr::BufferGradScheme scheme = expr::BufferGradScheme::arbitrary;
    switch (r.pattern) {
      case IndexPattern::per_head: scheme = expr::BufferGradScheme::per_head; break;
      case IndexPattern::diagonal: scheme = expr::BufferGradScheme::diagonal; break;
      case IndexPattern::per_score:
        scheme = reads_of[r.buffer] == 1 ? expr::BufferGradScheme::per_score : expr::BufferGradScheme::arbitrary;
        break;
      case IndexPattern::arbitrary: scheme = expr::BufferGradScheme::arbitrary; break;
    }
    plan.schemes.push_back(scheme);
    const bool serial = r.pattern == IndexPattern::diagonal &&
                        (r.indices[static_cast<size_t>(r.diagonal_dim)].uses("b") ||
                         r.indices[static_cast<size_t>(r.diagonal_dim)].uses("h"));
    plan.serial_scatter.push_back(serial);
  }
  return plan;
}

size_t buffer_grad_smem_bytes(const KernelSpec& spec) {
  if (spec.family != Family::bwd_dq || !spec.buffer_grads) return 0;
  const BufferGradPlan plan = buffer_grad_plan(spec.score_mod);
  bool staged = false, offsets = false;
  for (auto s : plan.schemes) {
    staged = staged || s == expr::BufferGradScheme::diagonal || s == expr::BufferGradScheme::arbitrary;
    offsets = offsets || s == expr::BufferGradScheme::arbitrary;
  }
  // As BufferGradLayout in flexjit_buffer_grad.cuh (the kernel static-asserts the two agree).
  const int m_tiles = spec.config.block_m / spec.config.num_warps / 16;
  const int chunk_cols = spec.config.block_n < 32 ? spec.config.block_n : 32;
  const int chunk = 16 * (chunk_cols + 1);
  const int n = spec.config.block_n;
  const int fold_cols = n <= 64 ? n : n % 64 == 0 ? 64 : n % 32 == 0 ? 32 : n % 16 == 0 ? 16 : 8;
  const int fold = 8 * (fold_cols + 8);
  const int warp_floats = std::max(chunk, fold) + (offsets ? chunk : 0) + spec.config.block_n + 16 * m_tiles - 1 + 1;
  return size_t(spec.config.num_warps) * 4 * (staged ? warp_floats : 1);
}

std::string buffer_grad_variant_code(const KernelSpec& spec) {
  const BufferGradPlan plan = buffer_grad_plan(spec.score_mod);
  return expr::emit_buffer_grad_reads(plan.reads, plan.schemes);
}

void add_buffer_grad_dq_context(const KernelSpec& spec, nlohmann::json& ctx, nlohmann::json& constants) {
  ctx["buffer_grads"] = spec.buffer_grads;
  constants.push_back({{"type", "int"}, {"name", "BUFFER_GRAD_SMEM_BYTES"},
                       {"value", std::to_string(buffer_grad_smem_bytes(spec))}});
}

std::vector<std::string> buffer_grad_reduce_kernel_names() {
  return {"flexjit_buffer_grad_per_head", "flexjit_buffer_grad_band", "flexjit_buffer_grad_band_scatter",
          "flexjit_buffer_grad_arbitrary"};
}

void add_buffer_grad_reduce_context(const KernelSpec&, nlohmann::json& ctx, nlohmann::json&) {
  const auto names = buffer_grad_reduce_kernel_names();
  ctx["per_head_kernel"] = names[0];
  ctx["band_kernel"] = names[1];
  ctx["band_scatter_kernel"] = names[2];
  ctx["arbitrary_kernel"] = names[3];
}

}  // namespace flexjit::codegen
