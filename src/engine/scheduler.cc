#include "engine/scheduler.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

namespace verdict::engine {
namespace {

void name_thread(const std::string& model) {
  // Linux thread names hold 15 bytes.
  const std::string name = ("eng:" + model).substr(0, 15);
  pthread_setname_np(pthread_self(), name.c_str());
}

std::size_t bucket_of(int64_t sequences) {
  for (std::size_t b = 0; b < kStepSequenceBuckets.size(); ++b)
    if (sequences <= kStepSequenceBuckets[b]) return b;
  return kStepSequenceBuckets.size();
}

}  // namespace

Scheduler::Scheduler(std::unique_ptr<StepModel> model, SchedulerOptions options)
    : model_(std::move(model)), options_(std::move(options)) {
  if (!model_) throw Error("scheduler needs a model");
  thread_ = std::thread([this] { run(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::shared_ptr<Job> Scheduler::submit(std::vector<TokenId> tokens) {
  if (tokens.empty()) throw Error("cannot run an empty record");
  const auto n = static_cast<int64_t>(tokens.size());
  if (n > model_->max_tokens())
    throw Error("record of " + std::to_string(n) + " tokens exceeds the " + std::to_string(model_->max_tokens()) +
                "-token sequence state of model '" + options_.name + "'");
  const int64_t vocab = model_->vocab_size();
  for (TokenId id : tokens)
    if (id < 0 || id >= vocab)
      throw Error("token id " + std::to_string(id) + " is outside the vocabulary of model '" + options_.name +
                  "' (" + std::to_string(vocab) + " ids)");

  auto job = std::make_shared<Job>(std::move(tokens), model_->hidden_size());
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw Error("model '" + options_.name + "' is being unloaded");
    if (queue_.size() >= options_.max_queue) {
      ++stats_.jobs_rejected;
      throw QueueFullError("server busy: the queue for model '" + options_.name + "' is full; retry later");
    }
    queue_.push_back(job);
    stats_.pending_tokens += n;
  }
  wake_.notify_one();
  return job;
}

bool Scheduler::cancel_queued(const std::shared_ptr<Job>& job) {
  std::lock_guard lock(mutex_);
  const auto it = std::find(queue_.begin(), queue_.end(), job);
  if (it == queue_.end()) return false;
  queue_.erase(it);
  stats_.pending_tokens -= static_cast<int64_t>(job->tokens().size());
  ++stats_.jobs_cancelled;
  job->finish(JobState::kCancelled, {}, "request cancelled before it ran");
  return true;
}

bool Scheduler::cancel(const std::shared_ptr<Job>& job) {
  if (cancel_queued(job)) return true;
  std::lock_guard lock(mutex_);
  if (std::find(active_.begin(), active_.end(), job) == active_.end()) return false;
  job->cancel_requested_.store(true);
  wake_.notify_all();
  return true;
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard lock(mutex_);
  SchedulerStats s = stats_;
  s.queued = queue_.size();
  s.running = active_.size();
  return s;
}

std::optional<double> Scheduler::estimated_wait_seconds() const {
  const SchedulerStats s = stats();
  const double rate = s.tokens_per_second();
  if (rate <= 0) return std::nullopt;
  return static_cast<double>(s.pending_tokens) / rate;
}

// Ends a job the engine holds (running or admitted): frees its slot and wakes its waiter.
void Scheduler::finish_locked(const std::shared_ptr<Job>& job, JobState state, std::string error) {
  if (job->slot_ >= 0) {
    model_->release(job->slot_);
    job->slot_ = -1;
  }
  stats_.pending_tokens -= static_cast<int64_t>(job->tokens().size() - job->done_tokens_);
  if (state == JobState::kDone) ++stats_.jobs_done;
  if (state == JobState::kFailed) ++stats_.jobs_failed;
  if (state == JobState::kCancelled) ++stats_.jobs_cancelled;
  std::vector<float> rows;
  if (state == JobState::kDone) rows = std::move(job->rows_);
  job->rows_ = {};
  job->finish(state, std::move(rows), std::move(error));
  active_.erase(std::find(active_.begin(), active_.end(), job));
}

void Scheduler::drop_cancelled_locked() {
  for (std::size_t i = active_.size(); i-- > 0;) {
    const std::shared_ptr<Job> job = active_[i];
    if (job->cancel_requested_.load()) finish_locked(job, JobState::kCancelled, "request cancelled while it ran");
  }
}

void Scheduler::admit_locked() {
  while (!queue_.empty() && static_cast<int64_t>(active_.size()) < model_->slots()) {
    std::shared_ptr<Job> job = std::move(queue_.front());
    queue_.pop_front();
    job->slot_ = model_->acquire();
    job->done_tokens_ = 0;
    job->rows_.reserve(job->tokens().size() * static_cast<std::size_t>(job->hidden_size()));
    job->mark_running();
    active_.push_back(std::move(job));
  }
}

void Scheduler::run() {
  name_thread(options_.name);
  std::vector<float> hidden;
  std::vector<StepInput> inputs;
  std::vector<int64_t> remaining;
  for (;;) {
    std::vector<std::shared_ptr<Job>> batch;
    std::vector<PlannedChunk> plan;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || !active_.empty(); });
      if (stopping_) break;
      drop_cancelled_locked();
      try {
        admit_locked();
      } catch (const std::exception&) {
        // No free slot although active_ < slots(): cannot happen with a consistent model; run
        // what holds a slot and retry admission next step.
      }
      remaining.clear();
      for (const auto& job : active_)
        remaining.push_back(static_cast<int64_t>(job->tokens().size() - job->done_tokens_));
      plan = plan_step(remaining, options_.batch);
      if (plan.empty()) continue;
      inputs.clear();
      for (const PlannedChunk& c : plan) {
        const std::shared_ptr<Job>& job = active_[c.sequence];
        batch.push_back(job);
        inputs.push_back({job->slot_, job->tokens().subspan(job->done_tokens_, static_cast<std::size_t>(c.tokens))});
      }
    }

    // The forward pass runs without the lock: submitters and cancellers are never blocked by it.
    // Only this thread touches slots, progress and rows of running jobs.
    std::string failure;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      model_->forward(inputs, hidden);
      int64_t rows = 0;
      for (const PlannedChunk& c : plan) rows += c.tokens;
      if (hidden.size() != static_cast<std::size_t>(rows * model_->hidden_size()))
        throw Error("forward step returned " + std::to_string(hidden.size()) + " values for " + std::to_string(rows) +
                    " rows of hidden size " + std::to_string(model_->hidden_size()));
    } catch (const std::exception& e) {
      failure = std::string("forward step failed: ") + e.what();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::lock_guard lock(mutex_);
    ++stats_.steps;
    stats_.busy_seconds += seconds;
    const auto sequences = static_cast<int64_t>(plan.size());
    stats_.step_sequences += static_cast<uint64_t>(sequences);
    stats_.max_step_sequences = std::max(stats_.max_step_sequences, sequences);
    ++stats_.step_sequence_counts[bucket_of(sequences)];
    std::size_t offset = 0;
    const auto h = static_cast<std::size_t>(model_->hidden_size());
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const std::shared_ptr<Job>& job = batch[i];
      const auto n = static_cast<std::size_t>(plan[i].tokens);
      if (!failure.empty()) {
        finish_locked(job, JobState::kFailed, failure);
        continue;
      }
      stats_.step_tokens += n;
      job->rows_.insert(job->rows_.end(), hidden.begin() + static_cast<std::ptrdiff_t>(offset * h),
                        hidden.begin() + static_cast<std::ptrdiff_t>((offset + n) * h));
      offset += n;
      job->done_tokens_ += n;
      stats_.pending_tokens -= static_cast<int64_t>(n);
      if (job->done_tokens_ == job->tokens().size()) finish_locked(job, JobState::kDone, "");
    }
  }

  // Stopping: nothing may be left waiting forever.
  std::lock_guard lock(mutex_);
  while (!active_.empty()) finish_locked(active_.back(), JobState::kCancelled, "model '" + options_.name + "' was unloaded");
  for (const auto& job : queue_) {
    ++stats_.jobs_cancelled;
    job->finish(JobState::kCancelled, {}, "model '" + options_.name + "' was unloaded");
  }
  queue_.clear();
  stats_.pending_tokens = 0;
}

}  // namespace verdict::engine
