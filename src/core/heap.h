// Process-wide allocator settings for inference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace verdict {

// v rounded up to a multiple of `to` (> 0).
constexpr std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

// Keeps freed large buffers (up to hundreds of MB) in the heap for reuse, instead of glibc's default
// of mapping every allocation above 128 KiB – 32 MiB afresh and returning it to the kernel on free:
// faulting a buffer's pages in again each time it is allocated costs as much as a pass over it. (A
// forward step's activations come from a ScratchArena instead, core/scratch.h: glibc can still unmap an
// emptied heap of a thread other than the main one, whatever these settings.)
// Allocations below 128 MiB come from the heap; up to 256 MiB of freed memory may stay with the
// process. Call once at start-up, before any thread is created; a no-op on other C libraries.
void tune_heap_for_inference();

// Zeroed, 64-byte-aligned memory for data that every decoded token streams from DRAM, or nullptr when there is
// none. From kWeightMappingBytes on, the block is its own anonymous mapping, 2 MiB-aligned and marked MADV_HUGEPAGE
// (unless VERDICT_HUGE_PAGES=0): under the kernel's default `madvise` mode of transparent huge pages, 4 KiB pages
// cost a TLB miss and a restarted hardware prefetcher every 4 KiB of the stream (docs/performance.md, "Decode:
// prefetches and huge pages"); nothing is written to it, so its pages are committed where the caller first writes.
// Smaller blocks come from the heap, zero-filled. Release with free_weight_memory(p, bytes), `bytes` as allocated.
// The sequence pools' KV caches, saved states and scratch arenas come from here: a fresh mapping's pages are
// committed only where a sequence writes (models/qwen35/seq_state.h).
constexpr int64_t kWeightMappingBytes = int64_t{2} << 20;
uint8_t* allocate_weight_memory(int64_t bytes);
void free_weight_memory(uint8_t* p, int64_t bytes);

// The same for a model's weights (the packed matrices, the decision head's), which live until the model unloads:
// blocks below kWeightMappingBytes are carved, without a memset, from shared mappings of kWeightSlabBytes advised
// for huge pages, and a slab is unmapped when its last block is freed (heap.cc). Blocks of short and varied lifetimes
// would keep slabs mapped for their longest-lived neighbour: those take allocate_weight_memory. Release with
// free_model_weights(p, bytes).
constexpr std::uintptr_t kWeightSlabBytes = std::uintptr_t{16} << 20;
uint8_t* allocate_model_weights(int64_t bytes);
void free_model_weights(uint8_t* p, int64_t bytes);

// `count` values of a trivially copyable T in a model's weight memory (allocate_model_weights): zero until
// written, so filling it (a load's memcpy from a mapped file) is the only pass over its pages. Copies copy the
// values.
template <typename T>
class WeightArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  WeightArray() = default;
  explicit WeightArray(std::size_t count) : count_(count) {
    if (count == 0) return;
    data_ = reinterpret_cast<T*>(allocate_model_weights(bytes()));
    if (data_ == nullptr) throw std::bad_alloc();
  }
  WeightArray(const WeightArray& other) : WeightArray(other.count_) {
    if (count_ > 0) std::memcpy(data_, other.data_, static_cast<std::size_t>(bytes()));
  }
  WeightArray(WeightArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  WeightArray& operator=(WeightArray other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~WeightArray() { free_model_weights(reinterpret_cast<uint8_t*>(data_), bytes()); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  int64_t bytes() const { return static_cast<int64_t>(count_ * sizeof(T)); }

  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace verdict
