// Families `decode` and `decode_combine`: split-KV decoding over contiguous or paged KV.
// decode: one CTA per (batch x kv head, split, packed-row tile); the query rows of a kv head's
// GQA group are packed into the tile, the split walks its share of the sequence's key tiles and
// writes fp32 partials (or the final output when there is one split). decode_combine merges the
// partials of each (b, h, q) row in split order, one warp per row. Templates:
// templates/attention_decode.cu.j2, templates/attention_decode_combine.cu.j2.
#include "codegen/families/decode.hpp"

#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>

#include "codegen/families/attention_common.hpp"
#include "codegen/tma_maps.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen {

namespace {

// Shared memory of a decode kernel: the Q tile, then the K/V ring or (after the walk) the warps'
// accumulators for their merge, whichever is larger. TMA configs add the ring's mbarriers and
// 1024 bytes to align the tiles to the 128-byte swizzle's atoms.
size_t decode_smem_bytes(const BlockConfig& c, int head_dim, int head_dim_v) {
  const size_t m = c.block_m, n = c.block_n, d = head_dim, dv = head_dim_v;
  const size_t ring = c.stages * n * (d + dv) * 2;
  const size_t merge = c.num_warps * m * (dv + 2) * 4;
  return m * d * 2 + (ring > merge ? ring : merge) + (c.tma ? 1024 + 8 * c.stages : 0);
}

}  // namespace

BlockConfig decode_default_config(Family family, int head_dim, int head_dim_v, int packed_rows,
                                  const std::string& arch, const DecodeCacheFacts& cache) {
  if (family == Family::decode_combine) return {0, 0, 4, 0};
  const bool paged = cache.paged;
  const int d = head_dim > head_dim_v ? head_dim : head_dim_v;
  const size_t limit = max_shared_memory_for_arch(arch);
  // 16 packed rows cover a decode step of up to 16 heads per kv head; more rows (speculative or
  // chunked steps) take 32-row tiles where the registers allow, so K/V are re-read less often.
  const int m = packed_rows > 16 && (head_dim_v / 2 + head_dim / 4) * 2 <= 192 ? 32 : 16;
  // A paged cache wants many loads in flight per SM with few address computations: each 256-byte
  // row is its own page-table lookup and address for cp.async. On Hopper, TMA copies a page (or
  // the part of one inside a tile) per box instead (H100, page 64, B=16 32k: 4 warps x 128 keys
  // through TMA 3001-3011 GB/s, 8 warps x 128 keys by cp.async 2972-2974, contiguous 3084).
  // A contiguous cache through TMA, the same tiles (H200, B=16 32k: 4490 GB/s against 4384 by
  // cp.async; GQA 7:1 64k 4195 against 4097; notes/perf.md "(zzb)").
  // 16 rows and 4 warps over `keys` keys through TMA, where shared memory allows.
  const auto tma_tiles = [&](int keys) -> std::optional<BlockConfig> {
    BlockConfig c{16, keys, 4, 3};
    c.tma = true;
    if (decode_smem_bytes(c, head_dim, head_dim_v) <= limit) return c;
    return std::nullopt;
  };
  const bool hopper_tma = d <= 128 && d > 64 && m == 16 && arch == "sm_90a" && cache.tma_reads_cache;
  if (hopper_tma && !paged && (cache.longest_keys == 0 || cache.longest_keys > kDecodeContiguousTmaKeys))
    if (const auto c = tma_tiles(64)) return *c;
  if (d <= 128 && d > 64 && paged && m == 16) {
    // Short sequences in waves of CTAs (H200, B=64 1k, pages of 16: 64 keys 3172 GB/s against 2956
    // for 128, which lead on long sequences, 4285-4291 against 4239-4246 at B=16 32k).
    const int page = cache.page_size;
    if (hopper_tma && page > 0 && std::gcd(page, 128) % 8 == 0)
      if (const auto c = tma_tiles(cache.short_waves && std::gcd(page, 64) % 8 == 0 ? 64 : 128)) return *c;
    const BlockConfig wide_paged{16, 128, 8, 3};
    if (decode_smem_bytes(wide_paged, head_dim, head_dim_v) <= limit) return wide_paged;
  }
  BlockConfig c = d <= 64 ? BlockConfig{m, 128, 4, 3} : d <= 128 ? BlockConfig{m, 64, 4, 3} : BlockConfig{16, 32, 2, 3};
  // GPUs with less shared memory per block (sm_86, sm_89, sm_120: 99 KiB) take fewer stages.
  while (c.stages > 2 && decode_smem_bytes(c, head_dim, head_dim_v) > limit) --c.stages;
  return c;
}

