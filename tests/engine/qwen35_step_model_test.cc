// The scheduler over the real Qwen3.5 backbone (qwen35-tiny, packed kernels as served): a record's
// rows do not depend on what shared its steps, because records are cut only on the backbone's
// prefill grid. Cut where the step budget ends instead (100 tokens in here), the packed kernels'
// int8 activations move the rows visibly.
#include <gtest/gtest.h>

#include <memory>
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

}  // namespace
}  // namespace verdict::engine
