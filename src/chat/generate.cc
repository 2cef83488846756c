#include "chat/generate.h"

#include "core/error.h"

namespace verdict::chat {

GenerateResult generate(const models::qwen35::Backbone& model, models::qwen35::SeqStatePool& pool, int64_t slot,
                        const tokenizer::Tokenizer& tok, std::span<const TokenId> prompt,
                        const GenerationOptions& options, const StepCallback& on_step, int64_t prefill_chunk) {
  if (prompt.empty()) throw Error("generate: empty prompt");
  const int64_t held = pool.length(slot);
  const auto n = static_cast<int64_t>(prompt.size());
  if (held + n > pool.max_tokens())
    throw Error("generate: the prompt (" + std::to_string(n) + " tokens) does not fit the context (" +
                std::to_string(pool.max_tokens() - held) + " tokens left)");

  Generation gen(tok, prompt, options);
  GenerateResult result;
  result.prompt_tokens = n;
  auto deliver = [&](const StepResult& r) {
    if (r.token >= 0) result.sampled.push_back(r.sampled);
    return on_step ? on_step(r) : true;
  };

  const int64_t last = n - 1;
  models::qwen35::ForwardOutput out =
      model.prefill(pool, slot, prompt, std::span<const int64_t>(&last, 1), prefill_chunk);
  const int64_t zero = 0;
  for (;;) {
    const StepResult r = gen.step(out.logits_row(0, 0));
    if (!deliver(r)) {
      if (!gen.finished()) gen.finish(FinishReason::Cancelled);
      break;
    }
    if (gen.finished()) break;
    if (pool.length(slot) >= pool.max_tokens()) {
      deliver(gen.finish(FinishReason::Length));
      break;
    }
    const TokenId next = gen.tokens().back();
    const models::qwen35::SequenceInput step{slot, std::span<const int32_t>(&next, 1),
                                             std::span<const int64_t>(&zero, 1)};
    out = model.forward(pool, std::span<const models::qwen35::SequenceInput>(&step, 1));
  }
  result.tokens = gen.tokens();
  result.content = gen.content();
  result.reasoning = gen.reasoning();
  result.finish_reason = gen.finish_reason();
  return result;
}

}  // namespace verdict::chat
