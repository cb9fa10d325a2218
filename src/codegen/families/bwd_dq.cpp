// Family `bwd_dq`: dQ per query tile, walking the kv_* tables; recomputes P and dP, applies
// d(score_mod)/d(score). Template: templates/attention_bwd_dq.cu.j2.
#include <algorithm>

#include "codegen/buffer_grad.hpp"
#include "codegen/families/attention_common.hpp"

namespace flexjit::codegen::families {
namespace {

BlockConfig default_config(int head_dim, int head_dim_v) {
  return std::max(head_dim, head_dim_v) <= 128 ? BlockConfig{64, 64, 4, 2} : BlockConfig{64, 32, 4, 2};
}

void validate(const KernelSpec& s) { validate_tiles(s, /*kv_rows=*/false, nullptr, nullptr); }

// Q and dO tiles, then STAGES K/V tiles; wgmma tiles start 1024-aligned.
size_t shared_memory_bytes(const KernelSpec& s) {
  const size_t e = 2, m = s.config.block_m, n = s.config.block_n, d = s.head_dim, dv = s.head_dim_v;
  return m * (d + dv) * e + s.config.stages * n * (d + dv) * e + (s.config.wgmma ? 1024 : 0) +
         buffer_grad_smem_bytes(s);  // learnable buffers' staging (0 without)
}

int threads(const KernelSpec& s, int) { return s.config.num_warps * 32; }

void add_constants(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants) {
  add_tile_constants(s, ctx, constants);
  add_buffer_grad_dq_context(s, ctx, constants);
}

LaunchGeometry geometry(const KernelSpec& s, const CallShape& shape, int) { return query_tile_geometry(s, shape); }

// (BLOCK_M / warps / 16) * (2 * BLOCK_N / 8 + D / 8) * 4: S, dP and dQ.
int accumulator_registers(const KernelSpec& s) {
  const BlockConfig& c = s.config;
  if (c.num_warps <= 0 || c.block_m % c.num_warps) return 0;
  return (c.block_m / c.num_warps / 16) * (2 * c.block_n / 8 + s.head_dim / 8) * 4;
}

// m64n64w2s3 for d64 is there because it won the full search on an H100 (S = 4096).
std::vector<const char*> curated_configs(HeadClass hc) {
  switch (hc) {
    case HeadClass::d64:
      return {"m64n64w4s2", "m64n128w4s2", "m128n64w8s2", "m128n128w8s2", "m64n64w4s3", "m64n64w2s3",
              "m64n32w4s2", "m64n64w4s2g", "m128n64w8s2g"};
    case HeadClass::d128:
      return {"m64n64w4s2", "m64n32w4s2", "m128n64w8s2", "m128n32w8s2", "m64n64w4s3", "m64n128w4s2",
              "m64n64w4s2g", "m128n64w8s2g", "m64n128w4s2g"};
    case HeadClass::d256:
      return {"m64n32w4s2", "m64n64w4s2", "m128n32w8s2", "m64n32w4s3", "m32n32w2s2", "m64n16w4s2",
              "m64n32w4s2g"};
  }
  return {};
}

// noop d128 on an H100: 362 TF/s backward against 246 for mma.sync. Wider heads: 32-key tiles
// (with m32n64w4s2g dK/dV, causal d256 on an H100: 170 TF/s backward against 130 for mma.sync).
const char* hopper_default(const KernelSpec& s) {
  return std::max(s.head_dim, s.head_dim_v) <= 128 ? "m64n64w4s2g" : "m64n32w4s2g";
}

std::vector<WgmmaShape> wgmma_shapes(const KernelSpec& s) {
  // S = Q Kᵀ over the kv tile; dQ = dS K over the tensor's columns rounded to 16 (the template's
  // DQ_GEMM).
  return {{s.config.block_n, false, false}, {s.gemm_head_dim(), true, true}};
}

}  // namespace

FamilyDescriptor bwd_dq_family() {
  FamilyDescriptor f;
  f.family = Family::bwd_dq;
  f.name = "bwd_dq";
  f.template_name = "attention_bwd_dq.cu.j2";
  f.source_name = "attention_bwd_dq.cu";
  f.kernel_names = {"flexjit_attention_bwd_dq"};
  f.attention = true;
  f.backward = true;
  f.tiled = true;
  f.score_gradient = true;
  f.reports_errors = true;
  f.default_config = default_config;
  f.validate = validate;
  f.shared_memory_bytes = shared_memory_bytes;
  f.threads = threads;
  f.add_constants = add_constants;
  f.geometry = geometry;
  f.describe = describe_attention;
  f.accumulator_registers = accumulator_registers;
  f.curated_configs = curated_configs;
  f.hopper_default = hopper_default;
  f.wgmma_shapes = wgmma_shapes;
  return f;
}

}  // namespace flexjit::codegen::families
