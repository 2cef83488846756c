#include "core/heap.h"

#include <sys/mman.h>

#include <cstdlib>  // defines __GLIBC__ on glibc
#include <cstring>
#include <mutex>
#include <new>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
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

bool huge_pages_wanted() {
  static const bool wanted = [] {
    const char* e = std::getenv("VERDICT_HUGE_PAGES");
    return e == nullptr || std::strcmp(e, "0") != 0;
  }();
  return wanted;
}

// A fresh anonymous mapping of n bytes (a multiple of the page) aligned to `align` (a power of two, at least a
// huge page), advised for transparent huge pages unless VERDICT_HUGE_PAGES=0; nullptr when the kernel refuses.
// Maps `align` more than needed, then unmaps the unaligned head and the tail (anonymous pages are zero).
uint8_t* map_aligned(std::uintptr_t n, std::uintptr_t align) {
  void* raw = ::mmap(nullptr, n + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto first = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = round_up(first, align);
  if (start > first) ::munmap(raw, start - first);
  const std::uintptr_t end = first + n + align;
  if (end > start + n) ::munmap(reinterpret_cast<void*>(start + n), end - (start + n));
#if defined(MADV_HUGEPAGE)
  if (huge_pages_wanted()) (void)::madvise(reinterpret_cast<void*>(start), n, MADV_HUGEPAGE);  // advice only
#endif
  return reinterpret_cast<uint8_t*>(start);
}

// allocate_model_weights' blocks below kWeightMappingBytes are carved one after another from slabs: mappings of
// kWeightSlabBytes aligned to their size (so a block's slab is its address rounded down) and advised for huge pages
// like the large blocks. A block's bytes are never handed out twice, so they are zero without a memset, and a model's
// small matrices fault in by the huge page instead of one 4 KiB page each, zero-filled first by the heap's memset
// (docs/performance.md, "A model's small matrices in huge-page slabs"). The slab's first line counts its live
// blocks; the slab is unmapped when that count falls to 0 (an unloaded model leaves no slab behind but those it
// shares with a model still loaded). One lock guards the carving slab and the counts (blocks come and go as models
// load and unload).
struct Slab {
  int64_t live = 0;
};
// Under AddressSanitizer a slab is poisoned but for its live blocks, with a poisoned line after each, so that a
// write past a block's end or into a freed block is reported as on the heap.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::uintptr_t kRedZone = 64;
void slab_poison(const void* p, std::uintptr_t n) { ASAN_POISON_MEMORY_REGION(p, n); }
void slab_unpoison(const void* p, std::uintptr_t n) { ASAN_UNPOISON_MEMORY_REGION(p, n); }
#else
constexpr std::uintptr_t kRedZone = 0;
void slab_poison(const void*, std::uintptr_t) {}
void slab_unpoison(const void*, std::uintptr_t) {}
#endif
void unmap_slab(uint8_t* slab) {
  slab_unpoison(slab, kWeightSlabBytes);
  ::munmap(slab, kWeightSlabBytes);
}
std::mutex slab_mutex;
uint8_t* carving = nullptr;    // the slab blocks are carved from
std::uintptr_t carved = 0;     // its bytes used, header included

uint8_t* allocate_from_slab(std::uintptr_t n) {
  const std::lock_guard<std::mutex> lock(slab_mutex);
  if (carving == nullptr || carved + n + kRedZone > kWeightSlabBytes) {
    uint8_t* slab = map_aligned(kWeightSlabBytes, kWeightSlabBytes);
    if (slab == nullptr) return nullptr;
    carving = slab;  // the previous one holds live blocks: its last one unmaps it
    new (slab) Slab();
    carved = 64;
    slab_poison(slab + carved, kWeightSlabBytes - carved);
  }
  uint8_t* p = carving + carved;
  carved += n + kRedZone;
  ++reinterpret_cast<Slab*>(carving)->live;
  slab_unpoison(p, n);
  return p;
}

void free_to_slab(uint8_t* p, std::uintptr_t n) {
  auto* slab = reinterpret_cast<uint8_t*>(reinterpret_cast<std::uintptr_t>(p) & ~(kWeightSlabBytes - 1));
  const std::lock_guard<std::mutex> lock(slab_mutex);
  slab_poison(p, n);
  if (--reinterpret_cast<Slab*>(slab)->live > 0) return;
  unmap_slab(slab);
  if (slab == carving) carving = nullptr;
}

}  // namespace

uint8_t* allocate_weight_memory(int64_t bytes) {
  const std::uintptr_t n = block_bytes(bytes);
  if (bytes < kWeightMappingBytes) {
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, n));
    if (p != nullptr) std::memset(p, 0, n);
    return p;
  }
  return map_aligned(n, kHugePage);
}

void free_weight_memory(uint8_t* p, int64_t bytes) {
  if (p == nullptr) return;
  if (bytes < kWeightMappingBytes) {
    std::free(p);
    return;
  }
  ::munmap(p, block_bytes(bytes));
}

uint8_t* allocate_model_weights(int64_t bytes) {
  const std::uintptr_t n = block_bytes(bytes);
  if (bytes < kWeightMappingBytes) return allocate_from_slab(n);
  return map_aligned(n, kHugePage);
}

void free_model_weights(uint8_t* p, int64_t bytes) {
  if (p == nullptr) return;
  if (bytes < kWeightMappingBytes) {
    free_to_slab(p, block_bytes(bytes));
    return;
  }
  ::munmap(p, block_bytes(bytes));
}

}  // namespace verdict
