// The kernels' thread pool: a fixed set of workers that, together with the calling thread, run the
// iterations of one parallel loop at a time. Kernels split matrix products by output rows and
// model code splits by (sequence, head); a loop started from inside a pool task runs inline.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace verdict::kernels {

// A non-owning reference to a callable `void(int64_t)`; valid while the callable lives.
class TaskRef {
 public:
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, TaskRef>)
  TaskRef(F&& f)  // NOLINT(google-explicit-constructor): implicit by design, like std::function_ref
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int64_t i) { (*static_cast<std::remove_reference_t<F>*>(o))(i); }) {}
  void operator()(int64_t i) const { call_(object_, i); }

 private:
  void* object_;
  void (*call_)(void*, int64_t);
};

class ThreadPool {
 public:
  // `threads` counts the calling thread: ThreadPool(1) starts no worker.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(i) for every i in [0, n), spread over the pool; returns when all are done. Every iteration
  // runs under the calling thread's floating-point mode (float_mode.h).
  // The first exception thrown by a task is rethrown here (the remaining iterations are skipped).
  // Called from inside a task of any pool, the loop runs inline on the calling thread.
  void run(int64_t n, TaskRef task);

 private:
  void worker_loop();
  void work_on_current_job();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // The current job, published under mutex_; iterations are claimed lock-free through `next_`.
  // A worker joins a job only while it is open; the caller closes it once every iteration is
  // claimed and waits for the joined workers only, never for workers that are still asleep.
  // Workers and the caller first spin briefly ($VERDICT_SPIN_US, see thread_pool.cc) on the atomics
  // `published_` and `active_workers_` before sleeping on the condition variables: a decode step runs
  // hundreds of short loops, and a futex wake-up per loop would cost more than the loop.
  TaskRef* task_ = nullptr;
  uint32_t float_mode_ = 0;  // the caller's float_mode(), which the workers take on for the job
  int64_t count_ = 0;
  std::atomic<int64_t> next_{0};
  uint64_t generation_ = 0;
  std::atomic<uint64_t> published_{0};  // generation_, readable without the mutex
  bool job_open_ = false;
  std::atomic<int> active_workers_{0};  // written under mutex_
  std::atomic<bool> stopping_{false};  // written under mutex_
  std::exception_ptr error_;
  std::mutex run_mutex_;  // one job at a time per pool
  std::chrono::microseconds spin_;
};

// While alive, the parallel loops this thread starts run inline on it, as inside a pool task. For work
// that runs beside the engines rather than inside one, such as a decision's head on an HTTP thread:
// concurrent requests' heads then run side by side on their own threads instead of queueing for the
// pool (one loop at a time) between the engine's loops.
class InlineLoops {
 public:
  InlineLoops();
  ~InlineLoops();
  InlineLoops(const InlineLoops&) = delete;
  InlineLoops& operator=(const InlineLoops&) = delete;

 private:
  bool previous_;
};

// The process-wide pool kernels use. Its size is $VERDICT_THREADS when set, else the number of
// hardware threads. set_num_threads() replaces it (not while a loop is running).
ThreadPool& default_pool();
void set_num_threads(int threads);
int num_threads();

// Below this much work (≈ multiply-adds) a loop runs on the calling thread: waking workers costs more.
inline constexpr double kMinParallelWork = 1 << 18;

// Runs task(i) for i in [0, n) on the default pool, or inline when n · cost_per_item (≈ multiply-adds
// per iteration) is below kMinParallelWork.
inline void parallel_for(int64_t n, double cost_per_item, TaskRef task) {
  if (static_cast<double>(n) * cost_per_item < kMinParallelWork) {
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  default_pool().run(n, task);
}

// dst = src, n bytes (not overlapping), in pieces of kCopyPieceBytes over the default pool: each thread faults in
// and fills its own pieces of fresh memory, and reads its own pieces of a mapped file (the decision head's matrices
// at load, docs/performance.md, "A model's small matrices in huge-page slabs").
inline constexpr std::size_t kCopyPieceBytes = std::size_t{2} << 20;
void parallel_copy(void* dst, const void* src, std::size_t n);

}  // namespace verdict::kernels
