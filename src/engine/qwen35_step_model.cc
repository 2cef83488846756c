#include "engine/qwen35_step_model.h"

#include <utility>
#include <vector>

namespace verdict::engine {

Qwen35StepModel::Qwen35StepModel(const models::qwen35::Backbone& backbone, int64_t slots, int64_t max_tokens)
    : backbone_(backbone), pool_(backbone.make_pool(slots, max_tokens)) {}

int64_t Qwen35StepModel::hidden_size() const { return backbone_.config().hidden; }

int64_t Qwen35StepModel::vocab_size() const { return backbone_.config().vocab; }

void Qwen35StepModel::forward(std::span<const StepInput> batch, std::vector<float>& hidden) {
  std::vector<models::qwen35::SequenceInput> inputs;
  inputs.reserve(batch.size());
  for (const StepInput& in : batch) inputs.push_back({in.slot, in.tokens, {}});
  models::qwen35::ForwardOutput out = backbone_.forward(pool_, inputs);
  hidden = std::move(out.hidden);
}

}  // namespace verdict::engine
