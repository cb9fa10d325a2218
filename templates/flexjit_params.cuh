// Kernel parameter blocks shared by the host (C++17) and the device (NVRTC): one definition, so the
// byte layouts cannot drift apart. Plain C types only; pointers are untyped on this side.
#pragma once

// log2(e) and ln(2) as fp32: the host folds scale * log2(e) into scale_log2, the kernels scale
// score_mod's results into base 2 and the base-2 LSE back to natural log. One definition each.
constexpr float FLEXJIT_LOG2E = 1.4426950408889634f;
constexpr float FLEXJIT_LN2 = 0.6931471805599453f;

// Block-sparse tables (BlockMask) as a kernel sees them. Row r of a table is
// (b * stride_b + h * stride_h + block); a stride is 0 where the mask broadcasts over b or h.
struct FlexjitBlockTables {
  const int* num_blocks;       // [rows]: partial blocks listed for this row
  const int* indices;          // [rows][max_blocks]
  const int* full_num_blocks;  // [rows]: full blocks (mask_mod skipped); may be null
  const int* full_indices;     // [rows][max_blocks]
  long long stride_b;
  long long stride_h;
  int max_blocks;              // row length of the index tables
};

// Per-sequence lengths of a forward or backward call (kernels built with SEQ_LENS), passed as a
// kernel parameter of its own so that kernels without them keep their parameter blocks. Sequence b
// has q_lens[b] query rows and kv_lens[b] keys of the padded q_len / kv_len in the parameter block;
// a null array means every sequence has the padded length.
struct FlexjitSeqLens {
  const int* q_lens;   // [B] or null
  const int* kv_lens;  // [B] or null
};

// The score_mod's diagonal values of one call, written by the diagonal_table kernel ahead of the
// kernel that reads them (codegen::forward_diagonal_table, dkdv_diagonal_table: V reading neither
// b, q_len nor kv_len). Row h (a query head) holds `row` entries; entry i is diagonal
// d = kv_idx - q_idx = i - origin, 0 off the call's diagonals. The forward's are 8-byte pairs
// (V(d), V(d + 1)) times its 1 / (score_scale log2 e) (the accumulators' units), as are the dK/dV
// kernel's where they seed Sᵀ (dkdv_diagonal_seed); its others are V(d)'s bits as the score_mod
// reads them (`raw`). 16-byte aligned rows: the kernels' producers copy a tile's slice in one
// bulk copy.
struct FlexjitDiagonalTable {
  const void* entries;      // [heads][row]
  const unsigned* errors;   // [heads][row]: the error bits of V(d) (out-of-bounds buffer reads)
  // One word: the OR of every entry of `errors`, and FLEXJIT_DIAGONAL_TABLE_HELD where a pair
  // holds a value at 2^126 (the readers then take their exact path).
  const unsigned* any_error;
  int origin;
  int row;
};

// The diagonal_table kernel's parameters: the table above, written.
// Not an error: a pair of the table holds a finite value at 2^126 of its sign, its product with
// 1 / (score_scale log2 e) being beyond (the diagonal_table kernel). The dK/dV kernel then
// computes its values as without the table, so that its probabilities are the exact ones.
#define FLEXJIT_DIAGONAL_TABLE_HELD 0x80000000u

struct FlexjitDiagonalTableParams {
  void* entries;
  unsigned* errors;
  unsigned* any_error;  // zeroed by the host before the launch
  int heads;
  int q_len;
  int kv_len;
  int origin;
  int row;
  float to_accumulator;  // 1 / (score_scale log2 e); the pairs' only
  int raw;  // 1: 4-byte words of V's bits (the dK/dV kernel's); 0: the forward's pairs
};

