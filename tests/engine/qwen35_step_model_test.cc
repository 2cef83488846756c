// The scheduler over the real Qwen3.5 backbone (qwen35-tiny, packed kernels as served): a record's
// rows do not depend on what shared its steps, because records are cut only on the backbone's
// prefill grid. Cut where the step budget ends instead (100 tokens in here), the packed kernels'
// int8 activations move the rows visibly.
#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

#include "core/json.h"
#include "engine/qwen35_step_model.h"
#include "engine/scheduler.h"
#include "fake_step_models.h"
#include "models/qwen35/backbone.h"
#include "support/fixtures.h"
#include "support/scoped_env.h"

namespace verdict::engine {
namespace {

using testing::Gate;
using testing::GatedStepModel;

std::vector<TokenId> p300_ids() {
  const Json golden = load_json_file(verdict::testing::fixture("qwen35-tiny/golden.json"));
  std::vector<TokenId> ids;
  for (const Json& id : golden["prompts"][2]["ids"]) ids.push_back(static_cast<TokenId>(id.get<int64_t>()));
  return ids;
}

TEST(Qwen35StepModel, ARecordGetsTheSameRowsAloneAndInAFullStep) {
  const verdict::testing::ScopedEnv packed("VERDICT_PACK", nullptr);
  const auto backbone = models::qwen35::Backbone::load(verdict::testing::fixture("qwen35-tiny"));
  const std::vector<TokenId> ids = p300_ids();
  ASSERT_EQ(ids.size(), 300u);
  const std::vector<TokenId> other(ids.rbegin(), ids.rbegin() + 200);

  Scheduler alone(std::make_unique<Qwen35StepModel>(*backbone, 1, 512), {});
  EXPECT_EQ(alone.stats().steps, 0u);
  auto job = alone.submit(ids);
  job->wait();
  const std::vector<float> want = job->take_hidden();
  ASSERT_EQ(want.size(), 300u * static_cast<std::size_t>(backbone->config().hidden));

  // 300 tokens a step: the 200-token record first, then as much of ours as fits on the grid (64).
  auto gate = std::make_shared<Gate>();
  gate->close();
  SchedulerOptions options;
  options.batch = {.max_batch_tokens = 300, .chunk_tokens = 512};
  Scheduler busy(std::make_unique<GatedStepModel>(std::make_unique<Qwen35StepModel>(*backbone, 3, 512), gate), options);
  auto blocker = busy.submit(std::vector<TokenId>(ids.begin(), ids.begin() + 3));
  ASSERT_TRUE(gate->wait_entered(1));
  auto first = busy.submit(other);
  auto ours = busy.submit(ids);
  gate->open();
  first->wait();
  ours->wait();
  EXPECT_EQ(ours->take_hidden(), want);
  EXPECT_EQ(busy.stats().max_step_sequences, 2);
  EXPECT_EQ(busy.stats().steps, 3u);  // the blocker; 200 + 64; 236
}

// Runs one record to the end; its rows, and how many leading tokens came from the prefix cache.
std::pair<std::vector<float>, std::size_t> run(Scheduler& s, const std::vector<TokenId>& ids,
                                               std::vector<int64_t> seams) {
  auto job = s.submit(ids, std::move(seams));
  job->wait();
  const std::size_t cached = job->cached_tokens();
  return {job->take_hidden(), cached};
}

// The prefix cache (clef-decision.md §5): a record that resumes from a saved seam gets the rows it
// would have computed, bit for bit; a prefix is reused only at one of the new record's own seams.
TEST(Qwen35StepModel, ARecordResumedFromThePrefixCacheGetsTheRowsItWouldCompute) {
  const verdict::testing::ScopedEnv packed("VERDICT_PACK", nullptr);
  const auto backbone = models::qwen35::Backbone::load(verdict::testing::fixture("qwen35-tiny"));
  const std::vector<TokenId> ids = p300_ids();
  std::vector<TokenId> other(ids.begin(), ids.begin() + 36);  // same prefix, another "state"
  other.insert(other.end(), ids.rbegin(), ids.rbegin() + 150);
  const std::vector<int64_t> seams = {36, 107}, other_seams = {36, 90}, first_only = {36};

  Scheduler plain(std::make_unique<Qwen35StepModel>(*backbone, 1, 512), {});
  const auto [want, none] = run(plain, ids, seams);
  EXPECT_EQ(none, 0u);
  const std::vector<float> want_other = run(plain, other, other_seams).first;
  const std::vector<float> want_first_only = run(plain, ids, first_only).first;
  EXPECT_NE(want_first_only, want);  // seams are part of the computation (within rounding)
  {  // what `verdict decide` runs: Backbone::prefill with the record's seams
    models::qwen35::SeqStatePool pool = backbone->make_pool(1, 512);
    EXPECT_EQ(backbone->prefill(pool, pool.acquire(), ids, {}, models::qwen35::kDefaultPrefillChunk, seams).hidden, want);
  }

  SchedulerOptions options;
  options.prefix_cache_bytes = std::size_t{64} << 20;
  Scheduler cached(std::make_unique<Qwen35StepModel>(*backbone, 1, 512), options);
  EXPECT_EQ(run(cached, ids, seams), std::make_pair(want, std::size_t{0}));  // saves at 36 and 107 in passing
  EXPECT_EQ(cached.stats().steps, 1u);
  EXPECT_EQ(cached.stats().prefix_cache.entries, 2u);
  EXPECT_EQ(run(cached, ids, seams), std::make_pair(want, std::size_t{107}));
  EXPECT_EQ(cached.stats().steps, 2u);
  EXPECT_EQ(run(cached, other, other_seams), std::make_pair(want_other, std::size_t{36}));
  EXPECT_EQ(run(cached, ids, first_only), std::make_pair(want_first_only, std::size_t{36}));
  const engine::PrefixCacheStats stats = cached.stats().prefix_cache;
  EXPECT_EQ(stats.lookups, 4u);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.hit_tokens, 107u + 36u + 36u);
  EXPECT_EQ(stats.entries, 3u);  // and `other` saved at 90
  EXPECT_EQ(stats.bytes, 36 * 4 + 107 * 4 + 90 * 4 + (36 + 107 + 90) * 4 * std::size_t(backbone->config().hidden) +
                             models::qwen35::snapshot_bytes(backbone->config(), 36) +
                             models::qwen35::snapshot_bytes(backbone->config(), 107) +
                             models::qwen35::snapshot_bytes(backbone->config(), 90));

