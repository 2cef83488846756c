// The generation loop on the Qwen3.5 backbone, for the CLI now (and anything that runs one sequence
// at a time): prefill the prompt in chunks, then decode one token per forward step through a
// Generation (sampling, stop ids and strings, streaming text, reasoning split) until it finishes.
// Part of verdict_chat_runtime (the only chat library that links a model).
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "chat/generation.h"
#include "models/qwen35/backbone.h"

namespace verdict::chat {

struct GenerateResult {
  std::vector<TokenId> tokens;  // generated ids (a final stop id included)
  std::string content;
  std::string reasoning;
  FinishReason finish_reason = FinishReason::None;
  int64_t prompt_tokens = 0;
  std::vector<SampledToken> sampled;  // per generated token, with logprobs when asked for
};

// Called after every step with its result (text deltas, token, finish); return false to cancel
// (the loop stops at once, finish_reason Cancelled; the callback is not called again).
using StepCallback = std::function<bool(const StepResult&)>;

// Generates after `prompt` in `slot` of `pool` (tokens are appended to what the slot holds; pass a
// fresh or reset slot for a new conversation). When the slot's KV capacity runs out the generation
// ends with finish_reason Length. Throws verdict::Error for an empty prompt, one that does not fit,
// or invalid options.
GenerateResult generate(const models::qwen35::Backbone& model, models::qwen35::SeqStatePool& pool, int64_t slot,
                        const tokenizer::Tokenizer& tok, std::span<const TokenId> prompt,
                        const GenerationOptions& options, const StepCallback& on_step = {},
                        int64_t prefill_chunk = models::qwen35::kDefaultPrefillChunk);

}  // namespace verdict::chat
