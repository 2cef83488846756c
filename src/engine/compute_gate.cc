#include "engine/compute_gate.h"

namespace verdict::engine {

void ComputeGate::acquire(StepPriority priority) {
  std::unique_lock lock(mutex_);
  if (priority == StepPriority::kDecision) {
    ++waiting_decisions_;
    cv_.wait(lock, [&] { return !busy_; });
    --waiting_decisions_;
  } else {
    cv_.wait(lock, [&] { return !busy_ && waiting_decisions_ == 0; });
  }
  busy_ = true;
}

void ComputeGate::release() {
  {
    std::lock_guard lock(mutex_);
    busy_ = false;
  }
  cv_.notify_all();
}

int ComputeGate::waiting_decisions() const {
  std::lock_guard lock(mutex_);
  return waiting_decisions_;
}

std::shared_ptr<ComputeGate> ComputeGate::shared() {
  static const std::shared_ptr<ComputeGate> gate = std::make_shared<ComputeGate>();
  return gate;
}

}  // namespace verdict::engine
