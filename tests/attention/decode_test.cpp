// CPU side of decoding: host validation of lengths and page tables (named errors), paging a
// contiguous cache and gathering it back, the ragged float64 reference, and the split choice.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>

#include "attention/decode_splits.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/error.hpp"
#include "flexjit/paged_kv.hpp"
#include "flexjit/reference.hpp"

namespace flexjit {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DecodeHost, LengthsAndPageTablesAreCheckedWithNamedErrors) {
  const std::vector<int32_t> lens = {10, 40};
  const std::vector<int32_t> table = {0, 1, 2, 3, 1, 7};  // [2][3], page size 16 -> 48 keys
  EXPECT_EQ(error_of([&] { validate_kv_on_host(lens.data(), 2, 48, table.data(), 3, 16, 4); }),
            "page_table[1][2] = 7 is outside the page pool (4 pages, 0 to 3); sequence 1 uses its first 3 entries");
  const std::vector<int32_t> long_lens = {10, 49};
  EXPECT_EQ(error_of([&] { validate_kv_on_host(long_lens.data(), 2, 48, table.data(), 3, 16, 8); }),
            "seq_lens[1] = 49 is beyond the 48 keys its page-table row holds (3 pages of 16); give the table more "
            "columns or shorten the sequence");
  const std::vector<int32_t> negative = {-1};
  EXPECT_EQ(error_of([&] { validate_kv_on_host(negative.data(), 1, 48); }),
            "seq_lens[0] = -1 is negative; a sequence holds 0 or more keys");
  EXPECT_EQ(error_of([&] { validate_kv_on_host(long_lens.data(), 2, 20); }),
            "seq_lens[1] = 49 is beyond the cache's 20 positions (dimension 2 of k and v)");
  // Entries past a sequence's pages are never used, so they may hold anything.
  const std::vector<int32_t> short_lens = {10, 16};
  EXPECT_EQ(error_of([&] { validate_kv_on_host(short_lens.data(), 2, 48, table.data(), 3, 16, 4); }), "(no error)");
}

