// Continuous batching of generations in the scheduler, against the deterministic PrefixHashModel:
// every generated sequence must equal what the model gives for that sequence alone, one token at a
// time, however the engine chunks prompts and mixes sequences and decisions in its steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "engine/compute_gate.h"
#include "engine/scheduler.h"
#include "fake_step_models.h"

namespace verdict::engine {
namespace {

using testing::Gate;
using testing::GatedStepModel;
using testing::PrefixHashModel;

using testing::kHidden;
constexpr int64_t kVocab = 64;

std::vector<TokenId> prompt_of(int seed, int length) {
  std::vector<TokenId> ids(static_cast<std::size_t>(length));
  for (int i = 0; i < length; ++i) ids[static_cast<std::size_t>(i)] = (seed * 31 + i * 7) % kVocab;
  return ids;
}

TokenId argmax(std::span<const float> row) {
  return static_cast<TokenId>(std::max_element(row.begin(), row.end()) - row.begin());
}

// Greedy: `max_new` tokens, then finished.
class GreedySource final : public TokenSource {
 public:
  explicit GreedySource(std::size_t max_new) : max_new_(max_new) {}

  std::optional<TokenId> next(std::span<const float> logits) override {
    std::lock_guard lock(mutex_);
    EXPECT_FALSE(done_) << "next() after the end";
    EXPECT_EQ(logits.size(), static_cast<std::size_t>(kVocab));
    const TokenId t = argmax(logits);
    tokens_.push_back(t);
    if (tokens_.size() < max_new_) return t;
    done_ = true;
    cv_.notify_all();
    return std::nullopt;
  }
  void end(EndReason reason, const std::string& message) override {
    std::lock_guard lock(mutex_);
    EXPECT_FALSE(done_) << "end() after the end";
    ended_ = reason;
    message_ = message;
    done_ = true;
    cv_.notify_all();
  }
  bool wait(int timeout_ms = 20000) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return done_; });
  }
  std::vector<TokenId> tokens() const {
    std::lock_guard lock(mutex_);
    return tokens_;
  }
  std::optional<EndReason> ended() const {
    std::lock_guard lock(mutex_);
    return ended_;
  }
  std::size_t count() const {
    std::lock_guard lock(mutex_);
    return tokens_.size();
  }

 private:
  const std::size_t max_new_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<TokenId> tokens_;
  std::optional<EndReason> ended_;
  std::string message_;
  bool done_ = false;
};

// What the model generates greedily after `prompt` when run alone, a full forward per token.
std::vector<TokenId> reference_generation(std::vector<TokenId> prompt, std::size_t max_new) {
  std::vector<TokenId> out;
  for (std::size_t i = 0; i < max_new; ++i) {
    const TokenId t = argmax(PrefixHashModel::reference_logits(prompt, kVocab));
    out.push_back(t);
    prompt.push_back(t);
  }
  return out;
}

