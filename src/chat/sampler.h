// Next-token selection from one logits row, with OpenAI request semantics.
//
// Order of operations (documented contract; each step is skipped at its neutral value):
//   1. penalties on the raw logits —
//        repetition_penalty r (Hugging Face): every distinct token of prompt + generated text has
//          its logit divided by r when positive, multiplied by r when negative;
//        frequency_penalty f and presence_penalty p (OpenAI): a token generated c > 0 times so far
//          gets logit -= c·f + p (generated tokens only, not the prompt);
//   2. temperature T: T == 0 is greedy — the first maximum of the penalised logits, steps 3–6
//      skipped (top_k == 1 is the same); else logits /= T;
//   3. top_k: keep the k largest (ties by lower id);
//   4. top_p: keep the smallest prefix, by decreasing probability (softmax over what is kept),
//      whose cumulative probability reaches top_p (always at least one token);
//   5. min_p: keep tokens whose probability is at least min_p × the top probability;
//   6. sample from the softmax of what is kept, walking token ids in increasing order against
//      u ∈ [0, 1) drawn from std::mt19937_64 seeded with the request seed (53 high bits of one draw).
// The same seed, logits and parameters always give the same token.
//
// logprobs: the chosen token's log-probability and the top_logprobs most likely alternatives come
// from the log-softmax of the *unmodified* logits row (before penalties, temperature and
// filtering), as OpenAI reports them.
//
// Only ids below `vocab_limit` (the tokenizer's vocabulary; embedding rows are often padded past it)
// are ever chosen or reported.
#pragma once
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace verdict::chat {

using TokenId = int32_t;

struct SamplingParams {
  double temperature = 1.0;         // >= 0; 0 = greedy
  double top_p = 1.0;               // (0, 1]
  int64_t top_k = 0;                // <= 0: off
  double min_p = 0.0;               // [0, 1]
  double presence_penalty = 0.0;    // OpenAI range [-2, 2]
  double frequency_penalty = 0.0;   // OpenAI range [-2, 2]
  double repetition_penalty = 1.0;  // > 0; 1 = off
  std::optional<uint64_t> seed;     // absent: seeded from std::random_device
  bool logprobs = false;
  int top_logprobs = 0;  // alternatives to report, 0 … 20 (needs logprobs)
};

// An empty string when the parameters are valid, else what is wrong ("temperature must be ...").
std::string validate(const SamplingParams& params);

struct TokenLogprob {
  TokenId token = 0;
  double logprob = 0;
};

struct SampledToken {
  TokenId token = 0;
  double logprob = 0;             // when logprobs is on
  std::vector<TokenLogprob> top;  // top_logprobs entries, most likely first (ties by lower id)
};

class Sampler {
 public:
  // `prompt` feeds the repetition penalty. vocab_limit 0 = every row of the logits may be chosen.
  Sampler(const SamplingParams& params, std::span<const TokenId> prompt, int64_t vocab_limit = 0);

  // Chooses the next token and records it as generated (for the penalties).
  SampledToken sample(std::span<const float> logits);
  // Records a token chosen elsewhere (e.g. a forced token) for the penalties.
  void accept(TokenId token);

  const SamplingParams& params() const { return params_; }

 private:
  TokenId choose(std::span<const float> logits);
  void apply_penalties(std::vector<float>& w) const;

  SamplingParams params_;
  int64_t vocab_limit_;
  std::mt19937_64 rng_;
  std::unordered_set<TokenId> seen_;                // prompt + generated (repetition penalty)
  std::unordered_map<TokenId, int64_t> generated_;  // generated counts (presence/frequency)
  std::vector<float> work_;
  std::vector<TokenId> candidates_;
};

}  // namespace verdict::chat
