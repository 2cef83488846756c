#include "chat/generation.h"

#include <algorithm>

#include "core/error.h"

namespace verdict::chat {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::None: return "";
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Cancelled: return "cancelled";
  }
  return "";
}

Generation::Generation(const tokenizer::Tokenizer& tok, std::span<const TokenId> prompt, GenerationOptions options)
    : tok_(&tok),
      options_(std::move(options)),
      sampler_(options_.sampling, prompt, static_cast<int64_t>(tok.vocab_size())),
      decoder_(tok, false),
      stop_(options_.stop),
      splitter_(options_.split_reasoning && options_.starts_in_reasoning, options_.tags) {
  if (options_.max_tokens <= 0) throw Error("max_tokens must be at least 1");
  if (const auto id = tok.token_to_id(options_.tags.open)) open_tag_ = *id;
  if (const auto id = tok.token_to_id(options_.tags.close)) close_tag_ = *id;
}

bool Generation::shows_text(TokenId id) const {
  // Reasoning tags stay visible to the splitter even where a tokenizer marks them special.
  return !options_.skip_special_tokens || !tok_->is_special(id) || id == open_tag_ || id == close_tag_;
}

TextDelta Generation::route(std::string_view text) {
  const std::string visible = stop_.push(text);
  if (!options_.split_reasoning) {
    TextDelta d;
    d.content = visible;
    return d;
  }
  return splitter_.push(visible);
}

// Everything still held back, at the end of the sequence.
TextDelta Generation::flush() {
  TextDelta d = route(decoder_.finish());
  if (!stop_.stopped()) {
    const std::string held = stop_.finish();
    if (options_.split_reasoning)
      d += splitter_.push(held);
    else
      d.content += held;
  }
  if (options_.split_reasoning) d += splitter_.finish();
  return d;
}

void Generation::record(const TextDelta& d) {
  content_ += d.content;
  reasoning_ += d.reasoning;
}

StepResult Generation::step(std::span<const float> logits) {
  if (finished()) throw Error("generation already finished");
  StepResult r;
  r.sampled = sampler_.sample(logits);
  r.token = r.sampled.token;
  tokens_.push_back(r.token);
  const bool stop_id =
      std::find(options_.stop_ids.begin(), options_.stop_ids.end(), r.token) != options_.stop_ids.end();
  if (stop_id) {
    reason_ = FinishReason::Stop;
  } else {
    if (shows_text(r.token)) r.delta = route(decoder_.push(r.token));
    if (stop_.stopped())
      reason_ = FinishReason::Stop;
    else if (static_cast<int64_t>(tokens_.size()) >= options_.max_tokens)
      reason_ = FinishReason::Length;
  }
  if (finished()) {
    r.delta += flush();
    r.finished = true;
    r.reason = reason_;
  }
  record(r.delta);
  return r;
}

StepResult Generation::finish(FinishReason reason) {
  StepResult r;
  if (finished()) return r;
  reason_ = reason == FinishReason::None ? FinishReason::Cancelled : reason;
  r.delta = flush();
  r.finished = true;
  r.reason = reason_;
  record(r.delta);
  return r;
}

}  // namespace verdict::chat
