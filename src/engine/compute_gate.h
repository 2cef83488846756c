// The compute gate: forward steps of all models in the process run one at a time, and a step that
// carries decisions goes before any waiting generation step. Decision callers block on their answer
// while chat clients read a stream, so a decision arriving while chat runs waits for at most the one
// generation step in flight (a decode step plus at most one prefill chunk), never for a queue of them.
// The kernels spread each step over every core, so running steps of two models at once would only
// interleave them, slower for both.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace verdict::engine {

enum class StepPriority : uint8_t { kGeneration, kDecision };

class ComputeGate {
 public:
  // Blocks until this step may run.
  void acquire(StepPriority priority);
  // Takes the gate only when no step holds it right now (and, for a generation, no decision step waits);
  // false otherwise, at once. For short work that may use every core while the engines are idle, such as
  // a decision's joint head (release() afterwards, as for acquire()).
  bool try_acquire(StepPriority priority);
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
  // Takes over a gate the caller already holds (a successful try_acquire).
  GateHold(ComputeGate& gate, std::adopt_lock_t) : gate_(gate) {}
  ~GateHold() { gate_.release(); }
  GateHold(const GateHold&) = delete;
  GateHold& operator=(const GateHold&) = delete;

 private:
  ComputeGate& gate_;
};

// Runs `work`, a few milliseconds of kernels outside any step (a decision's joint head), where it costs the
// steps least. When no step holds the gate, on the whole kernel pool, holding the gate (a step that wants to
// start waits for it). Otherwise on the calling thread alone (kernels::InlineLoops), beside the running step:
// its loops then never queue for the pool between the step's loops. The kernels' results do not depend on
// how a product is split over threads, so neither do work's.
void run_beside_steps(ComputeGate& gate, const std::function<void()>& work);

}  // namespace verdict::engine
