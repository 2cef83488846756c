// Normalizers, pre-tokenizers, regex dialect and invalid input. Expected splits of the Split behaviours
// are those of Hugging Face's own tests (pre_tokenizers/split.rs); invalid UTF-8 follows the WHATWG /
// Unicode "maximal subpart" rule.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "test_tokenizers.h"

namespace verdict::tokenizer {
namespace {

using testing::from_text;
using testing::tiny_json;
using Ids = std::vector<TokenId>;

// Pieces are emitted as single ids when they are in the vocabulary (ignore_merges), so the ids show the
// pre-tokenization; a wrong split would drop characters (they have no id).
const char* kPieceVocab =
    R"("vocab": {"How": 10, "are": 11, "you": 12, "doing": 13, "?": 14, " ": 15, "How ": 16, "are ": 17,
                 "you ": 18, " are": 19, " you": 20, " doing": 21, "doing?": 22, "Hey,": 23, "man!": 24},
       "merges": [], "ignore_merges": true)";

Tokenizer split_tokenizer(const std::string& behavior) {
  return from_text(tiny_json(kPieceVocab, "[]", "null",
                             R"({"type": "Split", "pattern": {"Regex": "\\w+|[^\\w\\s]+"}, "behavior": ")" +
                                 behavior + R"(", "invert": true})"));
}

TEST(Split, Behaviours) {
  const std::string text = "How are you doing?";
  EXPECT_EQ(split_tokenizer("Removed").encode(text), (Ids{10, 11, 12, 13, 14}));
  EXPECT_EQ(split_tokenizer("Isolated").encode(text), (Ids{10, 15, 11, 15, 12, 15, 13, 14}));
  EXPECT_EQ(split_tokenizer("MergedWithPrevious").encode(text), (Ids{16, 17, 18, 13, 14}));
  EXPECT_EQ(split_tokenizer("MergedWithNext").encode(text), (Ids{10, 19, 20, 21, 14}));
  EXPECT_EQ(split_tokenizer("Contiguous").encode(text), (Ids{10, 15, 11, 15, 12, 15, 22}));
}

TEST(Split, StringPatternAndRegexAgree) {
  const Tokenizer by_string = from_text(tiny_json(
      kPieceVocab, "[]", "null", R"({"type": "Split", "pattern": {"String": " "}, "behavior": "Removed", "invert": false})"));
  const Tokenizer by_regex = from_text(tiny_json(
      kPieceVocab, "[]", "null", R"({"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Removed", "invert": false})"));
  EXPECT_EQ(by_string.encode("Hey, man!"), (Ids{23, 24}));
  EXPECT_EQ(by_regex.encode("Hey, man!"), (Ids{23, 24}));
  // A literal pattern is not a regex: "." matches only a dot.
  const Tokenizer dot = from_text(tiny_json(
      R"("vocab": {"a": 0, "b": 1, ".": 2, "ab": 3}, "merges": [], "ignore_merges": true)", "[]", "null",
      R"({"type": "Split", "pattern": {"String": "."}, "behavior": "Isolated", "invert": false})"));
  EXPECT_EQ(dot.encode("ab.ab"), (Ids{3, 2, 3}));
}

