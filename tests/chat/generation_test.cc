// Generation: one sequence's decoding from logits rows to final text, on the fixture tokenizer
// (qwen35-tiny: <|im_end|> 758, <|endoftext|> 756, <think> 759, </think> 760, 765 ids). Logits rows
// are one-hot so greedy sampling replays a chosen token sequence.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/generation.h"
#include "core/error.h"
#include "core/json.h"
#include "support/fixtures.h"

namespace verdict::chat {
namespace {

const tokenizer::Tokenizer& tok() {
  static const tokenizer::Tokenizer t = tokenizer::Tokenizer::from_file(testing::fixture("qwen35-tiny/tokenizer.json"));
  return t;
}

std::vector<float> one_hot(TokenId id, std::size_t rows = 768) {
  std::vector<float> logits(rows, 0.0f);
  logits[static_cast<std::size_t>(id)] = 10.0f;
  return logits;
}

GenerationOptions greedy_options(int64_t max_tokens = 100) {
  GenerationOptions o;
  o.sampling.temperature = 0;
  o.max_tokens = max_tokens;
  o.stop_ids = {758, 756};
  return o;
}

std::vector<TokenId> concat(std::initializer_list<std::vector<TokenId>> parts) {
  std::vector<TokenId> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Replays `ids`; returns the concatenated deltas and the last step.
struct Replay {
  TextDelta streamed;
  StepResult last;
  int steps = 0;
};

Replay replay(Generation& g, const std::vector<TokenId>& ids) {
  Replay r;
  for (const TokenId id : ids) {
    r.last = g.step(one_hot(id));
    r.streamed += r.last.delta;
    ++r.steps;
    if (r.last.finished) break;
  }
  return r;
}

TEST(Generation, SplitsReasoningAndStopsAtAStopId) {
  const auto ids = concat({tok().encode("Thinking about it\n"), {760}, tok().encode("\n\nThe answer"), {758}, {300}});
  GenerationOptions o = greedy_options();
  o.starts_in_reasoning = true;
  Generation g(tok(), {}, o);
  const Replay r = replay(g, ids);
  EXPECT_TRUE(r.last.finished);
  EXPECT_EQ(r.last.reason, FinishReason::Stop);
  EXPECT_EQ(r.last.token, 758);
  EXPECT_EQ(g.reasoning(), "Thinking about it");
  EXPECT_EQ(g.content(), "The answer");
  EXPECT_EQ(r.streamed.reasoning, g.reasoning());
  EXPECT_EQ(r.streamed.content, g.content());
  EXPECT_EQ(g.tokens(), std::vector<TokenId>(ids.begin(), ids.end() - 1));  // the stop id counts, nothing after
}

TEST(Generation, StopStringsEndGenerationWithoutShowingThem) {
  const auto ids = tok().encode("one two three four");
  GenerationOptions o = greedy_options();
  o.split_reasoning = false;
  o.stop = {"two thr"};
  Generation g(tok(), {}, o);
  const Replay r = replay(g, ids);
  EXPECT_EQ(r.last.reason, FinishReason::Stop);
  EXPECT_EQ(g.content(), "one ");
  EXPECT_EQ(r.streamed.content, "one ");
  EXPECT_LT(static_cast<std::size_t>(r.steps), ids.size());
}

TEST(Generation, MaxTokensEndsWithLength) {
  const auto ids = tok().encode("alpha beta gamma delta epsilon");
  ASSERT_GT(ids.size(), 3u);
  GenerationOptions o = greedy_options(3);
  o.split_reasoning = false;
  Generation g(tok(), {}, o);
  const Replay r = replay(g, ids);
  EXPECT_EQ(r.steps, 3);
  EXPECT_EQ(r.last.reason, FinishReason::Length);
  EXPECT_EQ(g.content(), tok().decode(std::vector<TokenId>(ids.begin(), ids.begin() + 3)));
}

TEST(Generation, FinishReleasesHeldText) {
  const auto ids = tok().encode("abc ST");
  GenerationOptions o = greedy_options();
  o.split_reasoning = false;
  o.stop = {"STOP"};
  Generation g(tok(), {}, o);
  const Replay r = replay(g, ids);
  EXPECT_FALSE(r.last.finished);
  EXPECT_EQ(r.streamed.content, "abc ");  // "ST" might begin "STOP"
  const StepResult end = g.finish(FinishReason::Cancelled);
  EXPECT_EQ(end.delta.content, "ST");
  EXPECT_EQ(g.finish_reason(), FinishReason::Cancelled);
  EXPECT_EQ(g.content(), "abc ST");
}

TEST(Generation, TheModelOpeningThinkItselfIsSplitToo) {
  const auto ids = concat({{759}, tok().encode("\nplan\n"), {760}, tok().encode("\n\nreply"), {756}});
  Generation g(tok(), {}, greedy_options());
  replay(g, ids);
  EXPECT_EQ(g.reasoning(), "plan");
  EXPECT_EQ(g.content(), "reply");
}

TEST(Generation, SpecialTokensShowNoText) {
  GenerationOptions o = greedy_options();
  o.split_reasoning = false;
  Generation g(tok(), {}, o);
  replay(g, concat({tok().encode("a"), {757}, tok().encode("b")}));  // 757: <|im_start|>, special
  EXPECT_EQ(g.content(), "ab");
  o.skip_special_tokens = false;
  Generation shown(tok(), {}, o);
  replay(shown, concat({tok().encode("a"), {757}, tok().encode("b")}));
  EXPECT_EQ(shown.content(), "a<|im_start|>b");
}

TEST(Generation, ReasoningTagsSplitEvenWhereTheTokenizerMarksThemSpecial) {
  Json j = load_json_file(testing::fixture("qwen35-tiny/tokenizer.json"));
  for (auto& t : j["added_tokens"])
    if (t["content"] == "<think>" || t["content"] == "</think>") t["special"] = true;
  const auto special_tags = tokenizer::Tokenizer::from_json(j.dump(), "tokenizer.json (think tags special)");
  ASSERT_TRUE(special_tags.is_special(760));
  GenerationOptions o = greedy_options();
  o.starts_in_reasoning = true;
  Generation g(special_tags, {}, o);
  replay(g, concat({special_tags.encode("why"), {760}, special_tags.encode("because"), {758}}));
  EXPECT_EQ(g.reasoning(), "why");
  EXPECT_EQ(g.content(), "because");
}

TEST(Generation, PaddedLogitRowsAreNeverSampled) {
  Generation g(tok(), {}, greedy_options());
  std::vector<float> logits(768, 0.0f);
  logits[766] = 100.0f;  // an embedding row past the tokenizer's 765 ids
  logits[42] = 1.0f;
  EXPECT_EQ(g.step(logits).token, 42);
}

TEST(Generation, InvalidOptionsAreRefused) {
  GenerationOptions o = greedy_options(0);
  EXPECT_THROW(Generation(tok(), {}, o), Error);
}

}  // namespace
}  // namespace verdict::chat
