// A GenerationJob: one sequence that generates. The engine thread prefills its prompt in chunks,
// then asks its TokenSource for the next token after every logits row and feeds that token back,
// one decode step at a time, until the source says it is finished, the slot's context is full, the
// job is cancelled (client gone) or the model stops.
//
//   queued ──slot──▶ prefilling ──last prompt chunk──▶ decoding ──source done──▶ done
//      │                  └──────────────┬───────────────┘ └──context full──▶ done (kContextFull)
//      └──────── cancelled ◀─────────────┘ (client gone, model stopping)   forward threw ▶ failed
//
// The engine knows nothing of sampling or text: the chat layer implements TokenSource.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/step_model.h"

namespace verdict::engine {

// Why the engine ended a sequence without the source finishing it.
enum class EndReason : uint8_t {
  kContextFull,  // the state slot holds no more tokens
  kCancelled,    // cancel() (client gone) or the model was unloaded
  kFailed,       // a forward step threw
};

// The generating side of a sequence, called by its engine one call at a time. next() of different
// sources of one step may run at the same time, on the kernel pool's threads.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // The logits row of the sequence's last position: the next token to append, or nullopt when the
  // sequence is finished (the engine then frees its slot and never calls the source again).
  virtual std::optional<TokenId> next(std::span<const float> logits) = 0;
  // The engine ended the sequence; the last call the source receives.
  virtual void end(EndReason reason, const std::string& message) = 0;
};

class GenerationJob {
 public:
  GenerationJob(std::vector<TokenId> prompt, std::shared_ptr<TokenSource> source)
      : prompt_(std::move(prompt)), source_(std::move(source)) {}
  GenerationJob(const GenerationJob&) = delete;
  GenerationJob& operator=(const GenerationJob&) = delete;

  std::span<const TokenId> prompt() const { return prompt_; }
  // True once the engine admitted the job to a slot.
  bool started() const { return started_.load(); }
  // True once the source finished or end() was called.
  bool finished() const { return finished_.load(); }

 private:
  friend class Scheduler;

  const std::vector<TokenId> prompt_;
  const std::shared_ptr<TokenSource> source_;
  std::atomic<bool> started_{false};
  std::atomic<bool> finished_{false};
  std::atomic<bool> cancel_requested_{false};

  // Owned by the engine thread while the job runs.
  int64_t slot_ = -1;
  std::size_t prefilled_ = 0;  // prompt tokens run
  int64_t length_ = 0;         // tokens the slot holds
  std::optional<TokenId> pending_;  // the sampled token to feed next (decoding)
};

}  // namespace verdict::engine
