// The generation loop on the fixture backbone (qwen35-tiny, random weights): streamed deltas add up
// to the result, the callback can cancel, and a full KV cache ends generation with "length".
#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "chat/generate.h"
#include "support/fixtures.h"

namespace verdict::chat {
namespace {

struct Fixture {
  std::unique_ptr<models::qwen35::Backbone> model =
      models::qwen35::Backbone::load(testing::fixture("qwen35-tiny"));
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_file(testing::fixture("qwen35-tiny/tokenizer.json"));
  std::vector<TokenId> prompt = tok.encode("<|im_start|>user\nHello world<|im_end|>\n<|im_start|>assistant\n<think>\n");
};

GenerationOptions greedy(int64_t max_tokens) {
  GenerationOptions o;
  o.sampling.temperature = 0;
  o.max_tokens = max_tokens;
  o.stop_ids = {758, 756};
  o.starts_in_reasoning = true;
  return o;
}

TEST(Generate, StreamedDeltasAddUpToTheResult) {
  Fixture f;
  auto pool = f.model->make_pool(1, 64);
  const int64_t slot = pool.acquire();
  TextDelta streamed;
  int calls = 0;
  const GenerateResult r = generate(*f.model, pool, slot, f.tok, f.prompt, greedy(10), [&](const StepResult& s) {
    streamed += s.delta;
    ++calls;
    return true;
  });
  EXPECT_EQ(r.prompt_tokens, static_cast<int64_t>(f.prompt.size()));
  EXPECT_EQ(static_cast<int>(r.tokens.size()), calls);
  EXPECT_LE(r.tokens.size(), 10u);
  EXPECT_EQ(streamed.content, r.content);
  EXPECT_EQ(streamed.reasoning, r.reasoning);
  EXPECT_EQ(r.sampled.size(), r.tokens.size());
  EXPECT_EQ(pool.length(slot), static_cast<int64_t>(f.prompt.size() + r.tokens.size()) - 1);
}

TEST(Generate, TheCallbackCanCancel) {
  Fixture f;
  auto pool = f.model->make_pool(1, 64);
  const int64_t slot = pool.acquire();
  int calls = 0;
  const GenerateResult r =
      generate(*f.model, pool, slot, f.tok, f.prompt, greedy(30), [&](const StepResult&) { return ++calls < 3; });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(r.tokens.size(), 3u);
  EXPECT_EQ(r.finish_reason, FinishReason::Cancelled);
}

TEST(Generate, AFullContextEndsWithLength) {
  Fixture f;
  const auto n = static_cast<int64_t>(f.prompt.size());
  auto pool = f.model->make_pool(1, n + 4);
  const int64_t slot = pool.acquire();
  const GenerateResult r = generate(*f.model, pool, slot, f.tok, f.prompt, greedy(100));
  // Tokens 1..5 are sampled from positions n-1 .. n+3; the fifth cannot be fed back.
  EXPECT_EQ(r.finish_reason, FinishReason::Length);
  EXPECT_EQ(r.tokens.size(), 5u);
  auto small = f.model->make_pool(1, n - 1);
  const int64_t s2 = small.acquire();
  EXPECT_THROW(generate(*f.model, small, s2, f.tok, f.prompt, greedy(4)), Error);
}

}  // namespace
}  // namespace verdict::chat
