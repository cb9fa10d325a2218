#pragma once
// KernelSpec: everything that makes one compiled kernel different from another (family, dtype,
// head dims, tiles, specialisation flags, the user's mods). Rendering a spec gives a jit::Source;
// every field that changes the source is therefore part of the kernel cache key.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "flexjit/attention.hpp"
#include "flexjit/config.hpp"
#include "flexjit/dtype.hpp"
#include "flexjit/expr.hpp"
#include "codegen/wgmma.hpp"
#include "jit/source.hpp"

namespace flexjit::codegen {

// The kernel families. Each has a descriptor (codegen/family.hpp, one file a family under
// families/) that everything else asks; nothing outside the registry switches on this enum.
enum class Family {
  builtin_axpy,  // y = a * x + y: the self-test kernel of the main job and `flexjit emit`
  block_mask,    // mask_mod -> block-sparse tables (classify + compact)
  fwd,           // forward attention
  bwd_preprocess,  // delta = rowsum(O * dO)
  bwd_dq,          // dQ per query tile (kv_* tables)
  bwd_dkdv,        // dK, dV per kv tile (q_* tables), GQA heads summed in registers
  decode,          // split-KV decoding over contiguous or paged KV (partials per split)
  decode_combine,  // merges decode's per-split partials in a fixed order
  bwd_buffer_grad, // learnable-buffer gradients: per-CTA partials -> fp32 gradient (codegen/buffer_grad)
  diagonal_table,  // the score_mod's diagonal values of one call (forward and dK/dV tables)
};

std::string_view family_name(Family family) noexcept;
// Accepts a family's name ("fwd", "bwd_dq", ...); throws UsageError listing them otherwise.
Family parse_family(std::string_view name);

struct KernelSpec {
  Family family = Family::fwd;
  DType dtype = DType::bf16;
  // The head dims of the kernel's tiles: multiples of 64 (wgmma's 128-byte swizzled slabs).
  int head_dim = 128;
  int head_dim_v = 128;
  // The columns Q and K (V, O) have in memory where they are fewer than the tiles' (0: as many):
  // the loads fill the tiles' columns past them with zeros, which add nothing to Q·Kᵀ or P·V, and
  // the stores leave them out. set_head_dims sets both pairs.
  int io_head_dim = 0;
  int io_head_dim_v = 0;
  int gqa_group = 1;  // query heads per kv head
  BlockConfig config;
  int sparse_q_block = 128;
  int sparse_kv_block = 128;
  // Specialisations (compile-time constants of the kernel).
  bool is_divisible = false;       // lengths are multiples of the tiles: no tail predication
  bool has_block_mask = false;     // visit the tiles the kv_* tables list (else every tile)
  bool has_full_blocks = false;    // the tables have full_* lists (mask_mod skipped there)
  bool rows_guaranteed_safe = false;
  bool paged = false;              // decode: K/V come from a page pool through a page table
  bool decode_tile_bounds = false; // decode: the kernel classifies its key tiles by mask_mod's bounds (no classification kernel)
  // decode through TMA ('t' configs) over a paged pool whose pages cut the key tiles: the rows of
  // one TMA box, gcd(page size, block_n) (codegen::paged_decode_box_rows), a power of two from 8
  // below block_n. 0: boxes of whole tiles (contiguous caches, pages of block_n keys or more).
  int decode_box_rows = 0;
  // fwd, warp-specialised, without a block mask: the kernel walks only the key tiles mask_mod's
  // bounds keep for each query tile and evaluates mask_mod only on the ones the bounds cannot tell
  // (a tile the bounds find fully kept skips it), in place of every tile masked.
  bool tile_bounds_walk = false;
  bool buffer_grads = false;       // bwd_dq: also accumulate the learnable buffers' gradients
  bool dq_accumulate = false;      // bwd_dkdv: also dQ = dS K, added in fp32 to p.dq_accum (the fast mode)
  bool dq_ordered = false;         // bwd_dkdv with dq_accumulate: the adds in a fixed order (p.dq_order; the deterministic mode)
  // bwd_dkdv with dq_ordered: the query tiles' chains of turns may be long in short walks (walks the
  // tables cut by data over many kv tiles, descending sums: ordered_long_chains), so the sums take
  // two chains.
  bool dq_long_chains = false;
  // bwd_dkdv, the warp-specialised kernel that sums dQ (dq_accumulate; both modes): its CTAs
  // may split each GQA group's query heads (FlexjitBwdParams::kv_head_splits, the host's choice per
  // call, attention/bwd_head_splits.hpp) and store fp32 partial dK and dV. Other kernels ignore it
  // (codegen::dkdv_splits_heads says where it takes effect).
  bool dkdv_head_splits = false;
  bool seq_lens = false;           // fwd, bwd_dq, bwd_dkdv, block_mask: per-sequence lengths (a FlexjitSeqLens parameter)
  // Every buffer the call passes is non-empty and all its in-bounds offsets fit 31 bits
  // (codegen::buffer_offsets_fit_32_bits): the mods' reads index in 32 bits (flexjit_read_32).
  bool buffer_offsets_32 = false;
  // The family's lean form (FamilyDescriptor::has_lean_form): fewer values live at once, for mods
  // beside which the full form spills. compile_kernel sets it, from ptxas's report.
  bool lean_registers = false;
  Declarations declarations;
  Expr score_mod = Expr::identity_score();
  Expr mask_mod = Expr::no_mask();

