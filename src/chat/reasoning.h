// Separates a thinking model's reasoning from its answer, incrementally: generated text goes in,
// `reasoning_content` and `content` deltas come out, and any chunking of the input gives the same
// concatenated result as the whole text at once (split_reasoning()).
//
// Qwen3.5's generation prompt opens the block (`<|im_start|>assistant\n<think>\n`), so generation
// starts inside the reasoning (starts_in_reasoning: see prompt_opens_reasoning). Qwen3's prompt
// does not: the model writes `<think>` itself, so when not starting inside, output that begins with
// optional whitespace then the open tag enters the reasoning too. Everything after the close tag
// `</think>` is content. Whitespace around the reasoning (the "\n" after `<think>`, before
// `</think>`) and at the start of the content (the "\n\n" after `</think>`) is dropped, as a client
// wants them; text is otherwise unchanged. Reasoning that never closes (max_tokens) stays reasoning.
#pragma once
#include <string>
#include <string_view>

namespace verdict::chat {

struct ReasoningTags {
  std::string open = "<think>";
  std::string close = "</think>";
};

struct TextDelta {
  std::string reasoning;
  std::string content;
  bool empty() const { return reasoning.empty() && content.empty(); }
  TextDelta& operator+=(const TextDelta& other) {
    reasoning += other.reasoning;
    content += other.content;
    return *this;
  }
};

// True when `prompt` ends inside an open reasoning block: the open tag followed only by whitespace.
bool prompt_opens_reasoning(std::string_view prompt, const ReasoningTags& tags = {});

class ReasoningSplitter {
 public:
  explicit ReasoningSplitter(bool starts_in_reasoning, ReasoningTags tags = {});

  TextDelta push(std::string_view text);
  // End of generation: releases held text.
  TextDelta finish();
  bool in_reasoning() const { return state_ == State::Reasoning; }

 private:
  enum class State { Pending, Reasoning, ContentStart, Content };

  TextDelta reasoning_text(std::string text);
  TextDelta content_start(std::string_view text);

  ReasoningTags tags_;
  State state_;
  bool reasoning_started_ = false;  // a non-whitespace reasoning character was emitted
  std::string held_;
};

// The whole-text form: the same as pushing `text` at once and finishing.
TextDelta split_reasoning(std::string_view text, bool starts_in_reasoning, const ReasoningTags& tags = {});

}  // namespace verdict::chat
