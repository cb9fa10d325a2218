// The in-process memos' container: least recently used entries go first, a context id is part of
// the key, and the first insert of a key wins.
#include "jit/memo.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace flexjit::jit {
namespace {

TEST(LruMemo, EvictsTheLeastRecentlyUsed) {
  LruMemo<std::shared_ptr<int>> memo(2);
  memo.insert({1, "a"}, std::make_shared<int>(10));
  memo.insert({1, "b"}, std::make_shared<int>(20));
  ASSERT_TRUE(memo.find({1, "a"}));  // "a" is now the most recent
  memo.insert({1, "c"}, std::make_shared<int>(30));
  EXPECT_EQ(memo.size(), 2u);
  EXPECT_FALSE(memo.find({1, "b"}));
  ASSERT_TRUE(memo.find({1, "a"}));
  EXPECT_EQ(*memo.find({1, "a"}), 10);
  EXPECT_EQ(*memo.find({1, "c"}), 30);
}

TEST(LruMemo, TheContextIdIsPartOfTheKey) {
  LruMemo<std::shared_ptr<int>> memo(8);
  memo.insert({1, "k"}, std::make_shared<int>(1));
  EXPECT_FALSE(memo.find({2, "k"}));
  memo.insert({2, "k"}, std::make_shared<int>(2));
  EXPECT_EQ(*memo.find({1, "k"}), 1);
  EXPECT_EQ(*memo.find({2, "k"}), 2);
}

TEST(LruMemo, FirstInsertWins) {
  LruMemo<std::shared_ptr<int>> memo(8);
  const auto first = memo.insert({1, "k"}, std::make_shared<int>(1));
  const auto second = memo.insert({1, "k"}, std::make_shared<int>(2));
  EXPECT_EQ(first, second);
  EXPECT_EQ(*second, 1);
  EXPECT_EQ(memo.size(), 1u);
}

}  // namespace
}  // namespace flexjit::jit
