// The prefix cache (engine/prefix_cache.h) on its own: lookups by exact ids at the given lengths,
// least-recently-used eviction within the byte capacity, counters. And the planner's grid with seams
// (engine/batch_plan.h).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/batch_plan.h"
#include "engine/prefix_cache.h"

namespace verdict::engine {
namespace {

class Blob final : public StateSnapshot {
 public:
  explicit Blob(std::size_t bytes) : bytes_(bytes) {}
  std::size_t bytes() const override { return bytes_; }

 private:
  std::size_t bytes_;
};

// An entry for `tokens` whose state takes `state_bytes` and whose single-float rows hold the ids.
std::shared_ptr<CachedPrefix> entry(std::vector<TokenId> tokens, std::size_t state_bytes) {
  auto e = std::make_shared<CachedPrefix>();
  e->state = std::make_shared<Blob>(state_bytes);
  for (TokenId t : tokens) e->rows.push_back(static_cast<float>(t));
  e->tokens = std::move(tokens);
  return e;
}

TEST(PrefixCache, FindsTheLongestHeldPrefixAtTheGivenLengths) {
  PrefixCache cache(1 << 20);
  ASSERT_TRUE(cache.insert(entry({1, 2, 3}, 100)));
  ASSERT_TRUE(cache.insert(entry({1, 2, 3, 4, 5}, 100)));
  ASSERT_TRUE(cache.insert(entry({1, 2, 9, 9, 9, 9}, 100)));
  const std::vector<TokenId> record = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<int64_t> both = {3, 5}, short_only = {3, 6}, none = {2, 4, 6};
  auto hit = cache.find(record, both);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tokens, (std::vector<TokenId>{1, 2, 3, 4, 5}));
  hit = cache.find(record, short_only);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tokens.size(), 3u);
  EXPECT_FALSE(cache.find(record, none));  // held prefixes must end at one of the record's lengths
  const std::vector<TokenId> other = {1, 2, 3, 4, 6, 6};
  EXPECT_EQ(cache.find(other, both)->tokens.size(), 3u);  // same first 3, different 5th
  const std::vector<int64_t> too_long = {9};
  EXPECT_FALSE(cache.find(record, too_long));
  EXPECT_TRUE(cache.contains(std::vector<TokenId>{1, 2, 9, 9, 9, 9}));
  EXPECT_FALSE(cache.contains(std::vector<TokenId>{1, 2, 9, 9, 9}));

  const PrefixCacheStats s = cache.stats();
  EXPECT_EQ(s.lookups, 5u);
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.hit_tokens, 5u + 3u + 3u);
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.inserts, 3u);
}

TEST(PrefixCache, DropsTheLeastRecentlyUsedToStayWithinItsBytes) {
  const std::size_t each = entry({1, 2}, 1000)->bytes();
  PrefixCache cache(3 * each);
  ASSERT_TRUE(cache.insert(entry({1, 2}, 1000)));
  ASSERT_TRUE(cache.insert(entry({3, 4}, 1000)));
  ASSERT_TRUE(cache.insert(entry({5, 6}, 1000)));
  const std::vector<int64_t> two = {2};
  ASSERT_TRUE(cache.find(std::vector<TokenId>{1, 2, 0}, two));  // {1, 2} is now the most recent
  ASSERT_TRUE(cache.insert(entry({7, 8}, 1000)));                 // {3, 4} goes
  EXPECT_TRUE(cache.contains(std::vector<TokenId>{1, 2}));
  EXPECT_FALSE(cache.contains(std::vector<TokenId>{3, 4}));
  EXPECT_TRUE(cache.contains(std::vector<TokenId>{5, 6}));
  EXPECT_TRUE(cache.contains(std::vector<TokenId>{7, 8}));
  EXPECT_EQ(cache.stats().bytes, 3 * each);
  EXPECT_EQ(cache.stats().evictions, 1u);

  // The same ids again replace the entry; something larger than the whole cache is not held (and
  // evicts nothing).
  ASSERT_TRUE(cache.insert(entry({7, 8}, 1000)));
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_FALSE(cache.insert(entry({9, 9}, 4 * each)));
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_EQ(cache.stats().bytes, 3 * each);
}

TEST(PrefixCache, HoldsManyPrefixesEachUnderItsOwnIds) {
  // Many entries: each found by its own ids, with its own rows.
  PrefixCache cache(1 << 20);
  for (TokenId a = 0; a < 200; ++a) ASSERT_TRUE(cache.insert(entry({a, a + 1, a * 7}, 10)));
  for (TokenId a = 0; a < 200; ++a) {
    const std::vector<TokenId> record = {a, a + 1, a * 7, 5};
    const std::vector<int64_t> three = {3};
    const auto hit = cache.find(record, three);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->rows, (std::vector<float>{float(a), float(a + 1), float(a * 7)}));
  }
}

TEST(BatchPlan, SeamsRestartTheGrid) {
  const std::vector<int64_t> seams = {36, 300};
  EXPECT_EQ(grid_floor(63, seams, 64), 36);
  EXPECT_EQ(grid_floor(299, seams, 64), 292);
  EXPECT_EQ(grid_floor(400, seams, 64), 364);
  // A piece that reaches the end takes all; else it ends on the grid, which restarts at each seam.
  EXPECT_EQ(next_piece(SequenceWork{0, 342, seams}, 512, 64), 342);
  EXPECT_EQ(next_piece(SequenceWork{36, 342, seams}, 200, 64), 192);   // ends at 228 = 36 + 3 · 64
  EXPECT_EQ(next_piece(SequenceWork{36, 1000, seams}, 300, 64), 264);  // ends at the seam 300, not 336
  EXPECT_EQ(next_piece(SequenceWork{36, 1000, seams}, 20, 64), 0);
  const std::vector<SequenceWork> work = {{0, 30, seams}, {36, 1000, seams}};
  const auto plan = plan_step(work, {.max_batch_tokens = 512, .chunk_tokens = 512}, 64);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].tokens, 30);
  EXPECT_EQ(plan[1].tokens, 456);  // 482 tokens of room from 36: 492 = 300 + 3 · 64 is the last grid point
}

}  // namespace
}  // namespace verdict::engine
