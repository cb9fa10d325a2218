// BlockMask on the CPU: tables against a dense evaluation of the mask, broadcasting, user tables
// and their validation messages.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "flexjit/block_mask.hpp"
#include "flexjit/error.hpp"

namespace flexjit {
namespace {

// Class of block (i, j) from a dense evaluation: 0 empty, 1 partial, 2 full.
int dense_class(const Expr& mask, int b, int h, int i, int j, const BlockMaskShape& s, const EvalInputs& in) {
  bool kept = false, dropped = false;
  for (int q = i * s.q_block; q < std::min(s.q_len, (i + 1) * s.q_block); ++q)
    for (int kv = j * s.kv_block; kv < std::min(s.kv_len, (j + 1) * s.kv_block); ++kv) {
      EvalPoint p;
      p.b = b, p.h = h, p.q_idx = q, p.kv_idx = kv, p.q_len = s.q_len, p.kv_len = s.kv_len;
      const bool keep = mask.evaluate(p, in) != 0.0;
      kept |= keep;
      dropped |= !keep;
    }
  return !kept ? 0 : (dropped ? 1 : 2);
}

void expect_matches_dense(const Expr& mask, const BlockMask& bm, const EvalInputs& in) {
  const BlockMaskShape& s = bm.shape();
  const BlockMaskTables& t = bm.host_tables();
  const int nq = s.num_q_blocks(), nk = s.num_kv_blocks();
  for (int z = 0; z < s.batch * s.heads; ++z) {
    for (int i = 0; i < nq; ++i) {
      std::vector<int> cls(nk, 0);
      const size_t row = size_t(z) * nq + i;
      for (int e = 0; e < t.kv_num_blocks[row]; ++e) cls[t.kv_indices[row * nk + e]] = 1;
      for (int e = 0; e < t.full_kv_num_blocks[row]; ++e) cls[t.full_kv_indices[row * nk + e]] = 2;
      for (int j = 0; j < nk; ++j)
        ASSERT_EQ(cls[j], dense_class(mask, z / s.heads, z % s.heads, i, j, s, in))
            << "block (" << i << ", " << j << ") of bh " << z;
    }
    for (int j = 0; j < nk; ++j) {  // the q_* tables are the transposes
      const size_t row = size_t(z) * nk + j;
      for (int e = 0; e < t.q_num_blocks[row]; ++e) {
        const int i = t.q_indices[row * nq + e];
        ASSERT_EQ(dense_class(mask, z / s.heads, z % s.heads, i, j, s, in), 1);
      }
      for (int e = 0; e < t.full_q_num_blocks[row]; ++e) {
        const int i = t.full_q_indices[row * nq + e];
        ASSERT_EQ(dense_class(mask, z / s.heads, z % s.heads, i, j, s, in), 2);
      }
    }
  }
}

TEST(BlockMaskCpu, CausalMatchesDenseMask) {
  const Expr mask = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  const BlockMask bm = BlockMask::build_on_cpu(mask, 2, 3, 300, 300, {}, 64, 32);
  EXPECT_EQ(bm.shape().batch, 1);  // the mask ignores b and h: tables broadcast
  EXPECT_EQ(bm.shape().heads, 1);
  expect_matches_dense(mask, bm, {});
  // 5 query blocks of 64 rows over 10 kv blocks of 32: the causal staircase.
  const BlockMaskTables& t = bm.host_tables();
  EXPECT_EQ(t.kv_num_blocks[0], 2);
  EXPECT_EQ(t.full_kv_num_blocks[0], 0);
  EXPECT_EQ(t.full_kv_num_blocks[4], 8);
}

// A mask built from an expression remembers it (canonical text); tables a caller gives do not.
TEST(BlockMaskCpu, BuiltFromNamesTheMaskExpression) {
  const BlockMask built = BlockMask::build_on_cpu(Expr::parse(ModKind::mask, "q_idx>=kv_idx"), 1, 1, 256, 256);
  EXPECT_EQ(built.built_from(), "q_idx >= kv_idx");
  const BlockMask given = BlockMask::from_tables(built.shape(), built.host_tables());
  EXPECT_EQ(given.built_from(), "");
  EXPECT_EQ(BlockMask::all_full(built.shape()).built_from(), "");
}

TEST(BlockMaskCpu, HeadAndBatchDependentMasksKeepTheirDimensions) {
  const Expr mask = Expr::parse(ModKind::mask, "(q_idx + h * 37 + b * 11) % 5 != 0 || kv_idx < q_idx");
  const BlockMask bm = BlockMask::build_on_cpu(mask, 2, 3, 100, 150, {}, 32, 16);
  EXPECT_EQ(bm.shape().batch, 2);
  EXPECT_EQ(bm.shape().heads, 3);
  expect_matches_dense(mask, bm, {});
}

TEST(BlockMaskCpu, DocumentMaskWithABuffer) {
  std::vector<int32_t> doc(500);
  for (int i = 0; i < 500; ++i) doc[i] = i / 70;
  Declarations decls;
  decls.buffers.push_back(BufferDecl{"doc", DType::i32, {500}});
  const Expr mask = Expr::parse(ModKind::mask, "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", decls);
  EvalInputs in;
  in.buffers["doc"] = HostBufferView{doc.data(), DType::i32, {500}};
  const BlockMask bm = BlockMask::build_on_cpu(mask, 1, 1, 500, 500, in, 64, 64);
  expect_matches_dense(mask, bm, in);
  EXPECT_GT(bm.density(), 0.0);
  EXPECT_LT(bm.density(), 0.5);
}

TEST(BlockMaskCpu, DensityOfCausalAndFull) {
  const Expr causal = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  const BlockMask bm = BlockMask::build_on_cpu(causal, 1, 1, 1024, 1024);
  EXPECT_DOUBLE_EQ(bm.density(), 36.0 / 64.0);  // 8 x 8 blocks, lower triangle with diagonal
  EXPECT_DOUBLE_EQ(bm.partial_fraction(), 8.0 / 64.0);
  const BlockMask full = BlockMask::all_full({1, 1, 1000, 1000, 128, 128});
  EXPECT_DOUBLE_EQ(full.density(), 1.0);
}

TEST(BlockMaskCpu, FromTablesDerivesTransposes) {
  BlockMaskShape s{1, 1, 256, 256, 128, 128};
  BlockMaskTables t;
  t.kv_num_blocks = {1, 1};
  t.kv_indices = {0, 0, 1, 0};
  t.full_kv_num_blocks = {0, 1};
  t.full_kv_indices = {0, 0, 0, 0};
  const BlockMask bm = BlockMask::from_tables(s, t);
  const BlockMaskTables& out = bm.host_tables();
  EXPECT_EQ(out.q_num_blocks, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(out.q_indices, (std::vector<int32_t>{0, 0, 1, 0}));
  EXPECT_EQ(out.full_q_num_blocks, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(out.full_q_indices, (std::vector<int32_t>{1, 0, 0, 0}));
}

TEST(BlockMaskCpu, FromTablesRejectsBadTablesWithClearMessages) {
  BlockMaskShape s{1, 1, 256, 256, 128, 128};
  auto expect_error = [&](BlockMaskTables t, const std::string& message) {
    try {
      BlockMask::from_tables(s, std::move(t));
      ADD_FAILURE() << "expected ShapeError: " << message;
    } catch (const ShapeError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  };
  BlockMaskTables t;
  t.kv_num_blocks = {1};
  t.kv_indices = {0, 0, 1, 0};
  expect_error(t, "block mask table kv_num_blocks has 1 entries; a mask of 1 x 1 x 2 query blocks x 2 kv blocks needs 2");
  t.kv_num_blocks = {3, 1};
  expect_error(t, "block mask table kv_num_blocks[0][0][0] = 3 is outside [0, 2]");
  t.kv_num_blocks = {1, 1};
  t.kv_indices = {0, 0, 5, 0};
  expect_error(t, "block mask table kv_indices[0][0][1][0] = 5 is not a kv block index (0 .. 1)");
  t.kv_num_blocks = {2, 1};
  t.kv_indices = {1, 0, 1, 0};
  expect_error(t, "block mask table kv_indices[0][0][0] is not strictly ascending at entry 1; list each block once, in increasing order");
  t.kv_num_blocks = {1, 1};
  t.kv_indices = {0, 0, 1, 0};
  t.full_kv_num_blocks = {1, 0};
  t.full_kv_indices = {0, 0, 0, 0};
  expect_error(t, "block mask lists kv block 0 of query block [0][0][0] as both partial and full");
}

TEST(BlockMaskCpu, RejectsAScoreMod) {
  const Expr score = Expr::parse(ModKind::score, "score * 2");
  EXPECT_THROW(BlockMask::build_on_cpu(score, 1, 1, 10, 10), UsageError);
}

// Sizes the tables cannot count: lengths or blocks beyond 2^30 (rounding a length up to whole
// blocks wrapped an int, and the mask came out empty), and a batch or head count below 1 even
// when the mask ignores b and h.
TEST(BlockMaskCpu, SizesBeyondWhatTheTablesCountAreNamed) {
  const Expr causal = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  auto error = [&](int batch, int heads, int q_len, int kv_len, int q_block, int kv_block) {
    try {
      BlockMask::build_on_cpu(causal, batch, heads, q_len, kv_len, {}, q_block, kv_block);
    } catch (const ShapeError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error(1, 1, 2147483647, 2147483647, 2147483647, 2147483647),
            "block mask q_len must be at most 2^30 = 1073741824, got 2147483647");
  EXPECT_EQ(error(1, 1, 1024, 1024, 128, (1 << 30) + 1),
            "block mask kv_block must be at most 2^30 = 1073741824, got 1073741825");
  EXPECT_EQ(error(0, 1, 16, 16, 128, 128), "block mask sizes must be positive: batch 0, heads 1, q_len 16, kv_len 16");
  EXPECT_EQ(error(1, -1, 16, 16, 128, 128), "block mask sizes must be positive: batch 1, heads -1, q_len 16, kv_len 16");
}

}  // namespace
}  // namespace flexjit
