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
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

namespace verdict {

// Blocks are carved in order from a few large mappings (chunks, in transparent huge pages: core/heap.h)
// and reclaimed in stack order: a block given back before the ones allocated after it waits for them.
// When the last live block goes, the chunks are merged into one of their total size, so that from the
// second step of a shape on every block comes from one chunk. Up to keep_bytes (kKeepBytes unless told)
// stay mapped while no block is live. Not thread-safe: each thread uses its own (local()) or one lent to it
// for a while (ScratchArenaPool, made current() by ScratchArena::Use), and a block is given back to the
// arena that gave it.
class ScratchArena {
 public:
  explicit ScratchArena(std::size_t keep_bytes = kKeepBytes) : keep_bytes_(keep_bytes) {}
  ~ScratchArena();
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;

  // The calling thread's own arena.
  static ScratchArena& local();
  // The arena the calling thread takes scratch memory from: the innermost Use's, else local().
  static ScratchArena& current();

  // Makes `arena` the calling thread's current() one while it lives (scoped; nests).
  class Use {
   public:
    explicit Use(ScratchArena& arena);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    ScratchArena* previous_;
  };

  // `bytes` bytes (at least one), 64-byte aligned, contents undefined. Throws std::bad_alloc.
  void* allocate(std::size_t bytes);
  // Gives back a block from allocate(); blocks may be given back in any order.
  void release(void* p);

  std::size_t live_blocks() const { return live_.size(); }
  std::size_t chunk_count() const { return chunks_.size(); }
  // Bytes mapped from the system.
  std::size_t reserved_bytes() const;

  // The most a thread's own arena keeps mapped while it holds no live block (as M_TRIM_THRESHOLD for the heap,
  // core/heap.h).
  static constexpr std::size_t kKeepBytes = std::size_t{256} << 20;
  std::size_t keep_bytes() const { return keep_bytes_; }

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

  std::size_t keep_bytes_;
  std::vector<Chunk> chunks_;
  std::vector<Block> live_;  // in allocation order
};

// Arenas lent to threads for a while, for the many threads that each need one now and then: the server's
// request threads (up to 256) run the decisions' joint heads, whose matrices take megabytes, and an arena of
// their own apiece could keep that much for each of them. A lease takes an idle arena (or a new one) and
// gives it back when it ends; up to `keep_arenas` idle ones stay, each keeping up to `keep_bytes`.
// Thread-safe.
class ScratchArenaPool {
 public:
  ScratchArenaPool(std::size_t keep_arenas, std::size_t keep_bytes);
  ~ScratchArenaPool();
  ScratchArenaPool(const ScratchArenaPool&) = delete;
  ScratchArenaPool& operator=(const ScratchArenaPool&) = delete;

  class Lease {
   public:
    explicit Lease(ScratchArenaPool& pool);
    ~Lease();  // the arena must hold no live block by then
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ScratchArena& arena() { return *arena_; }

   private:
    ScratchArenaPool* pool_;
    ScratchArena* arena_;
  };

  std::size_t idle_arenas() const;

 private:
  std::size_t keep_arenas_, keep_bytes_;
  mutable std::mutex mutex_;
  std::vector<ScratchArena*> idle_;
};

// n values of T from an arena (the calling thread's current() one by default), given back when this goes out of scope.
// Values start undefined: only for arrays the next operation overwrites before anything reads them.
template <typename T>
class ScratchBuffer {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit ScratchBuffer(std::size_t n, ScratchArena& arena = ScratchArena::current())
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

// A standard allocator over an arena: the calling thread's current() one when constructed (a copied container
// takes the copying thread's), and a block goes back to the arena it came from. For containers that are made
// and destroyed on one thread while that arena is its, such as the joint head's matrices (decision/head_math.h):
// the arena is not thread-safe.
template <typename T>
class ScratchAllocator {
 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::false_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  ScratchAllocator() noexcept : arena_(&ScratchArena::current()) {}
  explicit ScratchAllocator(ScratchArena& arena) noexcept : arena_(&arena) {}
  template <typename U>
  ScratchAllocator(const ScratchAllocator<U>& other) noexcept : arena_(other.arena()) {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(arena_->allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept { arena_->release(p); }
  ScratchAllocator select_on_container_copy_construction() const noexcept { return ScratchAllocator(); }

  ScratchArena* arena() const noexcept { return arena_; }
  template <typename U>
  bool operator==(const ScratchAllocator<U>& other) const noexcept {
    return arena_ == other.arena();
  }

 private:
  ScratchArena* arena_;
};

}  // namespace verdict