namespace families {
namespace {

void validate_inputs(const KernelSpec& s, const char* family) {
  if (s.dtype != DType::bf16 && s.dtype != DType::f16)
    throw UsageError(std::string(family) + " kernels take bf16 or f16 inputs (got " +
                     std::string(dtype_name(s.dtype)) + ")");
  validate_head_dims(s, std::string(family) + ": ");
}

void validate_decode(const KernelSpec& s) {
  validate_inputs(s, "decode");
  const BlockConfig& c = s.config;
  if (s.gqa_group < 1)
    throw UsageError("decode: gqa_group must be at least 1 (query heads per kv head), got " +
                     std::to_string(s.gqa_group));
  if (!c.is_set()) throw UsageError("decode config " + c.str() + " has unset fields");
  if (c.wgmma) throw UsageError("decode config " + c.str() + ": decoding has no wgmma path (drop the trailing 'g'; 't' loads through TMA on Hopper)");
  if (c.block_m != 16 && c.block_m != 32 && c.block_m != 64)
    throw UsageError("decode config " + c.str() + ": block_m (packed query rows) must be 16, 32 or 64");
  if (c.num_warps != 1 && c.num_warps != 2 && c.num_warps != 4 && c.num_warps != 8)
    throw UsageError("decode config " + c.str() + ": warps must be 1, 2, 4 or 8");
  if (!is_power_of_two(c.block_n) || c.block_n < 16 || c.block_n > 256 || c.block_n % (16 * c.num_warps) != 0)
    throw UsageError("decode config " + c.str() + ": block_n must be a power of two up to 256 and a multiple of "
                     "16 * warps = " + std::to_string(16 * c.num_warps) + " (each warp owns 16-key slices)");
  if (c.stages < 2 || c.stages > 8)
    throw UsageError("decode config " + c.str() + ": stages must be between 2 and 8");
  if (s.decode_box_rows != 0 &&
      (!c.tma || !s.paged || s.decode_box_rows < 8 || !is_power_of_two(s.decode_box_rows) ||
       s.decode_box_rows >= c.block_n))
    throw UsageError("decode config " + c.str() + ": TMA boxes of " + std::to_string(s.decode_box_rows) +
                     " rows (decode_box_rows) are for a paged pool read through TMA ('t'), a power of two from 8 "
                     "below block_n = " + std::to_string(c.block_n) + " (0: boxes of whole tiles)");
  if (s.decode_tile_bounds && !s.mask_mod.has_tile_bounds())
    throw UsageError("decode: tile bounds were asked for a mask_mod without them (" + s.mask_mod.canonical() +
                     "); its tiles need the classification kernel");
  // Every warp keeps all block_m rows' output accumulators and Q fragments in registers.
  const int registers = (c.block_m / 16) * (s.head_dim_v / 2 + s.head_dim / 4);
  if (registers > 192)
    throw UsageError("decode config " + c.str() + ": " + std::to_string(registers) +
                     " accumulator and Q registers per thread at head dims " + std::to_string(s.head_dim) + "/" +
                     std::to_string(s.head_dim_v) + " (at most 192); use a smaller block_m");
}

void validate_combine(const KernelSpec& s) {
  validate_inputs(s, "decode_combine");
  if (s.config.num_warps < 1 || s.config.num_warps > 32)
    throw UsageError("decode_combine config " + s.config.str() + ": warps must be between 1 and 32");
}

// Tile bounds add the split's list of kept tiles.
size_t decode_smem(const KernelSpec& s) {
  return decode_smem_bytes(s.config, s.head_dim, s.head_dim_v) +
         (s.decode_tile_bounds ? size_t(kDecodeBoundsMaxTiles) * 4 : 0);
}
size_t combine_smem(const KernelSpec&) { return 0; }

int threads(const KernelSpec& s, int) { return s.config.num_warps * 32; }
// Kernel 0 walks the keys; kernel 1 classifies the tiles of a mask_mod.
int decode_threads(const KernelSpec& s, int index) { return index == 1 ? kDecodeClassifyWarps * 32 : threads(s, 0); }

BlockConfig decode_default(int head_dim, int head_dim_v) {
  return decode_default_config(Family::decode, head_dim, head_dim_v);
}
BlockConfig combine_default(int head_dim, int head_dim_v) {
  return decode_default_config(Family::decode_combine, head_dim, head_dim_v);
}

void add_decode_constants(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants) {
  ctx["element_type"] = element_type(s);
  constants.push_back(int_constant("D", s.head_dim));
  constants.push_back(int_constant("DV", s.head_dim_v));
  constants.push_back(int_constant("D_IO", s.memory_head_dim()));
  constants.push_back(int_constant("DV_IO", s.memory_head_dim_v()));
  constants.push_back(int_constant("BLOCK_M", s.config.block_m));
  constants.push_back(int_constant("BLOCK_N", s.config.block_n));
  constants.push_back(int_constant("NUM_WARPS", s.config.num_warps));
  constants.push_back(int_constant("STAGES", s.config.stages));
  constants.push_back(int_constant("GQA_GROUP", s.gqa_group));
  constants.push_back(int_constant("CLASSIFY_WARPS", kDecodeClassifyWarps));
  constants.push_back(int_constant("MAX_CLASSIFY_PARTS", kDecodeMaxClassifyParts));
  constants.push_back(int_constant("MAX_BOUNDS_TILES", kDecodeBoundsMaxTiles));
  constants.push_back(int_constant("EXPECTED_SMEM_BYTES", static_cast<long long>(decode_smem(s))));
  constants.push_back(bool_constant("PAGED", s.paged));
  constants.push_back(bool_constant("TMA", s.config.tma));
  constants.push_back(int_constant("KV_BOX_ROWS", decode_tile_box_rows(s)));
  ctx["tma"] = s.config.tma;
  constants.push_back(bool_constant("HAS_MASK", s.has_mask()));
  constants.push_back(bool_constant("MASK_USES_H", s.mask_mod.uses("h")));
  constants.push_back(bool_constant("MASK_USES_Q", s.mask_mod.uses("q_idx")));
  constants.push_back(bool_constant("MASK_BOUNDS", s.decode_tile_bounds));
  ctx["mask_bounds"] = s.decode_tile_bounds;  // flexjit_mask_mod_bounds exists only then
  constants.push_back(bool_constant("SCORE_IS_IDENTITY", s.score_is_identity()));
}

void add_combine_constants(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants) {
  ctx["element_type"] = element_type(s);
  constants.push_back(int_constant("DV", s.head_dim_v));
  constants.push_back(int_constant("DV_IO", s.memory_head_dim_v()));
  constants.push_back(int_constant("NUM_WARPS", s.config.num_warps));
}

std::string describe_decode(const KernelSpec& s) {
  return "decode " + std::string(dtype_name(s.dtype)) + " d" + std::to_string(s.head_dim) + "/" +
         std::to_string(s.head_dim_v) + " " + s.config.str() + " gqa" + std::to_string(s.gqa_group) +
         " paged=" + (s.paged ? "1" : "0") + " score_mod=" + s.score_mod.canonical() +
         " mask_mod=" + s.mask_mod.canonical() + (s.decode_tile_bounds ? " tile_bounds=1" : "") +
         (s.decode_box_rows != 0 ? " box_rows=" + std::to_string(s.decode_box_rows) : "") +
         (s.negative_scale ? " negative_scale=1" : "");
}
std::string describe_combine(const KernelSpec& s) {
  return "decode_combine " + std::string(dtype_name(s.dtype)) + " d" + std::to_string(s.head_dim) + "/" +
         std::to_string(s.head_dim_v) + " warps=" + std::to_string(s.config.num_warps);
}

// Kernel 0: grid (batch x kv heads, splits, packed-row tiles); the split count is the host's
// choice per call. Kernel 1 (mask classification): grid (batch x list heads, packed-row tiles,
// parts), where the list heads are the kv heads when mask_mod reads h and 1 otherwise, and the
// parts (CTAs sharing a sequence's tiles) are the host's choice per call.
LaunchGeometry decode_geometry(const KernelSpec& s, const CallShape& shape, int index) {
  LaunchGeometry g;
  const long long packed_rows = static_cast<long long>(shape.q_len) * s.gqa_group;
  const unsigned row_tiles = ceil_div(packed_rows, s.config.block_m);
  if (index == 1) {
    const long long list_heads = s.mask_mod.uses("h") ? shape.kv_heads : 1;
    const int parts = shape.classify_parts < 1 ? 1 : shape.classify_parts;
    g.grid = {static_cast<unsigned>(static_cast<long long>(shape.batch) * list_heads), row_tiles,
              static_cast<unsigned>(parts)};
    g.block = {static_cast<unsigned>(decode_threads(s, 1)), 1, 1};
    g.programmatic = true;
    return g;
  }
  g.grid = {static_cast<unsigned>(static_cast<long long>(shape.batch) * shape.kv_heads),
            static_cast<unsigned>(shape.splits < 1 ? 1 : shape.splits), row_tiles};
  g.block = {static_cast<unsigned>(threads(s, 0)), 1, 1};
  g.dynamic_smem = decode_smem(s);
  // Both kernels wait for the previous kernel before their first global access (the decode kernel
  // then lets the combine start): a step's launch hides behind whatever ran before it.
  g.programmatic = true;
  return g;
}

// One warp per (b, h, q) row.
LaunchGeometry combine_geometry(const KernelSpec& s, const CallShape& shape, int) {
  LaunchGeometry g;
  const long long rows = static_cast<long long>(shape.batch) * shape.heads * shape.q_len;
  g.grid = {ceil_div(rows, s.config.num_warps), 1, 1};
  g.block = {static_cast<unsigned>(threads(s, 0)), 1, 1};
  g.programmatic = true;  // right after the decode kernel, which lets it start early
  return g;
}

}  // namespace

FamilyDescriptor decode_family() {
  FamilyDescriptor f;
  f.family = Family::decode;
  f.name = "decode";
  f.template_name = "attention_decode.cu.j2";
  f.source_name = "attention_decode.cu";
  f.kernel_names = {"flexjit_attention_decode", "flexjit_attention_decode_classify"};
  f.reports_errors = true;
  f.errors_in_every_kernel = true;  // both kernels evaluate mask_mod
  f.default_config = decode_default;
  f.validate = validate_decode;
  f.shared_memory_bytes = decode_smem;
  f.threads = decode_threads;
  f.add_constants = add_decode_constants;
  f.describe = describe_decode;
  f.geometry = decode_geometry;
  return f;
}

FamilyDescriptor decode_combine_family() {
  FamilyDescriptor f;
  f.family = Family::decode_combine;
  f.name = "decode_combine";
  f.template_name = "attention_decode_combine.cu.j2";
  f.source_name = "attention_decode_combine.cu";
  f.kernel_names = {"flexjit_attention_decode_combine"};
  f.default_config = combine_default;
  f.validate = validate_combine;
  f.shared_memory_bytes = combine_smem;
  f.threads = threads;
  f.add_constants = add_combine_constants;
  f.describe = describe_combine;
  f.geometry = combine_geometry;
  return f;
}

}  // namespace families

bool decode_classifies_by_bounds(const KernelSpec& spec, int64_t capacity, const std::string& arch) {
  if (spec.mask_mod.is_always_true() || !spec.mask_mod.has_tile_bounds()) return false;
  const char* text = std::getenv("FLEXJIT_DECODE_CLASSIFY");
  const std::string mode = text ? text : "bounds";
  if (mode == "kernel") return false;
  if (mode != "bounds")
    throw UsageError("FLEXJIT_DECODE_CLASSIFY='" + mode +
                     "' is not a classification; use 'bounds' (the default: the decode kernel classifies its tiles by "
                     "the mask's bounds where it can) or 'kernel' (always the classification kernel)");
  if (capacity > int64_t(kDecodeBoundsMaxTiles) * spec.config.block_n) return false;
  KernelSpec with_bounds = spec;
  with_bounds.decode_tile_bounds = true;
  return families::decode_smem(with_bounds) <= max_shared_memory_for_arch(arch);
}

}  // namespace flexjit::codegen
