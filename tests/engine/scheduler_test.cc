#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <thread>

#include "engine/batch_plan.h"
#include "fake_step_models.h"

namespace verdict::engine {
namespace {

using testing::Gate;
using testing::GatedStepModel;
using testing::PrefixHashModel;

using testing::kHidden;

std::vector<TokenId> record(int seed, int length) {
  std::vector<TokenId> ids(static_cast<std::size_t>(length));
  for (int i = 0; i < length; ++i) ids[static_cast<std::size_t>(i)] = (seed * 131 + i * 7) % 500;
  return ids;
}

std::vector<float> run(Scheduler& s, std::vector<TokenId> ids) {
  auto job = s.submit(std::move(ids));
  job->wait();
  return job->take_hidden();
}

TEST(BatchPlan, GivesEverySequenceItsNextChunkWithinTheBudget) {
  const std::vector<int64_t> remaining = {1300, 10, 0, 700, 5000};
  const auto plan = plan_step(remaining, {.max_batch_tokens = 1100, .chunk_tokens = 512});
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].sequence, 0u);
  EXPECT_EQ(plan[0].tokens, 512);
  EXPECT_EQ(plan[1].sequence, 1u);
  EXPECT_EQ(plan[1].tokens, 10);
  EXPECT_EQ(plan[2].sequence, 3u);  // the finished sequence 2 is skipped
  EXPECT_EQ(plan[2].tokens, 512);
  EXPECT_EQ(plan[3].sequence, 4u);  // what is left of the budget
  EXPECT_EQ(plan[3].tokens, 1100 - 1034);
}

TEST(BatchPlan, PiecesThatAreNotLastEndOnTheModelsGrid) {
  const std::vector<int64_t> remaining = {1300, 10, 0, 700, 5000, 2};
  // chunk_tokens 500 becomes 448, the largest multiple of 64 under it.
  const auto plan = plan_step(remaining, {.max_batch_tokens = 1100, .chunk_tokens = 500}, 64);
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan[0].tokens, 448);
  EXPECT_EQ(plan[1].tokens, 10);   // a last piece may end anywhere
  EXPECT_EQ(plan[2].sequence, 3u);
  EXPECT_EQ(plan[2].tokens, 448);
  EXPECT_EQ(plan[3].sequence, 4u);
  EXPECT_EQ(plan[3].tokens, 192);  // 194 tokens of budget left: cut on the grid
  EXPECT_EQ(plan[4].sequence, 5u);
  EXPECT_EQ(plan[4].tokens, 2);    // the 2 tokens left serve a last piece that fits
}

TEST(BatchPlan, ASequenceThatDoesNotFitOnTheGridWaitsForTheNextStep) {
  const std::vector<int64_t> remaining = {100, 130, 20};
  const auto plan = plan_step(remaining, {.max_batch_tokens = 150, .chunk_tokens = 512}, 64);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].tokens, 100);
  EXPECT_EQ(plan[1].sequence, 2u);  // 50 tokens left: none of sequence 1's, all of sequence 2's
  EXPECT_EQ(plan[1].tokens, 20);
}

TEST(BatchPlan, ABudgetBelowTheGridStillMovesOnePieceAStep) {
  const std::vector<int64_t> remaining = {100, 5};
  const auto plan = plan_step(remaining, {.max_batch_tokens = 10, .chunk_tokens = 10}, 64);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].tokens, 64);
  EXPECT_EQ(aligned_chunk(10, 64), 64);
  EXPECT_EQ(aligned_chunk(1000, 64), 960);
  EXPECT_EQ(aligned_chunk(7, 1), 7);
  EXPECT_EQ(next_piece(70, 100, 64), 70);
  EXPECT_EQ(next_piece(170, 100, 64), 64);
  EXPECT_EQ(next_piece(170, 60, 64), 0);
}

TEST(BatchPlan, EmptyWhenNothingRemains) {
  const std::vector<int64_t> remaining = {0, 0};
  EXPECT_TRUE(plan_step(remaining, {}).empty());
}

TEST(Scheduler, OneRecordGivesWhatTheModelGivesAlone) {
  Scheduler s(std::make_unique<PrefixHashModel>(kHidden, 1000, 4, 4096), {});
  const auto ids = record(1, 37);
  EXPECT_EQ(run(s, ids), PrefixHashModel::reference(ids, kHidden));
}

