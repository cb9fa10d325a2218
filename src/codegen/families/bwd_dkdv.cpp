// Family `bwd_dkdv`: dK and dV per kv tile, walking the q_* tables and the query heads of the GQA
// group (summed in registers, no atomics); the accumulators are split into SPLITS column slices
// (one CTA each) so they fit in registers. Template: templates/attention_bwd_dkdv.cu.j2.
#include <algorithm>

#include "codegen/families/bwd_dkdv.hpp"

#include "codegen/families/attention_common.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen::families {
namespace {

BlockConfig default_config(int head_dim, int head_dim_v) {
  const int d = std::max(head_dim, head_dim_v);
  if (d <= 64) return {64, 128, 8, 2};
  return d <= 128 ? BlockConfig{64, 64, 4, 2} : BlockConfig{32, 64, 4, 2};  // fits sm_80's 163 KiB
}

// The warp-specialised kernel's tiles at head dim 192 (codegen::set_dkdv_half_slab_tiles): two
// slices of 96 columns, each run as wgmmas of 64 and 32 columns (the kernel's HALF_SLAB_SLICES);
// dV's slices beside them are 32, 64 or 96 columns. H200, fast backward against the 256-column
// tiles: notes/perf.md "(zy)".
bool half_slab_slices(const KernelSpec& s) {
  return s.config.warp_specialized && dkdv_half_slab_dims(s.head_dim, s.head_dim_v);
}

void wgmma_checks(const KernelSpec& s) {
  const int splits = dkdv_splits(s.head_dim, s.head_dim_v);
  if (splits == 0 || half_slab_slices(s)) return;  // (no splits: split_checks names it)
  if ((s.head_dim / splits) % 64 != 0 || (s.head_dim_v / splits) % 64 != 0)
    throw UsageError("config " + s.config.str() + ": the wgmma dK/dV kernel needs head dims that split into "
                     "64-column slices (use the mma.sync path: drop the trailing 'g')");
}

// The fast mode's dQ += dS K: each warpgroup takes one 64-query block of the tile and either a
// column share of the slice (over every kv row of the CTA) or, when the shares would not be whole
// 64-column slabs, the whole slice over its own share of the kv rows (more atomics, same GEMM).
// The warp-specialised kernel above head dim 128: one consumer warpgroup per column slice of dK
// and dV (the slices that keep the accumulators in registers), each over every kv row of the tile
// and computing Sᵀ and dPᵀ for half of the tile's queries (the score halves, below); its dQ share
// is its slice's columns, staged in 64-column pieces for a writer warp's TMA tensor reductions
// (the room from keeping one dO tile apart from the ring of Q stages).
//
// The score halves (the kernel's SCORE_HALVES): each consumer warpgroup computes Sᵀ and dPᵀ, and
// their softmax and dS, for half of the tile's queries instead of the whole tile: the halves meet
// in shared memory (Pᵀ and dSᵀ, double-buffered by tile), where each warpgroup reads the other's
// half as the A operand of its dV and dK k-steps. That is 5 GEMMs' work for 5 instead of 7, and
// half the elementwise work per warpgroup. H100, fast backward against the whole tile per
// warpgroup (notes/perf.md, "(z)"): noop d256 1.13x, causal 1.08x, soft-capping 1.16x, ALiBi
// 1.06x, documents 1.04x, GQA 4:1 1.06x.
bool warpgroup_slices(const KernelSpec& s) {
  return s.config.warp_specialized && dkdv_splits(s.head_dim, s.head_dim_v) > 1;
}

// (GQA groups of 8 and more once ran as clusters of two CTAs that summed their dQ shares over
// distributed shared memory before one reduction, which won on an H100 in session (n), before the
// score halves. On an H200 against the kernel of session (zx) they ran 0.61-0.69x without them
// (causal d256 8:1 240 -> 350 TF/s, MLA 192/128 8:1 233 -> 377, 64/256 8:1 117 -> 171;
// notes/perf.md "(zx)"), and were removed.)
// The ordered form's bytes among the mbarriers, as the kernel's ORDERED_NAME_BYTES: a ring of
// kTileNames two-word tile names, the extra barriers' 32 bytes and one barrier per name; with
// warpgroup slices (the kernel's DQ_RANKER) then the ranker's ring of two-word ranks and one
// barrier per rank.
constexpr size_t kTileNames = 8;  // the kernel's TILE_NAMES
size_t ordered_name_bytes(const KernelSpec& s) {
  return 8 * kTileNames + 32 + 8 * kTileNames + (warpgroup_slices(s) ? 16 * kTileNames : 0);
}

// The warp-specialised kernel at head dim 64 keeps its warpgroup's K and V rows in registers as
// the A operands of Sᵀ = K Qᵀ and dPᵀ = V dOᵀ (16 registers each; the kv tile is the CTA's for
// its whole walk), so those GEMMs read only Q and dO from shared memory: at d64 the kernel's
// shared memory (GEMM operands, dSᵀ, dQ staging) is busier than its tensor pipe (ncu, "(p)").
// Wider heads have no registers to spare beside dK and dV.
bool kv_in_registers(const KernelSpec& s) {
  return s.config.warp_specialized && s.config.wgmma && s.dq_accumulate && !warpgroup_slices(s) &&
         std::max(s.head_dim, s.head_dim_v) <= 64;
}

struct DqPlan {
  int groups_per_block = 0;  // warpgroups per 64-query block
  bool split_columns = false;
  bool alternate = false;    // ws, two warpgroups at d64 (fast: d72-d96 too): tile t's share by warpgroup t % 2
  int n = 0;                 // dQ columns per warpgroup (N of its wgmma)
  int kv_rows = 0;           // kv rows (K of its wgmma)
  // Staged shares added per tile (the template's DQ_PARTS): one per warpgroup where they split the
  // kv rows, else one.
  int parts() const { return split_columns || alternate ? 1 : std::max(groups_per_block, 1); }
};

DqPlan dq_plan(const KernelSpec& s) {
  DqPlan plan;
  const int warpgroups = s.config.num_warps / 4, blocks = s.config.block_m / 64;
  const int splits = dkdv_splits(s.head_dim, s.head_dim_v);
  if (blocks == 0 || splits == 0 || warpgroups % blocks != 0) return plan;
  plan.groups_per_block = warpgroups / blocks;
  const int slice = s.head_dim / splits;
  if (warpgroup_slices(s)) {
    if (warpgroups != splits || blocks != 1) return plan;
    plan.groups_per_block = warpgroups;  // the warpgroup's part: its slice
    plan.split_columns = true;
    plan.n = slice;
    plan.kv_rows = s.config.block_n;
    return plan;
  }
  // A tile's dQ is added once where the warpgroups split its columns (a share of whole 64-column
  // slabs of K each, over every kv row) and once per warpgroup where they split the kv rows, which
  // doubles the fp32 reductions per FLOP. The warp-specialised kernel at head dim 64 (one 64-column
  // slice, two warpgroups) takes dQ by turns instead: tile t's whole share, 64 columns over all 128
  // kv rows, by warpgroup t % 2, from both warpgroups' dSᵀ rows (alternate), so each tile's dSᵀ
  // and K are read once and added once. H100, d64 backward (notes/perf.md, "(p)"), against the kv
  // rows split: 32-column shares each (one add per tile, dSᵀ and K read twice) 1.03-1.05x fast and
  // 1.05-1.13x ordered; the turns then 1.04-1.08x fast and 1.02-1.12x ordered more. The synchronous
  // kernel keeps the kv rows split at d64.
  if (s.config.warp_specialized && slice == 64 && plan.groups_per_block == 2) {
    plan.alternate = true;
    plan.n = slice;
    plan.kv_rows = s.config.block_n;
    return plan;
  }
  // The same turns on 128-column tiles whose tensors' columns end in the second slab's first half
  // (head dims 72 to 96): the turn's share spans those columns rounded to 16 (d80: 80), where the
  // columns split would have warpgroup 1 multiply 64 columns of which 16 or 32 exist. The share
  // sits beside dK and dV, so ptxas's registers bound it (NVRTC 13.0, sm_90a, the compile matrix's
  // DqByTurns test): a V wider than Q and K serialised every wgmma (88/104, 96/112: C7512) or
  // spilled (80/128: 60 bytes), and masks without tile bounds (documents: their column values)
  // spill 96 bytes from 88 up; those keep the columns split.
  const bool turn_fits = s.gemm_head_dim_v() <= s.gemm_head_dim() &&
                         (!mask_walks_cut_by_data(s) || s.gemm_head_dim() <= 80);
  if (s.config.warp_specialized && !s.dq_ordered && slice == 128 && plan.groups_per_block == 2 &&
      s.gemm_head_dim() > 64 && s.gemm_head_dim() <= 96 && turn_fits) {
    plan.alternate = true;
    plan.n = s.gemm_head_dim();
    plan.kv_rows = s.config.block_n;
    return plan;
  }
  plan.split_columns = slice % plan.groups_per_block == 0 && (slice / plan.groups_per_block) % 64 == 0;
  plan.n = plan.split_columns ? slice / plan.groups_per_block : slice;
  plan.kv_rows = plan.split_columns ? s.config.block_n : s.config.block_n / plan.groups_per_block;
  return plan;
}

// dQ by turns with the turn's dQ a tile late (the fast mode): tile t's share is computed by
// warpgroup t % 2 at the end of tile t + 1, after its own work of that tile, instead of at the end
// of tile t, where it waited for the other warpgroup's dSᵀ rows. The other warpgroup had its own
// turn's dQ and staging in tile t - 1 before them, so every tile's dQ tail stood in the path of
// both (ncu, noop d64: 6 % of the samples on that wait, 5 % on dQ's, 5 % on the staging). A tile
// late, the other's rows have long been there, and warpgroup 1 starts its walk behind warpgroup 0
// (the kernel's NAMED_BARRIER_STAGGER). The dSᵀ tiles live a tile longer: STAGES + 1 of them, as
// many pairs of named barriers (see the kernel). H100, fast backward at d64 against the old turns,
// two calls (notes/perf.md, "(za)", za3 / za4; the unmasked kernel also without dS's select):
// noop 1.06-1.07x, ALiBi 1.04-1.06x, prefix LM 1.01-1.03x, GQA, causal, soft-capping, sliding
// window 1.00-1.02x, but documents 0.97-0.98x in every call (the deferral alone too; cause not
// found), so masks that read buffers by key (no tile bounds: data-dependent walks) keep the old
// form, and so does the ordered mode.
// The turns of 128-column tiles (head dims 72 to 96) stay in their tile: the deferral's third dSᵀ
// tile would leave room for one dQ staging buffer, which both warpgroups would then take by turns
// with nothing to keep a warpgroup from reaching the buffer two phases early, which its parity
// wait cannot tell from the phase it waits for (notes/perf.md "(zzm)", "(zzn)": that form raced,
// and with a second wait it hung). In their tile: 1.02-1.11x over the split columns at 4096
// tokens (H200, zzn2).
bool dq_deferred(const KernelSpec& s) {
  return s.config.warp_specialized && s.dq_accumulate && !s.dq_ordered && dq_plan(s).alternate &&
         dq_plan(s).n == 64 && (!s.has_mask() || s.mask_mod.has_tile_bounds());
}

// dSᵀ tiles of the fast mode's kernels: one (synchronous), two (warp-specialised: tile parity),
// four with score halves (two Pᵀ beside them), STAGES + 1 with the deferred dQ.
int ds_tiles(const KernelSpec& s) {
  if (!s.dq_accumulate) return 0;
  if (!s.config.warp_specialized) return 1;
  if (warpgroup_slices(s)) return 4;  // the score halves
  return dq_deferred(s) ? s.config.stages + 1 : 2;
}

void dq_checks(const KernelSpec& s) {
  if (!s.dq_accumulate) return;
  const std::string fix = " (e.g. m64n128w8s2g), or run the deterministic mode (CallOptions::backward_mode, "
                          "FLEXJIT_DETERMINISTIC=1, --bwd-mode deterministic)";
  if (!s.config.wgmma)
    throw UsageError("config " + s.config.str() + ": the fast backward computes dQ in the dK/dV kernel with wgmma; "
                     "use a config ending in 'g'" + fix);
  const DqPlan plan = dq_plan(s);
  if (s.config.block_m % 64 != 0 || plan.groups_per_block == 0)
    throw UsageError("config " + s.config.str() + ": the fast backward's dK/dV kernel needs query tiles of 64 rows "
                     "per warpgroup share (m64 or m128 with as many warpgroups as 64-row blocks or a multiple)" + fix);
  // A warpgroup holds its dQ share beside dK and dV: 64 columns (32 registers) fit, 128 spill in
  // the synchronous kernel (the warp-specialised one holds 128 beside its slice: see
  // warpgroup_slices, checked for spills by the compile tests; by turns it holds up to 96, the
  // turn's share, beside dK and dV at head dims 72 to 96, also checked there).
  if (plan.n > 64 && !warpgroup_slices(s) && !plan.alternate)
    throw UsageError("config " + s.config.str() + ": in the fast backward each warpgroup of the dK/dV kernel would hold " +
                     std::to_string(plan.n) + " dQ columns, which spill beside dK and dV (at most 64); use more "
                     "warpgroups per 64 queries" + fix);
}

// The warp-specialised kernel ('ws') is the fast mode's: a producer warp loads Q and dO by TMA and
// a writer warp adds the staged dQ shares with bulk reductions.
void warp_specialized_checks(const KernelSpec& s) {
  if (!s.config.warp_specialized) return;
  const std::string twin = [&] {
    BlockConfig c = s.config;
    c.warp_specialized = false;
    return c.str();
  }();
  if (!s.dq_accumulate)
    throw UsageError("config " + s.config.str() + ": the warp-specialised dK/dV kernel also sums dQ, which this "
                     "call leaves to the separate dQ kernel; run the fast mode (CallOptions::backward_mode, "
                     "FLEXJIT_DETERMINISTIC=0, --bwd-mode fast) or the deterministic one with "
                     "FLEXJIT_DETERMINISTIC_DQ=ordered (the default), or use " + twin);
  if (s.config.block_m != 64 || (s.config.num_warps != 4 && s.config.num_warps != 8))
    throw UsageError("config " + s.config.str() + ": the warp-specialised dK/dV kernel takes 64-query tiles and one or "
                     "two consumer warpgroups (m64n64w4s2ws, m64n128w8s2ws)");
  const int splits = dkdv_splits(s.head_dim, s.head_dim_v);
  if (splits > 1 && (splits != s.config.num_warps / 4 || s.config.block_n != 64))
    throw UsageError("config " + s.config.str() + ": at head dims " + std::to_string(s.head_dim) + "/" +
                     std::to_string(s.head_dim_v) + " the warp-specialised dK/dV kernel gives each of " +
                     std::to_string(splits) + " consumer warpgroups one column slice of dK and dV over 64 kv rows: "
                     "use m64n64w" + std::to_string(4 * splits) + "s2ws, or " + twin);
}

// The deterministic mode's ordered dQ adds wait for their turns in the warp-specialised kernel's
// writer warp; no other kernel has one.
void ordered_checks(const KernelSpec& s) {
  if (!s.dq_ordered) return;
  if (!s.dq_accumulate || !s.config.warp_specialized)
    throw UsageError("config " + s.config.str() + ": the deterministic backward sums dQ in order only in the "
                     "warp-specialised dK/dV kernel (m64n128w8s2ws, m64n128w8s3ws, m64n64w4s2ws); other configs "
                     "run with the separate dQ kernel");
}

void split_checks(const KernelSpec& s) {
  if (dkdv_splits(s.head_dim, s.head_dim_v) == 0)
    throw UsageError("backward: head dims " + std::to_string(s.head_dim) + "/" + std::to_string(s.head_dim_v) +
                     " cannot be split into 16-column slices whose dK/dV accumulators fit in registers");
}

void validate(const KernelSpec& s) {
  // First: a flag without its mode would otherwise be reported as that mode's config error.
  if (s.dq_long_chains && !s.dq_ordered)
    throw UsageError("the long chains of turns (KernelSpec::dq_long_chains, emit's --long-chains) are the deterministic "
                     "mode's ordered dQ sums': add --ordered-dq (dq_ordered)");
  if (s.dq_long_chains && ordered_dq_ascending(s))
    throw UsageError("the long chains of turns (KernelSpec::dq_long_chains, emit's --long-chains) are for ordered dQ "
                     "sums that descend, and this kernel's ascend (codegen::ordered_dq_ascending: a mask_mod with "
                     "tables, " + std::string(s.gqa_group == 1 ? "no GQA" : "documents with GQA up to head dim 128") +
                     "), where one chain is a pipeline: drop --long-chains, or emit the descending kernel (tables "
                     "alone: no --mask; or --no-block-mask)");
  validate_tiles(s, /*kv_rows=*/true, wgmma_checks, split_checks);
  dq_checks(s);
  warp_specialized_checks(s);
  ordered_checks(s);
}

// The warp-specialised kernel's shared memory without its dQ staging buffers, and one buffer's
// bytes (fp32 rows of the query tile; one set per warpgroup when they split the kv rows).
struct WsLayout {
  size_t fixed = 0;
  size_t dq_buffer = 0;
};
WsLayout ws_layout(const KernelSpec& s) {
  const size_t e = 2, m = s.config.block_m, n = s.config.block_n, d = s.head_dim, dv = s.head_dim_v;
  const DqPlan plan = dq_plan(s);
  const size_t parts = static_cast<size_t>(plan.parts());
  // K, V; the ring of (Q, dO) stages, each 1024-aligned for wgmma; the alignment slack; the dSᵀ
  // tiles (ds_tiles: with the score halves two of them Pᵀ); the ring's LSE / delta rows (apart, so that the
  // stages stay whole 1024-byte blocks); the mbarriers; in the ordered form, the ring of 8 two-word
  // tile names, the extra barriers' 32 bytes, one barrier per name, and with slices the ranks (ordered_name_bytes).
  // With warpgroup slices the stages hold Q only and one dO tile lies apart (the kernel's
  // smem_do_single), and each warpgroup stages 64-column pieces of its dQ share; half-slab slices
  // add the buffer both fill with their 32-column pieces (the kernel's DQ_SHARED_BYTES).
  const bool slices = warpgroup_slices(s);
  const size_t stage = (m * (slices ? d : d + dv) * e + 1023) / 1024 * 1024;
  WsLayout l;
  l.fixed = n * (d + dv) * e + s.config.stages * stage + (slices ? m * dv * e : 0) + 1024 +
            static_cast<size_t>(ds_tiles(s)) * n * m * e + s.config.stages * 2 * m * 4 + 128 +
            (s.dq_ordered ? ordered_name_bytes(s) : 0) + (half_slab_slices(s) ? m * 64 * 4 : 0);
  l.dq_buffer = slices ? m * 64 * 4 : parts * m * d * 4;
  return l;
}

// The score_mod's diagonal values' buffers (the template's DIAGONAL_BYTES): per consumer
// warpgroup two (by tile parity) of `values` arrays of values and as many of their reads' error
// bits, BLOCK_M + 64 words each (a warpgroup's 64 kv rows and BLOCK_M queries meet on
// BLOCK_M + 63 diagonals).
size_t diagonal_bytes(const KernelSpec& s, int values) {
  return static_cast<size_t>(s.config.num_warps / 4) * 2 * 2 * static_cast<size_t>(values) *
         static_cast<size_t>(s.config.block_m + 64) * 4;
}

// With the diagonal table (dkdv_diagonal_table), each stage's slice of it after those buffers (the
// template's DIAGONAL_SLICES_BYTES): raw, BLOCK_N + BLOCK_M - 1 words from a 16-byte boundary;
// seeding Sᵀ (dkdv_diagonal_seed), BLOCK_N + BLOCK_M 8-byte pairs.
size_t diagonal_slices_bytes(const KernelSpec& s, bool table, bool seed) {
  if (!table) return 0;
  const size_t words = seed ? 2 * static_cast<size_t>(s.config.block_n + s.config.block_m)
                            : static_cast<size_t>((s.config.block_n + s.config.block_m + 2 + 3) / 4 * 4);
  return static_cast<size_t>(s.config.stages) * words * 4;
}

// Two dQ staging buffers where they fit (the consumers fill one while the writer's reductions
// read the other), else one; the score_mod's diagonal values take only what the kernel leaves
// (dkdv_score_diagonal_values).
int ws_dq_buffers(const KernelSpec& s) {
  if (warpgroup_slices(s)) return dkdv_splits(s.head_dim, s.head_dim_v);  // one per warpgroup
  const WsLayout l = ws_layout(s);
  return l.fixed + diagonal_bytes(s, dkdv_score_diagonal_values(s)) + 2 * l.dq_buffer <=
                 max_shared_memory_for_arch("sm_90a")
             ? 2
             : 1;
}

// K and V tiles, then STAGES stages of (Q, dO, LSE and delta rows); wgmma stages 1024-aligned.
// The fast mode adds the tile's dSᵀ (kv rows x queries), the A operand of dQ += dS K. The
// warp-specialised kernel: see ws_layout.
size_t shared_memory_bytes(const KernelSpec& s) {
  if (s.config.warp_specialized) {
    const WsLayout l = ws_layout(s);
    return l.fixed + ws_dq_buffers(s) * l.dq_buffer + diagonal_bytes(s, dkdv_score_diagonal_values(s)) +
           diagonal_slices_bytes(s, dkdv_diagonal_table(s), dkdv_diagonal_seed(s));
  }
  const size_t e = 2, m = s.config.block_m, n = s.config.block_n, d = s.head_dim, dv = s.head_dim_v;
  size_t stage = m * (d + dv) * e + 2 * m * 4;
  if (s.config.wgmma) stage = (stage + 1023) / 1024 * 1024;
  return n * (d + dv) * e + s.config.stages * stage + (s.config.wgmma ? 1024 : 0) + (s.dq_accumulate ? n * m * e : 0);
}

constexpr int kProducerThreads = 128;  // the warp-specialised kernel's producer warpgroup
int threads(const KernelSpec& s, int) {
  return s.config.num_warps * 32 + (s.config.warp_specialized ? kProducerThreads : 0);
}

void add_constants(const KernelSpec& s, nlohmann::json& ctx, nlohmann::json& constants) {
  constants.push_back(int_constant("SPLITS", dkdv_splits(s.head_dim, s.head_dim_v)));
  add_tile_constants(s, ctx, constants);
  const DqPlan plan = s.dq_accumulate ? dq_plan(s) : DqPlan{};
  constants.push_back(bool_constant("DQ_ACCUMULATE", s.dq_accumulate));
  constants.push_back(int_constant("DQ_GROUPS_PER_BLOCK", plan.groups_per_block));
  constants.push_back(bool_constant("DQ_SPLIT_COLUMNS", plan.split_columns));
  constants.push_back(bool_constant("DQ_ALTERNATE", plan.alternate));
  constants.push_back(int_constant("DQ_PARTS", plan.parts()));
  constants.push_back(int_constant("DQ_N", plan.n));
  constants.push_back(int_constant("DQ_KV_ROWS", plan.kv_rows));
  constants.push_back(bool_constant("WARP_SPECIALIZED", s.config.warp_specialized));
  constants.push_back(bool_constant("DQ_ORDERED", s.dq_ordered));
  constants.push_back(bool_constant("DQ_FIRST_STORES", dkdv_first_stores(s)));
  constants.push_back(bool_constant("DQ_DONE_COUNT", dkdv_counts_landed_ctas(s)));
  constants.push_back(int_constant("DQ_CHAINS", s.dq_ordered ? ordered_dq_chains(s) : 1));
  constants.push_back(bool_constant("DQ_ASCENDING", ordered_dq_ascending(s)));
  constants.push_back(int_constant("LAUNCH_GROUP_CTAS", dkdv_launch_group_ctas(s)));
  constants.push_back(int_constant("DQ_BUFFERS", s.config.warp_specialized ? ws_dq_buffers(s) : 0));
  constants.push_back(bool_constant("SCORE_HALVES", warpgroup_slices(s)));
  constants.push_back(bool_constant("HALF_SLAB_SLICES", half_slab_slices(s)));
  constants.push_back(bool_constant("KV_IN_REGISTERS", kv_in_registers(s)));
  constants.push_back(bool_constant("DQ_DEFERRED", dq_deferred(s)));
  constants.push_back(int_constant("DS_TILES", ds_tiles(s)));
  constants.push_back(bool_constant("FOLD_SCORE_GRAD", dkdv_folds_score_gradient(s)));
  constants.push_back(bool_constant("WHOLE_TILES_WITHOUT_SELECT", dkdv_whole_tiles_without_select(s)));
  constants.push_back(bool_constant("HEAD_SPLITS", dkdv_splits_heads(s)));
  const int score_diagonal_values = dkdv_score_diagonal_values(s);
  constants.push_back(int_constant("SCORE_DIAGONAL_VALUES", score_diagonal_values));
  constants.push_back(bool_constant("SCORE_DIAGONAL_TABLE", dkdv_diagonal_table(s)));
  constants.push_back(bool_constant("SCORE_DIAGONAL_SEED", dkdv_diagonal_seed(s)));
  ctx["score_diagonals"] = score_diagonal_values > 0;
  ctx["warp_specialized"] = s.config.warp_specialized;
  ctx["stats_pairs"] = dkdv_reads_stats_pairs(s);
  ctx["stats_ahead_tiles"] = dkdv_stats_ahead_tiles(s);
}

// One CTA per (kv tile, column slice), kv head, batch; the warp-specialised kernel's kv heads
// times its split GQA groups (CallShape::kv_head_splits, FlexjitBwdParams::kv_head_splits).
LaunchGeometry geometry(const KernelSpec& s, const CallShape& shape, int) {
  LaunchGeometry g;
  g.tiles = static_cast<int>(ceil_div(shape.kv_len, s.config.block_n));
  // The warp-specialised kernel's slices are its warpgroups, not CTAs.
  const unsigned splits =
      s.config.warp_specialized ? 1u : static_cast<unsigned>(dkdv_splits(s.head_dim, s.head_dim_v));
  const int head_splits = s.config.warp_specialized ? std::max(shape.kv_head_splits, 1) : 1;
  g.grid = {static_cast<unsigned>(g.tiles) * splits, static_cast<unsigned>(shape.kv_heads * head_splits),
            static_cast<unsigned>(shape.batch)};
  g.block = {static_cast<unsigned>(threads(s, 0)), 1, 1};
  g.dynamic_smem = shared_memory_bytes(s);
  // The warp-specialised kernel waits for the previous kernel in its template (after its K and V
  // loads), so it may start as that kernel's programmatic dependent.
  g.programmatic = s.config.warp_specialized;
  return g;
}

std::string describe(const KernelSpec& s) {
  return describe_attention(s) + " splits=" + std::to_string(dkdv_splits(s.head_dim, s.head_dim_v)) +
         (dkdv_splits_heads(s) ? " head_splits=1" : "");
}

// (BLOCK_N / warps / 16) * (2 * BLOCK_M / 8 + (D + DV) / splits / 8) * 4: S^T, dP^T and one dK/dV
// column slice.
int accumulator_registers(const KernelSpec& s) {
  const BlockConfig& c = s.config;
  const int splits = dkdv_splits(s.head_dim, s.head_dim_v);
  const int row_warps = warpgroup_slices(s) ? c.num_warps / splits : c.num_warps;
  if (row_warps <= 0 || c.block_n % row_warps || splits == 0) return 0;
  return (c.block_n / row_warps / 16) * (2 * c.block_m / 8 + (s.head_dim + s.head_dim_v) / splits / 8) * 4;
}

// block_n: kv rows each CTA owns; block_m: query rows streamed.
std::vector<const char*> curated_configs(HeadClass hc) {
  switch (hc) {
    case HeadClass::d64:
      return {"m64n128w8s2", "m64n64w4s2", "m128n128w8s2", "m32n128w8s2", "m64n128w8s3", "m64n64w4s3",
              "m64n128w8s2g", "m64n64w4s2g", "m64n128w8s3ws", "m64n128w8s2ws", "m64n64w4s2ws"};
    case HeadClass::d128:
      return {"m64n64w4s2", "m32n64w4s2", "m64n128w8s2", "m32n128w8s2", "m64n64w4s3", "m16n64w4s2",
              "m64n64w4s2g", "m32n64w4s2g", "m64n128w8s2g", "m64n128w8s2ws"};
    case HeadClass::d256:
      return {"m64n64w4s2", "m32n64w4s2", "m16n64w4s2", "m32n32w2s2", "m32n128w8s2", "m16n128w8s2",
              "m16n32w2s2", "m32n64w4s2g", "m64n64w8s2ws"};
  }
  return {};
}

// 128 kv rows in two warpgroups: tuning the suite on an H100 picked it for 9 of the 13 problems,
// d64 included; where one warpgroup of 64 rows won (document masks, softcap, GQA) it was by at
// most 1.05x. Wider heads: one warpgroup of 64 kv rows over 32-query tiles, in column slices (the
// tuner's pick for causal d256 on an H100, 1.31x the mma.sync default; head dims whose slices are
// not whole 64-column slabs fall back to that default).
// The fast mode takes the warp-specialised kernel (H100, one run against 'g': noop d128 backward
// 390 -> 467 TF/s, d64 237 -> 358; notes/perf.md, session (i)); calls it cannot serve (tensors TMA
// cannot describe) take its 'g' twin (attention.cpp, choose_config). Calls with per-sequence
// lengths take it as well since session (zt) (notes/perf.md "(zt)").
const char* hopper_default(const KernelSpec& s) {
  const int d = std::max(s.head_dim, s.head_dim_v);
  if (d > 128) {
    // The fast mode and the ordered deterministic one: one consumer warpgroup per column slice
    // (warpgroup_slices), where the slices are whole 64-column slabs. H100, causal d256 backward:
    // 180 TF/s (this default with the dQ kernel) -> 322 (notes/perf.md, "(n)").
    const int splits = dkdv_splits(s.head_dim, s.head_dim_v);
    // (Half-slab slices are the warp-specialised kernel's only; without it, 192 takes default_for's
    // fallback, the mma.sync default.)
    const bool slabs = splits == 2 && (((s.head_dim / splits) % 64 == 0 && (s.head_dim_v / splits) % 64 == 0) ||
                                       dkdv_half_slab_dims(s.head_dim, s.head_dim_v));
    if (!s.dq_accumulate || !slabs) return "m32n64w4s2g";
    // A third stage of Q where it fits (V up to 128 beside 256-column Q and K: MLA's 192 / 128),
    // in the fast mode under a mask or a score_mod. H200, three rounds (notes/perf.md "(zw)", zw1):
    // MLA causal 1.058x, GQA 4:1 causal 1.055x, sliding window 1.051x, ALiBi 1.024x, documents
    // 1.020x, 256/128 causal 1.065x, 160/128 1.057x; unmasked unmodified MLA 0.993x; the ordered
    // mode 0.87-1.00x. GQA 8:1 and 16:1 (MLA 192/128, 64/256) took it with (zx)'s removal of the
    // pairs, measured against the pairs' two stages only.
    KernelSpec three = s;
    three.config = BlockConfig::parse("m64n64w8s3ws");
    const bool masked_or_modified = s.has_mask() || s.has_block_mask || !s.score_is_identity();
    if (!s.dq_ordered && masked_or_modified &&
        shared_memory_bytes(three) <= max_shared_memory_for_arch("sm_90a"))
      return "m64n64w8s3ws";
    return "m64n64w8s2ws";
  }
  if (!s.dq_accumulate) return "m64n128w8s2g";
  if (d <= 64) return "m64n128w8s3ws";  // d64: a third stage, H200 noop 368 -> 386 TF/s
  // Head dims 72 to 96 in the fast mode (dQ by turns over 128-column tiles): a third stage, which
  // leaves room for one dQ staging buffer, taken by turns in the tile (the kernel's stage_dq).
  // H200, three rounds against two stages (notes/perf.md "(zzn)", zzn5): noop d80 1.067x, causal
  // d72 1.050x, noop d96 1.046x, ViT-H d80 S=257 1.043x, causal d80 1.028x, causal d96, GQA 4:1
  // and Phi-3 1.00x. With per-sequence lengths (ragged B=16, 256 to 4096 tokens; "(zzo)", zzo2
  // and zzo4) three stages win where every tile is walked, no mask and no tables (noop d72
  // 1.058x, d80 1.049-1.053x, d96 1.028x), and lose a little under causal's tables (d72 0.993x,
  // d80 0.991-0.997x, d96 0.992x). Above d80 the gain is smaller and the kernel over tables without
  // a mask spilled 48 bytes with three (ptxas, sm_90a, before (zzzv)): two there. (dq_plan's turns
  // on 128-column tiles are the fast mode's, in their tile: not the ordered mode's.)
  KernelSpec three = s;
  three.config = BlockConfig::parse("m64n128w8s3ws");
  const bool ragged_keeps_two = s.seq_lens && (s.has_mask() || s.has_block_mask || s.gemm_head_dim() > 80);
  if (!ragged_keeps_two && dq_plan(three).alternate &&
      shared_memory_bytes(three) <= max_shared_memory_for_arch("sm_90a"))
    return "m64n128w8s3ws";
  return "m64n128w8s2ws";
}

// The wgmmas' widths over a column slice of n columns (the kernel's SliceParts): one, or 64 and 32
// for a half-slab slice of 96.
std::vector<int> slice_parts(int n) { return n == 96 ? std::vector<int>{64, 32} : std::vector<int>{n}; }

std::vector<WgmmaShape> wgmma_shapes(const KernelSpec& s) {
  const int splits = dkdv_splits(s.head_dim, s.head_dim_v);
  std::vector<WgmmaShape> shapes = {{s.config.block_m, false, false}};
  // dV's and dK's GEMMs: with one slice (one CTA over all their columns) over the tensors' own
  // columns rounded to 16 (the template's DV_GEMM, DK_GEMM), else over the slice's parts. (The
  // header keeps one of equal shapes.)
  const auto gemm_parts = [&](int gemm_columns, int tile_columns) {
    return splits == 1 ? std::vector<int>{gemm_columns} : slice_parts(tile_columns / splits);
  };
  for (const int n : gemm_parts(s.gemm_head_dim_v(), s.head_dim_v)) shapes.push_back({n, true, true});
  for (const int n : gemm_parts(s.gemm_head_dim(), s.head_dim)) shapes.push_back({n, true, true});
  // dQ's share; with warpgroup slices of 128 columns or more in two pieces (the kernel's DQ_PIECES),
  // with half-slab slices pieces of 64 and 32 columns.
  if (s.dq_accumulate) {
    const int n = dq_plan(s).n;
    if (half_slab_slices(s)) {
      shapes.push_back({64, false, true, true});
      shapes.push_back({32, false, true, true});
    } else {
      shapes.push_back({warpgroup_slices(s) && n >= 128 ? n / 2 : n, false, true, true});
    }
  }
  if (kv_in_registers(s)) shapes.push_back({s.config.block_m, true, false});  // Sᵀ and dPᵀ with A in registers
  if (warpgroup_slices(s)) {  // the score halves
    shapes.push_back({s.config.block_m / 2, false, false});  // Sᵀ and dPᵀ of half the queries
    // dV's and dK's k-steps over the other warpgroup's half, A from the staged Pᵀ and dSᵀ.
    for (const int n : slice_parts(s.head_dim_v / splits)) shapes.push_back({n, false, true});
    for (const int n : slice_parts(s.head_dim / splits)) shapes.push_back({n, false, true});
  }
  return shapes;
}

}  // namespace

