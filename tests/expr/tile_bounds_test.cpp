// Which masks have tile bounds, and the bounds function's text (src/expr/tile_bounds.cpp). Its
// answers on tiles are checked on a GPU (tile_bounds_gpu_test.cpp).
#include <gtest/gtest.h>

#include <string>

#include "expr/tile_bounds.hpp"
#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

Declarations declarations() {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("limit:i32:4"));
  d.buffers.push_back(BufferDecl::parse("doc:i32:?"));
  d.buffers.push_back(BufferDecl::parse("slope:f32:8"));
  d.params = {ParamDecl::parse("window:int"), ParamDecl::parse("scale:float")};
  return d;
}

bool bounded(const char* mask) { return Expr::parse(ModKind::mask, mask, declarations()).has_tile_bounds(); }

TEST(TileBounds, IntAndBoolMasksWithoutKeyIndexedBuffersHaveThem) {
  EXPECT_TRUE(bounded("q_idx + kv_len - q_len >= kv_idx"));
  EXPECT_TRUE(bounded("q_idx + kv_len - q_len - kv_idx < window"));
  EXPECT_TRUE(bounded("kv_idx < limit[b] && doc[q_idx] >= 0"));  // reads not indexed by kv_idx
  EXPECT_TRUE(bounded("where(h % 2 == 0, abs(kv_idx - q_idx) < 5, min(kv_idx, 9) == clamp(q_idx, 0, 9))"));
  EXPECT_TRUE(bounded("int(q_idx > kv_idx) + int(h == 2) == 1 && !(kv_idx < 3) != (q_idx < 5)"));
  EXPECT_TRUE(bounded("true"));
}

TEST(TileBounds, FloatsAndKeyIndexedBuffersHaveNone) {
  EXPECT_FALSE(bounded("doc[q_idx] == doc[kv_idx]"));            // a read that varies along the tile
  EXPECT_FALSE(bounded("limit[kv_idx % 4] > 0"));
  EXPECT_FALSE(bounded("kv_idx < 2.5 * q_idx"));                   // a float comparison
  EXPECT_FALSE(bounded("float(kv_idx) * scale < 10.0"));
  EXPECT_FALSE(bounded("slope[h] > 0.5 || kv_idx < 3"));
  EXPECT_FALSE(bounded("int(sqrt(float(kv_idx))) < 4"));
  EXPECT_FALSE(Expr::parse(ModKind::score, "score + kv_idx", declarations()).has_tile_bounds());
}

TEST(TileBounds, NamesTheFirstObstacle) {
  auto obstacle = [](const char* mask) {
    return expr::tile_bounds_obstacle(*Expr::parse(ModKind::mask, mask, declarations()).root());
  };
  EXPECT_EQ(obstacle("q_idx >= kv_idx"), "");
  EXPECT_EQ(obstacle("q_idx >= kv_idx && doc[kv_idx] == doc[q_idx]"), "it indexes a buffer by kv_idx: doc[kv_idx]");
  EXPECT_EQ(obstacle("limit[kv_idx % 4] > 0"), "it indexes a buffer by kv_idx: limit[kv_idx % 4]");
  EXPECT_EQ(obstacle("kv_idx < 2.5 * q_idx"), "it computes in float: 2.5 * q_idx");
  EXPECT_EQ(obstacle("slope[h] > 0.5 || kv_idx < 3"), "it computes in float: slope[h]");
  EXPECT_EQ(obstacle("int(sqrt(float(kv_idx))) < 4"), "it computes in float: sqrt(float(kv_idx))");
}

TEST(TileBounds, EmitsOneRangeExpressionOverTheHelpers) {
  const Expr mask = Expr::parse(ModKind::mask, "q_idx >= kv_idx && kv_idx < limit[b] || -kv_idx % 3 == 0", declarations());
  EXPECT_EQ(mask.emit_tile_bounds_cuda("bounds"),
            "__device__ __forceinline__ int bounds(int b, FlexjitRange h, FlexjitRange q_idx, FlexjitRange kv_idx, "
            "int q_len, int kv_len, const FlexjitModArgs& args) {\n"
            "  bool flexjit_unsure = false;\n"
            "  const FlexjitTruth flexjit_kept = flexjit_tor(flexjit_tand(flexjit_rge(q_idx, kv_idx), "
            "flexjit_rlt(kv_idx, flexjit_read_range(args.buf_limit, flexjit_unsure, flexjit_range_of(b)))), "
            "flexjit_req(flexjit_rmod(flexjit_rneg(kv_idx), flexjit_range_of(3)), flexjit_range_of(0)));\n"
            "  (void)b; (void)h; (void)q_idx; (void)kv_idx; (void)q_len; (void)kv_len; (void)args;\n"
            "  return flexjit_tile_class(flexjit_kept, flexjit_unsure);\n"
            "}\n");
}

TEST(TileBounds, RefusesWhatItCannotBound) {
  const Expr floats = Expr::parse(ModKind::mask, "kv_idx < 2.5 * q_idx", declarations());
  try {
    floats.emit_tile_bounds_cuda("bounds");
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "this mask_mod has no tile bounds (it computes in float or indexes a buffer by kv_idx); classify its "
              "tiles position by position instead");
  }
  const Expr causal = Expr::parse(ModKind::mask, "q_idx >= kv_idx", declarations());
  EXPECT_THROW(causal.emit_tile_bounds_cuda("not an identifier"), UsageError);
  const Expr score = Expr::parse(ModKind::score, "score", declarations());
  try {
    score.emit_tile_bounds_cuda("bounds");
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "tile bounds need a mask_mod; a score_mod is not a bool");
  }
}

}  // namespace
}  // namespace flexjit::test