TEST(Scheduler, LongRecordsArePrefilledInChunksInterleavedWithOthers) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  SchedulerOptions options;
  options.batch = {.max_batch_tokens = 8192, .chunk_tokens = 512};
  Scheduler s(std::make_unique<GatedStepModel>(std::make_unique<PrefixHashModel>(kHidden, 1000, 4, 4096), gate),
              options);
  // The first step holds a short record; the long one and two short ones queue behind it.
  auto first = s.submit(record(0, 5));
  ASSERT_TRUE(gate->wait_entered(1));
  auto long_job = s.submit(record(1, 1300));
  auto a = s.submit(record(2, 40));
  auto b = s.submit(record(3, 600));
  gate->open();
  for (auto* job : {&first, &long_job, &a, &b}) (*job)->wait();
  EXPECT_EQ(long_job->take_hidden(), PrefixHashModel::reference(record(1, 1300), kHidden));
  EXPECT_EQ(a->take_hidden(), PrefixHashModel::reference(record(2, 40), kHidden));
  EXPECT_EQ(b->take_hidden(), PrefixHashModel::reference(record(3, 600), kHidden));
  const SchedulerStats st = s.stats();
  // Step 1: the first record. Step 2: 512 + 40 + 512. Step 3: 512 + 88. Step 4: 276.
  EXPECT_EQ(st.steps, 4u);
  EXPECT_EQ(st.max_step_sequences, 3);
  EXPECT_EQ(st.step_tokens, 5u + 1300u + 40u + 600u);
  EXPECT_EQ(st.jobs_done, 4u);
  EXPECT_EQ(st.pending_tokens, 0);
}

// A model whose results change when a record is cut off its grid (the fake refuses such a piece):
// however full the steps are, every record is cut on the grid and gets what it gets alone.
TEST(Scheduler, RecordsAreCutOnlyOnTheModelsGrid) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  SchedulerOptions options;
  options.batch = {.max_batch_tokens = 300, .chunk_tokens = 100};
  Scheduler s(std::make_unique<GatedStepModel>(std::make_unique<PrefixHashModel>(kHidden, 1000, 8, 4096, 64), gate),
              options);
  auto blocker = s.submit(record(99, 3));
  ASSERT_TRUE(gate->wait_entered(1));
  const std::vector<int> lengths = {300, 200, 777, 150, 65, 64, 1, 129};
  std::vector<std::shared_ptr<Job>> jobs;
  for (std::size_t i = 0; i < lengths.size(); ++i) jobs.push_back(s.submit(record(static_cast<int>(i), lengths[i])));
  gate->open();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i]->wait();
    std::vector<float> hidden;
    try {
      hidden = jobs[i]->take_hidden();
    } catch (const Error& e) {
      FAIL() << "record " << i << " failed: " << e.what();
    }
    EXPECT_EQ(hidden, PrefixHashModel::reference(record(static_cast<int>(i), lengths[i]), kHidden)) << i;
  }
  EXPECT_EQ(s.stats().jobs_failed, 0u);
}

TEST(Scheduler, ConcurrentSubmittersShareForwardSteps) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  SchedulerOptions options;
  options.batch.max_batch_tokens = 8192;  // room for 8 of these records per step (the default is 512)
  Scheduler s(std::make_unique<GatedStepModel>(std::make_unique<PrefixHashModel>(kHidden, 1000, 8, 4096), gate),
              options);
  auto blocker = s.submit(record(99, 3));
  ASSERT_TRUE(gate->wait_entered(1));
  std::vector<std::thread> threads;
  std::vector<std::vector<float>> results(16);
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] { results[static_cast<std::size_t>(i)] = run(s, record(i, 20 + i * 13)); });
  }
  // Every submitter is queued before the engine runs again.
  for (int spin = 0; spin < 1000 && s.stats().queued < 16; ++spin) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(s.stats().queued, 16u);
  gate->open();
  for (auto& t : threads) t.join();
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(results[static_cast<std::size_t>(i)], PrefixHashModel::reference(record(i, 20 + i * 13), kHidden)) << i;
  const SchedulerStats st = s.stats();
  EXPECT_EQ(st.max_step_sequences, 8);  // every slot in one step
  EXPECT_EQ(st.steps, 3u);              // blocker, then 8 + 8
  EXPECT_EQ(st.step_sequence_counts[0], 1u);  // the blocker alone
  EXPECT_EQ(st.step_sequence_counts[3], 2u);  // two steps of 5–8 sequences
}

