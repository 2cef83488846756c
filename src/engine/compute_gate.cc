#include "engine/compute_gate.h"

#include "kernels/thread_pool.h"

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

bool ComputeGate::try_acquire(StepPriority priority) {
  std::lock_guard lock(mutex_);
  if (busy_ || (priority == StepPriority::kGeneration && waiting_decisions_ > 0)) return false;
  busy_ = true;
  return true;
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

void run_beside_steps(ComputeGate& gate, const std::function<void()>& work) {
  if (!gate.try_acquire(StepPriority::kDecision)) {
    const kernels::InlineLoops on_this_thread;
    work();
    return;
  }
  const GateHold hold(gate, std::adopt_lock);
  work();
}

std::shared_ptr<ComputeGate> ComputeGate::shared() {
  static const std::shared_ptr<ComputeGate> gate = std::make_shared<ComputeGate>();
  return gate;
}

}  // namespace verdict::engine