  bool has_mask() const { return !mask_mod.is_always_true(); }
  // The tensors' head dims `d` and `dv` (any multiple of 8 up to 256), and the tiles' the family
  // (set first) takes on `arch` (tile_head_dims).
  void set_head_dims(int d, int dv, const std::string& arch = "");
  // The columns Q and K (V and O) have in memory.
  int memory_head_dim() const { return io_head_dim != 0 ? io_head_dim : head_dim; }
  int memory_head_dim_v() const { return io_head_dim_v != 0 ? io_head_dim_v : head_dim_v; }
  // Those columns to the next 16 (a wgmma k-step, and a pair of 8-column accumulator tiles): the
  // width the GEMMs over a head dim take (the templates' D_REDUCE and DV_REDUCE).
  int gemm_head_dim() const { return (memory_head_dim() + 15) / 16 * 16; }
  int gemm_head_dim_v() const { return (memory_head_dim_v() + 15) / 16 * 16; }
  // The call's scale is negative (fwd, decode; bwd_dkdv for a `score + V` score_mod, whose seeded
  // Sᵀ takes the forward's conditions: dkdv_diagonal_seed). The identity score_mod then does not
  // fold the scale into the exp2 argument: that fold keeps the row maximum of the raw Q.K, which is
  // the minimum of the scaled scores when the scale is negative. Such calls take the general score
  // path.
  bool negative_scale = false;
  // The call's scale is positive and below kSmallScale (fwd; bwd_dkdv as negative_scale). The
  // forward's bias form (forward_diagonal_bias_form) and the seeded dK/dV kernel hold diagonal
  // values divided by the scale in fp32, where values of ordinary size would then pass the float
  // range; such calls add them per score.
  bool small_scale = false;
  static constexpr float kSmallScale = 0x1p-20f;
  // Scores stay raw Q.K until the exp2 (SCORE_IS_IDENTITY): the identity score_mod at a positive scale.
  bool score_is_identity() const { return score_mod.is_identity() && !negative_scale; }
  // Throws UsageError naming the first field that is out of range, and what is accepted.
  void validate() const;
  // Dynamic shared memory the kernel needs, in bytes.
  size_t shared_memory_bytes() const;
  // Threads per CTA.
  int threads() const;
  // One line naming the family and every specialisation, for generated-source headers and logs.
  std::string describe() const;
};

// The head dim of the tiles for tensors of `dim` columns: the next multiple of 64 (a dim outside
// 1 .. 256 is returned as it is, for validate to name).
int tile_head_dim(int dim);

// The tiles' head dims of `family`'s kernels on `arch` for tensors of head dims d and dv:
// tile_head_dim's, except that the backward kernels on sm_90a take 256 for 192, and 128 for 64
// beside 256. Above 128 columns the fast dK/dV kernel gives each of two consumer warpgroups one
// column slice of dK and of dV: the dQ kernel, the synchronous kernels and the sums' rows need
// slices of whole 64-column slabs (before session (zv) a 192's backward ran the dQ kernel's way at
// half the speed, notes/perf.md "(zv)"; causal 192/64: see "(zw)"). Every backward kernel of a
// call takes the same tiles (the dQ sums' rows), except the warp-specialised dK/dV kernel, which
// has its own 192-column tiles (set_dkdv_half_slab_tiles).
std::pair<int, int> tile_head_dims(Family family, int d, int dv, const std::string& arch);

// The warp-specialised dK/dV kernel of the fast and ordered modes on sm_90a takes 192-column tiles
// where tile_head_dims gives the call 256 for a head dim of 129 to 192 (beside a dv of 65 to
// 192): each consumer warpgroup's slice is 96 columns (half-slab slices, attention_bwd_dkdv_ws.cu.j2),
// so its dK and dQ GEMMs run over no zero columns. The call's other backward kernels, and the dQ
// sums' rows that kernel adds into, keep tile_head_dims' 256 columns; so does the ordered form
// without a mask or a score_mod, which measured slower on them. Sets `spec`'s head dims to those
// tiles where `spec` (family, dq_accumulate, dq_ordered, config, mods and has_block_mask set) is
// that kernel for tensors of head dims d and dv on `arch`; leaves them as they are otherwise.
void set_dkdv_half_slab_tiles(KernelSpec& spec, int d, int dv, const std::string& arch);

// Column slices the dK/dV kernel splits its accumulators into so they fit in registers.
int dkdv_splits(int head_dim, int head_dim_v);

// Tiles' head dims whose two column slices the warp-specialised dK/dV kernel runs as half-slab
// slices (96 columns: set_dkdv_half_slab_tiles): 192 beside a dv of at most 192 that splits in two.
bool dkdv_half_slab_dims(int head_dim, int head_dim_v);

// Whether mask_mod's walks are cut by data rather than by positions: a mask without tile bounds
// (documents: where a walk starts and ends depends on buffer values). The ordered dQ sums' rules
// ask it (ordered_dq_ascending, ordered_long_chains). An AST walk: for building specs, not per
// launch.
inline bool mask_walks_cut_by_data(const KernelSpec& s) { return s.has_mask() && !s.mask_mod.has_tile_bounds(); }

// Whether the warp-specialised forward may walk by `mask`'s tile bounds instead of block-sparse
// tables (KernelSpec::tile_bounds_walk): the mask has bounds. Its warps class tiles alone there, so
// a mask's column values (`kv_idx < len[b]`: bounds, and a kv_idx-only part reading a buffer) are
// not staged under that walk (forward_mask_column_values): each score evaluates the mask. (Until
// session (zzzo) such a call without a block mask failed to compile: "the tile-bounds walk classes
// tiles per warp"; (zzzo) first kept the tables' walk for them.) An AST walk: for building specs,
// not per launch.
inline bool forward_walks_by_bounds(const Expr& mask) { return mask.has_tile_bounds(); }

// The warp-specialised dK/dV kernel's launch groups (LAUNCH_GROUP_CTAS): 0 without a mask (the
// plain order, kv tile fastest, keeps the co-resident CTAs adding into a few heads' dQ); under a
// mask, groups of (kv head, batch) pairs of about this many CTAs, heaviest kv tiles first within
// each (the causal model: kv tile n walks the query tiles from its diagonal on). 128, about one
// wave, where that model holds; 1024 in the fast mode where data at the query positions cuts the
// walks (mask_walks_cut_by_data and a buffer read at q_idx: documents), whose heavy tiles (a long
// document's first) sit anywhere in the kv order, and the tables say where they are (without
// tables every walk is whole). With groups of one wave the last group's heavy tiles start late
// and run alone; eight times as many pairs per group interleave the documents' walks, and walks
// the documents cut keep the co-resident CTAs' dQ rows within their documents, so the L2 reuse
// the small groups buy stays. H200, fast backward, 1024 against 128 CTAs (notes/perf.md "(zzw)",
// zzw1 and zzw2, three rounds each): GQA 4:1 documents 1.207x / 1.181x, long documents 1.098x /
// 1.094x, 12 documents d64 at 8k 1.035x / 1.032x, bidirectional documents 1.022x / 1.026x, the
// suite's documents 1.017x / 1.015x, 4 documents at 8k 1.010x / 1.013x, 40 short documents
// 1.001x / 1.001x, documents within a 512 window 0.991x (zzw2). 4096 lost two of them (0.956x,
// 0.978x). Causal-like masks lose at 1024 (zzv: causal 0.949x, GQA causal 0.950x, ALiBi 0.946x,
// sliding window 0.964x, long causal 0.983x), and so does key padding beside causal
// (`pad[kv_idx] == 0 && q_idx >= kv_idx`, no tile bounds but causal's walks: 0.975x, zzw2),
// hence the read at q_idx. The deterministic mode keeps 128: its chains of ordered sums lost
// 0.879x under 4 documents at 8k with 1024 (and gained 1.08x on long and on bidirectional documents;
// zzw1).
inline int dkdv_launch_group_ctas(const KernelSpec& s) {
  if (!s.has_mask()) return 0;
  return !s.dq_ordered && s.has_block_mask && mask_walks_cut_by_data(s) && s.mask_mod.reads_buffers_at_query_positions()
             ? 1024
             : 128;
}

// Whether the ordered dQ sums of a deterministic dK/dV kernel run from the last kv tile down
// (DQ_ASCENDING) in every pair but those of the last wave: under any mask_mod without GQA, and
// under masks whose walks the data cuts (documents) with GQA at head dims up to 128. Descending,
// the kv tiles of a query tile's chain reach it at the same step of walks that end together, so
// the last of a chain of r waits r turns before its first add, once per walk start. Ascending
// (the walks ascend, the pair's units launch in reverse), walks start at their diagonal and a
// chain is a pipeline, but a pair's heaviest tiles start last: where they drain the grid, the
// tail pays. So the pairs of the last wave (the kernel's ASCENDING_TAIL_CTAS units) keep the
// descending sums and their heavy-first order. With GQA outside documents, or beside head dim
// 256's column slices, a unit walks the group's heads and the tail still loses. H200,
// deterministic backward with tuning off, this rule's kernels against the previous rule's
// (documents without GQA ascending, every pair) (notes/perf.md "(zl)", zl1, two rounds): causal
// d128 1.041x, d64 1.052x, long causal 1.024x, prefix LM 1.021x, sliding window d64 1.024x, d128
// 1.009x; documents with GQA 4:1: nested 1.062x, long 1.035x, d64 1.036x, d128 0.996x, 8:1
// 1.010x; documents without GQA 1.00-1.02x (the tail); causal, ALiBi and soft-capping at d256
// 0.998-1.007x. Left descending: GQA 4:1 causal d128 0.866x and d256 0.897x ascending,
// documents 4:1 d256 0.953x. Ascending every pair, without the descending tail (zk1): causal d128
// 0.982x, d256 0.949x, GQA 4:1 causal 0.74-0.76x.
// Tables alone (a caller's BlockMask::from_tables beside an empty mask_mod) and a mask_mod
// without tables (every kv tile walks every query tile, as without a mask, whose sums zk1 found
// level both ways) keep the descending sums: neither measured nor run on a GPU test ascending.
inline bool ordered_dq_ascending(const KernelSpec& s) {
  if (!s.dq_ordered || !s.has_mask() || !s.has_block_mask) return false;
  const bool slices = dkdv_splits(s.head_dim, s.head_dim_v) > 1;
  return s.gqa_group == 1 || (mask_walks_cut_by_data(s) && !slices);
}

// The ordered dQ sums' chains per query tile of a deterministic dK/dV kernel
// (FlexjitBwdParams::dq_chains): kv tile n adds in chain n % chains, into that chain's copy of the
// fp32 accumulator (the convert kernel adds the copies in chain order), so a query tile's chain of
// turns is shorter. Two where the sums descend (ordered_dq_ascending false) and every kv tile
// walks every query tile (no mask, no GQA), or a query tile's chain is long: long walks the data
// cuts or tables alone (dq_long_chains), head dim 256's 64-key kv tiles; one otherwise, and with
// GQA. Descending, the adders of a query tile reach it at the same step of walks that end together,
// so a chain's last adder waits for all before it; a second chain halves that wait, for a second
// copy's traffic (the adds into two accumulators, the convert kernel reading both). H100 and H200,
// descending sums, one chain against two: GQA 4:1 causal 387 against 340 TF/s (notes/perf.md
// "(l)"); noop 0.97x at d64 and d128 ("(zc)", zc6); causal d256 1.086x, ALiBi d256 1.087x,
// soft-capping d256 1.084x, documents d256 1.019x ("(zj)", zj3); long documents 1.09x ("(zh)",
// zh5). Ascending, a chain is a pipeline (each adder's walk starts a step after its
// predecessor's), so a second chain only adds traffic: H200, one chain against two where the sums
// ascend ("(zm)", zm3, three rounds): causal d256 1.058x, ALiBi d256 1.070x, soft-capping d256
// 1.052x, documents d256 1.059x, long documents d128 1.046x; and four or eight chains lose more
// (zm2: causal d256 0.83x and 0.78x against two). Without a mask two chains stay (one: noop d256
// 0.913x, d128 0.954x, d64 0.947x).
inline int ordered_dq_chains(const KernelSpec& s) {
  const bool unmasked = !s.has_mask() && !s.has_block_mask;
  const bool slices = dkdv_splits(s.head_dim, s.head_dim_v) > 1;
  return s.gqa_group == 1 && !ordered_dq_ascending(s) && (unmasked || s.dq_long_chains || slices) ? 2 : 1;
}

// Whether a deterministic dK/dV kernel of `s` (dq_ordered) for `kv_len` keys takes two chains
// under its mask (KernelSpec::dq_long_chains): walks the data cuts (a mask without tile bounds:
// documents; or tables alone) over at least 64 kv tiles of 128 keys, where the sums descend
// (ordered_dq_ascending false: tables alone, documents with GQA at head dim 256, a mask without
// tables). Descending, the kv tiles that add to a query tile reach it at the same step of walks
// that end together, so the last of a chain of n starts its adds about n turns late and its SM
// waits meanwhile: a lag that long walks (causal) absorb and a long document's short walks do
// not. H200, descending, one chain against two (notes/perf.md "(zh)", zh3): long documents (16k
// keys, documents up to 3999) 298 -> 324 TF/s, documents of 4k keys 252 -> 247, nested documents
// 195 -> 197; masks with tile bounds lose or stay level (sliding window 409 -> 386, long causal
// 506 -> 510). Deciding per query tile by its chain's length (zh4) cost more in the writer warp
// than it saved. Ascending sums keep one chain (ordered_dq_chains; zm3: long documents 1.046x).
bool ordered_long_chains(const KernelSpec& s, int kv_len);

// True for the families of the attention forward and backward passes (tiles, dtype, mods).
bool is_attention_family(Family family);

// Default tiles for a family / head dim when neither the caller nor the autotuner chose.
BlockConfig default_config(Family family, int head_dim, int head_dim_v);

// Names of the kernels a family's source defines.
std::string kernel_name(Family family, int index = 0);

// The one builder of an attention kernel's spec: family, dtype, head dims, declarations, mods and
// rows_guaranteed_safe from the variant, the family's default config. Call-dependent fields
// (gqa_group, block-mask flags, is_divisible, a chosen config) are the caller's to set.
// `arch`: the tiles' head dims (tile_head_dims).
KernelSpec attention_kernel_spec(Family family, const AttentionSpec& spec, const Expr& score, const Expr& mask,
                                 const std::string& arch);

// The block-mask builder's spec for `mask` and block sizes (with `seq_lens`: per-sequence lengths).
KernelSpec block_mask_kernel_spec(const Expr& mask, int q_block, int kv_block, bool seq_lens = false);

// The diagonal_table kernel's spec for a forward or dK/dV spec that takes the table form
// (forward_diagonal_table, dkdv_diagonal_table): its mods, declarations and buffer offsets, so
// that its FlexjitModArgs is the reader's and the call's packed arguments serve both.
KernelSpec diagonal_table_kernel_spec(const KernelSpec& reader);

// The template context (for tests and `flexjit emit --format context`).
nlohmann::json template_context(const KernelSpec& spec);

// The per-variant header: FlexjitModArgs and the emitted mod functions.
std::string variant_header(const KernelSpec& spec);

// The warpgroup MMA shapes (N, A from registers, B transposed) a wgmma config of the spec uses.
std::vector<WgmmaShape> wgmma_shapes(const KernelSpec& spec);

// Renders the spec into a compilable source with its headers (validates first).
jit::Source render(const KernelSpec& spec);

// The source with its in-memory headers inlined where they are included, so `nvcc` can compile
// the file on its own (what `flexjit emit --format cu` writes).
std::string self_contained_source(const jit::Source& source);

// Largest dynamic shared memory a CTA may use on `arch` ("sm_80", "sm_90a", ...), in bytes.
size_t max_shared_memory_for_arch(const std::string& arch);

// Throws UsageError when the spec needs more shared memory than `arch` offers per block.
void check_shared_memory(const KernelSpec& spec, const std::string& arch);

}  // namespace flexjit::codegen
