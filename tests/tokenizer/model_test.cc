// BPE model semantics on small hand-written tokenizer.json files; expected ids worked out by hand from
// Hugging Face's BPE rules (lowest merge rank first, leftmost on ties; unk / byte fallback / affixes).
#include <gtest/gtest.h>

#include "test_tokenizers.h"

namespace verdict::tokenizer {
namespace {

using testing::from_text;
using testing::tiny_json;
using Ids = std::vector<TokenId>;

const char* kAbcVocab = R"("vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "aa": 6})";

TEST(Bpe, MergesByRankThenLeftmost) {
  const Tokenizer tok = from_text(tiny_json(std::string(kAbcVocab) +
                                            R"(, "merges": [["b", "c"], ["a", "b"], ["a", "bc"], ["a", "a"]])"));
  EXPECT_EQ(tok.encode("abc"), (Ids{5}));     // b+c first (rank 0), then a+bc
  EXPECT_EQ(tok.encode("abab"), (Ids{3, 3}));
  EXPECT_EQ(tok.encode("cab"), (Ids{2, 3}));
  EXPECT_EQ(tok.encode("abcb"), (Ids{5, 1}));  // the stale a+b candidate is skipped
  EXPECT_EQ(tok.encode("aaa"), (Ids{6, 0}));   // equal ranks: leftmost pair first
  EXPECT_EQ(tok.encode(""), Ids{});
  EXPECT_EQ(tok.model_vocab_size(), 7u);
  EXPECT_EQ(tok.vocab_size(), 7u);
}

TEST(Bpe, LegacyStringMergesMeanTheSame) {
  const Tokenizer tok = from_text(tiny_json(std::string(kAbcVocab) + R"(, "merges": ["b c", "a b", "a bc", "a a"])"));
  EXPECT_EQ(tok.encode("abc"), (Ids{5}));
  EXPECT_EQ(tok.encode("abcb"), (Ids{5, 1}));
  EXPECT_EQ(tok.encode("aaa"), (Ids{6, 0}));
}

TEST(Bpe, LongWordsMergeCorrectly) {
  const Tokenizer tok = from_text(tiny_json(std::string(kAbcVocab) + R"(, "merges": [["a", "a"]])"));
  // 10,001 'a': pairs merge left to right, leaving one 'a' at the end.
  const Ids ids = tok.encode(std::string(10001, 'a'));
  ASSERT_EQ(ids.size(), 5001u);
  for (std::size_t i = 0; i + 1 < ids.size(); ++i) ASSERT_EQ(ids[i], 6);
  EXPECT_EQ(ids.back(), 0);
}

TEST(Bpe, IgnoreMerges) {
  const std::string vocab = R"("vocab": {"a": 0, "b": 1, "c": 2, "abc": 3}, "merges": [])";
  EXPECT_EQ(from_text(tiny_json(vocab + R"(, "ignore_merges": true)")).encode("abc"), (Ids{3}));
  EXPECT_EQ(from_text(tiny_json(vocab + R"(, "ignore_merges": false)")).encode("abc"), (Ids{0, 1, 2}));
}

TEST(Bpe, UnknownCharacters) {
  const std::string vocab = R"("vocab": {"<unk>": 0, "a": 1, "b": 2}, "merges": [], "unk_token": "<unk>")";
  EXPECT_EQ(from_text(tiny_json(vocab + R"(, "fuse_unk": true)")).encode("a??b"), (Ids{1, 0, 2}));
  EXPECT_EQ(from_text(tiny_json(vocab + R"(, "fuse_unk": false)")).encode("a??b"), (Ids{1, 0, 0, 2}));
  EXPECT_EQ(from_text(tiny_json(vocab + R"(, "fuse_unk": true)")).encode("??"), (Ids{0}));
  // Without unk_token an unknown character is dropped.
  EXPECT_EQ(from_text(tiny_json(R"("vocab": {"a": 0}, "merges": [])")).encode("a?a"), (Ids{0, 0}));
}

TEST(Bpe, ByteFallback) {
  const Tokenizer tok = from_text(tiny_json(
      R"("vocab": {"a": 0, "<0x3F>": 1, "<0xC3>": 2, "<0xA9>": 3}, "merges": [], "byte_fallback": true)"));
  EXPECT_EQ(tok.encode("a?\xC3\xA9"), (Ids{0, 1, 2, 3}));
}

TEST(Bpe, ContinuingSubwordPrefix) {
  const Tokenizer tok = from_text(tiny_json(
      R"("vocab": {"a": 0, "##b": 1, "ab": 2, "b": 3}, "merges": [["a", "##b"]], "continuing_subword_prefix": "##")"));
  EXPECT_EQ(tok.encode("ab"), (Ids{2}));
  EXPECT_EQ(tok.encode("b"), (Ids{3}));
  EXPECT_EQ(tok.encode("bb"), (Ids{3, 1}));
}

TEST(Bpe, EndOfWordSuffix) {
  const Tokenizer tok = from_text(tiny_json(
      R"("vocab": {"a": 0, "b</w>": 1, "ab</w>": 2, "b": 3}, "merges": [["a", "b</w>"]], "end_of_word_suffix": "</w>")"));
  EXPECT_EQ(tok.encode("ab"), (Ids{2}));
  EXPECT_EQ(tok.encode("b"), (Ids{1}));
  EXPECT_EQ(tok.encode("bb"), (Ids{3, 1}));
}

TEST(Bpe, NullDecoderJoinsWithSpaces) {
  const Tokenizer tok = from_text(tiny_json(std::string(kAbcVocab) + R"(, "merges": [])"));
  EXPECT_EQ(tok.decode(Ids{3, 2}), "ab c");
  EXPECT_EQ(tok.decoder_name(), "none");
  EXPECT_EQ(tok.pre_tokenizer_name(), "none");
  EXPECT_EQ(tok.normalizer_name(), "none");
  StreamDecoder stream(tok);
  std::string streamed;
  for (TokenId id : Ids{3, 2, 0}) streamed += stream.push(id);
  streamed += stream.finish();
  EXPECT_EQ(streamed, "ab c a");
}

}  // namespace
}  // namespace verdict::tokenizer
