// The sampler on hand-built logits: greedy is argmax, top_k = 1 is greedy, seeds reproduce, and the
// filters and penalties act as the worked distributions below say.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "chat/sampler.h"
#include "core/error.h"

namespace verdict::chat {
namespace {

// Logits whose softmax is exactly `probs` (up to rounding), shifted by `shift`.
std::vector<float> logits_of(const std::vector<double>& probs, double shift = 0) {
  std::vector<float> out;
  for (const double p : probs) out.push_back(static_cast<float>(std::log(p) + shift));
  return out;
}

SamplingParams params(double temperature) {
  SamplingParams p;
  p.temperature = temperature;
  return p;
}

// Frequencies of each token over `draws` samplers seeded 0, 1, 2, ...
std::map<TokenId, double> frequencies(SamplingParams p, const std::vector<float>& logits, int draws = 4000) {
  std::map<TokenId, double> freq;
  for (int s = 0; s < draws; ++s) {
    p.seed = static_cast<uint64_t>(s);
    Sampler sampler(p, {});
    freq[sampler.sample(logits).token] += 1.0 / draws;
  }
  return freq;
}

TEST(Sampler, GreedyIsTheFirstArgmax) {
  Sampler s(params(0), {});
  EXPECT_EQ(s.sample(std::vector<float>{0.5f, 2.0f, -1.0f, 2.0f}).token, 1);
  EXPECT_EQ(s.sample(std::vector<float>{-3.0f, -2.0f, -2.5f}).token, 1);
  EXPECT_EQ(s.sample(std::vector<float>{NAN, 1.0f, 0.0f}).token, 1);
}

TEST(Sampler, TopKOneIsGreedyAtAnyTemperature) {
  uint64_t state = 12345;
  for (int row = 0; row < 50; ++row) {
    std::vector<float> logits(257);
    for (auto& x : logits) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      x = static_cast<float>(static_cast<int>(state >> 40) % 2000) / 100.0f;
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < logits.size(); ++i)
      if (logits[i] > logits[best]) best = i;
    SamplingParams p = params(1.3);
    p.top_k = 1;
    p.seed = static_cast<uint64_t>(row);
    Sampler s(p, {});
    EXPECT_EQ(s.sample(logits).token, static_cast<TokenId>(best)) << "row " << row;
  }
}

TEST(Sampler, TheSameSeedGivesTheSameTokens) {
  const std::vector<float> logits = logits_of({0.2, 0.2, 0.2, 0.2, 0.2});
  auto run = [&](uint64_t seed) {
    SamplingParams p = params(1.0);
    p.seed = seed;
    Sampler s(p, {});
    std::vector<TokenId> out;
    for (int i = 0; i < 64; ++i) out.push_back(s.sample(logits).token);
    return out;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

TEST(Sampler, PlainSamplingFollowsTheSoftmax) {
  // p = (0.5, 0.3, 0.15, 0.05): with 4000 draws the standard error is below 0.008.
  const auto f = frequencies(params(1.0), logits_of({0.5, 0.3, 0.15, 0.05}, 3.0));
  EXPECT_NEAR(f.at(0), 0.5, 0.04);
  EXPECT_NEAR(f.at(1), 0.3, 0.04);
  EXPECT_NEAR(f.at(2), 0.15, 0.04);
  EXPECT_NEAR(f.at(3), 0.05, 0.03);
}

TEST(Sampler, TemperatureSharpens) {
  // T = 0.5 squares the probabilities: (0.25, 0.09, 0.0225, 0.0025) / 0.365.
  const auto f = frequencies(params(0.5), logits_of({0.5, 0.3, 0.15, 0.05}));
  EXPECT_NEAR(f.at(0), 0.25 / 0.365, 0.04);
  EXPECT_NEAR(f.at(1), 0.09 / 0.365, 0.04);
}

TEST(Sampler, TopPKeepsTheSmallestNucleus) {
  const auto logits = logits_of({0.5, 0.3, 0.15, 0.05});
  SamplingParams p = params(1.0);
  p.top_p = 0.75;  // 0.5 < 0.75 <= 0.5 + 0.3: keeps tokens 0 and 1, renormalised 0.625 / 0.375
  auto f = frequencies(p, logits);
  EXPECT_EQ(f.size(), 2u);
  EXPECT_NEAR(f.at(0), 0.625, 0.04);
  EXPECT_NEAR(f.at(1), 0.375, 0.04);
  p.top_p = 0.9;  // 0.8 < 0.9 <= 0.95: keeps 0, 1, 2
  f = frequencies(p, logits);
  EXPECT_EQ(f.size(), 3u);
  EXPECT_NEAR(f.at(2), 0.15 / 0.95, 0.03);
  p.top_p = 0.4;  // the top token alone reaches it
  EXPECT_EQ(frequencies(p, logits, 200).size(), 1u);
}

TEST(Sampler, TopKThenTopPRenormalisesOverTheKeptTokens) {
  // top_k 3 keeps (0.5, 0.3, 0.15) → (0.526, 0.316, 0.158); top_p 0.8 then keeps 0 and 1.
  SamplingParams p = params(1.0);
  p.top_k = 3;
  p.top_p = 0.8;
  const auto f = frequencies(p, logits_of({0.5, 0.3, 0.15, 0.05}));
  EXPECT_EQ(f.size(), 2u);
  EXPECT_NEAR(f.at(0), 0.625, 0.04);
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheTop) {
  const auto logits = logits_of({0.5, 0.3, 0.15, 0.05});
  SamplingParams p = params(1.0);
  p.min_p = 0.2;  // threshold 0.1: drops 0.05
  auto f = frequencies(p, logits);
  EXPECT_EQ(f.size(), 3u);
  EXPECT_NEAR(f.at(0), 0.5 / 0.95, 0.04);
  p.min_p = 0.5;  // threshold 0.25: keeps 0.5 and 0.3
  f = frequencies(p, logits);
  EXPECT_EQ(f.size(), 2u);
  EXPECT_NEAR(f.at(1), 0.375, 0.04);
}

TEST(Sampler, TopKKeepsTheKLargest) {
  SamplingParams p = params(1.0);
  p.top_k = 2;
  const auto f = frequencies(p, logits_of({0.15, 0.5, 0.05, 0.3}));
  EXPECT_EQ(f.size(), 2u);
  EXPECT_NEAR(f.at(1), 0.625, 0.04);
  EXPECT_NEAR(f.at(3), 0.375, 0.04);
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  SamplingParams p = params(0);
  p.repetition_penalty = 2.0;
  // Token 0 is in the prompt: 4.0 / 2 = 2.0 < 3.0, so token 1 wins.
  EXPECT_EQ(Sampler(p, std::vector<TokenId>{0}).sample(std::vector<float>{4.0f, 3.0f}).token, 1);
  EXPECT_EQ(Sampler(p, std::vector<TokenId>{}).sample(std::vector<float>{4.0f, 3.0f}).token, 0);
  // Token 1 is in the prompt: -0.6 * 2 = -1.2 < -1.0, so token 0 wins.
  EXPECT_EQ(Sampler(p, std::vector<TokenId>{1}).sample(std::vector<float>{-1.0f, -0.6f}).token, 0);
  // Generated tokens count too.
  Sampler s(p, {});
  EXPECT_EQ(s.sample(std::vector<float>{4.0f, 3.0f}).token, 0);
  EXPECT_EQ(s.sample(std::vector<float>{4.0f, 3.0f}).token, 1);
}

TEST(Sampler, FrequencyPenaltyGrowsWithEachOccurrence) {
  // logit_t - count_t * 0.3: 1.0 | 0.7 vs 0.75 | 0.7 vs 0.45 | 0.4 vs 0.45
  SamplingParams p = params(0);
  p.frequency_penalty = 0.3;
  Sampler s(p, std::vector<TokenId>{0, 0, 0});  // the prompt does not count
  const std::vector<float> logits{1.0f, 0.75f};
  std::vector<TokenId> got;
  for (int i = 0; i < 4; ++i) got.push_back(s.sample(logits).token);
  EXPECT_EQ(got, (std::vector<TokenId>{0, 1, 0, 1}));
}

TEST(Sampler, PresencePenaltyIsPaidOnce) {
  // logit_t - 0.3 once present: 1.0 | 0.7 vs 0.75 | 0.7 vs 0.45 | 0.7 vs 0.45
  SamplingParams p = params(0);
  p.presence_penalty = 0.3;
  Sampler s(p, {});
  const std::vector<float> logits{1.0f, 0.75f};
  std::vector<TokenId> got;
  for (int i = 0; i < 4; ++i) got.push_back(s.sample(logits).token);
  EXPECT_EQ(got, (std::vector<TokenId>{0, 1, 0, 0}));
}

TEST(Sampler, LogprobsComeFromTheUnmodifiedLogits) {
  SamplingParams p = params(0);
  p.logprobs = true;
  p.top_logprobs = 2;
  p.repetition_penalty = 10.0;  // token 0 (prompt) is pushed below token 1 for the choice only
  Sampler s(p, std::vector<TokenId>{0});
  const SampledToken t = s.sample(logits_of({0.5, 0.3, 0.15, 0.05}, 7.0));
  EXPECT_EQ(t.token, 1);
  EXPECT_NEAR(t.logprob, std::log(0.3), 1e-6);
  ASSERT_EQ(t.top.size(), 2u);
  EXPECT_EQ(t.top[0].token, 0);
  EXPECT_NEAR(t.top[0].logprob, std::log(0.5), 1e-6);
  EXPECT_EQ(t.top[1].token, 1);
  EXPECT_NEAR(t.top[1].logprob, std::log(0.3), 1e-6);
}

TEST(Sampler, IdsPastTheVocabularyLimitAreNeverChosenOrReported) {
  SamplingParams p = params(0);
  p.logprobs = true;
  p.top_logprobs = 3;
  Sampler s(p, {}, 2);
  const SampledToken t = s.sample(std::vector<float>{0.0f, 0.0f, 5.0f});
  EXPECT_EQ(t.token, 0);
  EXPECT_NEAR(t.logprob, std::log(0.5), 1e-9);
  EXPECT_EQ(t.top.size(), 2u);
  SamplingParams hot = params(1.0);
  hot.seed = 3;
  Sampler h(hot, {}, 2);
  for (int i = 0; i < 100; ++i) EXPECT_LT(h.sample(std::vector<float>{0.0f, 0.0f, 50.0f}).token, 2);
}

TEST(Sampler, InvalidParametersAreRefused) {
  SamplingParams p;
  p.temperature = -1;
  EXPECT_FALSE(validate(p).empty());
  EXPECT_THROW(Sampler(p, {}), Error);
  p = {};
  p.top_p = 0;
  EXPECT_FALSE(validate(p).empty());
  p = {};
  p.top_logprobs = 3;
  EXPECT_EQ(validate(p), "top_logprobs needs logprobs to be true");
  p = {};
  p.presence_penalty = 2.5;
  EXPECT_FALSE(validate(p).empty());
  EXPECT_TRUE(validate(SamplingParams{}).empty());
}

}  // namespace
}  // namespace verdict::chat
