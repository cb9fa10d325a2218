// The layout of a call's diagonal table (attention/diagonal_table.hpp), on the CPU: its sizes, and
// that every slice the forward's and the dK/dV kernel's producers copy starts inside its row at a
// 16-byte boundary and ends inside it, for the tiles a call walks (odd lengths, tiles past the
// keys' end within a 128-key block, 192-row tiles); a table too long for an int index is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "attention/diagonal_table.hpp"
#include "flexjit/error.hpp"

namespace flexjit::attention {
namespace {

TEST(DiagonalTable, LayoutSizes) {
  // origin: q_len rounded up to even, plus 256; row: origin + kv_len + 384, rounded up to four.
  const DiagonalTableLayout pairs = diagonal_table_layout(16, 4096, 4096, /*raw=*/false);
  EXPECT_EQ(pairs.origin, 4352);
  EXPECT_EQ(pairs.row, 8832);
  EXPECT_EQ(pairs.entries_bytes, 16u * 8832 * 8);
  EXPECT_EQ(pairs.errors_bytes, 16u * 8832 * 4);
  EXPECT_EQ(pairs.total_bytes(), 16u * 8832 * 12 + 16);
  const DiagonalTableLayout words = diagonal_table_layout(16, 4096, 4096, /*raw=*/true);
  EXPECT_EQ(words.entries_bytes, 16u * 8832 * 4);
  const DiagonalTableLayout odd = diagonal_table_layout(3, 333, 517, false);
  EXPECT_EQ(odd.origin, 590);
  EXPECT_EQ(odd.row, 1492);
  EXPECT_EQ(odd.errors_bytes, (3u * 1492 * 4 + 15) / 16 * 16);
}

// The forward: BLOCK_M + BLOCK_N pairs from the even pair at or before origin + kv0 - q0 -
// (BLOCK_M - 1) (attention_fwd_ws.cu.j2's diagonal_slice).
TEST(DiagonalTable, ForwardSlicesStayInTheirRows) {
  for (auto [q_len, kv_len] : {std::pair{1, 1}, {333, 517}, {1000, 1000}, {4096, 300}, {129, 4097}})
    for (auto [block_m, block_n] : {std::pair{128, 128}, {128, 64}, {192, 128}, {192, 64}}) {
      const DiagonalTableLayout l = diagonal_table_layout(1, q_len, kv_len, false);
      EXPECT_EQ(l.row % 2, 0);
      for (int q0 = 0; q0 < q_len; q0 += block_m)
        for (int kv0 = 0; kv0 < (kv_len + 127) / 128 * 128; kv0 += block_n) {
          const int first = l.origin + kv0 - q0 - (block_m - 1);
          const int start = first & ~1;
          ASSERT_GE(start, 0) << q_len << " " << kv_len << " " << q0 << " " << kv0;
          ASSERT_LE(start + block_m + block_n, l.row) << q_len << " " << kv_len << " " << q0 << " " << kv0;
        }
    }
}

// The dK/dV kernel: (BLOCK_N + BLOCK_M + 2 + 3) / 4 * 4 words from the 4-word boundary at or
// before origin + first, first the tile's clamped first diagonal (attention_bwd_dkdv_ws.cu.j2's
// diagonal_slice); 64-row query tiles, wholly past q_len too.
TEST(DiagonalTable, DkdvSlicesStayInTheirRows) {
  for (auto [q_len, kv_len] : {std::pair{1, 1}, {333, 517}, {1000, 1000}, {4096, 300}, {129, 4097}})
    for (int block_n : {64, 128}) {
      const int block_m = 64, words = (block_n + block_m + 2 + 3) / 4 * 4;
      const DiagonalTableLayout l = diagonal_table_layout(1, q_len, kv_len, true);
      EXPECT_EQ(l.row % 4, 0);
      for (int kv_start = 0; kv_start < kv_len; kv_start += block_n)
        for (int q0 = 0; q0 < (q_len + 127) / 128 * 128; q0 += block_m) {
          const int first = std::min(kv_start, kv_len - 1) - std::min(q0 + block_m - 1, q_len - 1);
          const int last = std::min(kv_start + block_n - 1, kv_len - 1) - std::min(q0, q_len - 1);
          const int start = (l.origin + first) & ~3;
          ASSERT_GE(start, 0) << q_len << " " << kv_len << " " << q0 << " " << kv_start;
          ASSERT_LE(l.origin + last, start + words - 1) << q_len << " " << kv_len << " " << q0 << " " << kv_start;
          ASSERT_LE(start + words, l.row) << q_len << " " << kv_len << " " << q0 << " " << kv_start;
        }
    }
}

// The dK/dV kernel seeding Sᵀ (dkdv_diagonal_seed): BLOCK_N + BLOCK_M pairs from the even pair at
// or before origin + kv_start - (q0 + BLOCK_M - 1), unclamped (seed_first_entry & ~1); an even
// query column's pair (seed_scores_from_slice: lead + BLOCK_M - 2 + row - col into the slice) is
// (V(d - 1), V(d)) for the score's diagonal d = kv - q, inside the slice. 64-row query tiles,
// wholly past q_len too, and kv tiles past kv_len's last key.
TEST(DiagonalTable, DkdvSeedSlicesStayInTheirRows) {
  for (auto [q_len, kv_len] : {std::pair{1, 1}, {333, 517}, {1000, 1000}, {4096, 300}, {129, 4097}})
    for (int block_n : {64, 128}) {
      const int block_m = 64;
      const DiagonalTableLayout l = diagonal_table_layout(1, q_len, kv_len, false);
      for (int kv_start = 0; kv_start < kv_len; kv_start += block_n)
        for (int q0 = 0; q0 < (q_len + 127) / 128 * 128; q0 += block_m) {
          const int first = l.origin + kv_start - (q0 + block_m - 1);
          const int start = first & ~1, lead = first - start;
          const std::string at = std::to_string(q_len) + " " + std::to_string(kv_len) + " " + std::to_string(q0) +
                                 " " + std::to_string(kv_start);
          ASSERT_EQ((start * 8) % 16, 0) << at;
          ASSERT_GE(start, 0) << at;
          ASSERT_LE(start + block_m + block_n, l.row) << at;
          for (int row = 0; row < block_n; ++row)
            for (int col = 0; col < block_m; col += 2) {
              const int pos = lead + block_m - 2 + row - col;
              ASSERT_GE(pos, 0) << at;
              ASSERT_LT(pos, block_m + block_n) << at;
              // Pair start + pos is (V(e), V(e + 1)) for e = start + pos - origin: e + 1 is the
              // even column's diagonal, e the odd one's.
              ASSERT_EQ(start + pos - l.origin + 1, kv_start + row - (q0 + col)) << at;
            }
        }
    }
}

TEST(DiagonalTable, RefusesRowsPastAnIntIndex) {
  try {
    diagonal_table_layout(1, 1 << 30, 1 << 30, false);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "the diagonal table of 1073741824 queries and 1073741824 keys would have 2147484288 entries "
                           "a head, more than 2^30; split the call into shorter sequences");
  }
}

}  // namespace
}  // namespace flexjit::attention
