#include "engine/qwen35_step_model.h"

#include <utility>

#include "core/error.h"
#include <vector>

namespace verdict::engine {
namespace {

// A saved state; when the cache lets it go, its buffers go back to the pool's spares for the next save.
class Qwen35Snapshot final : public StateSnapshot {
 public:
  Qwen35Snapshot(const Qwen35StepModel* owner, models::qwen35::SeqSnapshot state,
                 std::shared_ptr<models::qwen35::SnapshotSpares> spares)
      : owner_(owner), state_(std::move(state)), spares_(std::move(spares)) {}
  ~Qwen35Snapshot() override { spares_->give(std::move(state_)); }
  Qwen35Snapshot(const Qwen35Snapshot&) = delete;
  Qwen35Snapshot& operator=(const Qwen35Snapshot&) = delete;
  std::size_t bytes() const override { return state_.bytes(); }
  const Qwen35StepModel* owner() const { return owner_; }
  const models::qwen35::SeqSnapshot& state() const { return state_; }

 private:
  const Qwen35StepModel* owner_;
  models::qwen35::SeqSnapshot state_;
  std::shared_ptr<models::qwen35::SnapshotSpares> spares_;
};

}  // namespace

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
    models::qwen35::SequenceInput seq{in.slot, in.tokens, rows};
    seq.seams = in.seams;
    seq.prompt_piece = !in.decoded;
    seq.save_at = in.save_at;
    inputs.push_back(seq);
  }
  models::qwen35::ForwardOutput result = backbone_.forward(pool_, inputs);
  out.hidden = std::move(result.hidden);
  out.logits = std::move(result.logits);
  out.saved.clear();
  for (models::qwen35::SeqSnapshot& s : result.saved) out.saved.push_back(std::make_shared<Qwen35Snapshot>(this, std::move(s), pool_.spares()));
}

std::size_t Qwen35StepModel::snapshot_bytes(int64_t tokens) const {
  return models::qwen35::snapshot_bytes(backbone_.config(), tokens);
}

void Qwen35StepModel::restore(int64_t slot, const StateSnapshot& snapshot) {
  const auto* own = dynamic_cast<const Qwen35Snapshot*>(&snapshot);
  if (own == nullptr || own->owner() != this) throw Error("a sequence state saved by another model cannot be restored");
  pool_.restore(own->state(), slot);
}

}  // namespace verdict::engine
