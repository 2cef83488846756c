#include "engine/job.h"

#include <utility>

namespace verdict::engine {

Job::Job(std::vector<TokenId> tokens, int64_t hidden_size, std::vector<int64_t> seams)
    : tokens_(std::move(tokens)), hidden_size_(hidden_size), seams_(std::move(seams)), submitted_at_(Clock::now()) {}

JobState Job::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

bool Job::finished() const {
  const JobState s = state();
  return s == JobState::kDone || s == JobState::kFailed || s == JobState::kCancelled;
}

bool Job::wait_until(Clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  return cv_.wait_until(lock, deadline, [&] {
    return state_ == JobState::kDone || state_ == JobState::kFailed || state_ == JobState::kCancelled;
  });
}

void Job::wait() const {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] {
    return state_ == JobState::kDone || state_ == JobState::kFailed || state_ == JobState::kCancelled;
  });
}

std::vector<float> Job::take_hidden() {
  std::lock_guard lock(mutex_);
  switch (state_) {
    case JobState::kDone: return std::move(result_);
    case JobState::kCancelled: throw JobCancelled(error_);
    case JobState::kFailed: throw Error(error_);
    default: throw Error("job is not finished");
  }
}

void Job::mark_running() {
  started_.store(true);
  std::lock_guard lock(mutex_);
  state_ = JobState::kRunning;
}

void Job::finish(JobState state, std::vector<float> hidden, std::string error) {
  {
    std::lock_guard lock(mutex_);
    state_ = state;
    result_ = std::move(hidden);
    error_ = std::move(error);
  }
  cv_.notify_all();
}

}  // namespace verdict::engine
