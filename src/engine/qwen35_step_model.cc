#include "engine/qwen35_step_model.h"

#include <utility>
#include <vector>

namespace verdict::engine {

Qwen35StepModel::Qwen35StepModel(const models::qwen35::Backbone& backbone, int64_t slots, int64_t max_tokens)
    : backbone_(backbone), pool_(backbone.make_pool(slots, max_tokens)) {}

int64_t Qwen35StepModel::hidden_size() const { return backbone_.config().hidden; }

int64_t Qwen35StepModel::vocab_size() const { return backbone_.config().vocab; }

void Qwen35StepModel::forward(std::span<const StepInput> batch, StepOutput& out) {
  std::vector<models::qwen35::SequenceInput> inputs;
  inputs.reserve(batch.size());
  std::vector<int64_t> last(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const StepInput& in = batch[i];
    std::span<const int64_t> rows;
    if (in.last_logits && !in.tokens.empty()) {
      last[i] = static_cast<int64_t>(in.tokens.size()) - 1;
      rows = std::span<const int64_t>(&last[i], 1);
    }
    inputs.push_back({in.slot, in.tokens, rows});
  }
  models::qwen35::ForwardOutput result = backbone_.forward(pool_, inputs);
  out.hidden = std::move(result.hidden);
  out.logits = std::move(result.logits);
}

}  // namespace verdict::engine