// Forward attention: O = softmax(score_mod(scale * Q K^T) masked) V, LSE per row.
struct FlexjitFwdParams {
  const void* q;  // [B, Hq, Sq, D]   (strides in elements; last dimension contiguous)
  const void* k;  // [B, Hkv, Skv, D]
  const void* v;  // [B, Hkv, Skv, Dv]
  void* o;        // [B, Hq, Sq, Dv]
  float* lse;     // [B, Hq, Sq] natural-log log-sum-exp, -inf for fully masked rows; may be null
  long long q_stride_b, q_stride_h, q_stride_s;
  long long k_stride_b, k_stride_h, k_stride_s;
  long long v_stride_b, v_stride_h, v_stride_s;
  long long o_stride_b, o_stride_h, o_stride_s;
  long long lse_stride_b, lse_stride_h, lse_stride_s;
  FlexjitBlockTables kv;  // kv_* tables, used when the kernel is built with HAS_BLOCK_MASK
  int batch;
  int num_q_heads;
  int q_len;
  int kv_len;
  int num_q_tiles;
  float scale;       // multiplies Q.K^T before score_mod
  float scale_log2;  // scale * log2(e), used when score_mod is the identity
  // scale * the score_mod's prescale (Expr::score_prescale): what flexjit_score_mod_log2 and
  // flexjit_score_grad take, so that the product is a kernel parameter, not a register.
  float score_scale;
  // Warp-specialised (persistent) kernel: the next work tile's ticket, zeroed for each call; null
  // when the grid has a CTA per work tile.
  unsigned* tile_counter;
  // Warp-specialised kernel: (batch, query head) pairs per section of its walk, at least 1
  // (codegen::forward_tile_section).
  int tile_section;
  // Warp-specialised kernel with SCORE_DIAGONAL_TABLE: the score_mod's diagonal values as the
  // diagonal_table kernel wrote them for this call (FlexjitDiagonalTableParams); zeros otherwise.
  FlexjitDiagonalTable diagonals;
};

// A TMA tensor map (the driver's CUtensorMap, encoded on the host by cuTensorMapEncodeTiled):
// 128 opaque bytes, 64-byte aligned.
struct alignas(64) FlexjitTensorMap {
  unsigned long long opaque[16];
};

// The warp-specialised forward's tensor maps, passed as one __grid_constant__ parameter. Each is
// 4-D (D, S, H, B), innermost first, with a box of 64 columns (128 bytes, 128-byte swizzle) by
// the kernel's tile rows.
struct FlexjitFwdTma {
  FlexjitTensorMap q;  // box 64 x BLOCK_M
  FlexjitTensorMap k;  // box 64 x BLOCK_N
  FlexjitTensorMap v;  // box 64 x BLOCK_N
  FlexjitTensorMap o;  // box 64 x 64 (one consumer warpgroup's rows), stored to
};

// The warp-specialised dK/dV kernel's tensor maps (the fast backward), laid out as the forward's.
struct FlexjitBwdTma {
  FlexjitTensorMap q;     // box 64 x BLOCK_M
  FlexjitTensorMap k;     // box 64 x BLOCK_N
  FlexjitTensorMap v;     // box 64 x BLOCK_N
  FlexjitTensorMap dout;  // box 64 x BLOCK_M
  FlexjitTensorMap dq;    // the fp32 dQ accumulator [B, H, Sq, D], box 64 x 64 (above head dim 128 only)
};

// Where column `col` of row `row` of the fast backward's dQ accumulator lives in that row. The
// warp-specialised dK/dV kernel stages a query tile's dQ rows in shared memory in exactly this
// layout and adds the whole tile with one bulk reduction, each warp storing 8-byte pairs (row g,
// columns 8j + 2t) of rows g = 0..7. Head dims that are multiples of 64 XOR the row's 32-byte
// (8-column) chunk index with row % 4: a half-warp's sixteen stores (rows g..g+3) fall on sixteen
// different bank pairs, and chunk j of a thread's row lies at (j & ~3) + ((j & 3) ^ row % 4), the
// same in rows g and g + 8, so each store is one address XOR-ed with 32 (j % 4) bytes plus an
// immediate offset. (XOR-ing with row % 8, the form before (zzzv), gave each store its own offset,
// and ptxas kept sixteen live; XOR-ing 16-byte chunks left two half-warp stores on each pair: ncu
// counted 2-way conflicts on every staging store at d64, notes/perf.md, "(p)".) Other multiples of
// 32 XOR 16-byte chunks within 32-column groups. Pairs of columns (2i, 2i + 1) and aligned
// 4-column chunks stay together.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__host__ __device__
#endif
constexpr int flexjit_dq_accum_column(int row, int col, int head_dim) {
  return head_dim % 64 == 0 ? col ^ ((row & 3) << 3) : head_dim % 32 == 0 ? col ^ ((row & 7) << 2) : col;
}

