#include "core/scratch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace verdict {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

bool aligned64(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }

TEST(Scratch, BlocksAreAlignedDisjointAndKeepTheirValues) {
  ScratchArena arena;
  const std::size_t sizes[] = {1, 63, 64, 65, 3 * kMiB + 5, 100, 0, 7 * kMiB};
  std::vector<uint8_t*> blocks;
  for (std::size_t i = 0; i < std::size(sizes); ++i) {
    auto* p = static_cast<uint8_t*>(arena.allocate(sizes[i]));
    ASSERT_TRUE(aligned64(p));
    std::memset(p, static_cast<int>(i + 1), sizes[i]);
    blocks.push_back(p);
  }
  for (std::size_t i = 0; i < std::size(sizes); ++i)
    for (std::size_t j = 0; j < sizes[i]; j += 997)
      ASSERT_EQ(blocks[i][j], static_cast<uint8_t>(i + 1)) << "block " << i << " byte " << j;
  EXPECT_EQ(arena.live_blocks(), std::size(sizes));
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) arena.release(*it);
  EXPECT_EQ(arena.live_blocks(), 0u);
}

// The pattern of a forward step, run twice: the second takes no memory from the system, and gets the
// same addresses.
TEST(Scratch, ASecondStepOfTheSameShapeReusesTheFirstOnesMemory) {
  ScratchArena arena;
  auto step = [&] {
    std::vector<void*> got;
    void* x = arena.allocate(2 * kMiB);
    got.push_back(x);
    for (int layer = 0; layer < 4; ++layer) {
      void* p = arena.allocate(12 * kMiB);
      void* z = arena.allocate(4 * kMiB);
      void* y = arena.allocate(12 * kMiB);
      got.insert(got.end(), {p, z, y});
      arena.release(y);
      arena.release(z);
      arena.release(p);
    }
    arena.release(x);
    return got;
  };
  const std::vector<void*> first = step();
  EXPECT_EQ(arena.chunk_count(), 1u);  // merged once the step's last block went
  const std::size_t reserved = arena.reserved_bytes();
  EXPECT_GE(reserved, 30 * kMiB);
  const std::vector<void*> second = step();
  EXPECT_EQ(arena.reserved_bytes(), reserved);
  EXPECT_EQ(arena.chunk_count(), 1u);
  const std::vector<void*> third = step();
  EXPECT_EQ(second, third);
  EXPECT_EQ(arena.reserved_bytes(), reserved);
}

TEST(Scratch, ABlockGivenBackEarlyIsReusedOnlyOnceTheBlocksAfterItAreGone) {
  ScratchArena arena;
  auto* a = static_cast<uint8_t*>(arena.allocate(1000));
  auto* b = static_cast<uint8_t*>(arena.allocate(1000));
  std::memset(b, 7, 1000);
  arena.release(a);  // out of order: b still lives above it
  EXPECT_EQ(arena.live_blocks(), 2u);
  auto* c = static_cast<uint8_t*>(arena.allocate(1000));
  EXPECT_GE(c, b + 1000);  // after b, not over a
  std::memset(c, 9, 1000);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(b[i], 7);
  arena.release(c);
  EXPECT_EQ(arena.live_blocks(), 2u);  // a and b: a waits for b
  arena.release(b);
  EXPECT_EQ(arena.live_blocks(), 0u);
  EXPECT_EQ(arena.allocate(1000), a);  // all free again: from the start
}

TEST(Scratch, GrowsIntoNewChunksWhileBlocksLiveAndMergesThemAfterwards) {
  ScratchArena arena;
  void* a = arena.allocate(3 * kMiB);
  EXPECT_EQ(arena.chunk_count(), 1u);
  void* b = arena.allocate(5 * kMiB);  // does not fit the first chunk's 4 MiB
  void* c = arena.allocate(9 * kMiB);
  EXPECT_GE(arena.chunk_count(), 2u);
  const std::size_t total = arena.reserved_bytes();
  arena.release(b);
  arena.release(a);
  EXPECT_GE(arena.chunk_count(), 2u);  // c still lives
  arena.release(c);
  EXPECT_EQ(arena.chunk_count(), 1u);
  EXPECT_EQ(arena.reserved_bytes(), total);
  // The three now fit the merged chunk.
  a = arena.allocate(3 * kMiB);
  b = arena.allocate(5 * kMiB);
  c = arena.allocate(9 * kMiB);
  EXPECT_EQ(arena.chunk_count(), 1u);
  arena.release(c);
  arena.release(b);
  arena.release(a);
}

