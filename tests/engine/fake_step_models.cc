#include "fake_step_models.h"

#include <chrono>
#include <string>

#include "core/error.h"

namespace verdict::engine::testing {
namespace {

uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

void expand(uint32_t h, int64_t hidden, float* row) {
  for (int64_t k = 0; k < hidden; ++k) row[k] = static_cast<float>(mix(h + static_cast<uint32_t>(k)) % 2001) / 1000.0f - 1.0f;
}

}  // namespace

PrefixHashModel::PrefixHashModel(int64_t hidden, int64_t vocab, int64_t slots, int64_t max_tokens, int64_t align)
    : hidden_(hidden), vocab_(vocab), max_tokens_(max_tokens), align_(align),
      state_(static_cast<std::size_t>(slots), 0), length_(static_cast<std::size_t>(slots), 0), used_(static_cast<std::size_t>(slots), false) {}

int64_t PrefixHashModel::acquire() {
  for (std::size_t s = 0; s < used_.size(); ++s) {
    if (!used_[s]) {
      used_[s] = true;
      state_[s] = 0x9e3779b9U;
      length_[s] = 0;
      return static_cast<int64_t>(s);
    }
  }
  throw Error("no free slot");
}

void PrefixHashModel::release(int64_t slot) { used_.at(static_cast<std::size_t>(slot)) = false; }

constexpr uint32_t kLogitSalt = 0x5bd1e995U;

void PrefixHashModel::forward(std::span<const StepInput> batch, StepOutput& out) {
  if (fail_next.exchange(false)) throw Error("injected failure");
  std::size_t rows = 0, logit_rows = 0;
  for (const StepInput& in : batch) {
    if (!used_.at(static_cast<std::size_t>(in.slot))) throw Error("slot not acquired");
    const int64_t start = length_[static_cast<std::size_t>(in.slot)];
    if (in.tokens.size() > 1 && start % align_ != 0)
      throw Error("a piece of " + std::to_string(in.tokens.size()) + " tokens starts at position " +
                  std::to_string(start) + ", off the grid of " + std::to_string(align_));
    rows += in.tokens.size();
    logit_rows += in.last_logits ? 1 : 0;
  }
  std::vector<float>& hidden = out.hidden;
  hidden.assign(rows * static_cast<std::size_t>(hidden_), 0.0f);
  out.logits.assign(logit_rows * static_cast<std::size_t>(vocab_), 0.0f);
  std::size_t l = 0;
  std::size_t r = 0;
  for (const StepInput& in : batch) {
    auto& h = state_[static_cast<std::size_t>(in.slot)];
    auto& len = length_[static_cast<std::size_t>(in.slot)];
    if (len + static_cast<int64_t>(in.tokens.size()) > max_tokens_) throw Error("sequence too long");
    for (TokenId t : in.tokens) {
      h = mix(h ^ static_cast<uint32_t>(t) ^ static_cast<uint32_t>(len << 20));
      ++len;
      expand(h, hidden_, hidden.data() + r * static_cast<std::size_t>(hidden_));
      ++r;
    }
    if (in.last_logits) expand(h ^ kLogitSalt, vocab_, out.logits.data() + l++ * static_cast<std::size_t>(vocab_));
  }
}

std::vector<float> PrefixHashModel::reference(std::span<const TokenId> tokens, int64_t hidden) {
  PrefixHashModel m(hidden, 1 << 30, 1, static_cast<int64_t>(tokens.size()) + 1);
  const int64_t slot = m.acquire();
  StepOutput out;
  const StepInput in{slot, tokens, false};
  m.forward(std::span<const StepInput>(&in, 1), out);
  return out.hidden;
}

std::vector<float> PrefixHashModel::reference_logits(std::span<const TokenId> tokens, int64_t vocab) {
  PrefixHashModel m(1, vocab, 1, static_cast<int64_t>(tokens.size()) + 1);
  const int64_t slot = m.acquire();
  StepOutput out;
  const StepInput in{slot, tokens, true};
  m.forward(std::span<const StepInput>(&in, 1), out);
  return out.logits;
}

void Gate::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
}

void Gate::open() {
  {
    std::lock_guard lock(mutex_);
    closed_ = false;
  }
  cv_.notify_all();
}

bool Gate::wait_entered(int n, int timeout_ms) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return entered_ >= n; });
}

void Gate::pass() {
  std::unique_lock lock(mutex_);
  ++entered_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return !closed_; });
}

int Gate::entered() const {
  std::lock_guard lock(mutex_);
  return entered_;
}

}  // namespace verdict::engine::testing
