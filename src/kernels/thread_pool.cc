#include "kernels/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "core/error.h"
#include "kernels/float_mode.h"

namespace verdict::kernels {
namespace {

thread_local bool t_inside_task = false;

// Marks the current thread as running pool tasks for the lifetime of the guard.
class InsideTask {
 public:
  InsideTask() : previous_(t_inside_task) { t_inside_task = true; }
  ~InsideTask() { t_inside_task = previous_; }
  InsideTask(const InsideTask&) = delete;
  InsideTask& operator=(const InsideTask&) = delete;

 private:
  bool previous_;
};

// How long a worker waits for the next loop, and the caller for the workers' last iterations, spinning
// before it sleeps: $VERDICT_SPIN_US microseconds, default 100 (0: never spin). Decode steps are series
// of loops of a few microseconds each, separated by short serial parts; sleeping between them costs a
// futex wake-up per loop and worker.
std::chrono::microseconds spin_time() {
  const char* env = std::getenv("VERDICT_SPIN_US");
  if (env == nullptr || *env == '\0') return std::chrono::microseconds(100);
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (end == nullptr || *end != '\0' || v < 0 || v > 1'000'000)
    throw Error("VERDICT_SPIN_US must be an integer in [0, 1000000], got '" + std::string(env) + "'");
  return std::chrono::microseconds(v);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or `time` has passed; returns done().
template <typename Done>
bool spin_until(std::chrono::microseconds time, const Done& done) {
  if (time.count() == 0) return done();
  const auto until = std::chrono::steady_clock::now() + time;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

}  // namespace

InlineLoops::InlineLoops() : previous_(t_inside_task) { t_inside_task = true; }
InlineLoops::~InlineLoops() { t_inside_task = previous_; }

ThreadPool::ThreadPool(int threads) : spin_(spin_time()) {
  if (threads < 1) threads = 1;
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::work_on_current_job() {
  InsideTask guard;
  set_float_mode(float_mode_);  // the starting thread's (a no-op on that thread itself)
  for (;;) {
    const int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= count_) return;
    try {
      (*task_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      next_.store(count_, std::memory_order_relaxed);  // skip what is left
      return;
    }
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    spin_until(spin_, [&] {
      return published_.load(std::memory_order_acquire) != seen || stopping_.load(std::memory_order_relaxed);
    });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (!job_open_) continue;  // finished before this worker woke up
      ++active_workers_;
    }
    work_on_current_job();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--active_workers_ == 0 && !job_open_) done_.notify_one();
    }
  }
}

void ThreadPool::run(int64_t n, TaskRef task) {
  if (n <= 0) return;
  if (t_inside_task || workers_.empty() || n == 1) {
    InsideTask guard;
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  std::lock_guard<std::mutex> one_job(run_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    float_mode_ = float_mode();
    count_ = n;
    next_.store(0, std::memory_order_relaxed);
    error_ = nullptr;
    job_open_ = true;
    ++generation_;
    published_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  work_on_current_job();  // returns once every iteration is claimed
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_open_ = false;  // from here on no worker joins
  }
  spin_until(spin_, [&] { return active_workers_.load(std::memory_order_acquire) == 0; });
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return active_workers_ == 0; });
    task_ = nullptr;
    error = error_;
    error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

namespace {

int default_thread_count() {
  if (const char* env = std::getenv("VERDICT_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end == nullptr || *end != '\0' || v < 1 || v > 1024)
      throw Error("VERDICT_THREADS must be an integer in [1, 1024], got '" + std::string(env) + "'");
    return static_cast<int>(v);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(std::min(hw, 256u));
}

std::mutex g_pool_mutex;
std::unique_ptr<ThreadPool> g_pool;

}  // namespace

ThreadPool& default_pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool) g_pool = std::make_unique<ThreadPool>(default_thread_count());
  return *g_pool;
}

void set_num_threads(int threads) {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_pool = std::make_unique<ThreadPool>(std::max(1, threads));
}

int num_threads() { return default_pool().size(); }

void parallel_copy(void* dst, const void* src, std::size_t n) {
  const auto pieces = static_cast<int64_t>((n + kCopyPieceBytes - 1) / kCopyPieceBytes);
  parallel_for(pieces, static_cast<double>(kCopyPieceBytes), [&](int64_t k) {
    const std::size_t at = static_cast<std::size_t>(k) * kCopyPieceBytes;
    std::memcpy(static_cast<uint8_t*>(dst) + at, static_cast<const uint8_t*>(src) + at,
                std::min(kCopyPieceBytes, n - at));
  });
}

}  // namespace verdict::kernels