TEST(Scratch, KeepsNoMoreThanItsLimitWhileIdle) {
  ScratchArena arena;
  void* big = arena.allocate(ScratchArena::kKeepBytes + kMiB);  // mapped, never touched
  arena.release(big);
  EXPECT_EQ(arena.reserved_bytes(), 0u);
  void* small = arena.allocate(kMiB);
  arena.release(small);
  EXPECT_EQ(arena.reserved_bytes(), 2 * kMiB);  // one huge page
}

TEST(Scratch, BuffersComeFromTheCallingThreadsArena) {
  ScratchArena& mine = ScratchArena::local();
  const std::size_t live = mine.live_blocks();
  {
    ScratchBuffer<float> buffer(1000);
    buffer.data()[999] = 1.0f;
    EXPECT_EQ(mine.live_blocks(), live + 1);
    std::size_t other_live = 0;
    const ScratchArena* other = nullptr;
    std::thread([&] {
      ScratchBuffer<double> there(10);
      other = &ScratchArena::local();
      other_live = ScratchArena::local().live_blocks();
    }).join();
    EXPECT_NE(other, &mine);
    EXPECT_EQ(other_live, 1u);
  }
  EXPECT_EQ(mine.live_blocks(), live);
}

// Containers over ScratchAllocator (the joint head's matrices): values from the constructing thread's arena,
// a copy from the copying thread's, a move keeps its block, and every block goes back to the arena it came
// from, which a second round of the same sizes then reuses without mapping more.
TEST(Scratch, AllocatorContainersTakeAndGiveBackTheirThreadsArenaBlocks) {
  using Values = std::vector<float, ScratchAllocator<float>>;
  ScratchArena& mine = ScratchArena::local();
  const std::size_t live = mine.live_blocks();
  std::size_t reserved = 0;
  for (int round = 0; round < 2; ++round) {
    {
      Values a(3 * kMiB / sizeof(float), 1.5f);
      EXPECT_EQ(a.get_allocator().arena(), &mine);
      EXPECT_EQ(mine.live_blocks(), live + 1);
      EXPECT_TRUE(aligned64(a.data()));
      const float* at = a.data();
      Values b = std::move(a);
      EXPECT_EQ(b.data(), at);
      EXPECT_EQ(mine.live_blocks(), live + 1);
      Values c = b;  // a copy on this thread: another block of this arena
      EXPECT_EQ(mine.live_blocks(), live + 2);
      EXPECT_EQ(c[c.size() - 1], 1.5f);
      const ScratchArena* copied_into = nullptr;
      std::size_t there_live = 0;
      float there_last = 0;
      std::thread([&] {
        const Values d = c;  // a copy on another thread: that thread's arena
        copied_into = d.get_allocator().arena();
        there_live = ScratchArena::local().live_blocks();
        there_last = d.back();
      }).join();
      EXPECT_NE(copied_into, &mine);
      EXPECT_EQ(there_live, 1u);
      EXPECT_EQ(there_last, 1.5f);
      EXPECT_EQ(mine.live_blocks(), live + 2);
    }
    EXPECT_EQ(mine.live_blocks(), live);
    if (live == 0) {  // nothing else of this thread's holds the arena: its memory stays for the next round
      if (round == 0) reserved = mine.reserved_bytes();
      EXPECT_GE(mine.reserved_bytes(), 6 * kMiB);
      EXPECT_EQ(mine.reserved_bytes(), reserved);
    }
  }
}

