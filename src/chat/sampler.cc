#include "chat/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"

namespace verdict::chat {
namespace {

uint64_t seed_of(const SamplingParams& p) {
  if (p.seed) return *p.seed;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

// The first index of the largest value (NaN never wins).
TokenId argmax(std::span<const float> w) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < w.size(); ++i)
    if (w[i] > w[best] || std::isnan(w[best])) best = i;
  return static_cast<TokenId>(best);
}

}  // namespace

std::string validate(const SamplingParams& p) {
  if (!std::isfinite(p.temperature) || p.temperature < 0) return "temperature must be a number >= 0";
  if (!std::isfinite(p.top_p) || p.top_p <= 0 || p.top_p > 1) return "top_p must be in (0, 1]";
  if (!std::isfinite(p.min_p) || p.min_p < 0 || p.min_p > 1) return "min_p must be in [0, 1]";
  if (!std::isfinite(p.presence_penalty) || p.presence_penalty < -2 || p.presence_penalty > 2)
    return "presence_penalty must be in [-2, 2]";
  if (!std::isfinite(p.frequency_penalty) || p.frequency_penalty < -2 || p.frequency_penalty > 2)
    return "frequency_penalty must be in [-2, 2]";
  if (!std::isfinite(p.repetition_penalty) || p.repetition_penalty <= 0) return "repetition_penalty must be > 0";
  if (p.top_logprobs < 0 || p.top_logprobs > 20) return "top_logprobs must be in [0, 20]";
  if (p.top_logprobs > 0 && !p.logprobs) return "top_logprobs needs logprobs to be true";
  return {};
}

Sampler::Sampler(const SamplingParams& params, std::span<const TokenId> prompt, int64_t vocab_limit)
    : params_(params), vocab_limit_(vocab_limit), rng_(seed_of(params)) {
  if (const std::string problem = validate(params); !problem.empty()) throw Error("sampling: " + problem);
  if (params_.repetition_penalty != 1.0) seen_.insert(prompt.begin(), prompt.end());
}

void Sampler::accept(TokenId token) {
  if (params_.repetition_penalty != 1.0) seen_.insert(token);
  ++generated_[token];
}

void Sampler::apply_penalties(std::vector<float>& w) const {
  const auto n = static_cast<TokenId>(w.size());
  if (params_.repetition_penalty != 1.0) {
    const double r = params_.repetition_penalty;
    for (const TokenId t : seen_) {
      if (t < 0 || t >= n) continue;
      float& x = w[static_cast<std::size_t>(t)];
      x = static_cast<float>(x > 0 ? x / r : x * r);
    }
  }
  if (params_.frequency_penalty != 0.0 || params_.presence_penalty != 0.0) {
    for (const auto& [t, count] : generated_) {
      if (t < 0 || t >= n) continue;
      w[static_cast<std::size_t>(t)] -=
          static_cast<float>(static_cast<double>(count) * params_.frequency_penalty + params_.presence_penalty);
    }
  }
}

TokenId Sampler::choose(std::span<const float> logits) {
  const std::size_t n = logits.size();
  work_.assign(logits.begin(), logits.end());
  for (float& x : work_)
    if (std::isnan(x)) x = -std::numeric_limits<float>::infinity();
  apply_penalties(work_);
  if (params_.temperature == 0 || params_.top_k == 1) return argmax(work_);

  const double inv_t = 1.0 / params_.temperature;
  for (float& x : work_) x = static_cast<float>(static_cast<double>(x) * inv_t);
  const auto& w = work_;
  // Larger logit first; equal logits by lower id.
  auto before = [&w](TokenId a, TokenId b) {
    const float x = w[static_cast<std::size_t>(a)], y = w[static_cast<std::size_t>(b)];
    return x > y || (x == y && a < b);
  };

  candidates_.resize(n);
  std::iota(candidates_.begin(), candidates_.end(), 0);
  if (params_.top_k > 0 && static_cast<std::size_t>(params_.top_k) < n) {
    const auto k = static_cast<std::ptrdiff_t>(params_.top_k);
    std::nth_element(candidates_.begin(), candidates_.begin() + k - 1, candidates_.end(), before);
    candidates_.resize(static_cast<std::size_t>(k));
  }
  double top = -std::numeric_limits<double>::infinity();
  for (const TokenId c : candidates_) top = std::max(top, static_cast<double>(w[static_cast<std::size_t>(c)]));
  if (!std::isfinite(top)) return argmax(w);  // every logit -inf: nothing to sample from
  auto weight = [&](TokenId c) { return std::exp(static_cast<double>(w[static_cast<std::size_t>(c)]) - top); };

  if (params_.top_p < 1.0) {
    double total = 0;
    for (const TokenId c : candidates_) total += weight(c);
    const double target = params_.top_p * total;
    // Sort a growing head of the candidates until it holds the nucleus.
    std::size_t head = std::min<std::size_t>(64, candidates_.size());
    for (;;) {
      std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(head), candidates_.end(),
                        before);
      double cumulative = 0;
      std::size_t keep = 0;
      for (std::size_t i = 0; i < head; ++i) {
        cumulative += weight(candidates_[i]);
        if (cumulative >= target) {
          keep = i + 1;
          break;
        }
      }
      if (keep > 0) {
        candidates_.resize(keep);
        break;
      }
      if (head == candidates_.size()) break;  // rounding: the whole set is the nucleus
      head = std::min(head * 2, candidates_.size());
    }
  }
  if (params_.min_p > 0) {
    const double threshold = top + std::log(params_.min_p);
    std::erase_if(candidates_,
                  [&](TokenId c) { return static_cast<double>(w[static_cast<std::size_t>(c)]) < threshold; });
  }
  std::sort(candidates_.begin(), candidates_.end());
  double total = 0;
  for (const TokenId c : candidates_) total += weight(c);
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53 * total;
  double cumulative = 0;
  for (const TokenId c : candidates_) {
    cumulative += weight(c);
    if (u < cumulative) return c;
  }
  return candidates_.back();
}

SampledToken Sampler::sample(std::span<const float> logits) {
  std::span<const float> row = logits;
  if (vocab_limit_ > 0 && static_cast<std::size_t>(vocab_limit_) < row.size())
    row = row.first(static_cast<std::size_t>(vocab_limit_));
  if (row.empty()) throw Error("sampling: empty logits row");
  SampledToken out;
  out.token = choose(row);
  accept(out.token);
  if (params_.logprobs) {
    double top = -std::numeric_limits<double>::infinity();
    for (const float x : row)
      if (!std::isnan(x)) top = std::max(top, static_cast<double>(x));
    double sum = 0;
    for (const float x : row)
      if (!std::isnan(x)) sum += std::exp(static_cast<double>(x) - top);
    const double lse = top + std::log(sum);
    auto logprob = [&](TokenId t) {
      const float x = row[static_cast<std::size_t>(t)];
      return std::isnan(x) ? -std::numeric_limits<double>::infinity() : static_cast<double>(x) - lse;
    };
    out.logprob = logprob(out.token);
    if (params_.top_logprobs > 0) {
      std::vector<TokenId> ids(row.size());
      std::iota(ids.begin(), ids.end(), 0);
      const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(params_.top_logprobs), ids.size());
      std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                        [&](TokenId a, TokenId b) {
                          const double x = logprob(a), y = logprob(b);
                          return x > y || (x == y && a < b);
                        });
      for (std::size_t i = 0; i < k; ++i) out.top.push_back({ids[i], logprob(ids[i])});
    }
  }
  return out;
}

}  // namespace verdict::chat
