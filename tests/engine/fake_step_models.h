// Step models for tests: a deterministic fake whose rows depend on the whole prefix of a sequence
// (so chunking and batching mistakes show), and a gate that holds forward steps until released
// (so tests can keep requests in flight deterministically).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "engine/step_model.h"

namespace verdict::engine::testing {

// Hidden size the engine tests give their fake models.
inline constexpr int64_t kHidden = 8;

// Row t of a sequence = expand(hash(tokens[0..t])) over `hidden` floats; its logits row (when asked)
// = expand(hash ^ kLogitSalt) over `vocab` floats, so a generation's next token depends on its
// whole prefix too.
// With `align` > 1 it stands for a model whose results change when a piece is cut off its grid:
// forward() refuses a piece of more than one token that starts elsewhere than a multiple of `align`.
class PrefixHashModel final : public StepModel {
 public:
  PrefixHashModel(int64_t hidden, int64_t vocab, int64_t slots, int64_t max_tokens, int64_t align = 1);

  int64_t hidden_size() const override { return hidden_; }
  int64_t vocab_size() const override { return vocab_; }
  int64_t slots() const override { return static_cast<int64_t>(state_.size()); }
  int64_t max_tokens() const override { return max_tokens_; }
  std::size_t state_bytes() const override { return state_.size() * sizeof(uint32_t); }
  int64_t prefill_alignment() const override { return align_; }
  int64_t acquire() override;
  void release(int64_t slot) override;
  void forward(std::span<const StepInput> batch, StepOutput& out) override;

  // What a sequence of `tokens` run alone gives.
  static std::vector<float> reference(std::span<const TokenId> tokens, int64_t hidden);
  // The logits row after `tokens` run alone.
  static std::vector<float> reference_logits(std::span<const TokenId> tokens, int64_t vocab);

  // Throws from forward() while set.
  std::atomic<bool> fail_next{false};

 private:
  int64_t hidden_, vocab_, max_tokens_, align_;
  std::vector<uint32_t> state_;
  std::vector<int64_t> length_;
  std::vector<bool> used_;
};

// Holds every forward() until released; counts the steps that entered.
class Gate {
 public:
  void close();
  void open();
  // Waits until `n` forward calls have entered (they may be held).
  bool wait_entered(int n, int timeout_ms = 10000);
  void pass();  // called by the gated model
  int entered() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool closed_ = false;
  int entered_ = 0;
};

// Passes every call on to `inner`, forward() through the gate; with `forward_saves` false it says it
// cannot save states (a model without a prefix cache).
class GatedStepModel final : public StepModel {
 public:
  GatedStepModel(std::unique_ptr<StepModel> inner, std::shared_ptr<Gate> gate, bool forward_saves = true)
      : inner_(std::move(inner)), gate_(std::move(gate)), forward_saves_(forward_saves) {}
  bool can_save() const override { return forward_saves_ && inner_->can_save(); }
  std::size_t snapshot_bytes(int64_t tokens) const override { return inner_->snapshot_bytes(tokens); }
  void restore(int64_t slot, const StateSnapshot& snapshot) override { inner_->restore(slot, snapshot); }
  int64_t hidden_size() const override { return inner_->hidden_size(); }
  int64_t vocab_size() const override { return inner_->vocab_size(); }
  int64_t slots() const override { return inner_->slots(); }
  int64_t max_tokens() const override { return inner_->max_tokens(); }
  std::size_t state_bytes() const override { return inner_->state_bytes(); }
  int64_t prefill_alignment() const override { return inner_->prefill_alignment(); }
  int64_t acquire() override { return inner_->acquire(); }
  void release(int64_t slot) override { inner_->release(slot); }
  void forward(std::span<const StepInput> batch, StepOutput& out) override {
    gate_->pass();
    inner_->forward(batch, out);
  }

 private:
  std::unique_ptr<StepModel> inner_;
  std::shared_ptr<Gate> gate_;
  bool forward_saves_;
};

}  // namespace verdict::engine::testing
