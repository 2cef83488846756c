// One chat generation as the HTTP side sees it: the TokenSource the engine thread drives (it owns
// the sequence's chat::Generation: sampling, stop ids and strings, incremental text, the reasoning
// split) and a queue of step results the request's HTTP thread takes, to stream them as SSE chunks
// or to wait for the whole answer.
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chat/generation.h"
#include "engine/generation_job.h"

namespace verdict::server {

class ChatStream final : public engine::TokenSource {
 public:
  // Throws verdict::Error for invalid options (see chat::Generation).
  ChatStream(const tokenizer::Tokenizer& tok, std::span<const chat::TokenId> prompt, chat::GenerationOptions options);

  // Engine thread.
  std::optional<engine::TokenId> next(std::span<const float> logits) override;
  void end(engine::EndReason reason, const std::string& message) override;

  // HTTP thread: moves the step results produced so far into `out` (appending). Waits until there
  // is one, the generation ended, or `deadline`. True when the generation has ended and everything
  // was taken.
  bool take(std::vector<chat::StepResult>& out, std::chrono::steady_clock::time_point deadline);
  bool ended() const;
  // Set when the engine failed the sequence (a forward step threw).
  std::optional<std::string> failure() const;
  // After ended(): the whole generation.
  chat::FinishReason finish_reason() const;
  std::vector<chat::TokenId> tokens() const;
  std::string content() const;
  std::string reasoning() const;

 private:
  void push(const chat::StepResult& r);

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  chat::Generation gen_;
  std::vector<chat::StepResult> pending_;
  bool ended_ = false;
  std::optional<std::string> failure_;
};

}  // namespace verdict::server
