// flexjit::mods: the ready-made expressions parse, mean what they say, and compose.
#include <gtest/gtest.h>

#include <cmath>

#include "expr_test_util.hpp"

namespace flexjit::test {
namespace {

bool keeps(const Expr& mask, int q, int kv, const EvalInputs& inputs = {}) {
  EvalPoint p;
  p.q_idx = q;
  p.kv_idx = kv;
  return mask.evaluate(p, inputs) != 0.0;
}

TEST(Mods, Text) {
  EXPECT_EQ(mods::causal(), "q_idx >= kv_idx");
  EXPECT_EQ(mods::sliding_window(1024), "q_idx >= kv_idx && q_idx - kv_idx <= 1024");
  EXPECT_EQ(mods::prefix_lm(512), "kv_idx < 512 || q_idx >= kv_idx");
  EXPECT_EQ(mods::document("doc"), "doc[q_idx] == doc[kv_idx]");
  EXPECT_EQ(mods::alibi("slope"), "score + slope[h] * (kv_idx - q_idx)");
  EXPECT_EQ(mods::softcap(30), "30.0 * tanh(score / 30.0)");
  EXPECT_EQ(mods::softcap(0.1), "0.1 * tanh(score / 0.1)");
  EXPECT_EQ(mods::and_masks({mods::document("doc"), mods::causal()}),
            "(doc[q_idx] == doc[kv_idx]) && (q_idx >= kv_idx)");
  EXPECT_EQ(mods::or_masks({"a", "b", "c"}), "(a) || (b) || (c)");
  EXPECT_EQ(mods::and_masks({}), "true");
  EXPECT_EQ(mods::or_masks({}), "false");
}

TEST(Mods, MeanWhatTheySay) {
  const Expr causal = mask_mod(mods::causal());
  EXPECT_TRUE(keeps(causal, 5, 5));
  EXPECT_FALSE(keeps(causal, 5, 6));
  const Expr window = mask_mod(mods::sliding_window(3));
  EXPECT_TRUE(keeps(window, 10, 7));
  EXPECT_FALSE(keeps(window, 10, 6));
  EXPECT_FALSE(keeps(window, 10, 11));
  const Expr prefix = mask_mod(mods::prefix_lm(4));
  EXPECT_TRUE(keeps(prefix, 0, 3));
  EXPECT_FALSE(keeps(prefix, 0, 4));
  EXPECT_TRUE(keeps(prefix, 9, 8));
  const std::vector<int32_t> doc = {0, 0, 1, 1, 1};
  EvalInputs inputs;
  inputs.buffers["doc"] = {doc.data(), DType::i32, {5}};
  const Expr packed = mask_mod(mods::and_masks({mods::document("doc"), mods::causal()}), suite_declarations());
  EXPECT_TRUE(keeps(packed, 1, 0, inputs));
  EXPECT_FALSE(keeps(packed, 2, 1, inputs));
  EXPECT_TRUE(keeps(packed, 4, 2, inputs));
  EXPECT_FALSE(keeps(packed, 2, 3, inputs));
  const Expr either = mask_mod(mods::or_masks({"kv_idx < 1", mods::sliding_window(0)}));
  EXPECT_TRUE(keeps(either, 7, 0));
  EXPECT_TRUE(keeps(either, 7, 7));
  EXPECT_FALSE(keeps(either, 7, 6));
  EXPECT_TRUE(mask_mod(mods::and_masks({})).is_always_true());
  EXPECT_TRUE(mask_mod(mods::or_masks({})).is_always_false());
  EXPECT_NO_THROW(score_mod(mods::alibi("slope")));
  EXPECT_DOUBLE_EQ(score_mod(mods::softcap(30)).gradient().evaluate({}, {}), 1.0);
}

TEST(Mods, RejectBadArguments) {
  EXPECT_EQ(usage_error_of([] { mods::sliding_window(-1); }), "mods::sliding_window: the window must be >= 0, got -1");
  EXPECT_EQ(usage_error_of([] { mods::prefix_lm(-2); }), "mods::prefix_lm: the prefix must be >= 0, got -2");
  EXPECT_EQ(usage_error_of([] { mods::document("doc]; x"); }), "mods::document: 'doc]; x' is not a valid buffer name");
  EXPECT_EQ(usage_error_of([] { mods::alibi(""); }), "mods::alibi: '' is not a valid buffer name");
  EXPECT_EQ(usage_error_of([] { mods::softcap(0); }), "mods::softcap: the cap must be a positive finite number, got 0.0");
  EXPECT_EQ(usage_error_of([] { mods::softcap(-HUGE_VAL); }),
            "mods::softcap: the cap must be a positive finite number, got -inf");
}

}  // namespace
}  // namespace flexjit::test
