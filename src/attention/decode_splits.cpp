#include "attention/decode_splits.hpp"

#include <algorithm>

namespace flexjit::attention {

namespace {
// choose_decode_split's one-split case: that split alone keeping at least this percentage of
// `cover` busy.
constexpr int64_t kOneSplitFill = 45;
}  // namespace

int one_split_tile_limit(int box_rows) {
  // H200, the L2 cold, 64 (sequence, kv head) units on 132 SMs, 128-key tiles, one split against
  // the fill rule's two and their combine (notes/perf.md "(zzd)" zzd10, "(zze)" zze4 and "(zzf)"
  // zzf3). Boxes of 64 rows: 1.04-1.20x up to 32 tiles, 0.97x at 64. Boxes of 32, one copy for
  // both slabs of head dim 128: 1.00x at 8 tiles, 1.05x at 16, 0.97x at
  // 32 (a copy per slab streamed about 1.3 us a tile alone against 1.05 for boxes of 64, so the
  // combine it saves paid for 8 tiles only). Boxes of 16: 1.00x at 8 tiles, 0.88x at 16.
  if (box_rows >= 64) return 32;
  if (box_rows >= 32) return 16;
  return 0;
}

DecodeSplit choose_decode_split(int64_t units, int max_tiles, const std::vector<int>& seq_tiles, int64_t slots,
                                int64_t cover, const DecodeSplitTuning& tuning, int one_split_tiles) {
  DecodeSplit out;
  if (max_tiles <= 1 || units < 1 || slots < 1 || cover < 1) return out;
  const int64_t per_slot = std::max(tuning.ctas_per_slot, 1);
  if (tuning.forced_splits > 0) {
    out.tiles_per_split = (max_tiles + std::min(tuning.forced_splits, max_tiles) - 1) / std::min(tuning.forced_splits, max_tiles);
    out.num_splits = (max_tiles + out.tiles_per_split - 1) / out.tiles_per_split;
    out.big_splits = out.num_splits;
    out.tail_tiles_per_split = out.tiles_per_split;
    return out;
  }
  const bool ragged = !seq_tiles.empty() &&
                      *std::max_element(seq_tiles.begin(), seq_tiles.end()) >
                          *std::min_element(seq_tiles.begin(), seq_tiles.end()) * 5 / 4 + 1;
  if (ragged) {
    int64_t work = 0;  // tiles of all (sequence, head, row tile) triples
    for (int t : seq_tiles) work += t;
    work *= units / static_cast<int64_t>(seq_tiles.size());
    // About eight CTAs per slot: the last wave's tail (the longest sequences' final splits) stays
    // short, while a CTA still streams enough tiles to hide its start.
    const int64_t per_cta = (work + per_slot * slots - 1) / (per_slot * slots);
    out.tiles_per_split = static_cast<int>(std::clamp<int64_t>(per_cta, std::min(8, max_tiles), max_tiles));
    const int big = out.tiles_per_split;
    const int small = std::max(1, big / std::max(tuning.tail_div, 1));
    if (small < big && max_tiles <= 65535) {  // (so the tail's splits stay within the grid's 65535)
      const int64_t per_seq = units / static_cast<int64_t>(seq_tiles.size());
      auto tail_work = [&](int k) {
        int64_t tail = 0;
        for (int t : seq_tiles) tail += std::max<int64_t>(0, t - int64_t(k) * big);
        return tail * per_seq;
      };
      // The tail work falls as k grows: the first k with at most one wave of big CTAs left.
      int lo = 1, hi = (max_tiles + big - 1) / big;  // tail_work(hi) == 0
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (tail_work(mid) <= slots * big) hi = mid; else lo = mid + 1;
      }
      if (int64_t(lo) * big < max_tiles) {
        out.big_splits = lo;
        out.tail_tiles_per_split = small;
        out.num_splits = lo + (max_tiles - lo * big + small - 1) / small;
        return out;
      }
    }
  } else if (max_tiles <= one_split_tiles && units * 100 >= cover * kOneSplitFill) {
    // One split, no combine. H200, pages of 64 (128-key TMA tiles), B=8 Hkv=8 (64 units, 132
    // slots), the L2 cold: 1k keys 12.6 us against 15.1 for the two splits that fill the SMs, 2k
    // 21.0 / 23.3, 4k 37.3 / 38.1; at 8k (64 tiles) two win, 67.4 / 69.5. With 32 units a split
    // fewer than the fill asks keeps the combine and saves nothing (notes/perf.md "(zzd)").
    out.tiles_per_split = max_tiles;
  } else {
    double best = 0;
    int best_splits = 1, last_splits = 0;
    for (int asked = 1; asked <= std::min(max_tiles, 64); ++asked) {
      // The splits `asked` gives once the tiles are dealt out whole (64 tiles asked into 15 splits
      // are 13 splits of 5): the fill is the real CTAs'.
      const int per_split = (max_tiles + asked - 1) / asked;
      const int s = (max_tiles + per_split - 1) / per_split;
      if (s == last_splits) continue;
      last_splits = s;
      const int64_t ctas = units * s;
      const int64_t waves = (ctas + cover - 1) / cover;
      const double fill = double(ctas) / double(waves * cover);
      if (fill > best + 0.03) {
        best = fill;
        best_splits = s;
      }
      // The fewest splits that keep 90 % of `cover` busy: every further split re-reads Q, writes a
      // partial and lengthens the combine.
      if (fill >= 0.9) break;
      if (ctas >= 8 * slots) break;  // enough CTAs: more splits only add combine traffic
    }
    out.tiles_per_split = (max_tiles + best_splits - 1) / best_splits;
  }
  // The split index is gridDim.y: at most 65535 splits.
  out.tiles_per_split = std::max(out.tiles_per_split, (max_tiles + 65534) / 65535);
  out.num_splits = (max_tiles + out.tiles_per_split - 1) / out.tiles_per_split;
  out.big_splits = out.num_splits;
  out.tail_tiles_per_split = out.tiles_per_split;
  return out;
}

DecodeTileLists plan_decode_tile_lists(int batch, int kv_heads, int row_tiles, bool mask_reads_h, int64_t capacity,
                                       int block_n, int sm_count, int max_parts) {
  DecodeTileLists out;
  out.list_heads = mask_reads_h ? kv_heads : 1;
  out.stride = (capacity + block_n - 1) / block_n;
  out.units = int64_t(batch) * out.list_heads * row_tiles;
  const int64_t per_list = sm_count / std::max<int64_t>(out.units, 1);
  out.parts = static_cast<int>(std::clamp<int64_t>(per_list, 1, std::max(max_parts, 1)));
  out.bytes = size_t(out.units) * size_t(out.stride + out.parts) * sizeof(int32_t);
  return out;
}

}  // namespace flexjit::attention