  // Cut into pieces of 64 around the seams (a small step budget), resumed or not: the same rows.
  SchedulerOptions small = options;
  small.batch = {.max_batch_tokens = 64, .chunk_tokens = 64};
  Scheduler pieces(std::make_unique<Qwen35StepModel>(*backbone, 1, 512), small);
  EXPECT_EQ(run(pieces, ids, seams), std::make_pair(want, std::size_t{0}));
  EXPECT_EQ(pieces.stats().steps, 7u);  // 0–36, 36–100, 100–107, 107–171, 171–235, 235–299, 299–300
  EXPECT_EQ(run(pieces, ids, seams), std::make_pair(want, std::size_t{107}));
  EXPECT_EQ(pieces.stats().steps, 11u);

  // A cache too small for any state: nothing saved.
  options.prefix_cache_bytes = 1024;
  Scheduler tiny(std::make_unique<Qwen35StepModel>(*backbone, 1, 512), options);
  EXPECT_EQ(run(tiny, ids, seams), std::make_pair(want, std::size_t{0}));
  EXPECT_EQ(run(tiny, ids, seams), std::make_pair(want, std::size_t{0}));
  EXPECT_EQ(tiny.stats().prefix_cache.entries, 0u);
}

// A model that cannot save states (a wrapper that does not say it can): no cache, same rows.
TEST(Qwen35StepModel, AModelThatCannotSaveStatesRunsWithoutCache) {
  const auto backbone = models::qwen35::Backbone::load(verdict::testing::fixture("qwen35-tiny"));
  const std::vector<TokenId> ids = p300_ids();
  const std::vector<int64_t> seams = {36, 107};
  SchedulerOptions options;
  options.prefix_cache_bytes = std::size_t{64} << 20;
  Scheduler plain(std::make_unique<Qwen35StepModel>(*backbone, 1, 512), {});
  auto gate = std::make_shared<Gate>();
  Scheduler wrapped(std::make_unique<GatedStepModel>(std::make_unique<Qwen35StepModel>(*backbone, 1, 512), gate,
                                                     /*forward_saves=*/false),
                    options);
  const std::vector<float> want = run(plain, ids, seams).first;
  EXPECT_EQ(run(wrapped, ids, seams), std::make_pair(want, std::size_t{0}));
  EXPECT_EQ(run(wrapped, ids, seams), std::make_pair(want, std::size_t{0}));
  EXPECT_EQ(wrapped.stats().prefix_cache.lookups, 0u);
}

TEST(Qwen35StepModel, RecordsWithBadSeamsAreRefused) {
  const auto backbone = models::qwen35::Backbone::load(verdict::testing::fixture("qwen35-tiny"));
  Scheduler s(std::make_unique<Qwen35StepModel>(*backbone, 1, 512), {});
  const std::vector<TokenId> ids(20, 5);
  for (const std::vector<int64_t>& bad : std::vector<std::vector<int64_t>>{{0}, {20}, {25}, {8, 8}, {9, 3}, {-1}})
    EXPECT_THROW(s.submit(ids, bad), Error) << bad[0];
}

}  // namespace
}  // namespace verdict::engine
