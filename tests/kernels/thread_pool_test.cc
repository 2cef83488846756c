#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "kernels/float_mode.h"
#include "support/scoped_env.h"

namespace verdict::kernels {
namespace {

// 2^−130 (subnormal in fp32) times 1: kept as it is normally, 0 with subnormals flushed.
float times_one(float x) {
  volatile float one = 1.0f;  // not folded at compile time
  return x * one;
}

// The bit patterns of `values` that differ from `want`'s (bits, not ==: with DAZ a subnormal compares equal
// to 0).
int64_t bits_other_than(const std::vector<float>& values, float want) {
  int64_t n = 0;
  for (float v : values) n += std::bit_cast<uint32_t>(v) != std::bit_cast<uint32_t>(want);
  return n;
}

// The workers run each iteration under the float mode of the thread that started the loop: one result per
// iteration, all flushed inside FlushSubnormals and none outside, at every pool size.
TEST(ThreadPool, IterationsRunUnderTheCallersFloatMode) {
  const float tiny = std::ldexp(1.0f, -130);
  ASSERT_EQ(std::fpclassify(tiny), FP_SUBNORMAL);
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    const auto fill = [&](std::vector<float>& got) {
      got.assign(256, -1.0f);
      pool.run(static_cast<int64_t>(got.size()), [&](int64_t i) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));  // spread the iterations over the workers
        got[static_cast<std::size_t>(i)] = times_one(tiny);
      });
    };
    std::vector<float> flushed, kept;
    float alone = -1.0f;
    {
      const FlushSubnormals flush;
      EXPECT_TRUE(flushing_subnormals());
      alone = times_one(tiny);
      fill(flushed);
    }
    EXPECT_FALSE(flushing_subnormals());
    fill(kept);
    EXPECT_EQ(std::bit_cast<uint32_t>(alone), 0u);
    EXPECT_EQ(bits_other_than(flushed, 0.0f), 0) << threads << " threads, inside the guard";
    EXPECT_EQ(bits_other_than(kept, tiny), 0) << threads << " threads, after it";
  }
}

// parallel_copy copies every byte, across pieces and a partial last one, on one thread or several.
TEST(ThreadPool, ParallelCopyCopiesEveryByte) {
  const int saved = num_threads();
  for (const int threads : {1, 3}) {
    set_num_threads(threads);
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, kCopyPieceBytes - 1, kCopyPieceBytes,
                                5 * kCopyPieceBytes + 3}) {
      std::vector<uint8_t> src(n + 1), dst(n + 1, 0xEE);
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
      parallel_copy(dst.data(), src.data(), n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(dst[i], src[i]) << "n " << n << " byte " << i;
      EXPECT_EQ(dst[n], 0xEE) << "n " << n << ": a byte past the end";
    }
  }
  set_num_threads(saved);
}

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

// Sets $VERDICT_SPIN_US for the scope (the pool reads it when constructed).
struct SpinEnv {
  explicit SpinEnv(const char* value) : env("VERDICT_SPIN_US", value) {}
  verdict::testing::ScopedEnv env;
};

// Back-to-back loops meet spinning workers; loops after a pause longer than the spin meet sleeping
// ones. Either way every iteration runs exactly once and the caller sees all of its writes.
TEST(ThreadPool, SpinningAndSleepingWorkersRunEveryIteration) {
  for (const char* spin : {"0", "50", "100000"}) {
    const SpinEnv env(spin);
    ThreadPool pool(3);
    for (int round = 0; round < 60; ++round) {
      std::vector<int64_t> out(37, 0);  // plain writes: visible to the caller only through the pool's ordering
      pool.run(37, [&](int64_t i) { out[static_cast<std::size_t>(i)] += i + round; });
      for (int64_t i = 0; i < 37; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], i + round) << spin;
      if (round % 20 == 19) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

TEST(ThreadPool, InlineLoopsRunOnTheCallingThread) {
  ThreadPool pool(3);
  const std::thread::id me = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  {
    const InlineLoops inline_loops;
    pool.run(64, [&](int64_t) {
      if (std::this_thread::get_id() != me) elsewhere.fetch_add(1);
    });
  }
  EXPECT_EQ(elsewhere.load(), 0);
  // After the scope, loops spread over the pool again (some iteration lands on a worker).
  for (int round = 0; round < 100 && elsewhere.load() == 0; ++round)
    pool.run(64, [&](int64_t) {
      if (std::this_thread::get_id() != me) elsewhere.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    });
  EXPECT_GT(elsewhere.load(), 0);
}

TEST(ThreadPool, RefusesABadSpinTime) {
  for (const char* bad : {"-1", "x", "2000000"}) {
    const SpinEnv env(bad);
    EXPECT_THROW(ThreadPool pool(2), Error) << bad;
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
