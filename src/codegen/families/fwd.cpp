// Family `fwd`: forward attention, one CTA per (query tile, query head, batch); writes O and LSE.
// Template: templates/attention_fwd.cu.j2.
#include "codegen/families/fwd.hpp"

#include <algorithm>

#include "codegen/families/attention_common.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen::families {
namespace {

BlockConfig default_config(int head_dim, int head_dim_v) {
  const int d = std::max(head_dim, head_dim_v);
  if (d <= 64) return {128, 64, 4, 2};
  if (d <= 128) return {128, 32, 4, 2};
  return {64, 32, 4, 2};
}

// The warp-specialised kernel's producer warpgroup, beside the num_warps consumer warps.
constexpr int kProducerThreads = 128;

// The wide shapes: three consumer warpgroups (192 query rows, 160 registers per thread) and
// 176-key tiles (88 score registers per thread). Neither fits a head dim above 128 in registers,
// and neither tiles the 128 x 128 blocks of a block mask: they take unmasked problems and mask_mods
// called without a block mask.
void validate_warp_specialized(const KernelSpec& s) {
  const BlockConfig& c = s.config;
  if (c.num_warps != 4 && c.num_warps != 8 && c.num_warps != 12)
    throw UsageError("config " + c.str() + ": the warp-specialised forward takes 4, 8 or 12 consumer warps (one, "
                     "two or three warpgroups of 64 query rows)");
  const int d = std::max(s.head_dim, s.head_dim_v);
  const std::string dims = "d" + std::to_string(s.head_dim) + "/" + std::to_string(s.head_dim_v);
  if (c.num_warps == 12 && d > 128)
    throw UsageError("config " + c.str() + ": three consumer warpgroups (12 warps) take head dims up to 128 (their "
                     "160 registers per thread hold no wider output), got " + dims + " — use m128n64w8s2ws");
  if (c.block_n == 176 && d > 128)
    throw UsageError("config " + c.str() + ": 176-key tiles take head dims up to 128 (the score and output "
                     "accumulators of a wider one do not fit in registers), got " + dims + " — use m128n64w8s2ws");
  if ((c.num_warps == 12 || c.block_n == 176) && s.has_block_mask &&
      (s.sparse_q_block % c.block_m != 0 || s.sparse_kv_block % c.block_n != 0))
    throw UsageError("config " + c.str() + ": its " + std::to_string(c.block_m) + " x " +
                     std::to_string(c.block_n) + " tiles do not divide the block mask's " +
                     std::to_string(s.sparse_q_block) + " x " + std::to_string(s.sparse_kv_block) +
                     " blocks; 192-row and 176-key tiles take calls without a block mask — use m128n128w8s2ws");
}

void validate(const KernelSpec& s) {
  validate_tiles(s, /*kv_rows=*/false, nullptr, s.config.warp_specialized ? validate_warp_specialized : nullptr);
  if (s.tile_bounds_walk && (!s.config.warp_specialized || s.has_block_mask || !s.has_mask() ||
                             !forward_walks_by_bounds(s.mask_mod) || s.seq_lens))
    throw UsageError("the tile-bounds walk (tile_bounds_walk) is for the warp-specialised forward without a block "
                     "mask or per-sequence lengths, under a mask_mod with tile bounds (no float math, no buffer "
                     "indexed by kv_idx); this is config " + s.config.str() + " with mask_mod=" +
                     s.mask_mod.canonical());
}

// The Q tile (reused for staging O), then STAGES K/V tiles; wgmma tiles start 1024-aligned. The
// warp-specialised kernel stages each consumer warpgroup's O for its TMA store after the stages
// (o_stage_columns), then keeps its mbarriers: Q full and empty, and a full and an empty barrier
// per stage for K and for V, 8 bytes each, and the published work tile (four words: its index,
// query tile, head and batch), in whole 128-byte lines.
// Masked tiles: two buffers of the mask's column values (forward_mask_column_values) and their
// error bits, BLOCK_N 4-byte words each, after the stages; the warp-specialised kernel has a pair
// per consumer warpgroup (before its barriers).
// The score_mod's diagonal values (forward_score_diagonal_values) take BLOCK_N + 64 words an array:
// a warpgroup's 64 rows and BLOCK_N keys meet on BLOCK_N + 63 diagonals.
size_t column_buffer_bytes(const KernelSpec& s, int values, int span) {
  const size_t pairs = s.config.warp_specialized ? static_cast<size_t>(s.config.num_warps / 4) : 1;
  return pairs * 2 * 2 * static_cast<size_t>(values) * static_cast<size_t>(span) * 4;
}

// Whether the forward stages its diagonal values a second time as the bias form's pairs: they
// take one more value's two arrays (the template's SCORE_DIAGONAL_BIAS_FORM).
bool diagonal_bias_pairs(const KernelSpec& s) {
  return forward_score_diagonal_values(s) > 0 && forward_diagonal_bias_form(s);
}

size_t column_value_bytes(const KernelSpec& s, int values, bool table) {
  if (values == 0 || table) return 0;  // the table form's values come with the stages (diagonal_slice_bytes)
  return column_buffer_bytes(s, values + (diagonal_bias_pairs(s) ? 1 : 0),
                             s.config.block_n + (forward_score_diagonal_values(s) > 0 ? 64 : 0));
}

// Words of the warp-specialised kernel's published work tile: its index, query tile, head and
// batch, and with the tile-bounds walk its first key tile and their count.
size_t tile_slot_words(const KernelSpec& s) { return s.tile_bounds_walk ? 6 : 4; }

// The table form (forward_diagonal_table): each stage holds, after K and V, the slice of the
// diagonal table's pairs that a key tile's scores read (BLOCK_M + BLOCK_N pairs, from an even
// pair), in whole KiB so that the next stage's K stays 1024-aligned.
size_t diagonal_slice_bytes(const KernelSpec& s, bool table) {
  return table ? (static_cast<size_t>(s.config.block_m + s.config.block_n) * 8 + 1023) / 1024 * 1024 : 0;
}

// `table`: the table form's layout (forward_diagonal_table, which the callers that decide whether
// column values fit cannot ask: it asks them).
size_t shared_memory_without_o_stage(const KernelSpec& s, int column_values, bool table = false) {
  const size_t e = 2, m = s.config.block_m, n = s.config.block_n, d = s.head_dim, dv = s.head_dim_v;
  return std::max(m * d, m * dv) * e + s.config.stages * (n * (d + dv) * e + diagonal_slice_bytes(s, table)) +
         (s.config.wgmma ? 1024 : 0) + column_value_bytes(s, column_values, table) +
         (s.config.warp_specialized ? (16 + 32 * s.config.stages + 4 * tile_slot_words(s) + 127) / 128 * 128 : 0);
}

// Bytes of one consumer warpgroup's O staging buffer: 64 rows of `columns` 16-bit values.
size_t o_stage_bytes(int columns) { return size_t{64} * columns * 2; }

// The columns of O a consumer warpgroup of the warp-specialised kernel stages per TMA store: the
// widest whole number of 64-column slabs that divides Dv and whose buffers (one per warpgroup) fit
// beside the rest of the CTA's shared memory; a narrower buffer stores O in turns. 0: O is stored
// from registers (Dv not a multiple of 64, or not even one slab per warpgroup fits).
int o_stage_columns(const KernelSpec& s, int column_values, bool table = false) {
  if (!s.config.warp_specialized || s.head_dim_v % 64 != 0) return 0;
  const size_t rest = shared_memory_without_o_stage(s, column_values, table);
  const size_t warpgroups = static_cast<size_t>(s.config.num_warps / 4);
  for (int columns = s.head_dim_v; columns >= 64; columns -= 64)
    if (s.head_dim_v % columns == 0 && rest + warpgroups * o_stage_bytes(columns) <= max_shared_memory_for_arch("sm_90a"))
      return columns;
  return 0;
}

size_t shared_memory_bytes(const KernelSpec& s) {
  const int column_values =
      forward_mask_column_values(s) + forward_score_column_values(s) + forward_score_diagonal_values(s);
  const bool table = forward_diagonal_table(s);
  return shared_memory_without_o_stage(s, column_values, table) +
         static_cast<size_t>(s.config.num_warps / 4) * o_stage_bytes(o_stage_columns(s, column_values, table));
}

int threads(const KernelSpec& s, int) {
  return s.config.num_warps * 32 + (s.config.warp_specialized ? kProducerThreads : 0);
}

// CTAs a wgmma kernel asks ptxas to fit on one SM (__launch_bounds__'s second
// argument): two where two CTAs' shared memory and threads fit an H100/H200 SM (228 KiB, 1 KiB
// reserved per CTA; up to 256 threads, so 128 registers each), else one. At d64 its 128 x 128
// tiles take 81 KiB, and unasked ptxas gave the non-divisible, masked and per-sequence-length
// kernels 133-163 registers, one CTA per SM. H200, S=2000 (notes/perf.md "(zr)"): noop 294 -> 388
// TF/s, causal 245 -> 306, ALiBi + causal 208 -> 253, soft-capping + causal 193 -> 223, with at
// most a few dozen bytes spilled. At d128 the 128 x 64 tiles (97 KiB) fit two and beat one CTA of
// 128 x 128 tiles (S=2000: noop 427 -> 455, causal 353 -> 373, soft-capping + causal 289 -> 325,
// ALiBi + causal 314 -> 330; as one CTA they ran 1-11 % slower than 128 x 128). Head dims above
// 128 keep one (not measured).
// The warp-specialised kernel with one consumer warpgroup (256 threads with its producer) takes two
// where they fit, so that one CTA's work-tile ends (first QK^T, last PV, epilogue) fall in the
// other's steady state, which two ping-ponged warpgroups on one tile cannot do; the kernel then
// splits 128 registers a thread as 40 (producer) / 216 (consumer).
int min_ctas_per_sm(const KernelSpec& s) {
  if (!s.config.wgmma || std::max(s.head_dim, s.head_dim_v) > 128) return 1;
  if (s.config.warp_specialized && s.config.num_warps != 4) return 1;
  constexpr size_t kSharedMemoryPerSm = 228 * 1024, kReservedPerCta = 1024;
  const bool fits = 2 * (shared_memory_bytes(s) + kReservedPerCta) <= kSharedMemoryPerSm &&
                    threads(s, 0) <= 256;
  return fits ? 2 : 1;
}

// Buffer reads cost the mods registers the wide warp-specialised tiles do not have to spare.
bool mods_read_buffers(const KernelSpec& s) {
  return !s.score_mod.buffers_read().empty() || !s.mask_mod.buffers_read().empty();
}

// The ws kernel holds each warp's rows of Q in registers as wgmma A fragments (attention_fwd_ws.cu.j2's
// Q_IN_REGISTERS): head dim 64, one or two consumer warpgroups, up to 128-key tiles (with 176 the
// 16 registers spill). One decision for the template's constant and the RS wgmma shape it needs.
bool q_in_registers(const KernelSpec& s) {
  return s.config.warp_specialized && s.head_dim == 64 && s.config.num_warps <= 8 && s.config.block_n <= 128;
}

void add_constants(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants) {
  add_tile_constants(s, ctx, constants);
  constants.push_back(bool_constant("WARP_SPECIALIZED", s.config.warp_specialized));
  constants.push_back(bool_constant("MODS_READ_BUFFERS", mods_read_buffers(s)));
  constants.push_back(bool_constant("LEAN_REGISTERS", s.lean_registers));
  const int mask_column_values = forward_mask_column_values(s);
  const int score_column_values = forward_score_column_values(s);
  const int score_diagonal_values = forward_score_diagonal_values(s);
  const int column_values = mask_column_values + score_column_values + score_diagonal_values;
  const bool table = forward_diagonal_table(s);
  constants.push_back(int_constant("O_STAGE_COLUMNS", o_stage_columns(s, column_values, table)));
  constants.push_back(bool_constant("Q_IN_REGISTERS", q_in_registers(s)));
  constants.push_back(int_constant("MIN_CTAS_PER_SM", min_ctas_per_sm(s)));
  constants.push_back(bool_constant("TILE_BOUNDS_WALK", s.tile_bounds_walk));
  constants.push_back(int_constant("TILE_SLOT_WORDS", static_cast<int>(tile_slot_words(s))));
  constants.push_back(int_constant("MASK_COLUMN_VALUES", mask_column_values));
  constants.push_back(int_constant("SCORE_COLUMN_VALUES", score_column_values));
  constants.push_back(int_constant("SCORE_DIAGONAL_VALUES", score_diagonal_values));
  constants.push_back(bool_constant("SCORE_DIAGONAL_BIAS_FORM", diagonal_bias_pairs(s)));
  constants.push_back(bool_constant("SCORE_DIAGONAL_TABLE", table));
  ctx["warp_specialized"] = s.config.warp_specialized;
  ctx["mask_columns"] = mask_column_values > 0;
  ctx["score_columns"] = score_column_values > 0;
  ctx["score_diagonals"] = score_diagonal_values > 0;
  ctx["mod_columns"] = column_values > 0;  // the staging of any of them
  ctx["tile_bounds_walk"] = s.tile_bounds_walk;  // flexjit_mask_mod_bounds exists only then
  ctx["score_kv_affine"] = forward_kv_affine(s).has_value();  // flexjit_score_mod_log2_kv_slope exists only then
}

// The warp-specialised kernel is persistent: min_ctas_per_sm CTAs per SM (or one per work tile
// when there are fewer), each striding over the (query tile, head, batch) work tiles.
LaunchGeometry geometry(const KernelSpec& s, const CallShape& shape, int) {
  LaunchGeometry g = query_tile_geometry(s, shape);
  if (s.config.warp_specialized) {
    const long long work = static_cast<long long>(g.tiles) * shape.heads * shape.batch;
    const long long resident = static_cast<long long>(shape.sm_count) * min_ctas_per_sm(s);
    const long long ctas = resident > 0 ? std::min<long long>(work, resident) : work;
    g.grid = {static_cast<unsigned>(std::max<long long>(ctas, 1)), 1, 1};
    g.block.x = static_cast<unsigned>(threads(s, 0));
  }
  return g;
}

// (BLOCK_M / warps / 16) * (BLOCK_N / 8 + DV / 8) * 4: the S tile and O.
int accumulator_registers(const KernelSpec& s) {
  const BlockConfig& c = s.config;
  if (c.num_warps <= 0 || c.block_m % c.num_warps) return 0;
  return (c.block_m / c.num_warps / 16) * (c.block_n / 8 + s.head_dim_v / 8) * 4;
}

// Most promising first; codegen::default_config of the class leads. Entries ending in 'g' take the
// wgmma path, which only sm_90a keeps; smaller fallbacks cover sm_86/sm_89 (99 KiB). The wide
// warp-specialised tiles (m192 with three consumer warpgroups, n176; FA3's shapes for d64 and
// non-causal d128) survive only for calls without a block mask. One consumer warpgroup at two CTAs
// per SM (m64n128 at d64, m64n64 at d128) wins on short sequences, where the work tiles' ends
// dominate (H200, zzi1, against the default: noop S=129 d128 1.33x, causal S=129 1.09x, causal
// S=257 d64 1.16x) and loses from 512 keys on (0.79-0.90x).
std::vector<const char*> curated_configs(HeadClass hc) {
  switch (hc) {
    case HeadClass::d64:
      return {"m128n64w4s2", "m128n128w4s2", "m128n64w4s3", "m128n128w8s2", "m64n64w4s2", "m128n64w8s2",
              "m64n128w4s2", "m128n128w8s2g", "m64n128w4s2g", "m128n128w8s2ws", "m128n128w8s3ws",
              "m64n128w4s2ws", "m192n128w12s2ws", "m128n176w8s2ws"};
    case HeadClass::d128:
      return {"m128n32w4s2", "m128n64w4s2", "m128n64w8s2", "m64n64w4s2", "m128n32w4s3", "m128n128w8s2",
              "m64n32w4s2", "m128n128w8s2g", "m128n64w8s2g", "m64n128w4s2g", "m128n128w8s2ws", "m128n128w8s3ws",
              "m128n64w8s3ws", "m64n64w4s2ws", "m128n176w8s2ws", "m192n128w12s2ws"};
    case HeadClass::d256:
      return {"m64n32w4s2", "m64n64w4s2", "m128n32w8s2", "m128n64w8s2", "m64n32w4s3", "m32n32w2s2",
              "m64n16w4s2", "m128n64w8s2g", "m64n64w4s2g", "m128n64w8s2ws", "m64n64w4s2ws"};
  }
  return {};
}

// Measured on an H100 in one run (notes/perf.md, results/2026-11-23-h100-d): the warp-specialised
// path wins everywhere (noop d128 479 -> 618 TF/s, causal d64 298 -> 388, document + causal
// 236 -> 261, ALiBi + causal 389 -> 434, causal d256 445 -> 505). The nested-buffer document
// mask loses a little on it (g 173, ws 160) and still takes it: the tuner picks per problem.
// Unmodified scores at d64 without a mask take three consumer warpgroups over 192 query rows
// (FA3's shape there), which keep the tensor cores busy through two warpgroups' exponentials:
// H200, B x S = 16k tokens, 16 heads, medians of three (notes/perf.md "(zr)"), m192 / 'g' /
// ws m128: S=2048 469 / 441 / 428, 4096 482 / 454 / 441, 8192 492 / 460 / 444, 16384 493 / 460 /
// 455, GQA 4:1 492 / 457 / 440; shorter sequences lose 2-3 % to 'g' (S=1024 410 / 420, 512
// 354 / 361). A d64 score_mod takes the two-warpgroup kernel, which overlaps it (three spill it
// and do not): soft-capping 340 against 'g' 265 and m192 257, ALiBi without a mask 340 / 308 / 304.
// Per-sequence lengths take the same kernels: against the synchronous one's best tiles (d128
// 128 x 64 with two CTAs per SM, d64 128 x 128 with two) on ragged batches (16 x 4096 padded,
// lengths 256-4096; H200, notes/perf.md "(zs)") noop d128 458 -> 550 TF/s, causal 419 -> 523,
// GQA causal 436 -> 536, soft-capping + causal 365 -> 416, 64 x 1024 padded 389 -> 410; noop d64
// 382 -> 428 (m192), causal d64 370 -> 369.
const char* hopper_default(const KernelSpec& s) {
  const int d = std::max(s.head_dim, s.head_dim_v);
  // So do scores whose diagonal table takes them (forward_diagonal_table): their loop has no mods
  // (H100, three rounds: T5 d64 1.085x and a per-head table d64 1.078x the 128-row tiles at S=4096,
  // level at S=512; under a causal mask 0.935x, which keeps 128 rows; notes/perf.md "(zzzj)").
  if (d <= 64 && !s.has_mask() && !s.has_block_mask) {
    if (s.score_is_identity()) return "m192n128w12s2ws";
    KernelSpec wide = s;
    wide.config = BlockConfig::parse("m192n128w12s2ws");
    if (forward_diagonal_table(wide)) return "m192n128w12s2ws";
  }
  // Q and K up to 192 wide beside a V of at most 128 (MLA's prefill: 192 / 128) hold d128's score
  // and output registers, and 128-key tiles fit in shared memory: H200, 192/128, 1.09-1.19x the
  // 64-key tiles (noop, causal, GQA, ALiBi, sliding window, 136/72). Not for a mask with column
  // values (documents), which no longer fit beside them: 0.87x (notes/perf.md "(zv)", zv6).
  if (d <= 128 || (s.head_dim <= 192 && s.head_dim_v <= 128 && s.mask_mod.column_value_count() == 0))
    return "m128n128w8s2ws";
  return "m128n64w8s2ws";
}

// The warp-specialised kernel overlaps S(t) with P(t-1) V(t-1) where their accumulators and O fit
// beside each other: up to 160 registers per thread for any mod, and 176 (a 256-wide V beside
// 64-key tiles) in the full form of a two-warpgroup kernel, whose lean form does not overlap there.
// H100 (notes/perf.md, "(m)", m15): causal d256 496 -> 520 TF/s overlapped; prefix LM and
// documents then spill 92 bytes, a softcap 4.
bool has_lean_form(const KernelSpec& s) {
  const BlockConfig& c = s.config;
  const int overlap_registers = c.block_n / 2 + s.head_dim_v / 2 + c.block_n / 4;  // S, O, P (template's count)
  const bool wide_v = c.warp_specialized && c.num_warps == 8 && c.block_n <= 128 && s.head_dim_v > 128 &&
                      overlap_registers > 160 && overlap_registers <= 176;
  // Three consumer warpgroups overlap unmodified scores under a mask that reads no buffer in the
  // full form only (the template's OVERLAP); the lean form does not, for the masks that spill.
  const bool three_warpgroups_masked =
      c.warp_specialized && c.num_warps == 12 && s.has_mask() && s.score_is_identity() && !mods_read_buffers(s);
  return wide_v || three_warpgroups_masked;
}

std::vector<WgmmaShape> wgmma_shapes(const KernelSpec& s) {
  // S = Q Kᵀ over the kv tile; O += P V over V's own columns rounded to 16 (the template's DV_GEMM).
  std::vector<WgmmaShape> shapes = {{s.config.block_n, false, false}, {s.gemm_head_dim_v(), true, true}};
  if (q_in_registers(s)) shapes.push_back({s.config.block_n, true, false});  // S = Q K^T, Q's fragments in registers
  return shapes;
}

}  // namespace