TEST(Scheduler, RefusesWhenTheQueueIsFull) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  SchedulerOptions options;
  options.max_queue = 2;
  options.name = "m";
  Scheduler s(std::make_unique<GatedStepModel>(std::make_unique<PrefixHashModel>(kHidden, 1000, 1, 64), gate), options);
  auto running = s.submit(record(0, 4));
  ASSERT_TRUE(gate->wait_entered(1));
  auto q1 = s.submit(record(1, 4));
  auto q2 = s.submit(record(2, 4));
  try {
    s.submit(record(3, 4));
    FAIL() << "expected QueueFullError";
  } catch (const QueueFullError& e) {
    EXPECT_STREQ(e.what(), "server busy: the queue for model 'm' is full; retry later");
  }
  EXPECT_EQ(s.stats().jobs_rejected, 1u);
  gate->open();
  for (auto* j : {&running, &q1, &q2}) (*j)->wait();
  EXPECT_EQ(s.stats().jobs_done, 3u);
}

TEST(Scheduler, CancelledJobsLeaveTheQueueAndFreeTheirSlots) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  SchedulerOptions options;
  options.batch.chunk_tokens = 4;
  Scheduler s(std::make_unique<GatedStepModel>(std::make_unique<PrefixHashModel>(kHidden, 1000, 1, 64), gate), options);
  auto running = s.submit(record(0, 12));  // three steps of 4
  ASSERT_TRUE(gate->wait_entered(1));
  auto queued = s.submit(record(1, 4));
  EXPECT_TRUE(s.cancel_queued(queued));
  EXPECT_EQ(queued->state(), JobState::kCancelled);
  EXPECT_THROW(queued->take_hidden(), JobCancelled);
  EXPECT_FALSE(s.cancel_queued(running));  // it holds a slot
  EXPECT_TRUE(s.cancel(running));
  auto next = s.submit(record(2, 4));
  gate->open();
  running->wait();
  EXPECT_EQ(running->state(), JobState::kCancelled);
  EXPECT_EQ(run(s, record(3, 4)), PrefixHashModel::reference(record(3, 4), kHidden));
  next->wait();
  EXPECT_EQ(next->take_hidden(), PrefixHashModel::reference(record(2, 4), kHidden));
  EXPECT_FALSE(s.cancel(next));
  EXPECT_EQ(s.stats().jobs_cancelled, 2u);
}

TEST(Scheduler, AFailedStepFailsOnlyItsJobs) {
  auto model = std::make_unique<PrefixHashModel>(kHidden, 1000, 2, 64);
  PrefixHashModel* raw = model.get();
  Scheduler s(std::move(model), {});
  raw->fail_next = true;
  auto bad = s.submit(record(0, 4));
  bad->wait();
  EXPECT_EQ(bad->state(), JobState::kFailed);
  try {
    bad->take_hidden();
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "forward step failed: injected failure");
  }
  EXPECT_EQ(run(s, record(1, 9)), PrefixHashModel::reference(record(1, 9), kHidden));
  EXPECT_EQ(s.stats().jobs_failed, 1u);
}

TEST(Scheduler, RefusesRecordsTheModelCannotRun) {
  SchedulerOptions options;
  options.name = "tiny";
  Scheduler s(std::make_unique<PrefixHashModel>(kHidden, 100, 1, 16), options);
  EXPECT_THROW(s.submit({}), Error);
  EXPECT_THROW(s.submit(std::vector<TokenId>(17, 1)), Error);
  EXPECT_THROW(s.submit({1, 100}), Error);
  EXPECT_THROW(s.submit({-1}), Error);
  EXPECT_EQ(run(s, std::vector<TokenId>(16, 99)).size(), 16u * kHidden);
}

TEST(Scheduler, StoppingCancelsWhatIsLeft) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  std::shared_ptr<Job> running, queued;
  std::thread opener;
  {
    Scheduler s(std::make_unique<GatedStepModel>(std::make_unique<PrefixHashModel>(kHidden, 1000, 1, 64), gate), {});
    running = s.submit(record(0, 4));
    ASSERT_TRUE(gate->wait_entered(1));
    queued = s.submit(record(1, 4));
    opener = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      gate->open();
    });
  }  // the destructor waits for the held step, then cancels the queued job
  opener.join();
  EXPECT_EQ(running->state(), JobState::kDone);
  EXPECT_EQ(queued->state(), JobState::kCancelled);
}

TEST(Scheduler, EstimatesTheWaitFromMeasuredThroughput) {
  Scheduler s(std::make_unique<PrefixHashModel>(kHidden, 1000, 2, 4096), {});
  EXPECT_FALSE(s.estimated_wait_seconds().has_value());
  run(s, record(0, 2000));
  ASSERT_TRUE(s.estimated_wait_seconds().has_value());
  EXPECT_EQ(*s.estimated_wait_seconds(), 0.0);  // nothing pending
  EXPECT_GT(s.stats().tokens_per_second(), 0.0);
}

}  // namespace
}  // namespace verdict::engine
