#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace verdict::kernels {
namespace {

TEST(ThreadPool, RunsEveryIndexOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {0, 1, 3, 100, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
      pool.run(n, [&](int64_t i) { hits[static_cast<std::size_t>(i)].fetch_add(1); });
      for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    }
  }
}

TEST(ThreadPool, RethrowsTaskExceptions) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.run(50, [](int64_t i) {
    if (i == 17) throw std::runtime_error("boom");
  }),
               std::runtime_error);
  // The pool stays usable.
  std::atomic<int64_t> sum{0};
  pool.run(10, [&](int64_t i) { sum += i; });
  EXPECT_EQ(sum.load(), 45);
}

TEST(ThreadPool, NestedLoopsRunInline) {
  ThreadPool pool(3);
  std::atomic<int64_t> count{0};
  pool.run(8, [&](int64_t) { pool.run(5, [&](int64_t) { count.fetch_add(1); }); });
  EXPECT_EQ(count.load(), 40);
}

}  // namespace
}  // namespace verdict::kernels
