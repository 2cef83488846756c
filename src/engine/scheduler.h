// The scheduler: one engine thread per loaded model owns the model's compute and state.
// HTTP threads submit encoded records (decisions: Job) or prompts (generation: GenerationJob); the
// engine thread admits queued jobs to free state slots and runs continuous batching: each step is
// ONE batched forward over
//   * the next chunk of every running record (up to max_batch_tokens): records from different
//     clients share forward passes;
//   * one token of every decoding generation (sequences join and leave between steps);
//   * prefill chunks of generations whose prompt is still running, at most chunk_tokens in all,
//     so a long prompt never stalls the running streams for more than one chunk.
// Records and prompts are cut only on the model's alignment grid (batch_plan.h), so a sequence's
// results never depend on what else was running.
// With a prefix cache (SchedulerOptions::prefix_cache_bytes), a record resumes from the state saved at
// the longest of its seams that an earlier record with the same leading tokens reached
// (prefix_cache.h), and the model saves the state at each seam a step passes that the cache lacks
// (StepInput::save_at), without cutting the step there.
// Decisions are admitted before generations, and every step passes the process-wide ComputeGate,
// where steps carrying decisions go first.
//
// Admission is bounded: submit() refuses with QueueFullError once max_queue jobs are waiting.
#pragma once
#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "engine/batch_plan.h"
#include "engine/compute_gate.h"
#include "engine/generation_job.h"
#include "engine/job.h"
#include "engine/prefix_cache.h"
#include "engine/step_model.h"

namespace verdict::engine {

// submit() when the queue is full (rule O1).
class QueueFullError : public Error {
 public:
  explicit QueueFullError(const std::string& message) : Error(message) {}
};

struct SchedulerOptions {
  BatchLimits batch;
  std::size_t max_queue = 64;  // jobs waiting for a slot
  std::string name = "model";  // in messages
  std::shared_ptr<ComputeGate> gate;  // default: ComputeGate::shared()
  // Bytes of saved record states (and their hidden rows) kept for records that share leading tokens;
  // 0: no prefix cache.
  std::size_t prefix_cache_bytes = 0;
};

// Upper bounds of the sequences-per-step histogram (the last bucket is +Inf).
inline constexpr std::array<int64_t, 7> kStepSequenceBuckets = {1, 2, 4, 8, 16, 32, 64};

struct SchedulerStats {
  std::size_t queued = 0;         // jobs waiting for a slot
  std::size_t running = 0;        // jobs holding a slot
  int64_t pending_tokens = 0;     // tokens not yet run, queued and running jobs together
  uint64_t steps = 0;             // forward steps run
  uint64_t step_tokens = 0;       // tokens run, all steps
  uint64_t step_sequences = 0;    // Σ sequences per step
  int64_t max_step_sequences = 0; // the most sequences one step has run
  std::array<uint64_t, kStepSequenceBuckets.size() + 1> step_sequence_counts{};  // per bucket, not cumulative
  uint64_t jobs_done = 0, jobs_failed = 0, jobs_cancelled = 0, jobs_rejected = 0;
  // Generation.
  std::size_t generations_queued = 0, generations_running = 0;
  uint64_t generated_tokens = 0;  // tokens sampled (decode steps fed, plus each final token)
  uint64_t prompt_tokens = 0;     // generation prompt tokens prefilled
  uint64_t generations_done = 0, generations_cancelled = 0, generations_failed = 0;
  double busy_seconds = 0;        // time spent inside forward
  PrefixCacheStats prefix_cache;  // zeros without a cache

  // Tokens per second of forward time (0 before the first step).
  double tokens_per_second() const { return busy_seconds > 0 ? static_cast<double>(step_tokens) / busy_seconds : 0; }
};

class Scheduler {
 public:
  Scheduler(std::unique_ptr<StepModel> model, SchedulerOptions options);
  // Stops the engine thread; jobs still queued or running are cancelled ("model unloaded").
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a record with its seams (StepInput::seams: ascending positions inside the record; where the
  // prefix cache may resume it). Throws QueueFullError when max_queue jobs already wait, verdict::Error
  // for a record the model cannot run (empty, longer than a state slot, ids outside the vocabulary,
  // seams out of order or outside it) or when the scheduler is stopping.
  std::shared_ptr<Job> submit(std::vector<TokenId> tokens, std::vector<int64_t> seams = {});

  // Queues a generation. Throws QueueFullError when max_queue generations already wait, and
  // verdict::Error for a prompt the model cannot run (empty, longer than a state slot, ids outside
  // the vocabulary) or when the scheduler is stopping. The source receives next() after the
  // prompt and after every token it returns, then end() unless next() finished it.
  std::shared_ptr<GenerationJob> submit_generation(std::vector<TokenId> prompt, std::shared_ptr<TokenSource> source);
  // Stops a generation: at once when queued, at the next step when running (source->end(kCancelled)).
  // False when it already finished.
  bool cancel(const std::shared_ptr<GenerationJob>& job);

  // Removes a job that has not started from the queue (it finishes as cancelled); false when it
  // already runs or finished.
  bool cancel_queued(const std::shared_ptr<Job>& job);
  // Cancels a queued job at once, a running one at the next step (its slot is freed); false when
  // it already finished.
  bool cancel(const std::shared_ptr<Job>& job);

  SchedulerStats stats() const;  // with the prefix cache's counters
  // Seconds until the work queued now is done at the measured throughput; nullopt without a
  // measurement yet.
  std::optional<double> estimated_wait_seconds() const;

  const StepModel& model() const { return *model_; }
  const SchedulerOptions& options() const { return options_; }
  // The gate this scheduler's steps pass (shared by every scheduler unless options.gate named another).
  ComputeGate& gate() const { return *gate_; }

 private:
  struct StepPlan;
  void run();
  void check_tokens(std::span<const TokenId> tokens, const char* what) const;
  void admit_locked();
  void drop_cancelled_locked();
  void finish_locked(const std::shared_ptr<Job>& job, JobState state, std::string error);
  void end_generation_locked(const std::shared_ptr<GenerationJob>& job, std::optional<EndReason> reason,
                             const std::string& message);
  void plan_locked(StepPlan& plan);
  void resume_locked(Job& job);
  std::vector<int64_t> seams_to_save(const Job& job, int64_t end) const;
  void after_generation_step(StepPlan& plan, const StepOutput& out);
  void finish_step_locked(const StepPlan& plan, const StepOutput& out, const std::string& failure, double seconds,
                          std::vector<std::shared_ptr<const CachedPrefix>>& dropped);

  std::unique_ptr<StepModel> model_;
  const SchedulerOptions options_;
  int64_t align_ = 1;  // model_->prefill_alignment()
  std::unique_ptr<PrefixCache> cache_;  // null without one (or when the model cannot save states)

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<std::shared_ptr<Job>> active_;  // admission order
  std::deque<std::shared_ptr<GenerationJob>> gen_queue_;
  std::vector<std::shared_ptr<GenerationJob>> gen_active_;  // admission order
  std::shared_ptr<ComputeGate> gate_;
  bool stopping_ = false;
  SchedulerStats stats_;
  std::thread thread_;
};

}  // namespace verdict::engine
