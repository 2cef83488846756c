// The Qwen3.5 backbone as a StepModel: a Backbone (shared, read-only) plus the model's own
// SeqStatePool with `slots` sequences of up to `max_tokens` tokens each.
#pragma once
#include <cstdint>
#include <memory>

#include "engine/step_model.h"
#include "models/qwen35/backbone.h"

namespace verdict::engine {

class Qwen35StepModel final : public StepModel {
 public:
  // `backbone` must outlive this object (the engine holds both; see registry::LoadedModel).
  Qwen35StepModel(const models::qwen35::Backbone& backbone, int64_t slots, int64_t max_tokens);

  int64_t hidden_size() const override;
  int64_t vocab_size() const override;
  int64_t slots() const override { return pool_.max_sequences(); }
  int64_t max_tokens() const override { return pool_.max_tokens(); }
  std::size_t state_bytes() const override { return pool_.bytes(); }
  int64_t prefill_alignment() const override { return models::qwen35::kPrefillAlignment; }
  bool can_save() const override { return true; }
  std::size_t snapshot_bytes(int64_t tokens) const override;
  void restore(int64_t slot, const StateSnapshot& snapshot) override;
  int64_t acquire() override { return pool_.acquire(); }
  void release(int64_t slot) override { pool_.release(slot); }
  void forward(std::span<const StepInput> batch, StepOutput& out) override;

 private:
  const models::qwen35::Backbone& backbone_;
  models::qwen35::SeqStatePool pool_;
};

}  // namespace verdict::engine
