// Per-sequence state of the Qwen3.5 backbone (spec §6.8, §7.5, §11), from a pool sized up front:
// for each slot, the KV cache of every full-attention layer ([nkv, max_tokens, hd] keys and values,
// fp32, keys after k_norm and rotary) and, for every DeltaNet layer, the conv state (the last K−1
// pre-conv vectors) and the recurrent state S ([nv, dk, dv], fp32). Nothing is allocated per token.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/qwen35/config.h"

namespace verdict::models::qwen35 {

// One sequence's whole state after `length` tokens, outside the pool (the engine's prefix cache keeps
// these): restoring it into a slot and running the rest of a sequence gives what running the whole
// sequence gives, bit for bit. Holds the KV rows of the first `length` positions only.
struct SeqSnapshot {
  int64_t length = 0;
  std::vector<float> conv, recurrent;  // [deltanet layers, …] as in the pool
  std::vector<float> keys, values;     // [attention layers, nkv, length, hd]
  std::size_t bytes() const { return (conv.size() + recurrent.size() + keys.size() + values.size()) * sizeof(float); }
};

// SeqSnapshot::bytes() of a sequence of `tokens` tokens of this model.
std::size_t snapshot_bytes(const Config& config, int64_t tokens);

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
  // A snapshot with room for the conv and recurrent states (zero), no KV rows, length 0.
  SeqSnapshot blank_snapshot() const;
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

  int64_t max_sequences_, max_tokens_;
  int64_t conv_floats_, recurrent_floats_, kv_floats_;  // per slot and layer
  int64_t nkv_, head_dim_;
  int64_t deltanet_layers_, attention_layers_;
  std::vector<float> conv_, recurrent_, keys_, values_;
  std::vector<int64_t> length_;
  std::vector<bool> in_use_;
};

}  // namespace verdict::models::qwen35