TEST(DecodeHost, PagingShufflesPagesAndGathersBack) {
  const int B = 2, H = 2, S = 10, D = 3, page = 4;
  std::vector<double> k(size_t(B) * H * S * D), v(k.size());
  for (size_t i = 0; i < k.size(); ++i) k[i] = double(i) + 1, v[i] = -double(i) - 1;
  const std::vector<int32_t> lens = {10, 5};
  const HostPagedKV paged = page_kv_on_host(k, v, B, H, S, D, D, lens, page, 7);
  EXPECT_EQ(paged.num_pages, 3 + 2);
  EXPECT_EQ(paged.max_pages, 3);
  // Token 5 of sequence 0, head 1: page table entry 1, slot 1.
  const int p = paged.page_table[1];
  EXPECT_EQ(paged.k_pages[((size_t(p) * page + 1) * H + 1) * D + 2], k[((0 * H + 1) * S + 5) * D + 2]);
  const std::vector<double> back = gather_pages_on_host(paged.k_pages, paged.page_table, lens, B, H, D, page,
                                                        paged.max_pages, paged.num_pages);
  const int cap = paged.max_pages * page;  // 12
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < cap; ++t)
        for (int d = 0; d < D; ++d) {
          const double want = t < lens[b] ? k[((size_t(b) * H + h) * S + t) * D + d] : 0.0;
          ASSERT_EQ(back[((size_t(b) * H + h) * cap + t) * D + d], want) << b << " " << h << " " << t;
        }
  // The pages are a permutation of the pool.
  std::vector<int32_t> used = {paged.page_table[0], paged.page_table[1], paged.page_table[2], paged.page_table[3],
                               paged.page_table[4]};
  std::sort(used.begin(), used.end());
  EXPECT_EQ(used, (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST(DecodeHost, RaggedReferenceAttendsToEachSequencesOwnKeys) {
  // One query row, two keys with scores 0 and ln 3 -> weights 1/4 and 3/4.
  const ReferenceShape shape{2, 1, 1, 1, 3, 1, 1};
  const std::vector<double> q = {1.0, 1.0};
  const std::vector<double> k = {0.0, std::log(3.0), 100.0, 0.0, 0.0, 0.0};  // key 2 of sequence 0 is past its length
  const std::vector<double> v = {4.0, 8.0, 1000.0, 5.0, 6.0, 7.0};
  const ReferenceForward r = reference_forward_ragged(Expr::identity_score(), Expr::no_mask(), {}, shape, q, k, v,
                                                      {2, 0}, 1.0);
  EXPECT_NEAR(r.out[0], 4.0 * 0.25 + 8.0 * 0.75, 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(4.0), 1e-12);
  EXPECT_EQ(r.out[1], 0.0);  // no keys: 0 and -inf
  EXPECT_EQ(r.lse[1], -std::numeric_limits<double>::infinity());
  // kv_len in the mask is the sequence's own length: keep only the last key.
  const Expr last = Expr::parse(ModKind::mask, "kv_idx == kv_len - 1");
  const ReferenceForward m = reference_forward_ragged(Expr::identity_score(), last, {}, shape, q, k, v, {2, 3}, 1.0);
  EXPECT_NEAR(m.out[0], 8.0, 1e-12);
  EXPECT_NEAR(m.out[1], 7.0, 1e-12);
  EXPECT_THROW(reference_forward_ragged(Expr::identity_score(), Expr::no_mask(), {}, shape, q, k, v, {4, 0}, 1.0),
               UsageError);
}

TEST(DecodeHost, SplitsFillWholeWavesOrSpreadRaggedWork) {
  using attention::choose_decode_split;
  // 128 (sequence, head) pairs on 132 SMs (x 2 CTAs each): one split covers 128 of the 132 SMs;
  // two would cover no more of them (256 of 264 CTAs) and add a combine.
  auto s = choose_decode_split(128, 512, {}, 264, 132);
  EXPECT_EQ(s.num_splits, 1);
  EXPECT_EQ(s.tiles_per_split, 512);
  // 32 pairs: four splits cover 128 of the 132 SMs (three cover 96; more are not needed).
  s = choose_decode_split(32, 1024, {}, 264, 132);
  EXPECT_EQ(s.num_splits, 4);
  EXPECT_EQ(s.tiles_per_split, 256);
  // 100 pairs: 1-4 splits keep 76 % of the SMs busy, five keep 500 of 4 x 132 (95 %).
  s = choose_decode_split(100, 512, {}, 264, 132);
  EXPECT_EQ(s.num_splits, 5);
  // A paged cache covers every slot: two splits of 128 pairs fill 256 of 264.
  s = choose_decode_split(128, 512, {}, 264, 264);
  EXPECT_EQ(s.num_splits, 2);
  EXPECT_EQ(s.tiles_per_split, 256);
  // 8 pairs of 64 tiles (one sequence of 4096 keys, 8 kv heads): 15 splits would cover 120 of 132
  // SMs, but 64 tiles in 15 splits are 13 splits of 5 (104 CTAs, 79 %); 16 splits of 4 cover 128.
  s = choose_decode_split(8, 64, {}, 264, 132);
  EXPECT_EQ(s.num_splits, 16);
  EXPECT_EQ(s.tiles_per_split, 4);
  // One tile: never split.
  EXPECT_EQ(choose_decode_split(4, 1, {}, 264, 132).num_splits, 1);
  // CTAs that stream at full speed alone (TMA boxes of 64+ rows: up to 32 tiles in one split), 64
  // units on 132 slots: one split (64 CTAs, 48 % of the slots, no combine) up to 32 tiles; the fill
  // rule's two splits without the limit, and beyond it; 32 units (24 %) keep the fill rule's four.
  s = choose_decode_split(64, 16, {}, 132, 132, {}, /*one_split_tiles=*/32);
  EXPECT_EQ(s.num_splits, 1);
  EXPECT_EQ(s.tiles_per_split, 16);
  EXPECT_EQ(choose_decode_split(64, 32, {}, 132, 132, {}, 32).num_splits, 1);
  EXPECT_EQ(choose_decode_split(64, 16, {}, 132, 132, {}, 0).num_splits, 2);
  EXPECT_EQ(choose_decode_split(64, 33, {}, 132, 132, {}, 32).num_splits, 2);
  EXPECT_EQ(choose_decode_split(32, 16, {}, 132, 132, {}, 32).num_splits, 4);
  // 59 units are 44.7 % of 132: below the bar, the fill rule's two splits.
  EXPECT_EQ(choose_decode_split(59, 16, {}, 132, 132, {}, 32).num_splits, 2);
  EXPECT_EQ(choose_decode_split(60, 16, {}, 132, 132, {}, 32).num_splits, 1);
  // A limit of 8 tiles: 8 tiles in one split, 9 in the fill rule's two of 5.
  s = choose_decode_split(64, 8, {}, 132, 132, {}, 8);
  EXPECT_EQ(s.num_splits, 1);
  EXPECT_EQ(s.tiles_per_split, 8);
  s = choose_decode_split(64, 9, {}, 132, 132, {}, 8);
  EXPECT_EQ(s.num_splits, 2);
  EXPECT_EQ(s.tiles_per_split, 5);
  // Ragged lengths keep their own rule, with a limit or not: (16 + 2 + 16 + 2) tiles x 16 units =
  // 576 over 8 x 132 CTAs -> 1 tile a CTA, raised to the floor of 8: 2 splits of 8 for the longest.
  for (int limit : {32, 0}) {
    s = choose_decode_split(64, 16, {16, 2, 16, 2}, 132, 132, {}, limit);
    EXPECT_EQ(s.tiles_per_split, 8) << "one_split_tiles " << limit;
    EXPECT_EQ(s.num_splits, 2) << "one_split_tiles " << limit;
  }
  // Ragged: 4 sequences of 1 and 400 tiles, 8 units each -> 6416 tiles over 8 x 264 CTAs -> 4 tiles
  // a CTA, raised to the floor of 8: 50 splits for the longest.
  s = choose_decode_split(32, 400, {1, 400, 1, 400}, 264, 132);
  EXPECT_EQ(s.tiles_per_split, 8);
  EXPECT_EQ(s.num_splits, 50);
  // More work: (2 x 3000 + 2 x 10) tiles x 8 units = 48160 over 2112 CTAs -> 23 tiles a CTA, 131 splits.
  s = choose_decode_split(32, 3000, {3000, 10, 3000, 10}, 264, 132);
  EXPECT_EQ(s.tiles_per_split, 23);
  EXPECT_EQ(s.num_splits, 131);
  EXPECT_EQ(s.big_splits, 131);  // no tail by default: every split walks 23 tiles
  EXPECT_EQ(s.tail_tiles_per_split, 23);
}

// How many tiles one CTA keeps to itself, by the rows of the TMA boxes it reads (a page's rows
// inside a tile: pages of 64, 128 or 256 keys in 128-key tiles, 192-key pages in 64-row boxes;
// pages of 32 or 96 in 32-row boxes; pages of 16 or 48, and the cp.async tiles, never).
TEST(DecodeHost, OneSplitTileLimitFollowsTheBoxRows) {
  using attention::one_split_tile_limit;
  EXPECT_EQ(one_split_tile_limit(128), 32);
  EXPECT_EQ(one_split_tile_limit(64), 32);
  EXPECT_EQ(one_split_tile_limit(32), 16);
  EXPECT_EQ(one_split_tile_limit(16), 0);
  EXPECT_EQ(one_split_tile_limit(8), 0);
  EXPECT_EQ(one_split_tile_limit(0), 0);
}

TEST(DecodeHost, RaggedTailOfShortSplitsAndCtasPerSlot) {
  using attention::choose_decode_split;
  using attention::DecodeSplitTuning;
  DecodeSplitTuning tail4;
  tail4.tail_div = 4;
  // 8-tile splits, tail of 2-tile splits. Left past k big splits: 2 long sequences x 8 units x
  // (400 - 8k) tiles, at most one wave of big CTAs (264 x 8 = 2112) from k = 34 (33 leaves 2176):
  // 34 big splits, then (400 - 272) / 2 = 64 short ones.
  auto s = choose_decode_split(32, 400, {1, 400, 1, 400}, 264, 132, tail4);
  EXPECT_EQ(s.tiles_per_split, 8);
  EXPECT_EQ(s.big_splits, 34);
  EXPECT_EQ(s.tail_tiles_per_split, 2);
  EXPECT_EQ(s.num_splits, 98);
  DecodeSplitTuning tail2;
  tail2.tail_div = 2;
  // 23-tile splits: 16 x (3000 - 23k) <= 264 x 23 = 6072 from k = 114 (113 leaves 6416); the 378
  // tiles left take 35 splits of 11.
  s = choose_decode_split(32, 3000, {3000, 10, 3000, 10}, 264, 132, tail2);
  EXPECT_EQ(s.tiles_per_split, 23);
  EXPECT_EQ(s.big_splits, 114);
  EXPECT_EQ(s.tail_tiles_per_split, 11);
  EXPECT_EQ(s.num_splits, 149);
  // Sixteen CTAs per slot: 48160 tiles over 4224 CTAs -> 12 tiles a CTA, 250 splits, no tail.
  DecodeSplitTuning finer;
  finer.ctas_per_slot = 16;
  s = choose_decode_split(32, 3000, {3000, 10, 3000, 10}, 264, 132, finer);
  EXPECT_EQ(s.tiles_per_split, 12);
  EXPECT_EQ(s.num_splits, 250);
  EXPECT_EQ(s.big_splits, 250);
  // Equal lengths never get a tail.
  s = choose_decode_split(128, 512, {512, 512}, 264, 132, tail4);
  EXPECT_EQ(s.num_splits, 1);
  EXPECT_EQ(s.big_splits, 1);
}

TEST(DecodeHost, TileListsPerSequenceOrPerKvHeadSizedByTheCapacity) {
  using attention::plan_decode_tile_lists;
  // The suite's sliding window: B 16, Hkv 8, one row tile, a 32768-key cache, 64-key tiles; the
  // mask reads no h, so the 8 heads of a sequence share one list: 16 lists of 512 entries. 132
  // SMs over 16 lists: 8 parts each (132 / 16 = 8.25), so 8 counts per list.
  auto l = plan_decode_tile_lists(16, 8, 1, false, 32768, 64, 132, 8);
  EXPECT_EQ(l.list_heads, 1);
  EXPECT_EQ(l.stride, 512);
  EXPECT_EQ(l.units, 16);
  EXPECT_EQ(l.parts, 8);
  EXPECT_EQ(l.bytes, 16u * (512 + 8) * 4);
  // Reading h: one list per kv head and row tile (3 x 2 x 2 = 12); 1000 keys need 16 tiles;
  // 20 SMs over 12 lists: one part each.
  l = plan_decode_tile_lists(3, 2, 2, true, 1000, 64, 20, 8);
  EXPECT_EQ(l.list_heads, 2);
  EXPECT_EQ(l.stride, 16);
  EXPECT_EQ(l.units, 12);
  EXPECT_EQ(l.parts, 1);
  EXPECT_EQ(l.bytes, 12u * 17 * 4);
  // A capacity of exactly one tile: one entry; 132 SMs over 4 lists would be 33 parts, capped at 3.
  l = plan_decode_tile_lists(1, 4, 1, true, 64, 64, 132, 3);
  EXPECT_EQ(l.stride, 1);
  EXPECT_EQ(l.units, 4);
  EXPECT_EQ(l.parts, 3);
  EXPECT_EQ(l.bytes, 4u * (1 + 3) * 4);
}

// Attention::decode checks every tensor before anything touches the GPU (the pointers below are
// never read): a pool or table that is not aligned for the kernels' vector loads, an lse without
// three strides, and a capacity the kernels' 32-bit key counts cannot hold are named errors.
TEST(DecodeHost, PoolsTablesAndStatisticsAreCheckedBeforeTheDevice) {
  char* const fake = reinterpret_cast<char*>(uintptr_t{1} << 20);
  AttentionSpec spec;
  spec.head_dim = spec.head_dim_v = 64;
  const Attention attention(spec);
  // B = 2, Hq = 4, Sq = 1; pools of 8 pages of 16 keys, Hkv = 2; a table of 4 pages a sequence.
  const TensorView q = TensorView::contiguous(fake, DType::bf16, {2, 4, 1, 64});
  const TensorView pool = TensorView::contiguous(fake, DType::bf16, {8, 16, 2, 64});
  const TensorView table = TensorView::contiguous(fake, DType::i32, {2, 4});
  const TensorView lens = TensorView::contiguous(fake, DType::i32, {2});
  const TensorView lse = TensorView::contiguous(fake, DType::f32, {2, 4, 1});
  auto decode_error = [&](const KVCache& kv, const TensorView& l) {
    return error_of([&] { attention.decode(q, kv, q, l, nullptr, {}); });
  };
  const std::string vectors = " data pointer is not 16-byte aligned; kernels load 16-byte vectors (allocations from "
                              "cuMemAlloc/cudaMalloc are aligned; a pool sliced from a larger buffer must start on 16 "
                              "bytes)";
  TensorView shifted = pool;
  shifted.data = fake + 8;  // strides are whole vectors, the start is not
  EXPECT_EQ(decode_error(KVCache::paged(shifted, pool, table, lens), lse), "k_pages" + vectors);
  EXPECT_EQ(decode_error(KVCache::paged(pool, shifted, table, lens), lse), "v_pages" + vectors);
  TensorView odd_table = table;
  odd_table.data = fake + 2;
  EXPECT_EQ(decode_error(KVCache::paged(pool, pool, odd_table, lens), lse), "page_table data pointer is not 4-byte aligned");
  TensorView odd_lens = lens;
  odd_lens.data = fake + 1;
  EXPECT_EQ(decode_error(KVCache::paged(pool, pool, table, odd_lens), lse), "seq_lens data pointer is not 4-byte aligned");
  TensorView short_lse = lse;
  short_lse.strides.pop_back();
  EXPECT_EQ(decode_error(KVCache::paged(pool, pool, table, lens), short_lse),
            "lse must be f32 [B, Hq, Sq] = [2, 4, 1], got " + short_lse.describe());
  TensorView odd_lse = lse;
  odd_lse.data = fake + 2;
  EXPECT_EQ(decode_error(KVCache::paged(pool, pool, table, lens), odd_lse), "lse data pointer is not 4-byte aligned");
  // 2^26 + 1 table entries of 16 keys: 2^30 + 16 keys a sequence (the pages may repeat).
  const TensorView wide_table = TensorView::contiguous(fake, DType::i32, {2, (int64_t{1} << 26) + 1});
  EXPECT_EQ(decode_error(KVCache::paged(pool, pool, wide_table, lens), lse),
            "the cache holds 1073741840 keys per sequence (max_pages 67108865 x page_size 16); decoding takes at most "
            "2^30 = 1073741824");
  // Exactly 2^30 keys pass this check (and go on to the device, absent here or not).
  const TensorView full_table = TensorView::contiguous(fake, DType::i32, {2, int64_t{1} << 26});
  EXPECT_EQ(decode_error(KVCache::paged(pool, pool, full_table, lens), lse).find("2^30"), std::string::npos);
}

// A ragged batch whose longest sequence has fewer than 8 tiles: the floor of 8 tiles a CTA gives
// way to the longest sequence (one split), never a clamp with its bounds reversed.
TEST(DecodeHost, RaggedSplitOfShortSequencesIsOneSplit) {
  using attention::choose_decode_split;
  const auto s = choose_decode_split(16, 5, {1, 5}, 264, 132);
  EXPECT_EQ(s.tiles_per_split, 5);
  EXPECT_EQ(s.num_splits, 1);
  EXPECT_EQ(s.big_splits, 1);
  EXPECT_EQ(s.tail_tiles_per_split, 5);
}

}  // namespace
}  // namespace flexjit