// Block-mask builder. Tables are laid out [table_batch * table_heads][rows][row length], int32.
struct FlexjitBlockMaskParams {
  unsigned char* classes;  // [bh][num_q_blocks][num_kv_blocks]: 0 empty, 1 partial, 2 full
  int* kv_num_blocks;      // [bh][num_q_blocks]
  int* kv_indices;         // [bh][num_q_blocks][num_kv_blocks]
  int* full_kv_num_blocks;
  int* full_kv_indices;
  int* q_num_blocks;       // [bh][num_kv_blocks]
  int* q_indices;          // [bh][num_kv_blocks][num_q_blocks]
  int* full_q_num_blocks;
  int* full_q_indices;
  int table_batch;  // B, or 1 when mask_mod ignores b
  int table_heads;  // Hq, or 1 when mask_mod ignores h
  int q_len;
  int kv_len;
  int num_q_blocks;
  int num_kv_blocks;
};

// Backward attention (preprocess, dQ and dK/dV kernels share one parameter block).
struct FlexjitBwdParams {
  const void* q;     // [B, Hq, Sq, D]
  const void* k;     // [B, Hkv, Skv, D]
  const void* v;     // [B, Hkv, Skv, Dv]
  const void* o;     // [B, Hq, Sq, Dv]  forward output
  const void* dout;  // [B, Hq, Sq, Dv]  gradient of the output
  const float* lse;  // [B, Hq, Sq]      forward log-sum-exp (natural log)
  float* delta;      // [B, Hq, Sq]      rowsum(O * dO), contiguous; written by the preprocess kernel
  void* dq;          // [B, Hq, Sq, D]
  void* dk;          // [B, Hkv, Skv, D]
  void* dv;          // [B, Hkv, Skv, Dv]
  float* dq_accum;   // [B, Hq, Sq, D] fp32, contiguous, zeroed: the fast mode's dQ / scale, summed by the dK/dV
                     // kernel; columns permuted within each row (flexjit_dq_accum_column)
  long long q_stride_b, q_stride_h, q_stride_s;
  long long k_stride_b, k_stride_h, k_stride_s;
  long long v_stride_b, v_stride_h, v_stride_s;
  long long o_stride_b, o_stride_h, o_stride_s;
  long long do_stride_b, do_stride_h, do_stride_s;
  long long lse_stride_b, lse_stride_h, lse_stride_s;
  long long dq_stride_b, dq_stride_h, dq_stride_s;
  long long dk_stride_b, dk_stride_h, dk_stride_s;
  long long dv_stride_b, dv_stride_h, dv_stride_s;
  FlexjitBlockTables kv;  // kv_* tables (rows: query blocks), for the dQ kernel
  FlexjitBlockTables qt;  // q_* tables (rows: kv blocks), for the dK/dV kernel
  int batch;
  int num_q_heads;
  int num_kv_heads;
  int q_len;
  int kv_len;
  int num_q_tiles;
  int num_kv_tiles;
  float scale;
  float scale_log2;
  float score_scale;  // scale * the score_mod's prescale, as in FlexjitFwdParams
  // The warp-specialised dK/dV kernel's row statistics, [B, Hq, 2, row_stats_len] fp32: per row
  // the LSE in base 2 (+inf for a row with no key, so its probabilities are 0) and delta, rows
  // padded to whole 64-row tiles (padding: +inf and 0), so that a tile's rows are one aligned
  // bulk copy. Written by the preprocess kernel when not null.
  float* row_stats;
  int row_stats_len;
  // The deterministic mode's ordered dQ sums (KernelSpec::dq_ordered): the kv tiles that add to a
  // query tile form dq_chains chains (kv tile % dq_chains; 0 means 1), each adding into its own
  // copy of dq_accum ([dq_chains][B, Hq, Sq, D]; the convert kernel sums the copies in order).
  // One counter per 64-row query tile and chain, [B, Hq, row_stats_len / 64, dq_chains] int32,
  // zero before the launch and zero again after it; a kv tile adds its share of a query tile's
  // dQ when its chain's counter equals the number of kv tiles of the chain below it that add to
  // that query tile.
  // The counters ([B, Hq, row_stats_len / 64, dq_chains, column slices]: see
  // flexjit_dq_order_counters) are followed by as many written words: a chain's first adder
  // (rank 0) stores its share instead of adding it, so dq_accum is not zeroed in this mode, and
  // sets its word once the store is complete; the convert kernel reads a chain's copy of a tile
  // only where the word is set (a tile no kv tile reaches gets dQ = 0). Both zeroed by the host.
  int* dq_order;
  int dq_chains;
  // The fast mode's first stores (never with dq_order): one word per 64-row query tile,
  // [B, Hq, row_stats_len / 64] int32, zero before the launch. The first writer to reach a tile
  // claims it (0 -> 1), stores its share instead of adding it and sets 2 once the store is
  // complete; later writers wait for 2, then add. So dq_accum is not zeroed, and the convert
  // kernel writes 0 where a word is still 0 (no kv tile reached the tile). Null: dq_accum zeroed,
  // every share added. Set only for a kernel that takes it (codegen::dkdv_first_stores: the
  // warp-specialised kernel at head dim 128 under a mask, without GQA).
  int* dq_first;
  // The fast mode's early conversion: one counter per (batch, kv head), [B, Hkv] int32, zero
  // before the launch. Each CTA of the dK/dV kernel adds 1 once its writer's last bulk operation
  // is complete, so the counter reaches dq_done_expected (the grid's kv tiles) when every dQ share
  // of the kv head's query heads has landed. The convert kernel, the dK/dV kernel's programmatic
  // dependent, converts a query head's rows from then on instead of waiting for the whole grid:
  // its CTAs fill the SMs that the dK/dV kernel's last wave leaves idle. Null: the convert waits
  // for the grid. Set only for a kernel that counts (codegen::dkdv_counts_landed_ctas: with GQA).
  int* dq_done;
  int dq_done_expected;
  // The query heads of a GQA group split over kv_head_splits CTAs per (kv tile, kv head)
  // (attention::choose_bwd_head_splits; 0 or 1: one CTA walks the whole group). The grid's kv heads
  // are then Hkv * kv_head_splits: CTA head v, split s = v % kv_head_splits, walks query heads
  // s * group / kv_head_splits .. (s + 1) * group / kv_head_splits - 1 of kv head v / kv_head_splits
  // (any count from 1 to the group), and stores its dK (times scale) and dV in fp32
  // into dkdv_partial, [B, Hkv * kv_head_splits, kv_len, D_IO] then [B, Hkv * kv_head_splits,
  // kv_len, DV_IO], every row below kv_len (the padded one with lengths); the preprocess family's
  // third kernel sums each kv head's splits in order into dK and dV.
  float* dkdv_partial;
  int kv_head_splits;
  // The warp-specialised dK/dV kernel with SCORE_DIAGONAL_TABLE: the score_mod's diagonal values
  // as the diagonal_table kernel wrote them for this call (raw words); zeros otherwise.
  FlexjitDiagonalTable diagonals;
};

