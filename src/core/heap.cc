#include "core/heap.h"

#include <sys/mman.h>

#include <cstdlib>  // defines __GLIBC__ on glibc
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace verdict {

void tune_heap_for_inference() {
#if defined(__GLIBC__)
  // Fixed thresholds also switch off glibc's dynamic adjustment of them.
  mallopt(M_MMAP_THRESHOLD, 128 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

namespace {

constexpr std::uintptr_t kPage = 4096;
constexpr std::uintptr_t kHugePage = 2 << 20;

// The bytes a block of `bytes` occupies: whole 64-byte lines, and for a mapping whole pages.
std::uintptr_t block_bytes(int64_t bytes) {
  const auto n = round_up(static_cast<std::uintptr_t>(bytes < 1 ? 1 : bytes), 64);
  return bytes < kWeightMappingBytes ? n : round_up(n, kPage);
}

}  // namespace

uint8_t* allocate_weight_memory(int64_t bytes) {
  const std::uintptr_t n = block_bytes(bytes);
  static const bool huge_pages = [] {
    const char* e = std::getenv("VERDICT_HUGE_PAGES");
    return e == nullptr || std::strcmp(e, "0") != 0;
  }();
  if (bytes < kWeightMappingBytes) {
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, n));
    if (p != nullptr) std::memset(p, 0, n);
    return p;
  }
  // Map a huge page more than needed, then unmap the unaligned head and the tail (anonymous pages are zero).
  void* raw = ::mmap(nullptr, n + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto first = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = round_up(first, kHugePage);
  if (start > first) ::munmap(raw, start - first);
  const std::uintptr_t end = first + n + kHugePage;
  if (end > start + n) ::munmap(reinterpret_cast<void*>(start + n), end - (start + n));
#if defined(MADV_HUGEPAGE)
  if (huge_pages) (void)::madvise(reinterpret_cast<void*>(start), n, MADV_HUGEPAGE);  // advice only
#endif
  return reinterpret_cast<uint8_t*>(start);
}

void free_weight_memory(uint8_t* p, int64_t bytes) {
  if (p == nullptr) return;
  if (bytes < kWeightMappingBytes) {
    std::free(p);
    return;
  }
  ::munmap(p, block_bytes(bytes));
}

}  // namespace verdict
