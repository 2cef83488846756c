#include "server/chat_stream.h"

#include <utility>

namespace verdict::server {

ChatStream::ChatStream(const tokenizer::Tokenizer& tok, std::span<const chat::TokenId> prompt,
                       chat::GenerationOptions options)
    : gen_(tok, prompt, std::move(options)) {}

void ChatStream::push(const chat::StepResult& r) {
  pending_.push_back(r);
  if (r.finished) ended_ = true;
  cv_.notify_all();
}

std::optional<engine::TokenId> ChatStream::next(std::span<const float> logits) {
  std::lock_guard lock(mutex_);
  if (gen_.finished()) return std::nullopt;
  const chat::StepResult r = gen_.step(logits);
  push(r);
  if (r.finished) return std::nullopt;
  return r.token;
}

void ChatStream::end(engine::EndReason reason, const std::string& message) {
  std::lock_guard lock(mutex_);
  if (reason == engine::EndReason::kFailed) failure_ = message;
  if (!gen_.finished()) {
    push(gen_.finish(reason == engine::EndReason::kContextFull ? chat::FinishReason::Length
                                                               : chat::FinishReason::Cancelled));
  }
  ended_ = true;
  cv_.notify_all();
}

bool ChatStream::take(std::vector<chat::StepResult>& out, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  cv_.wait_until(lock, deadline, [&] { return ended_ || !pending_.empty(); });
  for (chat::StepResult& r : pending_) out.push_back(std::move(r));
  pending_.clear();
  return ended_;
}

bool ChatStream::ended() const {
  std::lock_guard lock(mutex_);
  return ended_;
}

std::optional<std::string> ChatStream::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

chat::FinishReason ChatStream::finish_reason() const {
  std::lock_guard lock(mutex_);
  return gen_.finish_reason();
}

std::vector<chat::TokenId> ChatStream::tokens() const {
  std::lock_guard lock(mutex_);
  return gen_.tokens();
}

std::string ChatStream::content() const {
  std::lock_guard lock(mutex_);
  return gen_.content();
}

std::string ChatStream::reasoning() const {
  std::lock_guard lock(mutex_);
  return gen_.reasoning();
}

}  // namespace verdict::server