// The first query head (within its GQA group of `group`) of split `split` of `splits`
// (FlexjitBwdParams::kv_head_splits): split s walks heads flexjit_first_split_head(group, splits, s)
// .. flexjit_first_split_head(group, splits, s + 1) - 1, so a count that does not divide the group
// gives splits one head apart (7 in 3: 2, 2, 3). The kernel and the host's grid model share it.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__host__ __device__
#endif
inline int flexjit_first_split_head(int group, int splits, int split) {
  return split * group / splits;
}

// The fast mode's first-store word of the 64-row query tile holding `row` (FlexjitBwdParams::dq_first).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__host__ __device__
#endif
inline long long flexjit_dq_first_word(const FlexjitBwdParams& p, int b, int h, long long row) {
  return (static_cast<long long>(b) * p.num_q_heads + h) * (p.row_stats_len / 64) + row / 64;
}

// The deterministic mode's turn counters (FlexjitBwdParams::dq_order): one per 64-row query tile,
// chain and column slice of the dK/dV kernel (`splits`); its written words follow them.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__host__ __device__
#endif
inline long long flexjit_dq_order_counters(const FlexjitBwdParams& p, int splits) {
  return static_cast<long long>(p.dq_chains > 1 ? p.dq_chains : 1) * splits * p.batch * p.num_q_heads *
         (p.row_stats_len / 64);
}

// Where the turn counter of (b, h, the 64-row query tile holding `row`, chain, column slice) sits in
// FlexjitBwdParams::dq_order, for `chains` chains and `splits` column slices; the tile's written
// word is flexjit_dq_order_counters(p, splits) further on. (`row` keeps the caller's integer type,
// so the division is the one each kernel did before.)
template <typename Row>
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__host__ __device__
#endif
inline long long flexjit_dq_order_index(const FlexjitBwdParams& p, int chains, int splits, int b, int h, Row row,
                                        int chain, int slice) {
  return (((static_cast<long long>(b) * p.num_q_heads + h) * (p.row_stats_len / 64) + row / 64) * chains + chain) *
             splits +
         slice;
}

