// A Job: one record (token ids) waiting for, or going through, the model's engine thread. The
// submitting thread keeps a shared_ptr and waits on it; the engine thread fills in the hidden rows.
//
//   queued ──admitted to a slot──▶ running ──last chunk──▶ done
//      │                              ├──forward threw──▶ failed
//      └──────── cancelled ◀──────────┘ (client gone, queue timeout, model stopping)
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/step_model.h"

namespace verdict::engine {

enum class JobState { kQueued, kRunning, kDone, kFailed, kCancelled };

// Thrown by Job::take_hidden() for a cancelled job.
class JobCancelled : public Error {
 public:
  explicit JobCancelled(const std::string& message) : Error(message) {}
};

class Job {
 public:
  using Clock = std::chrono::steady_clock;

  // `seams`: the record's seams (StepInput::seams), where the prefix cache may resume it.
  Job(std::vector<TokenId> tokens, int64_t hidden_size, std::vector<int64_t> seams = {});
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  std::span<const TokenId> tokens() const { return tokens_; }
  std::span<const int64_t> seams() const { return seams_; }
  // Leading tokens whose rows and state came from the prefix cache (0 without a hit); final once the
  // job started.
  std::size_t cached_tokens() const { return cached_tokens_.load(); }
  int64_t hidden_size() const { return hidden_size_; }

  JobState state() const;
  bool finished() const;
  // True once the engine admitted the job to a slot (running or finished after running).
  bool started() const { return started_.load(); }

  // Blocks until the job finishes or `deadline` passes; true when finished.
  bool wait_until(Clock::time_point deadline) const;
  void wait() const;

  // The hidden rows [tokens, hidden_size] of a done job, moved out (call once). Throws
  // JobCancelled for a cancelled job and verdict::Error with the engine's message for a failed one.
  std::vector<float> take_hidden();

  Clock::time_point submitted_at() const { return submitted_at_; }

 private:
  friend class Scheduler;

  void mark_running();
  void finish(JobState state, std::vector<float> hidden, std::string error);

  const std::vector<TokenId> tokens_;
  const int64_t hidden_size_;
  const std::vector<int64_t> seams_;
  std::atomic<std::size_t> cached_tokens_{0};
  const Clock::time_point submitted_at_;

  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  JobState state_ = JobState::kQueued;
  std::vector<float> result_;
  std::string error_;
  std::atomic<bool> started_{false};

  // Owned by the engine thread while the job runs.
  int64_t slot_ = -1;
  std::size_t done_tokens_ = 0;
  std::vector<int64_t> saves_;  // seams where this step saves the state for the prefix cache
  std::vector<float> rows_;
  std::atomic<bool> cancel_requested_{false};
};

}  // namespace verdict::engine
