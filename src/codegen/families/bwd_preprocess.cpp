// Family `bwd_preprocess`: the backward's row-wise kernels (no tiles, no mods). Kernel 0: delta =
// rowsum(O * dO) in fp32, the row term of the softmax gradient; THREADS_PER_ROW lanes read a row
// in 16-byte chunks, ROWS_PER_CTA rows per CTA, both computed here and handed to the template as
// constants, so the launch grid and the kernel cannot disagree. Kernel 1 (the fast mode's
// epilogue): dQ = scale * the fp32 dQ accumulator, in the element type, 8 columns per thread.
// Kernel 2 (the fast mode's, where the dK/dV kernel split GQA groups over CTAs): dK and dV = the
// sums of the splits' fp32 rows (FlexjitBwdParams::kv_head_splits), 8 columns per thread.
// Template: templates/attention_bwd_preprocess.cu.j2.
#include <algorithm>

#include "codegen/families/attention_common.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen::families {
namespace {

BlockConfig default_config(int, int) { return {0, 0, 8, 0}; }

void validate(const KernelSpec& s) {
  validate_attention_inputs(s);
  if (s.config.num_warps < 1 || s.config.num_warps > 32)
    throw UsageError("config " + s.config.str() + ": warps must be between 1 and 32");
}

size_t shared_memory_bytes(const KernelSpec&) { return 0; }

int threads(const KernelSpec& s, int) { return s.config.num_warps * 32; }

// Lanes per row: the next power of two of the row's 16-byte chunks (the shuffle reduction halves
// it); spare lanes add 0.
int threads_per_row(const KernelSpec& s) {
  const int chunks = s.head_dim_v / 8;
  return chunks <= 8 ? 8 : chunks <= 16 ? 16 : 32;
}
int rows_per_cta(const KernelSpec& s) { return threads(s, 0) / threads_per_row(s); }

void add_constants(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants) {
  ctx["element_type"] = element_type(s);
  ctx["kernel_name"] = descriptor(s.family).kernel_names[0];  // delta, the family's first kernel
  ctx["convert_kernel_name"] = descriptor(s.family).kernel_names[1];
  ctx["dkdv_sum_kernel_name"] = descriptor(s.family).kernel_names[2];
  constants.push_back(int_constant("D", s.head_dim));
  constants.push_back(int_constant("DV", s.head_dim_v));
  constants.push_back(int_constant("D_IO", s.memory_head_dim()));
  constants.push_back(int_constant("DV_IO", s.memory_head_dim_v()));
  constants.push_back(int_constant("THREADS", threads(s, 0)));
  constants.push_back(int_constant("THREADS_PER_ROW", threads_per_row(s)));
  constants.push_back(int_constant("ROWS_PER_CTA", rows_per_cta(s)));
  // The dK/dV kernel's column slices (the ordered sums' words per tile: FlexjitBwdParams::dq_order);
  // head dims it has no tiles for never take the ordered sums.
  constants.push_back(int_constant("SPLITS", std::max(1, dkdv_splits(s.head_dim, s.head_dim_v))));
}

LaunchGeometry geometry(const KernelSpec& s, const CallShape& shape, int index) {
  LaunchGeometry g;
  g.block = {static_cast<unsigned>(threads(s, 0)), 1, 1};
  if (index == 1) {  // dQ conversion: one thread per 8 columns of a row
    const long long chunks = static_cast<long long>(shape.q_len) * (s.memory_head_dim() / 8);
    g.grid = {ceil_div(chunks, threads(s, 0)), static_cast<unsigned>(shape.heads), static_cast<unsigned>(shape.batch)};
    g.programmatic = true;  // waits for the dK/dV kernel before reading the sums (the template)
    return g;
  }
  if (index == 2) {  // dK/dV sums: one thread per 8 columns of a dK or dV row, per kv head
    const long long chunks =
        static_cast<long long>(shape.kv_len) * ((s.memory_head_dim() + s.memory_head_dim_v()) / 8);
    g.grid = {ceil_div(chunks, threads(s, 0)), static_cast<unsigned>(shape.kv_heads),
              static_cast<unsigned>(shape.batch)};
    return g;
  }
  // Rows up to whole 64-row tiles: the padding rows of the warp-specialised kernel's row statistics.
  const long long rows = (static_cast<long long>(shape.q_len) + 63) / 64 * 64;
  g.grid = {ceil_div(rows, rows_per_cta(s)), static_cast<unsigned>(shape.heads),
            static_cast<unsigned>(shape.batch)};
  return g;
}

}  // namespace

FamilyDescriptor bwd_preprocess_family() {
  FamilyDescriptor f;
  f.family = Family::bwd_preprocess;
  f.name = "bwd_preprocess";
  f.template_name = "attention_bwd_preprocess.cu.j2";
  f.source_name = "attention_bwd_preprocess.cu";
  f.kernel_names = {"flexjit_attention_bwd_preprocess", "flexjit_attention_bwd_dq_convert",
                    "flexjit_attention_bwd_dkdv_sum"};
  f.attention = true;
  f.backward = true;
  f.default_config = default_config;
  f.validate = validate;
  f.shared_memory_bytes = shared_memory_bytes;
  f.threads = threads;
  f.add_constants = add_constants;
  f.geometry = geometry;
  f.describe = describe_attention;
  return f;
}

}  // namespace flexjit::codegen::families
