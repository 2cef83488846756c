#include "core/heap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

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

TEST(WeightMemory, ZeroedAlignedAndWritableAtEverySize) {
  for (const int64_t bytes : {int64_t{1}, int64_t{100}, kWeightMappingBytes - 1, kWeightMappingBytes,
                              5 * kWeightMappingBytes + 3}) {
    uint8_t* p = allocate_weight_memory(bytes);
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
    free_weight_memory(p, bytes);
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

}  // namespace
}  // namespace verdict
