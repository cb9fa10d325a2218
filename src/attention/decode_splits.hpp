#pragma once
// How decoding splits each sequence's keys over the GPU (host side, no GPU needed: tested on the CPU).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace flexjit::attention {

struct DecodeSplit {
  int tiles_per_split = 1;  // key tiles each CTA walks
  int num_splits = 1;       // CTAs per (sequence, kv head, row tile): gridDim.y
  // Ragged tail: splits from big_splits on walk tail_tiles_per_split tiles each (fewer), so the
  // CTAs the GPU starts last (the long sequences' ends; CTAs start in split order) are short and
  // the last wave leaves little idle. big_splits >= num_splits: every split is tiles_per_split.
  int big_splits = 1;
  int tail_tiles_per_split = 1;
};

// Knobs of the ragged plan (defaults measured on an H100; FLEXJIT_DECODE_CTAS_PER_SLOT and
// FLEXJIT_DECODE_TAIL_DIV override them for measurements).
struct DecodeSplitTuning {
  int ctas_per_slot = 8;  // ragged: CTAs per slot the work is cut into
  int tail_div = 1;       // ragged: tail CTAs walk tiles_per_split / tail_div tiles (1: no tail)
  int forced_splits = 0;  // > 0: exactly this many splits (up to the tiles), FLEXJIT_DECODE_SPLITS
};

// `units`: (sequence, kv head, packed-row tile) triples; `slots`: CTAs the GPU runs at once (SMs x
// CTAs per SM); `cover`: the CTAs that must run at once to keep memory busy (the SM count for a
// contiguous cache, `slots` for a paged one); `max_tiles`: key tiles of the longest sequence;
// `seq_tiles`: key tiles of each sequence when the host knows the lengths (empty otherwise). Equal
// lengths: the fewest splits whose CTAs keep 90 % of `cover` busy over their rounds (else the best
// found), counted after the tiles are dealt out whole (64 tiles cannot make 15 equal splits). More
// splits than that buy nothing: each re-reads Q, writes a partial and lengthens the combine (H100,
// B=16 Hkv=8 contiguous: one split of 512 tiles beat two by 2-3 %, notes/perf.md).
// Ragged lengths: a fixed number of tiles per CTA, small enough for several CTAs per slot, so the
// long sequences spread over the GPU while short ones finish early. With a mask_mod the kernel
// divides each unit's *kept* tiles over these splits (the classification kernel's list), so the
// count from the full lengths is an upper bound on the useful splits; tiles_per_split is unused.
// The ragged tail starts at the first split from which the remaining work (tiles at or past
// big_splits x tiles_per_split, over all units) is at most one wave of big CTAs (slots x
// tiles_per_split tiles).
// `one_split_tiles`: equal lengths of up to this many key tiles stay in one split, which needs no
// combine, wherever that split alone keeps 45 % of `cover` busy (0: never; see
// one_split_tile_limit and decode_splits.cpp).
DecodeSplit choose_decode_split(int64_t units, int max_tiles, const std::vector<int>& seq_tiles, int64_t slots,
                                int64_t cover, const DecodeSplitTuning& tuning = {}, int one_split_tiles = 0);

// choose_decode_split's `one_split_tiles` for a cache read through TMA in boxes of `box_rows` keys
// (a paged cache: one box per page or per part of a page inside a tile): how many key tiles one
// CTA alone streams in less time than the splits that fill the GPU take with their combine.
// Boxes of 64 rows or more: 32 tiles; boxes of 32: 16; smaller boxes (and cp.async tiles, 0
// rows): none, their CTAs stream slowly alone.
int one_split_tile_limit(int box_rows);

// The workspace of the mask classification: one list of kept tiles per (sequence, list head,
// packed-row tile). The list heads are the kv heads when mask_mod reads h and 1 otherwise (the
// heads of a sequence then keep the same tiles). Each list has room for every tile of the cache's
// capacity (so a length the host does not know can never overflow it). With fewer lists than
// SMs, each list's tiles are classified in parts (one CTA each, at most `max_parts`, so that
// about one CTA per SM runs), each with its own count.
struct DecodeTileLists {
  int list_heads = 1;
  int parts = 1;       // CTAs per list
  int64_t stride = 0;  // entries per list: ceil(capacity / block_n)
  int64_t units = 0;   // lists
  size_t bytes = 0;    // counts (int32 per list and part) followed by the lists (int32 entries)
};
DecodeTileLists plan_decode_tile_lists(int batch, int kv_heads, int row_tiles, bool mask_reads_h, int64_t capacity,
                                       int block_n, int sm_count, int max_parts);

}  // namespace flexjit::attention
