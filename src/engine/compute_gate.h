// The compute gate: forward steps of all models in the process run one at a time, and a step that
// carries decisions goes before any waiting generation step. Decision callers block on their answer
// while chat clients read a stream, so a decision arriving while chat runs waits for at most the one
// generation step in flight (a decode step plus at most one prefill chunk), never for a queue of them.
// The kernels spread each step over every core, so running steps of two models at once would only
// interleave them, slower for both.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace verdict::engine {

enum class StepPriority : uint8_t { kGeneration, kDecision };

class ComputeGate {
 public:
  // Blocks until this step may run.
  void acquire(StepPriority priority);
  void release();

  // Decision steps waiting right now (for tests and metrics).
  int waiting_decisions() const;

  // The process-wide gate every scheduler uses unless given its own.
  static std::shared_ptr<ComputeGate> shared();

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool busy_ = false;
  int waiting_decisions_ = 0;
};

// Holds the gate for one step.
class GateHold {
 public:
  GateHold(ComputeGate& gate, StepPriority priority) : gate_(gate) { gate_.acquire(priority); }
  ~GateHold() { gate_.release(); }
  GateHold(const GateHold&) = delete;
  GateHold& operator=(const GateHold&) = delete;

 private:
  ComputeGate& gate_;
};

}  // namespace verdict::engine
