#pragma once
// Codegen of learnable-buffer gradients: the scheme of each read (from its index pattern), the
// dQ kernel's extra shared memory and template values, and the reduce family's source. Kept out
// of kernel_spec.cpp's switches, which call these.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/kernel_spec.hpp"
#include "expr/buffer_grad_emit.hpp"

namespace flexjit::codegen {

// The reads of learnable buffers in `score_mod` and the scheme each is accumulated with: its index
// pattern, except that a per_score read whose buffer is also read elsewhere is accumulated as
// arbitrary (a direct store would race with the other read's contributions).
struct BufferGradPlan {
  std::vector<BufferReadGradient> reads;
  std::vector<expr::BufferGradScheme> schemes;
  // diagonal reads whose band index also has a b / h term: the scatter step runs in one thread.
  std::vector<bool> serial_scatter;
};
BufferGradPlan buffer_grad_plan(const Expr& score_mod);

// Extra dynamic shared memory of a dQ kernel with buffer gradients (0 without).
size_t buffer_grad_smem_bytes(const KernelSpec& spec);

// The variant-header code (FlexjitBgRead traits) for a dQ spec with buffer_grads or the reduce family.
std::string buffer_grad_variant_code(const KernelSpec& spec);

// Template values of the dQ kernel (`buffer_grads`, BUFFER_GRAD_SMEM_BYTES).
void add_buffer_grad_dq_context(const KernelSpec& spec, nlohmann::json& ctx, nlohmann::json& constants);

// The reduce family: template context, kernel names in launch order (per_head, band, band_scatter,
// arbitrary).
void add_buffer_grad_reduce_context(const KernelSpec& spec, nlohmann::json& ctx, nlohmann::json& constants);
std::vector<std::string> buffer_grad_reduce_kernel_names();

}  // namespace flexjit::codegen
