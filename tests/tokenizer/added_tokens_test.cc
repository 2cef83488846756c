// Added-token extraction on a hand-written char-level tokenizer; expected ids worked out by hand from
// Hugging Face's AddedVocabulary rules (leftmost-longest, lstrip / rstrip absorb whitespace, single_word
// needs non-word neighbours, special tokens skipped when not parsing them, normalized tokens matched in
// the normalized text).
#include <gtest/gtest.h>

#include "test_tokenizers.h"

namespace verdict::tokenizer {
namespace {

using testing::from_text;
using testing::tiny_json;
using Ids = std::vector<TokenId>;

const Tokenizer& flags_tokenizer() {
  static const Tokenizer tok = from_text(tiny_json(
      R"("vocab": {" ": 0, "a": 1, "b": 2, "c": 3, "<": 4, ">": 5, "m": 6, "r": 7, "s": 8, "x": 9, "\n": 10,
                   "\t": 11}, "merges": [])",
      R"([
        {"id": 100, "content": "<m>", "single_word": false, "lstrip": true, "rstrip": false, "normalized": false, "special": false},
        {"id": 101, "content": "<r>", "single_word": false, "lstrip": false, "rstrip": true, "normalized": false, "special": false},
        {"id": 102, "content": "ab", "single_word": true, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
        {"id": 103, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
        {"id": 104, "content": "<s>xx", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}
      ])"));
  return tok;
}

TEST(AddedTokens, Lstrip) {
  const Tokenizer& tok = flags_tokenizer();
  EXPECT_EQ(tok.encode("a <m> b"), (Ids{1, 100, 0, 2}));  // the space before <m> is absorbed, not the one after
  EXPECT_EQ(tok.encode("x \t<m>"), (Ids{9, 100}));
  EXPECT_EQ(tok.encode("<m>"), (Ids{100}));
}

TEST(AddedTokens, Rstrip) {
  const Tokenizer& tok = flags_tokenizer();
  EXPECT_EQ(tok.encode("a <r>  b"), (Ids{1, 0, 101, 2}));
  EXPECT_EQ(tok.encode("<r>\n\na"), (Ids{101, 1}));
  // rstrip takes the space, so lstrip of the next token has nothing left to take.
  EXPECT_EQ(tok.encode("a <r> <m>"), (Ids{1, 0, 101, 100}));
}

TEST(AddedTokens, SingleWord) {
  const Tokenizer& tok = flags_tokenizer();
  EXPECT_EQ(tok.encode("ab c"), (Ids{102, 0, 3}));
  EXPECT_EQ(tok.encode(" ab "), (Ids{0, 102, 0}));
  EXPECT_EQ(tok.encode("a\nab"), (Ids{1, 10, 102}));
  EXPECT_EQ(tok.encode("cab"), (Ids{3, 1, 2}));  // preceded by a word character
  EXPECT_EQ(tok.encode("abc"), (Ids{1, 2, 3}));  // followed by a word character
  EXPECT_EQ(tok.encode("<s>ab"), (Ids{103, 102}));
}

TEST(AddedTokens, LeftmostLongestAndSpecialParsing) {
  const Tokenizer& tok = flags_tokenizer();
  EXPECT_EQ(tok.encode("a<s>b"), (Ids{1, 103, 2}));
  EXPECT_EQ(tok.encode("a<s>b", false), (Ids{1, 4, 8, 5, 2}));
  EXPECT_EQ(tok.encode("<s>xx"), (Ids{104}));          // the longest match wins
  EXPECT_EQ(tok.encode("<s>x"), (Ids{103, 9}));
  EXPECT_EQ(tok.encode("<s>xx", false), (Ids{104}));   // non-special tokens are still matched
  EXPECT_EQ(tok.encode("<s>x", false), (Ids{4, 8, 5, 9}));
  EXPECT_TRUE(tok.is_special(103));
  EXPECT_FALSE(tok.is_special(104));
  EXPECT_EQ(tok.vocab_size(), 105u);
  EXPECT_EQ(tok.model_vocab_size(), 12u);
  EXPECT_EQ(tok.token_to_id("<m>"), 100);
  EXPECT_EQ(tok.id_to_token(104), "<s>xx");
  EXPECT_EQ(tok.id_to_token(50), "");
  EXPECT_EQ(tok.decode(Ids{1, 103, 2}), "a <s> b");       // no decoder: joined with spaces
  EXPECT_EQ(tok.decode(Ids{1, 103, 2}, true), "a b");
}

TEST(AddedTokens, NormalizedTokensMatchTheNormalizedText) {
  const Tokenizer tok = from_text(tiny_json(
      R"("vocab": {"a": 0, "b": 1, "c": 2, "x": 3}, "merges": [])",
      R"([{"id": 50, "content": "AB", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": false},
          {"id": 51, "content": "C", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}])",
      R"({"type": "Lowercase"})"));
  EXPECT_EQ(tok.encode("xABC"), (Ids{3, 50, 51}));
  EXPECT_EQ(tok.encode("xab"), (Ids{3, 50}));
  EXPECT_EQ(tok.encode("xc"), (Ids{3, 2}));
  EXPECT_EQ(tok.encode("xC"), (Ids{3, 51}));
}

TEST(AddedTokens, QwenSpecialTokens) {
  const Tokenizer& tok = testing::qwen35_tiny();
  const Ids ids = tok.encode("<|im_start|>user\nhi<|im_end|>");
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), 757);
  EXPECT_EQ(ids.back(), 758);
  const Ids plain = tok.encode("<|im_start|>user\nhi<|im_end|>", false);
  for (TokenId id : plain) EXPECT_LT(id, 756);
  EXPECT_EQ(tok.decode(plain), "<|im_start|>user\nhi<|im_end|>");
  // <think> is not special: matched with or without special parsing.
  EXPECT_EQ(tok.encode("<think>", false), (Ids{759}));
  EXPECT_EQ(tok.encode("a<|endoftext|>b").size(), 3u);
  EXPECT_EQ(tok.decode(tok.encode("x<|im_end|>y"), true), "xy");
}

}  // namespace
}  // namespace verdict::tokenizer
