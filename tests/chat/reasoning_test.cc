// The reasoning split: Qwen3.5 (generation starts inside <think>) and Qwen3 (the model opens it),
// whitespace around the tags dropped, and streaming equal to the whole text for every chunking.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/reasoning.h"

namespace verdict::chat {
namespace {

TextDelta streamed(const std::vector<std::string>& chunks, bool starts_inside) {
  ReasoningSplitter s(starts_inside);
  TextDelta all;
  for (const auto& c : chunks) all += s.push(c);
  all += s.finish();
  return all;
}

TEST(Reasoning, GenerationThatStartsInsideTheBlock) {
  const TextDelta d = split_reasoning("Let me think.\n</think>\n\nThe answer.", true);
  EXPECT_EQ(d.reasoning, "Let me think.");
  EXPECT_EQ(d.content, "The answer.");
}

TEST(Reasoning, TheModelMayOpenTheBlockItself) {
  TextDelta d = split_reasoning("<think>\nhmm\n</think>\n\nok", false);
  EXPECT_EQ(d.reasoning, "hmm");
  EXPECT_EQ(d.content, "ok");
  d = split_reasoning("\n <think>x</think>y", false);
  EXPECT_EQ(d.reasoning, "x");
  EXPECT_EQ(d.content, "y");
}

TEST(Reasoning, TextWithoutAnOpeningTagIsContent) {
  const TextDelta d = split_reasoning("Hello <think> x</think> y", false);
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "Hello <think> x</think> y");
}

TEST(Reasoning, UnclosedReasoningStaysReasoning) {
  TextDelta d = split_reasoning("still thinking\n", true);
  EXPECT_EQ(d.reasoning, "still thinking");
  EXPECT_EQ(d.content, "");
  d = split_reasoning("abc </thi", true);
  EXPECT_EQ(d.reasoning, "abc </thi");
}

TEST(Reasoning, EmptyReasoningAndLaterCloseTags) {
  TextDelta d = split_reasoning("</think>\n\nHi", true);
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "Hi");
  d = split_reasoning("a</think>b</think>c", true);
  EXPECT_EQ(d.reasoning, "a");
  EXPECT_EQ(d.content, "b</think>c");
}

TEST(Reasoning, PromptOpensReasoning) {
  EXPECT_TRUE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n"));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n"));
  EXPECT_FALSE(prompt_opens_reasoning(""));
}

TEST(Reasoning, StreamingEqualsTheWholeTextForEveryChunking) {
  const std::vector<std::pair<std::string, bool>> texts = {
      {"Let me think.\n\n</think>\n\nThe answer is 4.\n", true},
      {"\n<think>\n a </think> b", false},
      {"  <thin", false},
      {"</think>\n\n</think>", true},
      {"plain answer", false},
      {"x \n</thinking> y </think>  z", true},
  };
  for (const auto& [text, inside] : texts) {
    const TextDelta whole = split_reasoning(text, inside);
    for (std::size_t i = 0; i <= text.size(); ++i) {
      for (std::size_t j = i; j <= text.size(); ++j) {
        const TextDelta d = streamed({text.substr(0, i), text.substr(i, j - i), text.substr(j)}, inside);
        EXPECT_EQ(d.reasoning, whole.reasoning) << text << " @" << i << "," << j;
        EXPECT_EQ(d.content, whole.content) << text << " @" << i << "," << j;
      }
    }
  }
}

}  // namespace
}  // namespace verdict::chat
