// The compute gate: steps of every model one at a time, decisions first; and short work beside the steps
// (run_beside_steps: on the whole kernel pool while no step runs, on the calling thread alone while one does).
#include "engine/compute_gate.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/thread_pool.h"

namespace verdict::engine {
namespace {

TEST(ComputeGate, WaitingDecisionStepsGoBeforeWaitingGenerationSteps) {
  ComputeGate gate;
  gate.acquire(StepPriority::kGeneration);  // a step in flight
  std::vector<char> order;
  std::mutex m;
  std::thread gen([&] {
    gate.acquire(StepPriority::kGeneration);
    {
      std::lock_guard lock(m);
      order.push_back('g');
    }
    gate.release();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the generation step waits first
  std::thread dec([&] {
    gate.acquire(StepPriority::kDecision);
    {
      std::lock_guard lock(m);
      order.push_back('d');
    }
    gate.release();
  });
  while (gate.waiting_decisions() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  gate.release();
  gen.join();
  dec.join();
  EXPECT_EQ(order, (std::vector<char>{'d', 'g'}));
}

TEST(ComputeGate, TryAcquireTakesOnlyAFreeGate) {
  ComputeGate gate;
  ASSERT_TRUE(gate.try_acquire(StepPriority::kGeneration));
  EXPECT_FALSE(gate.try_acquire(StepPriority::kDecision));
  EXPECT_FALSE(gate.try_acquire(StepPriority::kGeneration));
  gate.release();
  ASSERT_TRUE(gate.try_acquire(StepPriority::kDecision));
  gate.release();
}

// The threads that ran the iterations of one kernel-pool loop of `n` short iterations started here.
std::set<std::thread::id> loop_threads(int n) {
  std::mutex m;
  std::set<std::thread::id> ids;
  kernels::default_pool().run(n, [&](int64_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    std::lock_guard lock(m);
    ids.insert(std::this_thread::get_id());
  });
  return ids;
}

class RunBesideSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_threads_ = kernels::num_threads();
    kernels::set_num_threads(3);
  }
  void TearDown() override { kernels::set_num_threads(saved_threads_); }

 private:
  int saved_threads_ = 1;
};

TEST_F(RunBesideSteps, WithNoStepRunningTakesTheGateAndThePool) {
  ComputeGate gate;
  bool ran = false;
  run_beside_steps(gate, [&] {
    ran = true;
    EXPECT_FALSE(gate.try_acquire(StepPriority::kDecision));  // held: a step waits for the work
    EXPECT_GT(loop_threads(64).size(), 1u);
  });
  EXPECT_TRUE(ran);
  ASSERT_TRUE(gate.try_acquire(StepPriority::kGeneration));  // released
  gate.release();
}

TEST_F(RunBesideSteps, BesideARunningStepStaysOnTheCallingThread) {
  ComputeGate gate;
  gate.acquire(StepPriority::kDecision);  // a step in flight
  bool ran = false;
  run_beside_steps(gate, [&] {  // returns without waiting for the step
    ran = true;
    EXPECT_EQ(loop_threads(64), std::set<std::thread::id>{std::this_thread::get_id()});
  });
  EXPECT_TRUE(ran);
  EXPECT_FALSE(gate.try_acquire(StepPriority::kDecision));  // still the step's
  gate.release();
  EXPECT_GT(loop_threads(64).size(), 1u);  // and this thread's loops use the pool again
}

TEST_F(RunBesideSteps, ReleasesTheGateWhenTheWorkThrows) {
  ComputeGate gate;
  EXPECT_THROW(run_beside_steps(gate, [] { throw std::runtime_error("head failed"); }), std::runtime_error);
  ASSERT_TRUE(gate.try_acquire(StepPriority::kGeneration));
  gate.release();
}

}  // namespace
}  // namespace verdict::engine
