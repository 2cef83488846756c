#include "chat/reasoning.h"

namespace verdict::chat {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view lstrip(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_ws(s[i])) ++i;
  return s.substr(i);
}

std::string_view rstrip(std::string_view s) {
  std::size_t n = s.size();
  while (n > 0 && is_ws(s[n - 1])) --n;
  return s.substr(0, n);
}

}  // namespace

bool prompt_opens_reasoning(std::string_view prompt, const ReasoningTags& tags) {
  const std::string_view trimmed = rstrip(prompt);
  return !tags.open.empty() && trimmed.size() >= tags.open.size() &&
         trimmed.substr(trimmed.size() - tags.open.size()) == tags.open;
}

ReasoningSplitter::ReasoningSplitter(bool starts_in_reasoning, ReasoningTags tags)
    : tags_(std::move(tags)), state_(starts_in_reasoning ? State::Reasoning : State::Pending) {}

TextDelta ReasoningSplitter::push(std::string_view text) {
  switch (state_) {
    case State::Pending: {
      held_.append(text);
      const std::string_view rest = lstrip(held_);
      const std::string_view open = tags_.open;
      if (rest.size() < open.size() && open.substr(0, rest.size()) == rest) return {};  // may still open
      if (rest.substr(0, open.size()) == open) {
        state_ = State::Reasoning;
        std::string after(rest.substr(open.size()));
        held_.clear();
        return reasoning_text(std::move(after));
      }
      state_ = State::Content;
      TextDelta d;
      d.content = std::move(held_);
      held_.clear();
      return d;
    }
    case State::Reasoning: {
      std::string buffer = std::move(held_);
      held_.clear();
      buffer.append(text);
      return reasoning_text(std::move(buffer));
    }
    case State::ContentStart: return content_start(text);
    case State::Content: {
      TextDelta d;
      d.content.assign(text);
      return d;
    }
  }
  return {};
}

// Reasoning text (held text first): emits up to the close tag or up to what may still belong to it.
TextDelta ReasoningSplitter::reasoning_text(std::string buffer) {
  TextDelta d;
  std::string_view b = buffer;
  if (!reasoning_started_) b = lstrip(b);
  const std::size_t close = b.find(tags_.close);
  if (close != std::string_view::npos) {
    d.reasoning.assign(rstrip(b.substr(0, close)));
    state_ = State::ContentStart;
    const TextDelta rest = content_start(b.substr(close + tags_.close.size()));
    d.content = rest.content;
    return d;
  }
  // Hold back a tail that may be the start of the close tag, and whitespace before it (it is
  // dropped if the tag follows).
  std::size_t hold = std::min(b.size(), tags_.close.size() - 1);
  for (; hold > 0; --hold)
    if (b.substr(b.size() - hold) == std::string_view(tags_.close).substr(0, hold)) break;
  std::size_t split = b.size() - hold;
  while (split > 0 && is_ws(b[split - 1])) --split;
  d.reasoning.assign(b.substr(0, split));
  if (!d.reasoning.empty()) reasoning_started_ = true;
  held_.assign(b.substr(split));
  return d;
}

TextDelta ReasoningSplitter::content_start(std::string_view text) {
  TextDelta d;
  const std::string_view rest = lstrip(text);
  if (!rest.empty()) {
    state_ = State::Content;
    d.content.assign(rest);
  }
  return d;
}

TextDelta ReasoningSplitter::finish() {
  TextDelta d;
  if (state_ == State::Pending)
    d.content = std::move(held_);
  else if (state_ == State::Reasoning)
    d.reasoning.assign(rstrip(held_));
  held_.clear();
  return d;
}

TextDelta split_reasoning(std::string_view text, bool starts_in_reasoning, const ReasoningTags& tags) {
  ReasoningSplitter splitter(starts_in_reasoning, tags);
  TextDelta d = splitter.push(text);
  d += splitter.finish();
  return d;
}

}  // namespace verdict::chat