// Split-KV decoding over a contiguous or paged KV cache with per-sequence lengths. The query rows
// of the heads that share a kv head are packed into one tile (packed row P <-> q_idx = P / G,
// h = kv_h * G + P % G). Each split of a sequence's KV range writes a partial (O, LSE) in fp32,
// or, when the call has one split, the final O and LSE directly.
struct FlexjitDecodeParams {
  const void* q;            // [B, Hq, Sq, D]
  const void* k;            // contiguous: [B, Hkv, S, D]; paged: [num_pages, page_size, Hkv, D]
  const void* v;            // as k, with Dv
  const int* page_table;    // paged: [B, max_pages] physical page of each logical page; else null
  const int* seq_lens;      // [B] kv length of each sequence
  void* o;                  // [B, Hq, Sq, Dv]   written when num_splits == 1
  float* lse;               // [B, Hq, Sq] natural log; may be null; written when num_splits == 1
  float* o_partial;         // [num_splits][B][Hq][Sq][Dv] fp32, normalised per split
  float* lse_partial;       // [num_splits][B][Hq][Sq] base-2 log-sum-exp per split (-inf: empty)
  long long q_stride_b, q_stride_h, q_stride_s;
  // Contiguous: batch, head and token strides. Paged: page, head and slot strides.
  long long k_stride_b, k_stride_h, k_stride_s;
  long long v_stride_b, v_stride_h, v_stride_s;
  long long o_stride_b, o_stride_h, o_stride_s;
  long long lse_stride_b, lse_stride_h, lse_stride_s;
  long long page_table_stride_b;
  int batch;
  int num_q_heads;
  int num_kv_heads;
  int q_len;             // Sq, the same for every sequence
  int kv_capacity;       // keys a sequence can hold: S (contiguous) or max_pages * page_size
  int page_size;         // paged only
  int page_shift;        // log2(page_size) when it is a power of two, else -1
  int num_pages;         // paged only: size of the pool
  int num_splits;        // gridDim.y
  int tiles_per_split;   // BLOCK_N tiles of a sequence each split walks (without a mask_mod)
  float scale;
  float scale_log2;
  float score_scale;     // scale * the score_mod's prescale, as in FlexjitFwdParams
  // With a mask_mod: the classification kernel's lists of kept tiles, one per (b, list head,
  // packed-row tile) unit. A unit's T = ceil(kv_len / BLOCK_N) tiles are classified in
  // classify_parts parts of pt = ceil(T / parts) tiles (part j by its own CTA): part j's kept
  // tiles are tile_list[unit * tile_list_stride + j * pt + i] = (tile << 1) | partial, with
  // tile_count[unit * classify_parts + j] entries. list_heads is Hkv when mask_mod reads h, else
  // 1 (shared by the heads).
  int* tile_list;
  int* tile_count;
  long long tile_list_stride;
  int list_heads;
  int classify_parts;       // 1 to 8
  int min_tiles_per_split;  // the splits divide the kept tiles, at least this many each
  // Without a mask_mod: splits from big_splits on walk tail_tiles_per_split tiles (a ragged tail).
  int big_splits;
  int tail_tiles_per_split;
};

// The TMA decode's tensor maps, one __grid_constant__ parameter. Where the tensor's rows are whole
// 64-column slabs a map is 5-D, innermost first (64 columns, page slot, slab, kv head, page) for a
// paged pool and (64 columns, S, slab, kv head, B) for a contiguous cache, with a box of every slab
// of KV_BOX_ROWS rows; else 4-D, (D, page slot or S, kv head, page or B), a box of one slab (64
// columns: 128 bytes, the 128-byte swizzle) by KV_BOX_ROWS rows.
struct FlexjitDecodeTma {
  FlexjitTensorMap k;
  FlexjitTensorMap v;
};

// Merges the per-split partials of decoding, split by split in index order (deterministic).
struct FlexjitDecodeCombineParams {
  const float* o_partial;    // [num_splits][rows][Dv]
  const float* lse_partial;  // [num_splits][rows]
  void* o;                   // [B, Hq, Sq, Dv]
  float* lse;                // [B, Hq, Sq] or null
  long long o_stride_b, o_stride_h, o_stride_s;
  long long lse_stride_b, lse_stride_h, lse_stride_s;
  int batch;
  int num_q_heads;
  int q_len;
  int num_splits;
};
