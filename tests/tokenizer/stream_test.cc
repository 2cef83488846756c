// Streaming detokenization. Byte-level ids are looked up by their GPT-2 alphabet spelling: byte 0xF0 is
// "ð", 0x9F "Ł", 0x91 "ĳ", 0x8D "į", 0x80 "Ģ" (bytes_to_unicode), so U+1F44D 👍 = F0 9F 91 8D.
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "core/json.h"
#include "core/mapped_file.h"
#include "support/fixtures.h"
#include "test_tokenizers.h"
#include "core/utf8.h"

namespace verdict::tokenizer {
namespace {

TokenId id_of(const Tokenizer& tok, const std::string& token) {
  auto id = tok.token_to_id(token);
  EXPECT_TRUE(id.has_value()) << token;
  return id.value_or(0);
}

TEST(StreamDecoder, HoldsBackAnIncompleteEmoji) {
  const Tokenizer& tok = testing::qwen35_tiny();
  const TokenId f0 = id_of(tok, "ð"), x9f = id_of(tok, "Ł"), x91 = id_of(tok, "ĳ"), x8d = id_of(tok, "į");
  EXPECT_EQ(tok.token_bytes(f0), "\xF0");
  StreamDecoder stream(tok);
  EXPECT_EQ(stream.push(id_of(tok, "a")), "a");
  EXPECT_EQ(stream.push(f0), "");
  EXPECT_EQ(stream.push(x9f), "");
  EXPECT_EQ(stream.push(x91), "");
  EXPECT_EQ(stream.push(x8d), "\xF0\x9F\x91\x8D");
  EXPECT_EQ(stream.finish(), "");
  const std::vector<TokenId> ids = {f0, x9f, x91, x8d};
  EXPECT_EQ(tok.decode(ids), "\xF0\x9F\x91\x8D");
}

TEST(StreamDecoder, InvalidBytesBecomeReplacementCharacters) {
  const Tokenizer& tok = testing::qwen35_tiny();
  const std::string r = "\xEF\xBF\xBD";
  const TokenId f0 = id_of(tok, "ð"), x80 = id_of(tok, "Ģ"), a = id_of(tok, "a");
  StreamDecoder stream(tok);
  EXPECT_EQ(stream.push(x80), r);          // a lone continuation byte can never complete
  EXPECT_EQ(stream.push(f0), "");
  EXPECT_EQ(stream.push(a), r + "a");      // the lead byte is cut short
  EXPECT_EQ(stream.push(f0), "");
  EXPECT_EQ(stream.finish(), r);           // pending bytes at the end
  const std::vector<TokenId> ids = {x80, f0, a, f0};
  EXPECT_EQ(tok.decode(ids), r + r + "a" + r);
}

TEST(StreamDecoder, SkipsSpecialTokensWhenAsked) {
  const Tokenizer& tok = testing::qwen35_tiny();
  StreamDecoder keep(tok), skip(tok, true);
  EXPECT_EQ(keep.push(758), "<|im_end|>");
  EXPECT_EQ(skip.push(758), "");
  EXPECT_EQ(skip.push(759), "<think>");  // not special
  EXPECT_THROW(skip.push(-1), Error);
  EXPECT_THROW(skip.push(765), Error);
}

TEST(StreamDecoder, ConcatenationEqualsDecodeOnGoldens) {
  const Tokenizer& tok = testing::qwen3();
  std::istringstream in(read_text_file(verdict::testing::fixture("qwen3-tokenizer/cases.jsonl")));
  std::string line;
  int n = 0;
  while (std::getline(in, line) && n < 3000) {
    const auto ids = Json::parse(line).at("ids").get<std::vector<TokenId>>();
    StreamDecoder stream(tok);
    std::string streamed;
    for (TokenId id : ids) {
      const std::string piece = stream.push(id);
      ASSERT_TRUE(utf8::is_valid(piece));  // only complete UTF-8 comes out
      streamed += piece;
    }
    streamed += stream.finish();
    ASSERT_EQ(streamed, tok.decode(ids)) << line;
    ++n;
  }
  EXPECT_EQ(n, 3000);
}

}  // namespace
}  // namespace verdict::tokenizer
