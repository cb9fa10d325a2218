// Family `block_mask`: evaluates mask_mod over the block grid (classify: one CTA per (kv block,
// q block, table row)), then compacts the classes into the kv_* tables and their q_* transposes
// (compact: one warp per table row). Template: templates/block_mask.cu.j2.
#include "codegen/families/attention_common.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen::families {
namespace {

constexpr int kClassifyThreads = 256;
constexpr int kCompactThreads = 32;  // one warp per table row

BlockConfig default_config(int, int) { return {128, 128, 8, 2}; }

void validate(const KernelSpec& s) { validate_sparse_blocks(s); }

size_t shared_memory_bytes(const KernelSpec&) { return 0; }

int threads(const KernelSpec&, int index) { return index == 0 ? kClassifyThreads : kCompactThreads; }

void add_constants(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants) {
  ctx["classify_kernel_name"] = descriptor(s.family).kernel_names[0];
  ctx["compact_kernel_name"] = descriptor(s.family).kernel_names[1];
  constants.push_back(int_constant("Q_BLOCK", s.sparse_q_block));
  constants.push_back(int_constant("KV_BLOCK", s.sparse_kv_block));
  constants.push_back(int_constant("CLASSIFY_THREADS", kClassifyThreads));
  constants.push_back(int_constant("COMPACT_THREADS", kCompactThreads));
  ctx["seq_lens"] = s.seq_lens;
}

// `shape.batch` / `shape.heads` are the table's extents (1 where the mask broadcasts).
LaunchGeometry geometry(const KernelSpec& s, const CallShape& shape, int index) {
  const unsigned q_blocks = ceil_div(shape.q_len, s.sparse_q_block);
  const unsigned kv_blocks = ceil_div(shape.kv_len, s.sparse_kv_block);
  const unsigned rows = static_cast<unsigned>(shape.batch) * static_cast<unsigned>(shape.heads);
  LaunchGeometry g;
  g.block = {static_cast<unsigned>(threads(s, index)), 1, 1};
  g.grid = index == 0 ? jit::Dim3{kv_blocks, q_blocks, rows} : jit::Dim3{q_blocks + kv_blocks, rows, 1};
  return g;
}

std::string describe(const KernelSpec& s) {
  return "block_mask blocks " + std::to_string(s.sparse_q_block) + "x" + std::to_string(s.sparse_kv_block) +
         " mask_mod=" + s.mask_mod.canonical() + (s.seq_lens ? " seq_lens=1" : "");
}

}  // namespace

FamilyDescriptor block_mask_family() {
  FamilyDescriptor f;
  f.family = Family::block_mask;
  f.name = "block_mask";
  f.template_name = "block_mask.cu.j2";
  f.source_name = "block_mask.cu";
  f.kernel_names = {"flexjit_block_mask_classify", "flexjit_block_mask_compact"};
  f.reports_errors = true;  // the classify kernel (index 0); compact reads no mods
  f.default_config = default_config;
  f.validate = validate;
  f.shared_memory_bytes = shared_memory_bytes;
  f.threads = threads;
  f.add_constants = add_constants;
  f.geometry = geometry;
  f.describe = describe;
  return f;
}

}  // namespace flexjit::codegen::families