// The engine counts a step and ends its finished jobs just after their sources saw the last token:
// waits (bounded) until no generation is queued or running.
void settle(const Scheduler& s) {
  for (int i = 0; i < 2000; ++i) {
    const SchedulerStats st = s.stats();
    if (st.generations_running + st.generations_queued == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

SchedulerOptions options(int64_t chunk = 512) {
  SchedulerOptions o;
  o.batch.chunk_tokens = chunk;
  o.gate = std::make_shared<ComputeGate>();
  return o;
}

TEST(Generation, OneSequenceGeneratesWhatTheModelGivesAlone) {
  Scheduler s(std::make_unique<PrefixHashModel>(kHidden, kVocab, 4, 4096), options(64));
  const auto prompt = prompt_of(1, 150);  // three prefill chunks
  auto source = std::make_shared<GreedySource>(12);
  auto job = s.submit_generation(prompt, source);
  ASSERT_TRUE(source->wait());
  EXPECT_FALSE(source->ended().has_value());
  EXPECT_EQ(source->tokens(), reference_generation(prompt, 12));
  settle(s);
  EXPECT_TRUE(job->finished());
  const SchedulerStats st = s.stats();
  EXPECT_EQ(st.generated_tokens, 12u);
  EXPECT_EQ(st.prompt_tokens, 150u);
  EXPECT_EQ(st.generations_done, 1u);
  EXPECT_EQ(st.steps, 3u + 11u);  // 3 prefill chunks, then one decode step per token fed back
}

TEST(Generation, ConcurrentSequencesAndDecisionsShareStepsWithoutChangingResults) {
  // The first step is held until every job is queued: on a loaded machine the scheduler could otherwise finish
  // each sequence before the next one arrives, and no step would be shared.
  auto gate = std::make_shared<Gate>();
  gate->close();
  Scheduler s(std::make_unique<GatedStepModel>(std::make_unique<PrefixHashModel>(kHidden, kVocab, 6, 4096), gate),
              options(32));
  std::vector<std::shared_ptr<GreedySource>> sources;
  std::vector<std::vector<TokenId>> prompts;
  for (int i = 0; i < 10; ++i) {  // more than the slots: some wait in the queue
    prompts.push_back(prompt_of(i + 3, 5 + 23 * i));
    sources.push_back(std::make_shared<GreedySource>(static_cast<std::size_t>(4 + i)));
    s.submit_generation(prompts.back(), sources.back());
  }
  std::vector<std::shared_ptr<Job>> decisions;
  for (int i = 0; i < 3; ++i) decisions.push_back(s.submit(prompt_of(100 + i, 70)));
  ASSERT_TRUE(gate->wait_entered(1));
  gate->open();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    ASSERT_TRUE(sources[i]->wait()) << i;
    EXPECT_EQ(sources[i]->tokens(), reference_generation(prompts[i], 4 + i)) << i;
  }
  for (int i = 0; i < 3; ++i) {
    decisions[static_cast<std::size_t>(i)]->wait();
    EXPECT_EQ(decisions[static_cast<std::size_t>(i)]->take_hidden(), PrefixHashModel::reference(prompt_of(100 + i, 70), kHidden));
  }
  settle(s);
  const SchedulerStats st = s.stats();
  EXPECT_GT(st.max_step_sequences, 1);  // sequences really shared steps
  EXPECT_EQ(st.generations_done, 10u);
  EXPECT_EQ(st.generations_running + st.generations_queued, 0u);
}

// A model whose results change when a prompt is cut off its grid (the fake refuses such a piece):
// prompts that share the prefill budget are cut on the grid only, and generate what they do alone.
TEST(Generation, PromptsAreCutOnlyOnTheModelsGrid) {
  Scheduler s(std::make_unique<PrefixHashModel>(kHidden, kVocab, 6, 4096, 16), options(40));  // 32 a step
  std::vector<std::shared_ptr<GreedySource>> sources;
  std::vector<std::vector<TokenId>> prompts;
  for (int length : {50, 70, 45, 16, 33}) {
    prompts.push_back(prompt_of(length, length));
    sources.push_back(std::make_shared<GreedySource>(3));
    s.submit_generation(prompts.back(), sources.back());
  }
  auto decision = s.submit(prompt_of(7, 90));
  for (std::size_t i = 0; i < sources.size(); ++i) {
    ASSERT_TRUE(sources[i]->wait()) << i;
    EXPECT_FALSE(sources[i]->ended().has_value()) << i;
    EXPECT_EQ(sources[i]->tokens(), reference_generation(prompts[i], 3)) << i;
  }
  decision->wait();
  EXPECT_EQ(decision->take_hidden(), PrefixHashModel::reference(prompt_of(7, 90), kHidden));
  settle(s);
  EXPECT_EQ(s.stats().generations_failed, 0u);
}

TEST(Generation, PrefillNeverTakesMoreThanOneChunkPerStep) {
  // A decoding stream keeps getting a token every step while a long prompt is prefilled in chunks.
  Scheduler s(std::make_unique<PrefixHashModel>(kHidden, kVocab, 4, 1 << 20), options(100));
  auto streaming = std::make_shared<GreedySource>(1u << 30);
  auto stream_job = s.submit_generation(prompt_of(1, 10), streaming);
  while (streaming->count() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::size_t before = streaming->count();
  const uint64_t steps_before = s.stats().steps;
  auto long_prompt = std::make_shared<GreedySource>(1);
  s.submit_generation(prompt_of(2, 1000), long_prompt);  // ten chunks of 100
  ASSERT_TRUE(long_prompt->wait());
  const std::size_t gained = streaming->count() - before;
  // A step's statistics are counted just after its tokens reach the sources: let the last one land.
  uint64_t steps = 0;
  for (int i = 0; i < 1000 && steps < 10; ++i) {
    steps = s.stats().steps - steps_before;
    if (steps < 10) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  s.cancel(stream_job);
  EXPECT_GE(steps, 10u);    // ten prefill chunks, not one big step
  EXPECT_GE(gained, 9u);    // the stream advanced during the prefill, one token per step
  EXPECT_EQ(long_prompt->tokens(), reference_generation(prompt_of(2, 1000), 1));
  ASSERT_TRUE(streaming->wait());
}

TEST(Generation, EndsWithContextFullWhenTheSlotIsFull) {
  Scheduler s(std::make_unique<PrefixHashModel>(kHidden, kVocab, 2, 40), options());
  auto source = std::make_shared<GreedySource>(1000);
  s.submit_generation(prompt_of(5, 30), source);
  ASSERT_TRUE(source->wait());
  EXPECT_EQ(source->ended(), EndReason::kContextFull);
  // 30 prompt tokens + 10 fed back fill the 40-token slot; the 11th sampled token is the last.
  EXPECT_EQ(source->tokens(), reference_generation(prompt_of(5, 30), 11));
}

TEST(Generation, CancelStopsARunningSequenceAndFreesItsSlot) {
  Scheduler s(std::make_unique<PrefixHashModel>(kHidden, kVocab, 1, 100000), options());
  auto endless = std::make_shared<GreedySource>(1u << 30);
  auto job = s.submit_generation(prompt_of(1, 8), endless);
  while (endless->count() < 5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(s.cancel(job));
  ASSERT_TRUE(endless->wait());
  EXPECT_EQ(endless->ended(), EndReason::kCancelled);
  EXPECT_FALSE(s.cancel(job));  // already finished
  // The only slot is free again.
  auto next = std::make_shared<GreedySource>(3);
  s.submit_generation(prompt_of(2, 8), next);
  ASSERT_TRUE(next->wait());
  EXPECT_EQ(next->tokens(), reference_generation(prompt_of(2, 8), 3));
  settle(s);
  EXPECT_EQ(s.stats().generations_cancelled, 1u);
}

TEST(Generation, CancelOfAQueuedSequenceEndsItAtOnce) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  Scheduler s(std::make_unique<GatedStepModel>(std::make_unique<PrefixHashModel>(kHidden, kVocab, 1, 1000), gate),
              options());
  auto first = std::make_shared<GreedySource>(2);
  s.submit_generation(prompt_of(1, 8), first);
  ASSERT_TRUE(gate->wait_entered(1));
  auto queued = std::make_shared<GreedySource>(2);
  auto job = s.submit_generation(prompt_of(2, 8), queued);
  EXPECT_TRUE(s.cancel(job));
  EXPECT_TRUE(queued->wait(1000));
  EXPECT_EQ(queued->ended(), EndReason::kCancelled);
  EXPECT_FALSE(job->started());
  gate->open();
  EXPECT_TRUE(first->wait());
}

TEST(Generation, QueueIsBounded) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  SchedulerOptions o = options();
  o.max_queue = 2;
  Scheduler s(std::make_unique<GatedStepModel>(std::make_unique<PrefixHashModel>(kHidden, kVocab, 1, 1000), gate), o);
  std::vector<std::shared_ptr<GreedySource>> sources;
  for (int i = 0; i < 3; ++i) sources.push_back(std::make_shared<GreedySource>(1));
  s.submit_generation(prompt_of(0, 4), sources[0]);
  ASSERT_TRUE(gate->wait_entered(1));  // running: holds the slot
  s.submit_generation(prompt_of(1, 4), sources[1]);
  s.submit_generation(prompt_of(2, 4), sources[2]);
  EXPECT_THROW(s.submit_generation(prompt_of(3, 4), std::make_shared<GreedySource>(1)), QueueFullError);
  gate->open();
  for (auto& src : sources) EXPECT_TRUE(src->wait());
}

TEST(Generation, RejectsPromptsTheModelCannotRun) {
  Scheduler s(std::make_unique<PrefixHashModel>(kHidden, kVocab, 1, 16), options());
  auto src = std::make_shared<GreedySource>(1);
  EXPECT_THROW(s.submit_generation({}, src), Error);
  EXPECT_THROW(s.submit_generation(prompt_of(1, 17), src), Error);
  EXPECT_THROW(s.submit_generation({kVocab}, src), Error);
}

TEST(Generation, AFailedStepEndsTheSequenceAsFailed) {
  auto model = std::make_unique<PrefixHashModel>(kHidden, kVocab, 1, 1000);
  PrefixHashModel* raw = model.get();
  raw->fail_next = true;
  Scheduler s(std::move(model), options());
  auto src = std::make_shared<GreedySource>(3);
  s.submit_generation(prompt_of(1, 4), src);
  ASSERT_TRUE(src->wait());
  EXPECT_EQ(src->ended(), EndReason::kFailed);
  settle(s);
  EXPECT_EQ(s.stats().generations_failed, 1u);
}

TEST(Generation, UnloadEndsRunningAndQueuedSequences) {
  auto endless = std::make_shared<GreedySource>(1u << 30);
  auto queued = std::make_shared<GreedySource>(1);
  {
    Scheduler s(std::make_unique<PrefixHashModel>(kHidden, kVocab, 1, 100000), options());
    s.submit_generation(prompt_of(1, 8), endless);
    s.submit_generation(prompt_of(2, 8), queued);
    while (endless->count() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(endless->ended(), EndReason::kCancelled);
  EXPECT_EQ(queued->ended(), EndReason::kCancelled);
}

}  // namespace
}  // namespace verdict::engine
