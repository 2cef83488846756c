#include "core/scratch.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "core/heap.h"

#if defined(__SANITIZE_ADDRESS__)
#define VERDICT_SCRATCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VERDICT_SCRATCH_ASAN 1
#endif
#endif
#if defined(VERDICT_SCRATCH_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace verdict {
namespace {

constexpr std::size_t kAlign = 64;
constexpr std::size_t kChunkGranule = std::size_t{2} << 20;  // a huge page

// Under AddressSanitizer, memory no live block covers is poisoned: a read or write after release() or past
// a block's end is reported as it would be for the heap.
void poison(const void* p, std::size_t n) {
#if defined(VERDICT_SCRATCH_ASAN)
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}
void unpoison(const void* p, std::size_t n) {
#if defined(VERDICT_SCRATCH_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

}  // namespace

ScratchArena::~ScratchArena() { free_chunks(); }

namespace {
thread_local ScratchArena* current_arena = nullptr;  // the innermost ScratchArena::Use's
}  // namespace

ScratchArena& ScratchArena::local() {
  thread_local ScratchArena arena;
  return arena;
}

ScratchArena& ScratchArena::current() { return current_arena != nullptr ? *current_arena : local(); }

ScratchArena::Use::Use(ScratchArena& arena) : previous_(current_arena) { current_arena = &arena; }
ScratchArena::Use::~Use() { current_arena = previous_; }

std::size_t ScratchArena::reserved_bytes() const {
  std::size_t total = 0;
  for (const Chunk& c : chunks_) total += c.size;
  return total;
}

void ScratchArena::add_chunk(std::size_t bytes) {
  const std::size_t size = round_up(std::max(bytes, kChunkGranule), kChunkGranule);
  uint8_t* base = allocate_weight_memory(static_cast<int64_t>(size));
  if (base == nullptr) throw std::bad_alloc();
  poison(base, size);
  chunks_.push_back(Chunk{base, size, 0});
}

void ScratchArena::free_chunks() {
  for (const Chunk& c : chunks_) {
    unpoison(c.base, c.size);
    free_weight_memory(c.base, static_cast<int64_t>(c.size));
  }
  chunks_.clear();
}

// With no live block: one chunk of the chunks' total size in their place (none above keep_bytes_).
void ScratchArena::merge_chunks() {
  if (chunks_.empty()) return;
  const std::size_t total = reserved_bytes();
  if (chunks_.size() == 1 && total <= keep_bytes_) return;
  free_chunks();
  if (total <= keep_bytes_) add_chunk(total);
}

void* ScratchArena::allocate(std::size_t bytes) {
  const std::size_t n = round_up(std::max<std::size_t>(bytes, 1), kAlign);
  // Blocks lie in allocation order over the chunks, so every chunk after the last live block's is empty.
  std::size_t c = live_.empty() ? 0 : live_.back().chunk;
  while (c < chunks_.size() && chunks_[c].size - chunks_[c].top < n) ++c;
  if (c == chunks_.size()) add_chunk(std::max(n, reserved_bytes()));  // at least doubling: few chunks
  Chunk& chunk = chunks_[c];
  uint8_t* p = chunk.base + chunk.top;
  live_.push_back(Block{p, n, c, chunk.top, false});
  chunk.top += n;
  unpoison(p, n);
  return p;
}

void ScratchArena::release(void* p) {
  auto it = std::find_if(live_.rbegin(), live_.rend(), [&](const Block& b) { return b.p == p && !b.released; });
  if (it == live_.rend()) std::abort();  // not a live block of this arena: a bug in the caller
  it->released = true;
  poison(it->p, it->bytes);
  while (!live_.empty() && live_.back().released) {
    chunks_[live_.back().chunk].top = live_.back().top_before;
    live_.pop_back();
  }
  if (live_.empty()) merge_chunks();
}

ScratchArenaPool::ScratchArenaPool(std::size_t keep_arenas, std::size_t keep_bytes)
    : keep_arenas_(keep_arenas), keep_bytes_(keep_bytes) {}

ScratchArenaPool::~ScratchArenaPool() {
  for (ScratchArena* a : idle_) delete a;
}

std::size_t ScratchArenaPool::idle_arenas() const {
  std::lock_guard lock(mutex_);
  return idle_.size();
}

ScratchArenaPool::Lease::Lease(ScratchArenaPool& pool) : pool_(&pool), arena_(nullptr) {
  {
    std::lock_guard lock(pool.mutex_);
    if (!pool.idle_.empty()) {
      arena_ = pool.idle_.back();
      pool.idle_.pop_back();
    }
  }
  if (arena_ == nullptr) arena_ = new ScratchArena(pool.keep_bytes_);
}

ScratchArenaPool::Lease::~Lease() {
  if (arena_->live_blocks() != 0) std::abort();  // a block outlived the lease: a bug in the caller
  {
    std::lock_guard lock(pool_->mutex_);
    if (pool_->idle_.size() < pool_->keep_arenas_) {
      pool_->idle_.push_back(arena_);
      return;
    }
  }
  delete arena_;
}

}  // namespace verdict
