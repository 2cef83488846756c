// One sequence's decoding state, independent of any model: feed it the logits row of the last
// position, it samples the next token and turns it into final text — stop ids, incremental UTF-8
// decoding, stop strings (never shown partially) and the reasoning/content split — and says when
// the sequence is done. The CLI's generate() loop and the server's scheduler both drive it; it
// holds no model state, so a scheduler can keep one per running request and step them in any order.
//
//   token → stop id?  (yes: finished "stop"; the id counts as generated, shows no text)
//         → StreamDecoder (complete UTF-8 only) → StopMatcher (hold back possible stop prefixes)
//         → ReasoningSplitter (reasoning_content vs content) → the step's TextDelta
//   max_tokens reached → finished "length"; everything held is released.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "chat/reasoning.h"
#include "chat/sampler.h"
#include "chat/stop.h"
#include "tokenizer/tokenizer.h"

namespace verdict::chat {

enum class FinishReason : uint8_t { None, Stop, Length, Cancelled };

// "stop", "length", "cancelled" ("" for None).
const char* finish_reason_name(FinishReason reason);

struct GenerationOptions {
  SamplingParams sampling;
  int64_t max_tokens = 256;          // > 0: generated tokens (stop id included) before "length"
  std::vector<std::string> stop;     // stop strings
  std::vector<TokenId> stop_ids;     // e.g. generation_config.json's eos_token_id list
  bool split_reasoning = true;       // separate <think>…</think> into reasoning
  bool starts_in_reasoning = false;  // the prompt left the reasoning open (prompt_opens_reasoning)
  ReasoningTags tags;
  bool skip_special_tokens = true;  // special added tokens produce no text, except the reasoning tags
};

struct StepResult {
  TokenId token = -1;    // the sampled id (-1 for a finish() without a token)
  SampledToken sampled;  // with logprobs when asked for
  TextDelta delta;       // text that became final with this step
  bool finished = false;
  FinishReason reason = FinishReason::None;
};

class Generation {
 public:
  // `prompt` (for the repetition penalty). Throws verdict::Error for invalid options.
  Generation(const tokenizer::Tokenizer& tok, std::span<const TokenId> prompt, GenerationOptions options);

  // One step from the last position's logits. Must not be called once finished().
  StepResult step(std::span<const float> logits);
  // Ends the sequence early (client gone: Cancelled; context full: Length) and releases held text.
  StepResult finish(FinishReason reason);

  bool finished() const { return reason_ != FinishReason::None; }
  FinishReason finish_reason() const { return reason_; }
  const std::vector<TokenId>& tokens() const { return tokens_; }
  const std::string& content() const { return content_; }
  const std::string& reasoning() const { return reasoning_; }
  const GenerationOptions& options() const { return options_; }

 private:
  bool shows_text(TokenId id) const;
  TextDelta route(std::string_view text);
  TextDelta flush();
  void record(const TextDelta& d);

  const tokenizer::Tokenizer* tok_;
  GenerationOptions options_;
  Sampler sampler_;
  tokenizer::StreamDecoder decoder_;
  TokenId open_tag_ = -1, close_tag_ = -1;  // the reasoning tags' ids, when they are single tokens
  StopMatcher stop_;
  ReasoningSplitter splitter_;
  std::vector<TokenId> tokens_;
  std::string content_, reasoning_;
  FinishReason reason_ = FinishReason::None;
};

}  // namespace verdict::chat