FamilyDescriptor bwd_dkdv_family() {
  FamilyDescriptor f;
  f.family = Family::bwd_dkdv;
  f.name = "bwd_dkdv";
  f.template_name = "attention_bwd_dkdv.cu.j2";
  f.source_name = "attention_bwd_dkdv.cu";
  f.kernel_names = {"flexjit_attention_bwd_dkdv"};
  f.attention = true;
  f.backward = true;
  f.tiled = true;
  f.score_gradient = true;
  f.reports_errors = true;
  f.walks_kv_rows = true;
  f.default_config = default_config;
  f.validate = validate;
  f.shared_memory_bytes = shared_memory_bytes;
  f.threads = threads;
  f.add_constants = add_constants;
  f.geometry = geometry;
  f.describe = describe;
  f.accumulator_registers = accumulator_registers;
  f.curated_configs = curated_configs;
  f.hopper_default = hopper_default;
  f.wgmma_shapes = wgmma_shapes;
  return f;
}

}  // namespace flexjit::codegen::families

namespace flexjit::codegen {

int dkdv_kv_len_multiple(const KernelSpec& spec) {
  return families::warpgroup_slices(spec) ? 2 * spec.config.block_n : spec.config.block_n;
}

bool dkdv_adds_dq_through_tensor_map(const KernelSpec& spec) {
  return spec.dq_accumulate && families::warpgroup_slices(spec);
}

bool dkdv_first_stores(const KernelSpec& spec) {
  // The writer's one share per tile is what a first store needs (DqPlan::parts() == 1); of those
  // kernels, head dim 64 (dQ by turns) and GQA measured slower with first stores under masks
  // (perf.md "(ze)" and "(zf)": 0.91-0.99x at d64, 0.97-0.99x with GQA), so they keep the plain adds,
  // except GQA under a mask without tile bounds (documents), whose walks data thins: there the
  // zeroing pass over every head's sums is a large share of a short backward (H100, (zzzr), every
  // round: documents 4:1 1.071x, 8:1 1.078x, long documents 1.020x; causal 8:1 0.936x, sliding
  // window 8:1 0.996x, ALiBi 4:1 0.996x).
  // (Not with per-sequence lengths: the walks skip the query tiles past each sequence, which
  // would keep their words and their rows of dq_accum unwritten; the accumulator is zeroed.)
  return spec.dq_accumulate && !spec.dq_ordered && !spec.seq_lens && spec.config.warp_specialized &&
         !families::warpgroup_slices(spec) &&
         (spec.has_mask() || spec.has_block_mask) && families::dq_plan(spec).split_columns &&
         (spec.gqa_group == 1 || mask_walks_cut_by_data(spec));
}

bool dkdv_counts_landed_ctas(const KernelSpec& spec) {
  // The single writer's kernels with whole GQA groups: a CTA's shares all pass through warp 1's
  // lane 0, and each kv head's CTAs are the grid's x extent. (Not with per-sequence lengths yet:
  // untimed there.)
  const bool single_writer = spec.dq_accumulate && !spec.dq_ordered && !spec.seq_lens &&
                             spec.config.warp_specialized && !families::warpgroup_slices(spec) &&
                             !dkdv_half_slab_dims(spec.head_dim, spec.head_dim_v) && !dkdv_splits_heads(spec);
  // Only with GQA, and not in the launch groups of 1024 CTAs (documents), as measured (H100,
  // notes/results/2026-12-07-zzzu). GQA: 8:1 causal 1.010x (4/4 rounds), 4:1 causal d64 1.019x,
  // sliding window 1.051x (4/4), 4:1 causal d128 1.029x / 0.999x, 4:1 noop 1.005x. Without GQA,
  // level over the suite (causal d128 0.986x / 1.001x, noop d128 0.984x / 0.995x, sliding window
  // 1.008x / 1.014x), and documents, whose last launch group holds half the pairs, lost every time
  // (0.983x / 0.986x; the conversion's first CTAs poll heads that end last). Why 1:1 gains
  // nothing is not settled (notes/perf.md "(zzzu)").
  return single_writer && spec.gqa_group > 1 && dkdv_launch_group_ctas(spec) != 1024;
}

int ordered_dq_counters_per_tile(int head_dim, int head_dim_v) { return dkdv_splits(head_dim, head_dim_v); }

bool score_gradient_is_constant(const KernelSpec& spec) {
  const Expr g = spec.score_mod.gradient();
  return g.free_variables().empty() && g.buffers_read().empty() && g.params_read().empty();
}

bool dkdv_whole_tiles_without_select(const KernelSpec& spec) {
  return score_gradient_is_constant(spec) && !mask_walks_cut_by_data(spec);
}

bool dkdv_folds_score_gradient(const KernelSpec& spec) {
  if (!spec.config.warp_specialized || spec.score_is_identity() || spec.head_dim <= 64 ||
      families::warpgroup_slices(spec))
    return false;
  return !score_gradient_is_constant(spec);
}

int dkdv_stats_ahead_tiles(const KernelSpec& spec) {
  // Only the fast kernel without per-sequence lengths: in the ordered kernel and with per-sequence
  // lengths the registers of even one pair made ptxas spill more (session (zzzp), at d128; at d64
  // the range tests of other lengths and GQA's walks leave room, session (zzzr)).
  if (!spec.config.warp_specialized || !spec.dq_accumulate || spec.dq_ordered || spec.seq_lens)
    return 0;
  // Head dims up to 64 only: on an H100 (session (zzzr), 3 rounds) the LSE and delta pairs read
  // ahead won at d64 (noop 1.016x, causal 1.020x, every round) but not at d128, where the full
  // form's registers are short (noop 0.970x, sliding window 0.991x, masked rows 1.005-1.012x).
  if (std::max(spec.head_dim, spec.head_dim_v) > 64) return 0;
  // GQA under a mask without tile bounds (documents) at d64: the pairs spilled 12 bytes over
  // lengths the tiles do not divide (session (zzzr)).
  if (spec.gqa_group > 1 && mask_walks_cut_by_data(spec)) return 0;
  // Two pairs of each row: more spilled (causal d128: four 8 bytes, eight 36; session (zzzq)).
  return 2;
}

bool dkdv_reads_stats_pairs(const KernelSpec& spec) {
  if (!spec.config.warp_specialized || spec.dq_ordered) return false;
  if (spec.head_dim <= 64 && spec.head_dim_v <= 64)  // all but the plain kernel
    return spec.has_mask() || spec.has_block_mask || !spec.score_mod.is_identity();
  if (spec.head_dim != 128 || spec.head_dim_v != 128 || spec.score_mod.is_identity() ||
      dkdv_folds_score_gradient(spec))
    return false;
  // A gather over more than one coordinate per score holds its index terms in registers the pair
  // needs too (ptxas: the bias tables' spills rose, 76/100 -> 92/132 bytes).
  for (const std::string& name : spec.score_mod.buffers_read()) {
    const BufferDecl* buffer = spec.declarations.find_buffer(name);
    if (buffer == nullptr || buffer->shape.size() != 1) return false;
  }
  return true;
}

int dkdv_score_diagonal_values(const KernelSpec& spec) {
  // The cached counts first: shared_memory_bytes asks on every launch.
  if (spec.family != Family::bwd_dkdv || !spec.config.warp_specialized || !spec.config.wgmma ||
      spec.score_mod.is_identity())
    return 0;
  constexpr int kMaxValues = 4;
  const int values = spec.score_mod.diagonal_value_count();
  if (values == 0 || values > kMaxValues || spec.score_mod.gradient_has_diagonal_values() ||
      spec.score_mod.diagonal_values_are_kv_affine() || families::warpgroup_slices(spec))
    return 0;
  // Beside one dQ buffer at least: at head dim 128 the kernel then has one instead of two.
  const families::WsLayout l = families::ws_layout(spec);
  const size_t need = l.fixed + l.dq_buffer + families::diagonal_bytes(spec, values);
  return need <= max_shared_memory_for_arch("sm_90a") ? values : 0;
}

namespace {
// Whether each stage's slice of the diagonal table (raw words, or the seed's pairs) fits beside the
// warpgroups' buffers of one value (which a call whose table has errors still uses).
bool diagonal_slices_fit(const KernelSpec& spec, bool seed) {
  const families::WsLayout l = families::ws_layout(spec);
  return l.fixed + families::ws_dq_buffers(spec) * l.dq_buffer + families::diagonal_bytes(spec, 1) +
             families::diagonal_slices_bytes(spec, true, seed) <=
         max_shared_memory_for_arch("sm_90a");
}
}  // namespace

bool dkdv_diagonal_table(const KernelSpec& spec) {
  // One value that reads neither b, q_len nor kv_len (one table row per query head).
  if (dkdv_score_diagonal_values(spec) != 1 || spec.score_mod.diagonal_values_read_batch_or_lengths()) return false;
  return diagonal_slices_fit(spec, false);
}

bool dkdv_diagonal_seed(const KernelSpec& spec) {
  // `score + V` exactly: the recomputed score is then Sᵀ times the scale, nothing per score. The
  // scale's conditions are the forward's bias form's (forward_diagonal_bias_form), so the two
  // read one kind of table: a negative scale is unmeasured here, and a small one would move
  // ordinary values past the float range. Head dim 64 only: there the softmax's issue slots bound
  // the tile and the seed won (T5 1.038, S=512 1.020, per-head tables 1.006-1.011); at 128 the
  // tile waits on its GEMMs, the seed's shared loads stand in front of Sᵀ's issue, and it was
  // level at best (T5 0.976, per-head causal 1.019, GQA 1.001; H100, notes/perf.md "(zzzl)").
  // (The spec's own conditions first: shared_memory_bytes asks on every launch.)
  if (spec.head_dim > 64 || spec.negative_scale || spec.small_scale ||
      !spec.score_mod.diagonal_value_is_added_to_score() || !dkdv_diagonal_table(spec))
    return false;
  return diagonal_slices_fit(spec, true);
}

bool dkdv_splits_heads(const KernelSpec& spec) {
  return spec.family == Family::bwd_dkdv && spec.dkdv_head_splits && spec.config.warp_specialized &&
         spec.dq_accumulate;
}

}  // namespace flexjit::codegen
