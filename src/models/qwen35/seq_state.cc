#include "models/qwen35/seq_state.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace verdict::models::qwen35 {
namespace {

std::size_t checked_size(int64_t a, int64_t b, int64_t c) {
  const long double total = static_cast<long double>(a) * b * c;
  if (total > static_cast<long double>(int64_t{1} << 40))
    throw Error("sequence state pool too large (" + std::to_string(a) + " × " + std::to_string(b) + " × " +
                std::to_string(c) + " values)");
  return static_cast<std::size_t>(a * b * c);
}

}  // namespace

std::size_t snapshot_bytes(const Config& c, int64_t tokens) {
  const int64_t conv = std::max<int64_t>(c.conv_kernel - 1, 0) * c.conv_dim();
  const int64_t per_sequence = c.deltanet_layers * (conv + c.nv * c.dk * c.dv);
  const int64_t per_token = c.attention_layers * 2 * c.nkv * c.head_dim;
  return static_cast<std::size_t>(per_sequence + per_token * std::max<int64_t>(tokens, 0)) * sizeof(float);
}

SeqStatePool::SeqStatePool(const Config& c, int64_t max_sequences, int64_t max_tokens)
    : max_sequences_(max_sequences), max_tokens_(max_tokens) {
  if (max_sequences < 1 || max_tokens < 1)
    throw Error("sequence state pool needs at least one sequence and one token");
  conv_floats_ = std::max<int64_t>(c.conv_kernel - 1, 0) * c.conv_dim();
  recurrent_floats_ = c.nv * c.dk * c.dv;
  kv_floats_ = c.nkv * max_tokens * c.head_dim;
  nkv_ = c.nkv;
  head_dim_ = c.head_dim;
  deltanet_layers_ = c.deltanet_layers;
  attention_layers_ = c.attention_layers;
  conv_size_ = checked_size(max_sequences, deltanet_layers_, conv_floats_);
  recurrent_size_ = checked_size(max_sequences, deltanet_layers_, recurrent_floats_);
  conv_ = state_memory(conv_size_);
  recurrent_ = state_memory(recurrent_size_);
  kv_size_ = checked_size(max_sequences, attention_layers_, kv_floats_);
  keys_ = state_memory(kv_size_);
  values_ = state_memory(kv_size_);
  length_.assign(static_cast<std::size_t>(max_sequences), 0);
  spares_ = std::make_shared<SnapshotSpares>(spare_snapshot_bytes(c));
  in_use_.assign(static_cast<std::size_t>(max_sequences), false);
}

void StateMemoryFree::operator()(float* p) const { free_weight_memory(reinterpret_cast<uint8_t*>(p), bytes); }

SeqStatePool::StateMemory SeqStatePool::state_memory(std::size_t floats) {
  const auto bytes = static_cast<int64_t>(std::max<std::size_t>(floats, 1) * sizeof(float));
  uint8_t* p = allocate_weight_memory(bytes);
  if (p == nullptr)
    throw Error("sequence state pool: out of memory for " + std::to_string(bytes) +
                " bytes of states, keys or values");
  return StateMemory(reinterpret_cast<float*>(p), StateMemoryFree{bytes});
}

std::size_t SeqStatePool::bytes() const {
  return (conv_size_ + recurrent_size_ + 2 * kv_size_) * sizeof(float);
}

void SeqStatePool::check_slot(int64_t slot) const {
  if (slot < 0 || slot >= max_sequences_)
    throw Error("sequence slot " + std::to_string(slot) + " out of range [0, " + std::to_string(max_sequences_) + ")");
}

int64_t SeqStatePool::acquire() {
  for (int64_t s = 0; s < max_sequences_; ++s) {
    if (!in_use_[static_cast<std::size_t>(s)]) {
      in_use_[static_cast<std::size_t>(s)] = true;
      reset(s);
      return s;
    }
  }
  throw Error("all " + std::to_string(max_sequences_) + " sequence slots are in use");
}

void SeqStatePool::release(int64_t slot) {
  check_slot(slot);
  in_use_[static_cast<std::size_t>(slot)] = false;
}

void SeqStatePool::reset(int64_t slot) {
  check_slot(slot);
  length_[static_cast<std::size_t>(slot)] = 0;
  for (int64_t l = 0; l < deltanet_layers_; ++l) {
    std::fill_n(conv_state(slot, l), conv_floats_, 0.0f);
    std::fill_n(recurrent_state(slot, l), recurrent_floats_, 0.0f);
  }
  // The KV cache needs no clearing: only positions below the length are ever read.
}

bool SeqStatePool::in_use(int64_t slot) const {
  check_slot(slot);
  return in_use_[static_cast<std::size_t>(slot)];
}

int64_t SeqStatePool::length(int64_t slot) const {
  check_slot(slot);
  return length_[static_cast<std::size_t>(slot)];
}

void SeqStatePool::set_length(int64_t slot, int64_t length) {
  check_slot(slot);
  if (length < 0 || length > max_tokens_)
    throw Error("sequence length " + std::to_string(length) + " exceeds the pool's " + std::to_string(max_tokens_) +
                " tokens");
  length_[static_cast<std::size_t>(slot)] = length;
}

