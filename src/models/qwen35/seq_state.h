// Per-sequence state of the Qwen3.5 backbone (spec §6.8, §7.5, §11), from a pool sized up front:
// for each slot, the KV cache of every full-attention layer ([nkv, max_tokens, hd] keys and values,
// fp32, keys after k_norm and rotary) and, for every DeltaNet layer, the conv state (the last K−1
// pre-conv vectors) and the recurrent state S ([nv, dk, dv], fp32). Nothing is allocated per token.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "core/heap.h"
#include "models/qwen35/config.h"

namespace verdict::models::qwen35 {

// Memory for saved states: blocks of 2 MiB and more are their own mappings in transparent huge pages
// (core/heap.h), so that a new snapshot's tens of megabytes fault in a few huge pages, not thousands of
// small ones, and are handed back whole when freed, leaving the heap of the activation buffers alone.
template <typename T>
struct SnapshotAllocator {
  using value_type = T;
  SnapshotAllocator() = default;
  template <typename U>
  SnapshotAllocator(const SnapshotAllocator<U>&) {}  // NOLINT: converting, as allocators are
  T* allocate(std::size_t n) {
    auto* p = allocate_weight_memory(static_cast<int64_t>(n * sizeof(T)));
    if (p == nullptr) throw std::bad_alloc();
    return reinterpret_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) { free_weight_memory(reinterpret_cast<uint8_t*>(p), static_cast<int64_t>(n * sizeof(T))); }
  template <typename U>
  bool operator==(const SnapshotAllocator<U>&) const { return true; }
};
using SnapshotFloats = std::vector<float, SnapshotAllocator<float>>;

// One sequence's whole state after `length` tokens, outside the pool (the engine's prefix cache keeps
// these): restoring it into a slot and running the rest of a sequence gives what running the whole
// sequence gives, bit for bit. Holds the KV rows of the first `length` positions only.
struct SeqSnapshot {
  int64_t length = 0;
  SnapshotFloats conv, recurrent;  // [deltanet layers, …] as in the pool
  SnapshotFloats keys, values;     // [attention layers, nkv, length, hd]
  std::size_t bytes() const { return (conv.size() + recurrent.size() + keys.size() + values.size()) * sizeof(float); }
};

// Snapshots let go of, kept for the next save (thread-safe): a snapshot's tens of megabytes, freshly
// allocated for every save, cost more in page faults than the copy itself (a virtual machine's page
// faults are slow). Holds at most `max_bytes` of them (SeqStatePool: spare_snapshot_bytes()).
class SnapshotSpares {
 public:
  explicit SnapshotSpares(std::size_t max_bytes) : max_bytes_(max_bytes) {}
  void give(SeqSnapshot&& snapshot);
  bool take(SeqSnapshot& out);  // false when none is kept
  std::size_t bytes() const;

 private:
  mutable std::mutex mutex_;
  std::size_t max_bytes_, bytes_ = 0;
  std::vector<SeqSnapshot> spares_;
};

// SeqSnapshot::bytes() of a sequence of `tokens` tokens of this model.
std::size_t snapshot_bytes(const Config& config, int64_t tokens);
// The most a pool's SnapshotSpares hold: two snapshots of 512 tokens.
std::size_t spare_snapshot_bytes(const Config& config);

// Frees a SeqStatePool's states, keys or values (free_weight_memory).
struct StateMemoryFree {
  int64_t bytes = 0;
  void operator()(float* p) const;
};

class SeqStatePool {
 public:
  // Room for `max_sequences` sequences of up to `max_tokens` tokens each.
  SeqStatePool(const Config& config, int64_t max_sequences, int64_t max_tokens);

  int64_t max_sequences() const { return max_sequences_; }
  int64_t max_tokens() const { return max_tokens_; }
  // Bytes of state held by the pool.
  std::size_t bytes() const;

  // Takes a free slot with empty state; throws verdict::Error when every slot is in use.
  int64_t acquire();
  // Returns a slot to the pool.
  void release(int64_t slot);
  // Empties a slot's state (length 0, zero conv and recurrent state).
  void reset(int64_t slot);
  bool in_use(int64_t slot) const;
  // Tokens the slot's sequence holds so far.
  int64_t length(int64_t slot) const;
  void set_length(int64_t slot, int64_t length);
  // Copies the whole state of `from` into `to` (a snapshot; DeltaNet states cannot be rewound).
  void copy(int64_t from, int64_t to);
  // The slot's state as a snapshot, and back: restore() replaces the whole state of `slot` (throws
  // verdict::Error for a snapshot of another shape or longer than the pool's sequences).
  SeqSnapshot save(int64_t slot) const;
  void restore(const SeqSnapshot& snapshot, int64_t slot);
  // A snapshot with room for the conv and recurrent states (a spare's contents, or zeros), length 0: for a
  // forward step to fill.
  SeqSnapshot blank_snapshot() const;
  // Where this pool takes blank snapshots from, and where their owners may give them back.
  const std::shared_ptr<SnapshotSpares>& spares() const { return spares_; }
  // Sets a snapshot's length and copies the slot's keys and values of positions [0, length) into it.
  void save_kv(int64_t slot, int64_t length, SeqSnapshot& snapshot) const;

  float* conv_state(int64_t slot, int64_t deltanet_layer);       // [K−1, conv_dim]
  float* recurrent_state(int64_t slot, int64_t deltanet_layer);  // [nv, dk, dv]
  float* keys(int64_t slot, int64_t attention_layer);            // [nkv, max_tokens, hd]
  float* values(int64_t slot, int64_t attention_layer);          // [nkv, max_tokens, hd]
  const float* conv_state(int64_t slot, int64_t layer) const { return const_cast<SeqStatePool*>(this)->conv_state(slot, layer); }
  const float* recurrent_state(int64_t slot, int64_t layer) const {
    return const_cast<SeqStatePool*>(this)->recurrent_state(slot, layer);
  }
  const float* keys(int64_t slot, int64_t layer) const { return const_cast<SeqStatePool*>(this)->keys(slot, layer); }
  const float* values(int64_t slot, int64_t layer) const { return const_cast<SeqStatePool*>(this)->values(slot, layer); }

 private:
  void check_slot(int64_t slot) const;

  // The conv and recurrent states, the keys and the values of every slot and layer: memory whose pages the kernel
  // commits on first write (allocate_weight_memory maps blocks of 2 MiB and more afresh, zero, and never touches
  // them). So a pool sized for max_tokens costs the positions its sequences reach, not max_tokens of each, and no
  // time at load; the states, zero as allocated (as a slot read before its first reset() expects), are committed
  // slot by slot when reset() clears them (zero-filled vectors had cost clef-0.8b's 4 slots 75 MB of memset and
  // 4 KiB page faults at load: docs/performance.md).
  using StateMemory = std::unique_ptr<float, StateMemoryFree>;
  static StateMemory state_memory(std::size_t floats);

  int64_t max_sequences_, max_tokens_;
  int64_t conv_floats_, recurrent_floats_, kv_floats_;  // per slot and layer
  int64_t nkv_, head_dim_;
  int64_t deltanet_layers_, attention_layers_;
  std::size_t conv_size_ = 0, recurrent_size_ = 0;  // floats of conv_ and recurrent_
  StateMemory conv_, recurrent_;
  std::size_t kv_size_ = 0;  // floats of keys_ (and of values_)
  StateMemory keys_, values_;
  std::vector<int64_t> length_;
  std::vector<bool> in_use_;
  std::shared_ptr<SnapshotSpares> spares_;
};

}  // namespace verdict::models::qwen35