// ScratchArena::Use makes another arena the thread's current() one, for ScratchBuffer and ScratchAllocator alike,
// and nests.
TEST(Scratch, UseMakesAnArenaTheThreadsCurrentOneUntilItEnds) {
  ScratchArena& mine = ScratchArena::local();
  EXPECT_EQ(&ScratchArena::current(), &mine);
  ScratchArena outer, inner;
  {
    const ScratchArena::Use use_outer(outer);
    EXPECT_EQ(&ScratchArena::current(), &outer);
    ScratchBuffer<float> a(100);
    std::vector<float, ScratchAllocator<float>> v(100);
    EXPECT_EQ(outer.live_blocks(), 2u);
    EXPECT_EQ(v.get_allocator().arena(), &outer);
    {
      const ScratchArena::Use use_inner(inner);
      ScratchBuffer<double> b(10);
      EXPECT_EQ(inner.live_blocks(), 1u);
      EXPECT_EQ(outer.live_blocks(), 2u);
      std::thread([&] { EXPECT_EQ(&ScratchArena::current(), &ScratchArena::local()); }).join();
    }
    EXPECT_EQ(&ScratchArena::current(), &outer);
  }
  EXPECT_EQ(&ScratchArena::current(), &mine);
  EXPECT_EQ(outer.live_blocks(), 0u);
  EXPECT_EQ(inner.live_blocks(), 0u);
}

// A pool lends each lease its own arena, takes it back when the lease ends, lends it again, keeps at most its
// number of idle arenas, and each arena keeps at most the pool's bytes while idle.
TEST(Scratch, APoolLendsArenasAndKeepsAFewIdleOnes) {
  ScratchArenaPool pool(2, 8 * kMiB);
  ScratchArena* second = nullptr;
  {
    ScratchArenaPool::Lease a(pool);
    EXPECT_EQ(a.arena().keep_bytes(), 8 * kMiB);
    ScratchArenaPool::Lease b(pool);
    ScratchArenaPool::Lease c(pool);
    second = &b.arena();
    EXPECT_NE(&b.arena(), &a.arena());
    EXPECT_NE(&c.arena(), &b.arena());
    EXPECT_NE(&c.arena(), &a.arena());
    const ScratchArena::Use use(b.arena());
    ScratchBuffer<uint8_t> small(3 * kMiB);
    EXPECT_EQ(b.arena().live_blocks(), 1u);
  }  // c, then b go back to the pool; a finds it full and is deleted
  EXPECT_EQ(pool.idle_arenas(), 2u);
  {
    ScratchArenaPool::Lease again(pool);
    EXPECT_EQ(&again.arena(), second);  // the last given back, lent first
    EXPECT_GE(again.arena().reserved_bytes(), 3 * kMiB);  // kept: below the pool's 8 MiB
    void* big = again.arena().allocate(20 * kMiB);
    again.arena().release(big);
    EXPECT_EQ(again.arena().reserved_bytes(), 0u);  // above it: given back to the system
  }
  // Leases from many threads at once (under ThreadSanitizer or ASan, a race or a block given to the wrong arena
  // would show).
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        ScratchArenaPool::Lease lease(pool);
        const ScratchArena::Use use(lease.arena());
        ScratchBuffer<float> buffer(1000 + 100 * static_cast<std::size_t>(t));
        buffer.data()[0] = static_cast<float>(t);
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_LE(pool.idle_arenas(), 2u);
}

#if defined(__SANITIZE_ADDRESS__)
// The arena tells AddressSanitizer which bytes no live block covers.
TEST(ScratchDeathTest, AReadAfterReleaseIsReported) {
  EXPECT_DEATH(
      {
        ScratchArena arena;
        void* keep = arena.allocate(64);
        auto* p = static_cast<volatile uint8_t*>(arena.allocate(64));
        arena.release(const_cast<uint8_t*>(p));
        (void)p[0];
        arena.release(keep);
      },
      "use-after-poison");
}
#endif

}  // namespace
}  // namespace verdict
