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
