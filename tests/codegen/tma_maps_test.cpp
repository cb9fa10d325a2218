// The warp-specialised forward's TMA conditions on q, k and v, and their messages.
#include "codegen/tma_maps.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "flexjit/error.hpp"

namespace flexjit::codegen {
namespace {

TensorView view(std::uintptr_t address, std::vector<int64_t> strides) {
  return TensorView::strided(reinterpret_cast<void*>(address), DType::bf16, {2, 4, 100, 128}, std::move(strides));
}

TEST(TmaMaps, ContiguousAndBshdTensorsQualify) {
  EXPECT_EQ(tma_unsupported_reason(view(0x10000, {4 * 100 * 128, 100 * 128, 128, 1}), "q"), "");
  EXPECT_EQ(tma_unsupported_reason(view(0x10000, {100 * 4 * 128, 128, 4 * 128, 1}), "k"), "");  // [B,S,H,D]
}

TEST(TmaMaps, MisalignedOrBroadcastTensorsAreNamed) {
  EXPECT_EQ(tma_unsupported_reason(view(0x10008, {4 * 100 * 128, 100 * 128, 128, 1}), "v"),
            "the warp-specialised forward reads v through TMA, which needs its first element 16-byte aligned (it is "
            "at 0x10008) — pass an aligned tensor or choose a config ending in 'g'");
  EXPECT_EQ(tma_unsupported_reason(view(0x10000, {100 * 128, 0, 128, 1}), "k"),
            "the warp-specialised forward reads k through TMA, which needs every stride but the last dimension's to "
            "be a positive multiple of 16 bytes below 2^40; k is bf16[2, 4, 100, 128] strides [12800, 0, 128, 1] — "
            "make it contiguous or choose a config ending in 'g'");
}

TEST(TmaMaps, TheForwardsOutputIsNamedAsWritten) {
  EXPECT_EQ(tma_unsupported_reason(view(0x10000, {4 * 100 * 128, 100 * 128, 128, 1}), "out", kForwardTmaReader, true),
            "");
  EXPECT_EQ(tma_unsupported_reason(view(0x10002, {4 * 100 * 128, 100 * 128, 128, 1}), "out", kForwardTmaReader, true),
            "the warp-specialised forward writes out through TMA, which needs its first element 16-byte aligned (it "
            "is at 0x10002) — pass an aligned tensor or choose a config ending in 'g'");
}

// A page's rows inside a key tile: whole pages of 64 or 128 keys in 128-key tiles, pages of 256
// cut to the tile, pages of 96 and 192 cut where tiles and pages meet (every 32 and 64 rows).
TEST(TmaMaps, PagedDecodeBoxRowsArePageRowsInsideATile) {
  EXPECT_EQ(paged_decode_box_rows(64, 128), 64);
  EXPECT_EQ(paged_decode_box_rows(128, 128), 128);
  EXPECT_EQ(paged_decode_box_rows(256, 128), 128);
  EXPECT_EQ(paged_decode_box_rows(96, 128), 32);
  EXPECT_EQ(paged_decode_box_rows(192, 128), 64);
  EXPECT_EQ(paged_decode_box_rows(16, 64), 16);
  EXPECT_EQ(paged_decode_box_rows(48, 64), 16);
}

// The spec's box rows: 0 where boxes hold whole tiles (no TMA, a contiguous cache, pages of a tile
// or more), a page's rows inside a tile where pages cut them, and a named error where those rows
// are no whole 8-row swizzle atom.
TEST(TmaMaps, DecodeBoxRowsAreZeroForWholeTiles) {
  const BlockConfig tma64 = BlockConfig::parse("m16n64w4s3t"), tma128 = BlockConfig::parse("m16n128w4s3t");
  EXPECT_EQ(decode_box_rows(BlockConfig::parse("m16n64w4s3"), true, 16), 0);
  EXPECT_EQ(decode_box_rows(tma64, false, 0), 0);
  EXPECT_EQ(decode_box_rows(tma64, true, 64), 0);
  EXPECT_EQ(decode_box_rows(tma64, true, 256), 0);
  EXPECT_EQ(decode_box_rows(tma128, true, 64), 64);
  EXPECT_EQ(decode_box_rows(tma64, true, 16), 16);
  EXPECT_EQ(decode_box_rows(tma128, true, 96), 32);
  EXPECT_EQ(decode_box_rows(tma64, true, 8), 8);
  try {
    decode_box_rows(tma128, true, 12);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "decode config m16n128w4s3t reads the pages through TMA in boxes of gcd(page size, "
                           "block_n) = gcd(12, 128) = 4 rows, which must be a multiple of 8 (the 128-byte swizzle's "
                           "8-row atom) — use a page size that is a multiple of 8 or use a decode config without the "
                           "trailing 't'");
  }
}

// The rows a decode tile is cut into: the spec's box rows, or the whole tile where they are 0.
TEST(TmaMaps, DecodeTileBoxRowsAreTheTileForWholeTileBoxes) {
  KernelSpec s;
  s.family = Family::decode;
  s.config = BlockConfig::parse("m16n128w4s3t");
  EXPECT_EQ(decode_tile_box_rows(s), 128);
  s.decode_box_rows = 16;
  EXPECT_EQ(decode_tile_box_rows(s), 16);
}

}  // namespace
}  // namespace flexjit::codegen
