#include "core/heap.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

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

}  // namespace
}  // namespace verdict
