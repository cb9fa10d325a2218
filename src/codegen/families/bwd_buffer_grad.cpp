// Family `bwd_buffer_grad`: sums the per-CTA partial gradients of learnable buffers that the dQ
// kernel leaves (codegen/buffer_grad.hpp has the schemes) into each buffer's fp32 gradient, in a
// fixed order. Four kernels, one per accumulation scheme: per_head, band, band_scatter,
// arbitrary. Their grids depend on each read (diagonals, heads, elements), so the host code that
// owns the reads launches them (src/attention/buffer_grads.cpp); the kernels take their extents
// from blockDim. Template: templates/buffer_grad_reduce.cu.j2.
#include "codegen/buffer_grad.hpp"
#include "codegen/families/attention_common.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen::families {
namespace {

BlockConfig default_config(int, int) { return {0, 0, 8, 0}; }

void validate(const KernelSpec& s) {
  if (s.config.num_warps < 1 || s.config.num_warps > 32)
    throw UsageError("bwd_buffer_grad config " + s.config.str() + ": warps must be between 1 and 32");
}

size_t shared_memory_bytes(const KernelSpec&) { return 0; }

int threads(const KernelSpec& s, int) { return s.config.num_warps * 32; }

std::string describe(const KernelSpec& s) { return "bwd_buffer_grad score_mod=" + s.score_mod.canonical(); }

// One CTA of the family's threads per (read, element slab); the per-read grids are the host's.
LaunchGeometry geometry(const KernelSpec& s, const CallShape& shape, int) {
  LaunchGeometry g;
  g.grid = {ceil_div(shape.elements > 0 ? shape.elements : 1, threads(s, 0)), 1, 1};
  g.block = {static_cast<unsigned>(threads(s, 0)), 1, 1};
  return g;
}

}  // namespace

FamilyDescriptor bwd_buffer_grad_family() {
  FamilyDescriptor f;
  f.family = Family::bwd_buffer_grad;
  f.backward = true;
  f.name = "bwd_buffer_grad";
  f.template_name = "buffer_grad_reduce.cu.j2";
  f.source_name = "buffer_grad_reduce.cu";
  f.kernel_names = buffer_grad_reduce_kernel_names();
  f.default_config = default_config;
  f.validate = validate;
  f.shared_memory_bytes = shared_memory_bytes;
  f.threads = threads;
  f.add_constants = add_buffer_grad_reduce_context;
  f.describe = describe;
  f.geometry = geometry;
  return f;
}

}  // namespace flexjit::codegen::families
