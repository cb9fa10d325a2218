#include "codegen/families/attention_common.hpp"

#include <utility>

#include "flexjit/error.hpp"

namespace flexjit::codegen::families {

bool is_power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

const char* element_type(const KernelSpec& s) { return s.dtype == DType::bf16 ? "bf16" : "f16"; }

void validate_sparse_blocks(const KernelSpec& s) {
  for (int block : {s.sparse_q_block, s.sparse_kv_block})
    if (block < 16 || block > 1024 || block % 16 != 0)
      throw UsageError("block-mask block size " + std::to_string(block) +
                       " is not supported: use a multiple of 16 between 16 and 1024");
}

void validate_head_dims(const KernelSpec& s, const std::string& prefix) {
  const std::pair<const char*, int> dims[] = {{"head_dim", s.memory_head_dim()}, {"head_dim_v", s.memory_head_dim_v()}};
  for (auto [what, dim] : dims)
    if (dim < 8 || dim > 256 || dim % 8 != 0)
      throw UsageError(prefix + what + " " + std::to_string(dim) +
                       " is not supported: head dims are multiples of 8 from 8 to 256");
  // The tiles' dims come from set_head_dims; a spec that set them apart is a bug of its maker.
  const auto holds = [](int tile, int dim) { return tile % 64 == 0 && tile >= tile_head_dim(dim) && tile <= 256; };
  if (!holds(s.head_dim, s.memory_head_dim()) || !holds(s.head_dim_v, s.memory_head_dim_v()))
    throw UsageError(prefix + "the tiles' head dims " + std::to_string(s.head_dim) + "/" + std::to_string(s.head_dim_v) +
                     " do not pad head dims " + std::to_string(s.memory_head_dim()) + "/" +
                     std::to_string(s.memory_head_dim_v()) + " to multiples of 64 (KernelSpec::set_head_dims sets both)");
}

void validate_attention_inputs(const KernelSpec& s) {
  if (s.dtype != DType::bf16 && s.dtype != DType::f16)
    throw UsageError("attention kernels take bf16 or f16 inputs (got " + std::string(dtype_name(s.dtype)) + ")");
  validate_head_dims(s, "");
  if (s.gqa_group < 1)
    throw UsageError("gqa_group must be at least 1 (query heads per kv head), got " + std::to_string(s.gqa_group));
}

void validate_tiles(const KernelSpec& s, bool kv_rows, void (*wgmma_extra)(const KernelSpec&),
                    void (*extra)(const KernelSpec&)) {
  // The block-mask blocks bound which tiles exist: 0 made every tile test vacuous (a kernel
  // whose body compiled away) and 4096 is beyond what the block-mask kernels build.
  validate_sparse_blocks(s);
  validate_attention_inputs(s);
  const BlockConfig& c = s.config;
  if (!c.is_set()) throw UsageError("block config " + c.str() + " has unset fields");
  // The warp-specialised forward also takes three consumer warpgroups (12 warps, 192 query rows)
  // and 176-key tiles; its family check (wgmma_extra) decides where they fit.
  const bool ws_three_warpgroups = c.warp_specialized && !kv_rows && c.num_warps == 12;
  const bool ws_keys_176 = c.warp_specialized && !kv_rows && c.block_n == 176;
  if (c.num_warps != 1 && c.num_warps != 2 && c.num_warps != 4 && c.num_warps != 8 && !ws_three_warpgroups) {
    if (c.warp_specialized && !kv_rows)
      throw UsageError("config " + c.str() + ": the warp-specialised forward takes 4, 8 or 12 warps (one, two or "
                       "three consumer warpgroups of 64 query rows; the producer warpgroup is not counted, so "
                       "m192n128w12s2ws runs 512 threads)");
    throw UsageError("config " + c.str() + ": warps must be 1, 2, 4 or 8");
  }
  // The tile the warps split into 16-row mma tiles: query rows, except in dK/dV (kv rows). The
  // warp-specialised dK/dV kernel at head dims above 128 gives each consumer warpgroup one column
  // slice of dK and dV over every kv row: the rows are split among one slice's warps.
  const int slices = c.warp_specialized && kv_rows ? dkdv_splits(s.head_dim, s.head_dim_v) : 1;
  const int row_warps = slices > 1 && c.num_warps % (4 * slices) == 0 ? c.num_warps / slices : c.num_warps;
  const int warp_tile = kv_rows ? c.block_n : c.block_m;
  const int streamed = kv_rows ? c.block_m : c.block_n;
  const char* warp_name = kv_rows ? "block_n" : "block_m";
  const char* streamed_name = kv_rows ? "block_m" : "block_n";
  if (warp_tile % (16 * row_warps) != 0)
    throw UsageError("config " + c.str() + ": " + warp_name + " must be a multiple of 16 * warps = " +
                     std::to_string(16 * row_warps) + " (each warp owns whole 16-row mma tiles)");
  if (warp_tile / row_warps > 32)
    throw UsageError("config " + c.str() + ": at most 32 rows per warp (" + warp_name + " / warps = " +
                     std::to_string(warp_tile / row_warps) + ")");
  if ((!is_power_of_two(streamed) || streamed < 16 || streamed > 128) && !ws_keys_176)
    throw UsageError("config " + c.str() + ": " + streamed_name + " must be 16, 32, 64 or 128");
  if ((!is_power_of_two(warp_tile) || warp_tile > 128) && !(ws_three_warpgroups && warp_tile == 192))
    throw UsageError("config " + c.str() + ": " + warp_name + " must be a power of two up to 128");
  if (c.tma)
    throw UsageError("config " + c.str() + ": TMA loads ('t') exist for the decode family only; " +
                     std::string(descriptor(s.family).name) + " takes 'g' or 'ws' for its Hopper paths");
  if (c.warp_specialized && s.family != Family::fwd && s.family != Family::bwd_dkdv)
    throw UsageError("config " + c.str() + ": the warp-specialised path ('ws') exists for the forward and the fast "
                     "backward's dK/dV kernel only; use 'g' for the wgmma path of " +
                     std::string(descriptor(s.family).name));
  if (c.wgmma) {
    if (c.num_warps % 4 != 0 || warp_tile != 16 * row_warps)
      throw UsageError("config " + c.str() + ": the wgmma path needs whole warpgroups (warps a multiple of 4) "
                       "and " + warp_name + " = 16 * warps = " + std::to_string(16 * row_warps) +
                       (row_warps != c.num_warps ? " (the warps of one of the " + std::to_string(slices) +
                                                       " column slices)" : std::string()));
    if (wgmma_extra) wgmma_extra(s);
  }
  if (extra) extra(s);
  // Without a block mask there are no blocks to divide; the power-of-two tiles up to 128 divide
  // the default 128 x 128 anyway, the wide warp-specialised ones (192, 176) need the exemption.
  if ((s.has_block_mask || !(ws_three_warpgroups || ws_keys_176)) &&
      (s.sparse_q_block % c.block_m != 0 || s.sparse_kv_block % c.block_n != 0))
    throw UsageError("config " + c.str() + ": tiles must divide the block-mask blocks (" +
                     std::to_string(s.sparse_q_block) + " x " + std::to_string(s.sparse_kv_block) + ")");
  if (c.stages < 2 || c.stages > 4) throw UsageError("config " + c.str() + ": stages must be 2, 3 or 4");
  if (s.has_full_blocks && !s.has_block_mask) throw UsageError("has_full_blocks needs has_block_mask");
  if (s.seq_lens && s.is_divisible)
    throw UsageError("a kernel with per-sequence lengths (seq_lens) takes any length: is_divisible must be false");
}

void add_tile_constants(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants) {
  ctx["element_type"] = element_type(s);
  constants.push_back(int_constant("D", s.head_dim));
  constants.push_back(int_constant("DV", s.head_dim_v));
  constants.push_back(int_constant("D_IO", s.memory_head_dim()));
  constants.push_back(int_constant("DV_IO", s.memory_head_dim_v()));
  // The columns that Q Kᵀ and dO Vᵀ sum over: the tensors' own, to the next whole k-step of 16.
  // The tiles' columns past them hold zeros, so their k-steps would add nothing.
  constants.push_back(int_constant("D_REDUCE", s.gemm_head_dim()));
  constants.push_back(int_constant("DV_REDUCE", s.gemm_head_dim_v()));
  constants.push_back(int_constant("BLOCK_M", s.config.block_m));
  constants.push_back(int_constant("BLOCK_N", s.config.block_n));
  constants.push_back(int_constant("NUM_WARPS", s.config.num_warps));
  constants.push_back(int_constant("STAGES", s.config.stages));
  constants.push_back(int_constant("GQA_GROUP", s.gqa_group));
  constants.push_back(int_constant("SPARSE_Q_BLOCK", s.sparse_q_block));
  constants.push_back(int_constant("SPARSE_KV_BLOCK", s.sparse_kv_block));
  constants.push_back(int_constant("EXPECTED_SMEM_BYTES", static_cast<long long>(s.shared_memory_bytes())));
  constants.push_back(bool_constant("IS_DIVISIBLE", s.is_divisible));
  constants.push_back(bool_constant("HAS_BLOCK_MASK", s.has_block_mask));
  constants.push_back(bool_constant("HAS_FULL_BLOCKS", s.has_full_blocks));
  constants.push_back(bool_constant("HAS_MASK", s.has_mask()));
  constants.push_back(bool_constant("SCORE_IS_IDENTITY", s.score_is_identity()));
  constants.push_back(bool_constant("ROWS_GUARANTEED_SAFE", s.rows_guaranteed_safe));
  constants.push_back(bool_constant("WGMMA", s.config.wgmma));
  constants.push_back(bool_constant("SEQ_LENS", s.seq_lens));
  constants.push_back({{"type", "flexjit::MmaPath"},
                       {"name", "MMA_PATH"},
                       {"value", s.config.wgmma ? "flexjit::MmaPath::wgmma" : "flexjit::MmaPath::mma_sync"}});
  ctx["wgmma"] = s.config.wgmma;
  ctx["seq_lens"] = s.seq_lens;
}

std::string describe_attention(const KernelSpec& s) {
  auto bit = [](bool b) { return b ? "1" : "0"; };
  return std::string(descriptor(s.family).name) + " " + std::string(dtype_name(s.dtype)) + " d" +
         std::to_string(s.head_dim) + "/" + std::to_string(s.head_dim_v) + " " + s.config.str() + " gqa" +
         std::to_string(s.gqa_group) + " divisible=" + bit(s.is_divisible) + " block_mask=" + bit(s.has_block_mask) +
         " full_blocks=" + bit(s.has_full_blocks) + " safe_rows=" + bit(s.rows_guaranteed_safe) +
         " score_mod=" + s.score_mod.canonical() + " mask_mod=" + s.mask_mod.canonical() +
         (s.negative_scale ? " negative_scale=1" : "") + (s.small_scale ? " small_scale=1" : "") +
         (s.buffer_grads ? " buffer_grads=1" : "") + (s.seq_lens ? " seq_lens=1" : "") +
         (s.dq_accumulate ? " dq_accumulate=1" : "") + (s.dq_ordered ? " dq_ordered=1" : "") + (s.dq_long_chains ? " long_chains=1" : "") +
         (s.lean_registers ? " lean_registers=1" : "") + (s.tile_bounds_walk ? " tile_bounds=1" : "");
}

LaunchGeometry query_tile_geometry(const KernelSpec& s, const CallShape& shape) {
  LaunchGeometry g;
  g.tiles = static_cast<int>(ceil_div(shape.q_len, s.config.block_m));
  g.grid = {static_cast<unsigned>(g.tiles), static_cast<unsigned>(shape.heads), static_cast<unsigned>(shape.batch)};
  g.block = {static_cast<unsigned>(s.config.num_warps * 32), 1, 1};
  g.dynamic_smem = s.shared_memory_bytes();
  return g;
}

}  // namespace flexjit::codegen::families
