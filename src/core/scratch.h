// Per-thread memory for the short-lived buffers of a forward step (its activations), kept from one step
// to the next so that a step of a shape seen before takes no memory from the system.
//
// Why not the heap: a step allocates about ten activation buffers per layer (12 MiB each for the 0.8B
// model's DeltaNet at 512 tokens) and frees them again. glibc serves every thread but the main one from
// arenas made of 64 MiB heaps, and unmaps a heap that a free() leaves empty whatever M_TRIM_THRESHOLD
// says, so that the engine thread's buffers could fault in fresh pages on every layer: 40,000 page faults
// a second and steps 40–80 % slower, depending on where the step's buffers fell against the heaps'
// boundaries (docs/performance.md, "Activation memory that stays").
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace verdict {

// Blocks are carved in order from a few large mappings (chunks, in transparent huge pages: core/heap.h)
// and reclaimed in stack order: a block given back before the ones allocated after it waits for them.
// When the last live block goes, the chunks are merged into one of their total size, so that from the
// second step of a shape on every block comes from one chunk. Up to kKeepBytes stay mapped while no
// block is live. Not thread-safe: each thread uses its own (local()), and a block is given back to the
// arena that gave it.
class ScratchArena {
 public:
  ScratchArena() = default;
  ~ScratchArena();
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;

  // The calling thread's arena.
  static ScratchArena& local();

  // `bytes` bytes (at least one), 64-byte aligned, contents undefined. Throws std::bad_alloc.
  void* allocate(std::size_t bytes);
  // Gives back a block from allocate(); blocks may be given back in any order.
  void release(void* p);

  std::size_t live_blocks() const { return live_.size(); }
  std::size_t chunk_count() const { return chunks_.size(); }
  // Bytes mapped from the system.
  std::size_t reserved_bytes() const;

  // The most an arena keeps mapped while it holds no live block (as M_TRIM_THRESHOLD for the heap, core/heap.h).
  static constexpr std::size_t kKeepBytes = std::size_t{256} << 20;

 private:
  struct Chunk {
    uint8_t* base;
    std::size_t size, top;
  };
  struct Block {
    uint8_t* p;
    std::size_t bytes, chunk, top_before;
    bool released;
  };
  void add_chunk(std::size_t bytes);
  void free_chunks();
  void merge_chunks();

  std::vector<Chunk> chunks_;
  std::vector<Block> live_;  // in allocation order
};

// n values of T from an arena (the calling thread's by default), given back when this goes out of scope.
// Values start undefined: only for arrays the next operation overwrites before anything reads them.
template <typename T>
class ScratchBuffer {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit ScratchBuffer(std::size_t n, ScratchArena& arena = ScratchArena::local())
      : arena_(&arena), data_(static_cast<T*>(arena.allocate(n * sizeof(T)))) {}
  ~ScratchBuffer() { arena_->release(data_); }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }

 private:
  ScratchArena* arena_;
  T* data_;
};

}  // namespace verdict
