#include "core/heap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace verdict {
namespace {

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)  // (AddressSanitizer brings its own allocator)
// After tuning, a 48 MiB activation buffer comes from the heap (glibc maps anything above 32 MiB
// separately by default, whatever its dynamic threshold), and freeing it keeps the memory with the process
// for the next one.
TEST(Heap, LargeBuffersComeFromTheHeapAndStay) {
  tune_heap_for_inference();
  const auto mapped_before = mallinfo2().hblkhd;
  constexpr std::size_t kBytes = 48u << 20;
  {
    auto buffer = std::make_unique<char[]>(kBytes);  // value-initialized: every page touched
    EXPECT_LT(mallinfo2().hblkhd, mapped_before + kBytes);
  }
  EXPECT_GE(mallinfo2().fordblks, kBytes);  // freed, not returned to the kernel
}
#endif

// The VmFlags line of the mapping that starts at `p` in /proc/self/smaps ("" when none starts there).
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_it = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t from = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash && dash == '-' && line.find(':') > line.find(' ')) {
      in_it = from == reinterpret_cast<std::uintptr_t>(p);
      continue;
    }
    if (in_it && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

// The VmFlags line of the mapping that holds `p` ("" when none does).
std::string vm_flags_holding(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_it = false;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  while (std::getline(smaps, line)) {
    std::uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-' && line.find(':') > line.find(' ')) {
      in_it = from <= at && at < to;
      continue;
    }
    if (in_it && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST(WeightMemory, ZeroedAlignedAndWritableAtEverySize) {
  for (const bool model : {false, true}) {
    for (const int64_t bytes : {int64_t{1}, int64_t{100}, kWeightMappingBytes - 1, kWeightMappingBytes,
                                5 * kWeightMappingBytes + 3}) {
      uint8_t* p = model ? allocate_model_weights(bytes) : allocate_weight_memory(bytes);
      ASSERT_NE(p, nullptr) << bytes;
      const auto at = reinterpret_cast<std::uintptr_t>(p);
      EXPECT_EQ(at % 64, 0u) << bytes;
      if (bytes >= kWeightMappingBytes) {
        EXPECT_EQ(at % kWeightMappingBytes, 0u) << bytes;
      }
      int64_t nonzero = 0;
      for (int64_t i = 0; i < bytes; ++i) nonzero += p[i] != 0;
      EXPECT_EQ(nonzero, 0) << bytes;
      for (int64_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(i);
      EXPECT_EQ(p[bytes - 1], static_cast<uint8_t>(bytes - 1));
      if (model) {
        free_model_weights(p, bytes);
      } else {
        free_weight_memory(p, bytes);
      }
    }
  }
}

// Blocks from kWeightMappingBytes on are their own mapping, advised for transparent huge pages ("hg").
TEST(WeightMemory, LargeBlocksAreMappingsAdvisedForHugePages) {
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) GTEST_SKIP() << "no transparent huge pages";
  const int64_t bytes = 3 * kWeightMappingBytes;
  uint8_t* p = allocate_weight_memory(bytes);
  ASSERT_NE(p, nullptr);
  const std::string flags = vm_flags_of(p);
  EXPECT_NE(flags, "") << "no mapping starts at the block";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  free_weight_memory(p, bytes);
  EXPECT_EQ(vm_flags_of(p), "") << "still mapped after free";
}

// A model's weight blocks below kWeightMappingBytes are carved from shared slabs advised for huge pages. A freed
// block's bytes are never handed out again (a new block is zero without a memset), and a slab whose blocks are all
// freed is unmapped, the one blocks are carved from included.
TEST(WeightMemory, SmallBlocksShareSlabsThatGoWithTheirLastBlock) {
  constexpr int64_t kBlock = int64_t{1} << 20;
  const auto slab_of = [](const uint8_t* p) {
    return reinterpret_cast<std::uintptr_t>(p) & ~(kWeightSlabBytes - 1);
  };
  std::vector<uint8_t*> blocks;
  // Blocks until a second slab is started: the blocks of that slab are all this test's.
  int slabs = 0;
  while (slabs < 3) {
    uint8_t* p = allocate_model_weights(kBlock);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
    for (int64_t i = 0; i < kBlock; i += 4096) ASSERT_EQ(p[i], 0) << i;
    std::memset(p, 0xFF, kBlock);
    if (blocks.empty() || slab_of(p) != slab_of(blocks.back())) ++slabs;
    blocks.push_back(p);
  }
  const std::uintptr_t whole = slab_of(blocks[blocks.size() - 2]);  // the second slab: started and finished here
  ASSERT_NE(whole, slab_of(blocks.front()));
  ASSERT_NE(whole, slab_of(blocks.back()));
  if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
    const std::string flags = vm_flags_holding(reinterpret_cast<const void*>(whole));
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  }
  int64_t in_whole = 0;
  for (uint8_t* p : blocks) {
    if (slab_of(p) != whole) continue;
    ++in_whole;
    EXPECT_NE(vm_flags_holding(reinterpret_cast<const void*>(whole)), "") << "unmapped with live blocks";
    free_model_weights(p, kBlock);
  }
  EXPECT_GE(in_whole, (static_cast<int64_t>(kWeightSlabBytes) - 64) / kBlock);
  EXPECT_EQ(vm_flags_holding(reinterpret_cast<const void*>(whole)), "") << "still mapped after its last block";
  uint8_t* again = allocate_model_weights(kBlock);  // after freed ones, still zero
  for (int64_t i = 0; i < kBlock; ++i) ASSERT_EQ(again[i], 0) << i;
  ASSERT_EQ(slab_of(again), slab_of(blocks.back()));  // the third slab, still being carved
  free_model_weights(again, kBlock);
  for (uint8_t* p : blocks)
    if (slab_of(p) != whole) free_model_weights(p, kBlock);
  EXPECT_EQ(vm_flags_holding(reinterpret_cast<const void*>(slab_of(blocks.back()))), "")
      << "the slab being carved stays mapped after its last block";
}

// A WeightArray holds its values in a model's weight memory, zero until written; a copy copies them.
TEST(WeightMemory, WeightArrayIsZeroedAndCopies) {
  WeightArray<uint16_t> a(3000);
  ASSERT_EQ(a.size(), 3000u);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], 0) << i;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(i * 7);
  const WeightArray<uint16_t> b = a;
  a[5] = 1;
  ASSERT_EQ(b.size(), 3000u);
  EXPECT_EQ(b[5], 35);
  EXPECT_EQ(b[2999], static_cast<uint16_t>(2999 * 7));
  WeightArray<uint16_t> c = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from array is empty
  EXPECT_EQ(c[5], 1);
  EXPECT_TRUE(WeightArray<float>().empty());
}

}  // namespace
}  // namespace verdict
