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
  // Multiples of 32 columns: the 16-byte chunk index XOR row % 8.
  EXPECT_EQ(flexjit_dq_accum_column(0, 0, 128), 0);
  EXPECT_EQ(flexjit_dq_accum_column(8, 37, 128), 37);    // row % 8 == 0: in place
  EXPECT_EQ(flexjit_dq_accum_column(1, 0, 128), 4);      // chunk 0 -> 1
  EXPECT_EQ(flexjit_dq_accum_column(3, 5, 64), 9);       // chunk 1 -> 1 ^ 3 = 2, column 1 of it
  EXPECT_EQ(flexjit_dq_accum_column(7, 31, 128), 3);     // chunk 7 -> 0, column 3 of it
  EXPECT_EQ(flexjit_dq_accum_column(13, 100, 128), 112); // row % 8 = 5: chunk 25 -> 28, column 0
  // Other head dims keep the plain layout.
  EXPECT_EQ(flexjit_dq_accum_column(3, 5, 48), 5);
  EXPECT_EQ(flexjit_dq_accum_column(7, 15, 16), 15);
}

TEST(DqAccumLayout, EachRowIsAPermutationThatKeepsPairsAndChunks) {
  for (int d : {32, 64, 96, 128, 256})
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
        // Within the 32-column group of the column: a reduction never crosses into another group.
        EXPECT_EQ(at / 32, col / 32);
      }
      EXPECT_EQ(seen.size(), static_cast<size_t>(d)) << "d" << d << " row " << row;
    }
}

TEST(DqAccumLayout, EightRowsOfOneChunkFallOnEightBankGroups) {
  // A warp stores the same logical 16-byte chunk of rows g..g+7 at once (rows 512 or 256 bytes
  // apart, so only the chunk picks the banks): eight chunks, eight different groups of 4 banks.
  for (int d : {64, 128})
    for (int chunk = 0; chunk < d / 4; ++chunk)
      for (int base : {0, 8, 16, 56}) {
        std::set<int> groups;
        for (int r = 0; r < 8; ++r) groups.insert((flexjit_dq_accum_column(base + r, chunk * 4, d) / 4) % 8);
        EXPECT_EQ(groups.size(), 8u) << "d" << d << " chunk " << chunk << " rows " << base << "..";
      }
}

}  // namespace
}  // namespace flexjit