FamilyDescriptor fwd_family() {
  FamilyDescriptor f;
  f.family = Family::fwd;
  f.name = "fwd";
  f.template_name = "attention_fwd.cu.j2";
  f.source_name = "attention_fwd.cu";
  f.kernel_names = {"flexjit_attention_fwd"};
  f.attention = true;
  f.tiled = true;
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
  f.has_lean_form = has_lean_form;
  // The spill stores the full form may have and still be kept: H100, d256 with the overlap forced
  // (notes/perf.md, "(o)", f1): soft-capping (4 bytes of spill stores) 1.063x its lean form,
  // documents (92) 1.015x; the overlap is worth more than a few spilled words, but not clearly
  // more than a hundred bytes.
  f.full_form_spill_bytes = 32;
  return f;
}

}  // namespace flexjit::codegen::families

namespace flexjit::codegen {

std::optional<ScoreKvAffineForm> forward_kv_affine(const KernelSpec& spec) {
  if (spec.family != Family::fwd || spec.score_mod.is_identity()) return std::nullopt;
  // Measured at head dims 64 and 128. Above, the full form's registers are tight already: with
  // the affine pass beside the per-score one, ALiBi's d256 kernel (its tail's range test too)
  // spilled 8 bytes where it spills none without.
  if (spec.head_dim > 128 || spec.head_dim_v > 128) return std::nullopt;
  return spec.score_mod.kv_affine_form();
}

namespace {

constexpr int kMaxColumnValues = 4;

// `values` column values (arrays of `span` words) if their buffers fit beside everything the
// kernel has without them (O's staging at its width): in any GPU's shared memory for the
// synchronous kernel (sm_86 / sm_89 have the least), in sm_90a's for the warp-specialised one;
// else 0.
int column_values_that_fit(const KernelSpec& spec, int values, int span) {
  if (values == 0 || values > kMaxColumnValues) return 0;
  const size_t warpgroups = static_cast<size_t>(spec.config.num_warps / 4);
  const size_t without = families::shared_memory_without_o_stage(spec, 0) +
                         (spec.config.warp_specialized ? warpgroups * families::o_stage_bytes(families::o_stage_columns(spec, 0)) : 0);
  const size_t limit = max_shared_memory_for_arch(spec.config.warp_specialized ? "sm_90a" : "sm_86");
  return without + families::column_buffer_bytes(spec, values, span) <= limit ? values : 0;
}

}  // namespace

int forward_mask_column_values(const KernelSpec& spec) {
  // Not under the tile-bounds walk: each warp classes its tiles there, so no warpgroup barrier can
  // depend on a tile's class, and the values' staging has one (forward_walks_by_bounds).
  if (spec.family != Family::fwd || !spec.has_mask() || spec.tile_bounds_walk) return 0;
  return column_values_that_fit(spec, spec.mask_mod.column_value_count(), spec.config.block_n);
}

int forward_score_column_values(const KernelSpec& spec) {
  // The warp-specialised kernel only (measured there first), and one mod's values at a time: a
  // mask with column values keeps its own, and an affine score its two-FFMA pass. The count is
  // cached and most score_mods have none: it is tested before the affine form, which analyses
  // the tree (this runs for every launch's shared-memory size).
  if (spec.family != Family::fwd || !spec.config.warp_specialized || spec.score_mod.is_identity()) return 0;
  const int values = spec.score_mod.column_value_count();
  if (values == 0 || forward_mask_column_values(spec) > 0 || forward_kv_affine(spec)) return 0;
  return column_values_that_fit(spec, values, spec.config.block_n);
}

int forward_score_diagonal_values(const KernelSpec& spec) {
  // As forward_score_column_values, and only where the score_mod has no column values to stage.
  // An affine score (ALiBi) keeps its own pass, and above head dim 128 (where forward_kv_affine
  // declines it) the per-score form: its diagonal values are unmeasured there. The cached count
  // first, as there. A mask's column values share the buffers (the diagonals' arrays, then the
  // mask's), so the two must fit together; the span covers both (a mask's array needs only BLOCK_N
  // words of its BLOCK_N + 64).
  if (spec.family != Family::fwd || !spec.config.warp_specialized || spec.score_mod.is_identity()) return 0;
  const int values = spec.score_mod.diagonal_value_count();
  if (values == 0 || spec.score_mod.diagonal_values_are_kv_affine() || forward_score_column_values(spec) > 0)
    return 0;
  const int mask_values = forward_mask_column_values(spec);
  const int pairs = forward_diagonal_bias_form(spec) ? 1 : 0;
  return column_values_that_fit(spec, values + mask_values + pairs, spec.config.block_n + 64) > 0 ? values : 0;
}

bool forward_diagonal_bias_form(const KernelSpec& spec) {
  // Two or more consumer warpgroups: their ping-pong's turn is the barrier that keeps a
  // warpgroup's staging of key tile t + 1 off the buffer tile t - 1's mods still read (see the
  // template). A negative scale keeps the scores' units as they are (no fold into exp2), and a
  // small one would move ordinary values past the float range (KernelSpec::small_scale). Not
  // beside a mask's column values (documents), whose work tiles are a few key tiles long: there
  // the staging of the first tile ahead of its S lost 2-6 % (H100, notes/perf.md "(zzzi)").
  return spec.family == Family::fwd && spec.config.warp_specialized && spec.config.num_warps >= 8 &&
         !spec.negative_scale && !spec.small_scale && spec.score_mod.diagonal_value_is_added_to_score() &&
         forward_mask_column_values(spec) == 0;
}

bool forward_diagonal_table(const KernelSpec& spec) {
  // The overlapped loop that the bias form needs (attention_fwd_ws.cu.j2's OVERLAP): two consumer
  // warpgroups with up to 128-key tiles and Dv up to 128, or three under a mask that reads no
  // buffer (the loop then reads none) where S, P and O fit their 128 overlap registers (d64 with
  // 128-key tiles: there ptxas spills 44 bytes, the Q descriptors, and the loop ran 1.08x the
  // 128-row tiles; notes/perf.md "(zzzj)"). V must not read b, q_len or kv_len: the table has one
  // row per query head, evaluated at the padded lengths.
  const BlockConfig& c = spec.config;
  const bool three_fit = c.num_warps == 12 && spec.mask_mod.buffers_read().empty() &&
                         c.block_n / 2 + spec.head_dim_v / 2 + c.block_n / 4 <= 128;
  return forward_diagonal_bias_form(spec) && forward_score_diagonal_values(spec) == 1 &&
         (c.num_warps == 8 || three_fit) && c.block_n <= 128 && spec.head_dim_v <= 128 &&
         !spec.score_mod.diagonal_values_read_batch_or_lengths();
}

// With one 4 MiB head per section (causal d256), the CTAs that took the last head's heaviest
// tiles ran on alone: the SMs idled 18 % of the kernel (ncu), and sections of at least 4 tiles
// per CTA gained 9 % there, 4 % on causal d128 and 6 % at d64 (H100, notes/perf.md "(q)").
int forward_tile_section(const KernelSpec& spec, int heads, int tiles_per_head, int kv_len, int ctas, bool by_ticket) {
  if (!by_ticket || heads <= 1) return 1;
  constexpr long long kL2Budget = 8ll << 20;  // bytes of K and V a section may keep in L2
  constexpr long long kBalanceTilesPerCta = 4;
  const long long head_bytes =
      static_cast<long long>(kv_len) * (spec.head_dim + spec.head_dim_v) * 2 / std::max(spec.gqa_group, 1) + 1;
  const long long l2_heads = std::max(1ll, kL2Budget / head_bytes);
  const long long balance_heads = (kBalanceTilesPerCta * ctas + tiles_per_head - 1) / std::max(tiles_per_head, 1);
  const long long section = std::min<long long>(heads, std::max(l2_heads, balance_heads));
  // The sections' sizes evened out: the walk's last section is what is left of the heads, and a
  // small one is the tail that the balance above is there to avoid (16 heads in sections of 5
  // left one head's 128 tiles to 132 CTAs: long documents' SMs idled 17 % of the kernel, ncu,
  // notes/perf.md "(zzv)"; evened out, long documents ran 1.08x and long causal 1.02x, H200).
  // As many sections as before, or fewer until the last holds at least three quarters of the
  // others; none more than twice the size above (its L2 share), else that size as it was.
  for (long long n = (heads + section - 1) / section; n >= 1; --n) {
    const long long even = (heads + n - 1) / n;
    if (even > 2 * section) break;
    const long long last = heads - (n - 1) * even;
    if (4 * last >= 3 * even) return static_cast<int>(even);
  }
  return static_cast<int>(section);
}

}  // namespace flexjit::codegen

