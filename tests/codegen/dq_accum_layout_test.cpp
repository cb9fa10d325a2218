// The fast backward's dQ accumulator layout (flexjit_dq_accum_column in flexjit_params.cuh): the
// warp-specialised dK/dV kernel stages a query tile's dQ rows in this layout and adds them with one
// bulk reduction, the 'g' kernel adds pairs at these places, and the convert kernel reads 4-column
// chunks from them. Host-side checks of the properties all three rely on. CPU only.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "../../templates/flexjit_params.cuh"

namespace flexjit {
namespace {

TEST(DqAccumLayout, HandPickedPlaces) {
  // Multiples of 64 columns: the 32-byte chunk index XOR row % 4.
  EXPECT_EQ(flexjit_dq_accum_column(0, 0, 128), 0);
  EXPECT_EQ(flexjit_dq_accum_column(8, 37, 128), 37);    // row % 4 == 0: in place
  EXPECT_EQ(flexjit_dq_accum_column(1, 0, 128), 8);      // chunk 0 -> 1
  EXPECT_EQ(flexjit_dq_accum_column(3, 5, 64), 29);      // chunk 0 -> 3, column 5 of it
  EXPECT_EQ(flexjit_dq_accum_column(7, 31, 128), 7);     // row % 4 = 3: chunk 3 -> 0, column 7 of it
  EXPECT_EQ(flexjit_dq_accum_column(13, 100, 128), 108);  // row % 4 = 1: chunk 12 -> 13, column 4
  EXPECT_EQ(flexjit_dq_accum_column(6, 200, 256), 216);  // row % 4 = 2: chunk 25 -> 27, column 0
  EXPECT_EQ(flexjit_dq_accum_column(4, 200, 256), 200);  // row % 4 == 0 (row % 8 == 4): in place
  // Other multiples of 32: the 16-byte chunk index XOR row % 8.
  EXPECT_EQ(flexjit_dq_accum_column(1, 0, 96), 4);       // chunk 0 -> 1
  EXPECT_EQ(flexjit_dq_accum_column(3, 69, 96), 73);     // chunk 17 -> 17 ^ 3 = 18, column 1 of it
  // Other head dims keep the plain layout.
  EXPECT_EQ(flexjit_dq_accum_column(3, 5, 48), 5);
  EXPECT_EQ(flexjit_dq_accum_column(7, 15, 16), 15);
}

TEST(DqAccumLayout, EachRowIsAPermutationThatKeepsPairsAndChunks) {
  for (int d : {32, 64, 96, 128, 192, 256})
    for (int row = 0; row < 16; ++row) {
      std::set<int> seen;
      for (int col = 0; col < d; ++col) {
        const int at = flexjit_dq_accum_column(row, col, d);
        ASSERT_GE(at, 0);
        ASSERT_LT(at, d) << "d" << d << " row " << row << " col " << col;
        seen.insert(at);
        // The 'g' kernel adds (2i, 2i + 1) with one 8-byte reduction; the convert kernel reads
        // aligned 4-column chunks with 16-byte loads.
        if (col % 2 == 1) {
          EXPECT_EQ(at, flexjit_dq_accum_column(row, col - 1, d) + 1);
        }
        if (col % 4 != 0) {
          EXPECT_EQ(at, flexjit_dq_accum_column(row, col - col % 4, d) + col % 4);
        }
        // Within the 64-column group of the column (32 where d is not a multiple of 64): the
        // column slices' 64-column pieces (one tensor reduction each) hold their own columns.
        const int group = d % 64 == 0 ? 64 : 32;
        EXPECT_EQ(at / group, col / group);
      }
      EXPECT_EQ(seen.size(), static_cast<size_t>(d)) << "d" << d << " row " << row;
    }
}

TEST(DqAccumLayout, AHalfWarpsStagingStoreFallsOnSixteenBankPairs) {
  // The staging store of a warp: lane (g, t) writes the 8-byte pair at columns 8j + 2t (plus the
  // warpgroup's first column) of row r0 + g; rows are 256 bytes or a multiple apart, so only the
  // column picks the bank pair. Each half-warp (g = 0..3 or 4..7) is one wavefront when its 16
  // lanes hit 16 different pairs of the 32 banks.
  for (int d : {64, 128, 256})
    for (int col0 : {0, 32, 64})
      for (int j = 0; j < 4; ++j)
        for (int r0 : {0, 8, 16, 48})
          for (int half = 0; half < 2; ++half) {
            std::set<int> pairs;
            for (int g = 4 * half; g < 4 * half + 4; ++g)
              for (int t = 0; t < 4; ++t) pairs.insert((flexjit_dq_accum_column(r0 + g, col0 + 8 * j + 2 * t, d) / 2) % 16);
            EXPECT_EQ(pairs.size(), 16u) << "d" << d << " col0 " << col0 << " j " << j << " rows " << r0 + 4 * half << "..";
          }
}

TEST(DqAccumLayout, AThreadsStagingStoresAreOneAddressXorTheChunkPlusAnOffset) {
  // The staging stores of lane (g, t) of a warp (rows r0 + g and r0 + g + 8, 8-byte pairs at
  // columns col0 + 8j + 2t, col0 a multiple of 32) lie at chunk 0's place XOR 8 (j % 4) columns,
  // plus 8 (j & ~3) columns, the same in both rows: the kernel keeps one address, and each store is
  // an XOR and an immediate offset (store_dq_share).
  for (int d : {64, 128, 192, 256})
    for (int col0 = 0; col0 < d; col0 += 32)
      for (int r0 : {0, 16, 48})
        for (int g = 0; g < 8; ++g)
          for (int t = 0; t < 4; ++t) {
            const int at = flexjit_dq_accum_column(r0 + g, col0 + 2 * t, d);
            for (int j = 0; j < (d - col0) / 8; ++j)
              for (int r = 0; r < 2; ++r)
                ASSERT_EQ(flexjit_dq_accum_column(r0 + g + 8 * r, col0 + 8 * j + 2 * t, d), (at ^ (8 * (j % 4))) + 8 * (j & ~3))
                    << "d" << d << " col0 " << col0 << " row " << r0 + g + 8 * r << " t " << t << " j " << j;
          }
}

}  // namespace
}  // namespace flexjit
