// The model side of the scheduler: something that runs one forward step over a batch of sequences,
// each in its own state slot, and returns the final-norm hidden row of every new token and, for the
// sequences that ask, the logits of their last new token (generation samples from them).
//
// The engine knows nothing about Clef, records, answers or sampling: it only appends tokens to
// sequences. The
// Qwen3.5 backbone is adapted in qwen35_step_model.h; tests plug in deterministic or gated fakes.
// A StepModel is used by one thread at a time (the model's engine thread).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace verdict::engine {

using TokenId = int32_t;

// One sequence's part of a step: its slot and the tokens appended after what the slot holds.
struct StepInput {
  int64_t slot = 0;
  std::span<const TokenId> tokens;
  bool last_logits = false;  // also compute the logits of the last of `tokens`
  // The sequence's seams (absolute positions, ascending): where the model's alignment grid restarts
  // (batch_plan.h). A sequence's results depend on its seams and on nothing else of how it is cut.
  std::span<const int64_t> seams{};
  bool decoded = false;  // one generated token (a model may run it by a faster, recurrent form)
  // Positions (ascending, each a seam inside this step's tokens or the end of them) after which the
  // model returns the sequence's state in StepOutput::saved, when it can_save().
  std::span<const int64_t> save_at{};
};

// One sequence's saved state (StepInput::save_at): what the engine's prefix cache holds.
class StateSnapshot {
 public:
  virtual ~StateSnapshot() = default;
  virtual std::size_t bytes() const = 0;    // memory held
};

struct StepOutput {
  std::vector<float> hidden;  // [Σ n, hidden_size], sequences in batch order
  std::vector<float> logits;  // [inputs with last_logits, vocab_size], in batch order
  std::vector<std::shared_ptr<const StateSnapshot>> saved;  // one per save_at position, in batch order
};

class StepModel {
 public:
  virtual ~StepModel() = default;

  virtual int64_t hidden_size() const = 0;
  virtual int64_t vocab_size() const = 0;
  // Sequences that can be in flight at once (state slots).
  virtual int64_t slots() const = 0;
  // The longest sequence one slot holds, in tokens.
  virtual int64_t max_tokens() const = 0;
  // Bytes of per-sequence state held for all slots.
  virtual std::size_t state_bytes() const = 0;
  // A sequence whose tokens arrive in pieces gets exactly the rows of one pass as long as every piece
  // of more than one token starts at a multiple of this position. The scheduler cuts a record or a
  // prompt only there (a piece that ends elsewhere is the last one).
  virtual int64_t prefill_alignment() const { return 1; }

  // Whether forward() saves states at StepInput::save_at (false: the engine keeps no prefix cache).
  // Restoring a saved state and running the rest of a sequence with the same seams gives the rows of
  // running the whole sequence, bit for bit.
  virtual bool can_save() const { return false; }
  // The bytes a saved state of a sequence of `tokens` tokens holds.
  virtual std::size_t snapshot_bytes(int64_t /*tokens*/) const { return 0; }
  // Replaces the whole state of an acquired slot with a snapshot this model saved (verdict::Error
  // otherwise).
  virtual void restore(int64_t slot, const StateSnapshot& snapshot);

  // Takes a free slot with empty state (throws verdict::Error when none is free).
  virtual int64_t acquire() = 0;
  virtual void release(int64_t slot) = 0;

  // One step over distinct acquired slots (see StepOutput). A sequence's rows never depend on the
  // other sequences of the batch. Throws verdict::Error; the slots of a failed step must be
  // released and not reused as they are.
  virtual void forward(std::span<const StepInput> batch, StepOutput& out) = 0;
};

}  // namespace verdict::engine