void SeqStatePool::copy(int64_t from, int64_t to) {
  check_slot(from);
  check_slot(to);
  if (from == to) return;
  for (int64_t l = 0; l < deltanet_layers_; ++l) {
    std::copy_n(conv_state(from, l), conv_floats_, conv_state(to, l));
    std::copy_n(recurrent_state(from, l), recurrent_floats_, recurrent_state(to, l));
  }
  // Keys and values of positions [0, length) only: the rest is never read, and copying it would commit its pages.
  const int64_t rows = length_[static_cast<std::size_t>(from)] * head_dim_;  // per KV head
  for (int64_t l = 0; l < attention_layers_; ++l)
    for (int64_t h = 0; h < nkv_; ++h) {
      const int64_t at = h * max_tokens_ * head_dim_;
      std::copy_n(keys(from, l) + at, rows, keys(to, l) + at);
      std::copy_n(values(from, l) + at, rows, values(to, l) + at);
    }
  length_[static_cast<std::size_t>(to)] = length_[static_cast<std::size_t>(from)];
}

namespace {
std::size_t capacity_bytes(const SeqSnapshot& s) {
  return (s.conv.capacity() + s.recurrent.capacity() + s.keys.capacity() + s.values.capacity()) * sizeof(float);
}
}  // namespace

void SnapshotSpares::give(SeqSnapshot&& snapshot) {
  const std::size_t size = capacity_bytes(snapshot);
  std::lock_guard lock(mutex_);
  if (bytes_ + size > max_bytes_) return;  // freed here
  bytes_ += size;
  spares_.push_back(std::move(snapshot));
}

bool SnapshotSpares::take(SeqSnapshot& out) {
  std::lock_guard lock(mutex_);
  if (spares_.empty()) return false;
  bytes_ -= capacity_bytes(spares_.back());
  out = std::move(spares_.back());
  spares_.pop_back();
  return true;
}

std::size_t SnapshotSpares::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

std::size_t spare_snapshot_bytes(const Config& config) { return 2 * snapshot_bytes(config, 512); }

SeqSnapshot SeqStatePool::blank_snapshot() const {
  SeqSnapshot s;
  if (spares_->take(s)) {
    s.length = 0;
    s.keys.clear();  // the capacity stays, for save_kv
    s.values.clear();
  }
  s.conv.resize(static_cast<std::size_t>(deltanet_layers_ * conv_floats_));
  s.recurrent.resize(static_cast<std::size_t>(deltanet_layers_ * recurrent_floats_));
  return s;
}

void SeqStatePool::save_kv(int64_t slot, int64_t length, SeqSnapshot& s) const {
  check_slot(slot);
  if (length < 0 || length > length_[static_cast<std::size_t>(slot)])
    throw Error("cannot save " + std::to_string(length) + " positions of a sequence of " +
                std::to_string(length_[static_cast<std::size_t>(slot)]));
  s.length = length;
  const int64_t rows = length * head_dim_;  // per KV head
  s.keys.resize(static_cast<std::size_t>(attention_layers_ * nkv_ * rows));
  s.values.resize(s.keys.size());
  for (int64_t l = 0; l < attention_layers_; ++l)
    for (int64_t h = 0; h < nkv_; ++h) {
      const int64_t from = h * max_tokens_ * head_dim_, to = (l * nkv_ + h) * rows;
      std::copy_n(keys(slot, l) + from, rows, s.keys.data() + to);
      std::copy_n(values(slot, l) + from, rows, s.values.data() + to);
    }
}

SeqSnapshot SeqStatePool::save(int64_t slot) const {
  check_slot(slot);
  SeqSnapshot s = blank_snapshot();
  for (int64_t l = 0; l < deltanet_layers_; ++l) {
    std::copy_n(conv_state(slot, l), conv_floats_, s.conv.data() + l * conv_floats_);
    std::copy_n(recurrent_state(slot, l), recurrent_floats_, s.recurrent.data() + l * recurrent_floats_);
  }
  save_kv(slot, length_[static_cast<std::size_t>(slot)], s);
  return s;
}

void SeqStatePool::restore(const SeqSnapshot& s, int64_t slot) {
  check_slot(slot);
  const int64_t rows = s.length * head_dim_;
  if (s.length < 0 || s.length > max_tokens_ ||
      s.conv.size() != static_cast<std::size_t>(deltanet_layers_ * conv_floats_) ||
      s.recurrent.size() != static_cast<std::size_t>(deltanet_layers_ * recurrent_floats_) ||
      s.keys.size() != static_cast<std::size_t>(attention_layers_ * nkv_ * rows) || s.values.size() != s.keys.size())
    throw Error("sequence snapshot of " + std::to_string(s.length) + " tokens does not fit this state pool");
  for (int64_t l = 0; l < deltanet_layers_; ++l) {
    std::copy_n(s.conv.data() + l * conv_floats_, conv_floats_, conv_state(slot, l));
    std::copy_n(s.recurrent.data() + l * recurrent_floats_, recurrent_floats_, recurrent_state(slot, l));
  }
  for (int64_t l = 0; l < attention_layers_; ++l)
    for (int64_t h = 0; h < nkv_; ++h) {
      const int64_t to = h * max_tokens_ * head_dim_, from = (l * nkv_ + h) * rows;
      std::copy_n(s.keys.data() + from, rows, keys(slot, l) + to);
      std::copy_n(s.values.data() + from, rows, values(slot, l) + to);
    }
  length_[static_cast<std::size_t>(slot)] = s.length;
}

float* SeqStatePool::conv_state(int64_t slot, int64_t layer) {
  return conv_.get() + (slot * deltanet_layers_ + layer) * conv_floats_;
}
float* SeqStatePool::recurrent_state(int64_t slot, int64_t layer) {
  return recurrent_.get() + (slot * deltanet_layers_ + layer) * recurrent_floats_;
}
float* SeqStatePool::keys(int64_t slot, int64_t layer) {
  return keys_.get() + (slot * attention_layers_ + layer) * kv_floats_;
}
float* SeqStatePool::values(int64_t slot, int64_t layer) {
  return values_.get() + (slot * attention_layers_ + layer) * kv_floats_;
}

}  // namespace verdict::models::qwen35