TEST(Split, OnigurumaDialect) {
  // \s includes U+0085 (NEL) as in Oniguruma; (?i:...) folds case.
  const Tokenizer spaces = from_text(tiny_json(
      R"("vocab": {"a": 0, "b": 1, "\u0085": 2}, "merges": [])", "[]", "null",
      R"({"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Removed", "invert": false})"));
  EXPECT_EQ(spaces.encode("a\xC2\x85" "b"), (Ids{0, 1}));
  const Tokenizer contraction = from_text(tiny_json(
      R"("vocab": {"X": 0, "'S": 1, "'": 2, "S": 3}, "merges": [], "ignore_merges": true)", "[]", "null",
      R"j({"type": "Split", "pattern": {"Regex": "(?i:'s)"}, "behavior": "Isolated", "invert": false})j"));
  EXPECT_EQ(contraction.encode("X'S"), (Ids{0, 1}));
}

TEST(ByteLevel, PrefixSpaceRegexAndDecoder) {
  const std::string vocab =
      R"("vocab": {"ĠHello": 0, "Ġworld": 1, "Ġ": 2, "Hello": 3}, "merges": [], "ignore_merges": true)";
  const std::string decoder = R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})";
  const Tokenizer with_prefix = from_text(tiny_json(
      vocab, "[]", "null", R"({"type": "ByteLevel", "add_prefix_space": true, "use_regex": true})", decoder));
  EXPECT_EQ(with_prefix.encode("Hello world"), (Ids{0, 1}));
  EXPECT_EQ(with_prefix.encode("Hello  world"), (Ids{0, 2, 1}));
  EXPECT_EQ(with_prefix.decode(Ids{0, 2, 1}), " Hello  world");
  EXPECT_EQ(with_prefix.token_bytes(2), " ");
  const Tokenizer without = from_text(tiny_json(
      vocab, "[]", "null", R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})", decoder));
  EXPECT_EQ(without.encode("Hello world"), (Ids{3, 1}));
  EXPECT_EQ(without.pre_tokenizer_name(), "ByteLevel");
  EXPECT_EQ(without.decoder_name(), "ByteLevel");
}

TEST(Normalizers, Forms) {
  auto normalized = [](const std::string& spec, const std::string& text) {
    return from_text(tiny_json(R"("vocab": {"a": 0}, "merges": [])", "[]", spec)).normalize(text);
  };
  EXPECT_EQ(normalized(R"({"type": "NFC"})", "e\xCC\x81"), "\xC3\xA9");
  EXPECT_EQ(normalized(R"({"type": "NFD"})", "\xC3\xA9"), "e\xCC\x81");
  EXPECT_EQ(normalized(R"({"type": "NFKC"})", "\xEF\xAC\x81"), "fi");  // U+FB01 ligature
  EXPECT_EQ(normalized(R"({"type": "NFKD"})", "\xE2\x84\xAB"), "A\xCC\x8A");  // U+212B Angstrom sign
  EXPECT_EQ(normalized(R"({"type": "Lowercase"})", "AbC \xC3\x89 \xC4\xB0"), "abc \xC3\xA9 i\xCC\x87");
  EXPECT_EQ(normalized(R"({"type": "Strip", "strip_left": true, "strip_right": true})", " \t a b \n"), "a b");
  EXPECT_EQ(normalized(R"({"type": "Prepend", "prepend": "_"})", "ab"), "_ab");
  EXPECT_EQ(normalized(R"({"type": "Replace", "pattern": {"String": " "}, "content": "_"})", "a b c"), "a_b_c");
  EXPECT_EQ(normalized(R"({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}]})",
                       "\xC3\x89"),
            "e\xCC\x81");
  EXPECT_EQ(from_text(tiny_json(R"("vocab": {"a": 0}, "merges": [])", "[]",
                                R"({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}]})"))
                .normalizer_name(),
            "Sequence[NFD,Lowercase]");
  // Normalization across ASCII / non-ASCII boundaries, CJK and Hangul (composed from jamo).
  EXPECT_EQ(normalized(R"({"type": "NFC"})", "ae\xCC\x81x\xE6\x97\xA5\xE1\x84\x80\xE1\x85\xA1z"),
            "a\xC3\xA9x\xE6\x97\xA5\xEA\xB0\x80z");
}

TEST(NfdInput, ComposesBeforeTokenizing) {
  for (const Tokenizer* tok : {&testing::qwen35_tiny(), &testing::qwen3()}) {
    EXPECT_EQ(tok->normalize("cafe\xCC\x81"), "caf\xC3\xA9");
    EXPECT_EQ(tok->encode("cafe\xCC\x81"), tok->encode("caf\xC3\xA9"));
    EXPECT_EQ(tok->decode(tok->encode("cafe\xCC\x81")), "caf\xC3\xA9");
  }
}

TEST(InvalidUtf8, ReplacedByMaximalSubparts) {
  const Tokenizer& tok = testing::qwen35_tiny();
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(tok.normalize("a\xFF" "b"), "a" + r + "b");
  EXPECT_EQ(tok.normalize("\xF0\x9F\x91"), r);                 // truncated 4-byte sequence: one U+FFFD
  EXPECT_EQ(tok.normalize("\xE2\x82" "a"), r + "a");
  EXPECT_EQ(tok.normalize("\xED\xA0\x80"), r + r + r);         // surrogate: three
  EXPECT_EQ(tok.normalize("\xC0\xAF"), r + r);                 // overlong: two
  EXPECT_EQ(tok.normalize("\xF4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF: four
  EXPECT_EQ(tok.encode("a\xFF"), tok.encode("a" + r));
  EXPECT_EQ(tok.encode(std::string("x\0y", 3)), tok.encode(std::string("x\0y", 3)));
  EXPECT_EQ(tok.decode(tok.encode(std::string("x\0y", 3))), std::string("x\0y", 3));
}

TEST(InvalidUtf8, RandomBytesNeverBreakAnything) {
  const Tokenizer& tok = testing::qwen35_tiny();
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int round = 0; round < 1500; ++round) {
    std::string bytes(next() % 48, '\0');
    for (char& c : bytes) {
      const uint64_t v = next();
      // Mix plain ASCII, UTF-8 lead / continuation bytes and pieces of special tokens.
      c = static_cast<char>(v % 4 == 0 ? "<|im_end>\n "[v / 4 % 11] : static_cast<char>(v >> 8));
    }
    for (bool parse_special : {true, false}) {
      const Ids ids = tok.encode(bytes, parse_special);
      for (TokenId id : ids) ASSERT_LT(static_cast<std::size_t>(id), tok.vocab_size());
      EXPECT_EQ(tok.decode(ids), tok.normalize(bytes));
    }
  }
}

}  // namespace
}  // namespace verdict::tokenizer
