#include "codegen/decode_family.hpp"

#include <string>

#include "flexjit/error.hpp"

namespace flexjit::codegen {

namespace {

bool is_power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

nlohmann::json int_constant(const char* name, long long value) {
  return {{"type", "int"}, {"name", name}, {"value", std::to_string(value)}};
}
nlohmann::json bool_constant(const char* name, bool value) {
  return {{"type", "bool"}, {"name", name}, {"value", value ? "true" : "false"}};
}

}  // namespace

void validate_decode(const KernelSpec& s) {
  if (s.dtype != DType::bf16 && s.dtype != DType::f16)
    throw UsageError("decode kernels take bf16 or f16 inputs (got " + std::string(dtype_name(s.dtype)) + ")");
  for (auto [what, dim] : {std::pair<const char*, int>{"head_dim", s.head_dim}, {"head_dim_v", s.head_dim_v}})
    if (dim < 64 || dim > 256 || dim % 64 != 0)
      throw UsageError(std::string("decode: ") + what + " " + std::to_string(dim) +
                       " is not supported: the tensor-core path takes 64, 128, 192 or 256");
  const BlockConfig& c = s.config;
  if (s.family == Family::decode_combine) {
    if (c.num_warps < 1 || c.num_warps > 32)
      throw UsageError("decode_combine config " + c.str() + ": warps must be between 1 and 32");
    return;
  }
  if (s.gqa_group < 1)
    throw UsageError("decode: gqa_group must be at least 1 (query heads per kv head), got " +
                     std::to_string(s.gqa_group));
  if (!c.is_set()) throw UsageError("decode config " + c.str() + " has unset fields");
  if (c.wgmma) throw UsageError("decode config " + c.str() + ": decoding has no wgmma path (drop the trailing 'g')");
  if (c.block_m != 16 && c.block_m != 32 && c.block_m != 64)
    throw UsageError("decode config " + c.str() + ": block_m (packed query rows) must be 16, 32 or 64");
  if (c.num_warps != 1 && c.num_warps != 2 && c.num_warps != 4 && c.num_warps != 8)
    throw UsageError("decode config " + c.str() + ": warps must be 1, 2, 4 or 8");
  if (!is_power_of_two(c.block_n) || c.block_n < 16 || c.block_n > 256 || c.block_n % (16 * c.num_warps) != 0)
    throw UsageError("decode config " + c.str() + ": block_n must be a power of two up to 256 and a multiple of "
                     "16 * warps = " + std::to_string(16 * c.num_warps) + " (each warp owns 16-key slices)");
  if (c.stages < 2 || c.stages > 8)
    throw UsageError("decode config " + c.str() + ": stages must be between 2 and 8");
  // Every warp keeps all block_m rows' output accumulators and Q fragments in registers.
  const int registers = (c.block_m / 16) * (s.head_dim_v / 2 + s.head_dim / 4);
  if (registers > 192)
    throw UsageError("decode config " + c.str() + ": " + std::to_string(registers) +
                     " accumulator and Q registers per thread at head dims " + std::to_string(s.head_dim) + "/" +
                     std::to_string(s.head_dim_v) + " (at most 192); use a smaller block_m");
}

size_t decode_shared_memory_bytes(const KernelSpec& s) {
  if (s.family != Family::decode) return 0;
  const size_t m = s.config.block_m, n = s.config.block_n, d = s.head_dim, dv = s.head_dim_v;
  const size_t ring = s.config.stages * n * (d + dv) * 2;
  const size_t merge = s.config.num_warps * m * (dv + 2) * 4;
  const size_t list = s.has_mask() ? (2 * kDecodeChunkTiles + 4) * 4 : 0;
  return m * d * 2 + (ring > merge ? ring : merge) + list;
}

BlockConfig decode_default_config(Family family, int head_dim, int head_dim_v, int packed_rows) {
  if (family == Family::decode_combine) return {0, 0, 4, 0};
  const int d = head_dim > head_dim_v ? head_dim : head_dim_v;
  // 16 packed rows cover a decode step of up to 16 heads per kv head; more rows (speculative or
  // chunked steps) take 32-row tiles where the registers allow, so K/V are re-read less often.
  const int m = packed_rows > 16 && (head_dim_v / 2 + head_dim / 4) * 2 <= 192 ? 32 : 16;
  if (d <= 64) return {m, 128, 4, 3};
  if (d <= 128) return {m, 64, 4, 3};
  return {16, 32, 2, 3};
}

void decode_template_context(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants) {
  ctx["kernel_name"] = kernel_name(s.family);
  ctx["element_type"] = s.dtype == DType::bf16 ? "bf16" : "f16";
  if (s.family == Family::decode_combine) {
    constants.push_back(int_constant("DV", s.head_dim_v));
    constants.push_back(int_constant("NUM_WARPS", s.config.num_warps));
    return;
  }
  constants.push_back(int_constant("D", s.head_dim));
  constants.push_back(int_constant("DV", s.head_dim_v));
  constants.push_back(int_constant("BLOCK_M", s.config.block_m));
  constants.push_back(int_constant("BLOCK_N", s.config.block_n));
  constants.push_back(int_constant("NUM_WARPS", s.config.num_warps));
  constants.push_back(int_constant("STAGES", s.config.stages));
  constants.push_back(int_constant("GQA_GROUP", s.gqa_group));
  constants.push_back(int_constant("CHUNK_TILES", kDecodeChunkTiles));
  constants.push_back(int_constant("EXPECTED_SMEM_BYTES", static_cast<long long>(decode_shared_memory_bytes(s))));
  constants.push_back(bool_constant("PAGED", s.paged));
  constants.push_back(bool_constant("HAS_MASK", s.has_mask()));
  constants.push_back(bool_constant("SCORE_IS_IDENTITY", s.score_is_identity()));
}

std::string decode_describe(const KernelSpec& s) {
  std::string out = " " + std::string(dtype_name(s.dtype)) + " d" + std::to_string(s.head_dim) + "/" +
                    std::to_string(s.head_dim_v);
  if (s.family == Family::decode_combine) return out + " warps=" + std::to_string(s.config.num_warps);
  return out + " " + s.config.str() + " gqa" + std::to_string(s.gqa_group) + " paged=" + (s.paged ? "1" : "0") +
         " score_mod=" + s.score_mod.canonical() + " mask_mod=" + s.mask_mod.canonical();
}

}  // namespace flexjit::codegen
