// The Qwen3.5 text backbone (spec §3): embeddings → L decoder layers (Gated DeltaNet or gated
// attention, then the SwiGLU MLP, each behind a zero-centred RMSNorm and a residual) → final norm,
// and logits only for the rows asked for.
//
// A forward step takes a batch of sequences, each with its own state slot and its new tokens; it
// returns the final-norm hidden row of every new token. Sequences never interact: a batch gives
// each sequence exactly what running it alone gives (the matmul kernels compute each row
// independently of the others).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/qwen35/config.h"
#include "models/qwen35/delta_rule.h"
#include "models/qwen35/seq_state.h"
#include "models/qwen35/weights.h"

namespace verdict::models::qwen35 {

inline constexpr int64_t kDefaultPrefillChunk = 512;

// Where a prefill may be split without changing a single bit of its results: a prompt run as pieces
// that each start at a multiple of this position (the DeltaNet chunk grid, counted from the sequence
// start) gives exactly what one pass gives. Splits elsewhere agree only within fp32 rounding, which
// int8-quantized activations can amplify (docs/serve.md, "Prefill pieces").
inline constexpr int64_t kPrefillAlignment = kDeltaRuleChunk;

struct LoadOptions {
  // Test-only override of the value-head order; by default the file's own (Grouped for Hugging Face
  // and MLX files, Tiled for GGUF). Any other choice computes the wrong model (spec §6.4).
  std::optional<HeadMapping> head_mapping;
  // Whether the output projection (lm_head, or the embeddings when tied) is repacked along with the layer
  // matrices when those are (Weights::pack_matrices). Decision models never compute logits: false saves
  // the copy and the load time.
  bool pack_output = true;
};

// One sequence's part of a forward step.
struct SequenceInput {
  int64_t slot = 0;                      // an acquired SeqStatePool slot
  std::span<const int32_t> tokens;       // new tokens, appended after what the slot holds
  std::span<const int64_t> logit_rows;   // indices into `tokens` whose logits are wanted
  // The sequence's seams: absolute positions, ascending, where the DeltaNet chunk grid restarts (a
  // decision record's end of prefix and end of state). A sequence's results depend on its seams, within
  // fp32 rounding, and on nothing else of how it is cut: pieces that each start on its grid (0 and each
  // seam, each followed by every kPrefillAlignment positions; engine::grid_floor) give one pass bit for
  // bit. Seams outside this step's tokens are ignored.
  std::span<const int64_t> seams{};
  // A one-token step is a decoded token by default and runs the delta rule's recurrent form; true marks
  // it as the last piece of a prompt or record, run by the chunked form like the rest of it (so that
  // where a prompt was cut never changes its bits). Longer steps always run chunked.
  bool prompt_piece = false;
  // Positions after which the sequence's whole state is returned (ForwardOutput::saved), ascending, each
  // a seam inside this step's tokens or the position after its last token: what the engine's prefix
  // cache keeps, taken in passing, without cutting the step there.
  std::span<const int64_t> save_at{};
};


struct ForwardOutput {
  int64_t hidden_size = 0, vocab_size = 0;
  std::vector<float> hidden;           // [Σ n, H]: final-norm hidden rows, sequences in batch order
  std::vector<float> logits;           // [Σ |logit_rows|, V], sequences in batch order
  std::vector<int64_t> hidden_offset;  // per sequence: its first row in `hidden`
  std::vector<int64_t> logits_offset;  // per sequence: its first row in `logits`
  std::vector<SeqSnapshot> saved;      // the states asked for by save_at, sequences in batch order

  std::span<const float> hidden_row(std::size_t seq, int64_t i) const;
  std::span<const float> logits_row(std::size_t seq, int64_t i) const;
};

class Backbone {
 public:
  // Loads config.json and the safetensors weights of a checkpoint directory, or a `qwen35` GGUF file
  // (a path ending in .gguf). Throws verdict::Error.
  static std::unique_ptr<Backbone> load(const std::string& dir, const LoadOptions& options = {});
  Backbone(Config config, std::unique_ptr<Weights> weights, LoadOptions options);

  const Config& config() const { return config_; }
  const Weights& weights() const { return *weights_; }

  // A state pool for this model.
  SeqStatePool make_pool(int64_t max_sequences, int64_t max_tokens) const {
    return SeqStatePool(config_, max_sequences, max_tokens);
  }

  // One step over a batch of sequences (distinct slots). Everything is validated before any state
  // changes; throws verdict::Error on bad ids, rows, slots or a full KV cache.
  ForwardOutput forward(SeqStatePool& pool, std::span<const SequenceInput> batch) const;

  // Prefill of one sequence in chunks of `chunk_size` tokens: hidden rows of every token, logits of
  // `logit_rows` (indices into `tokens`, in the order given). Bit-identical to one pass when
  // the slot's length (0 for an empty one) and `chunk_size` are multiples of kPrefillAlignment; within
  // fp32 rounding otherwise.
  // With `seams` (absolute positions, see SequenceInput) pieces start on their grid instead: the rows
  // are those of one pass with the same seams.
  ForwardOutput prefill(SeqStatePool& pool, int64_t slot, std::span<const int32_t> tokens,
                        std::span<const int64_t> logit_rows, int64_t chunk_size = kDefaultPrefillChunk,
                        std::span<const int64_t> seams = {}) const;

 private:
  Config config_;
  std::unique_ptr<Weights> weights_;
  LoadOptions options_;
};

}  // namespace verdict::models::qwen35
