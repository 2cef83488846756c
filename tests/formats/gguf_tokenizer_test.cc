// The GGUF tokenizer block both ways: written exactly as llama.cpp's converter wrote the fixture file,
// and read back into a tokenizer that encodes like the original tokenizer.json.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "formats/gguf.h"
#include "formats/gguf_tokenizer.h"
#include "formats/gguf_writer.h"
#include "support/fixtures.h"
#include "tokenizer/tokenizer.h"

namespace verdict::formats {
namespace {

using verdict::testing::fixture;

TEST(GgufTokenizer, MetadataEqualsWhatLlamaCppWrote) {
  const GgufFile f(fixture("qwen35-tiny/model-f32.gguf"));
  const auto written = gguf_tokenizer_metadata(fixture("qwen35-tiny"), 768);
  std::vector<const std::pair<std::string, GgufValue>*> expected;
  for (const auto& kv : f.header().metadata)
    if (kv.first.rfind("tokenizer.", 0) == 0) expected.push_back(&kv);
  ASSERT_EQ(written.size(), expected.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    const auto& [key, value] = written[i];
    EXPECT_EQ(key, expected[i]->first);
    EXPECT_EQ(value.type(), expected[i]->second.type()) << key;
    EXPECT_EQ(value.element_type(), expected[i]->second.element_type()) << key;
    EXPECT_EQ(value.raw(), expected[i]->second.raw()) << key;
    if (value.strings() != nullptr) {
      EXPECT_EQ(*value.strings(), *expected[i]->second.strings()) << key;
    }
    if (value.as_string() != nullptr) {
      EXPECT_EQ(*value.as_string(), *expected[i]->second.as_string()) << key;
    }
  }
}

TEST(GgufTokenizer, RebuiltTokenizerEncodesLikeTheOriginal) {
  const GgufFile f(fixture("qwen35-tiny/model-f32.gguf"));
  const auto tok = tokenizer::Tokenizer::from_json(tokenizer_json_from_gguf(f), f.path());
  const auto original = tokenizer::Tokenizer::from_file(fixture("qwen35-tiny/tokenizer.json"));
  EXPECT_EQ(tok.vocab_size(), original.vocab_size());
  EXPECT_EQ(tok.added_tokens().size(), original.added_tokens().size());
  EXPECT_EQ(tok.normalizer_name(), "NFC");
  const Json cases = load_json_file(fixture("qwen35-tiny/tokenizer_cases.json"));
  for (const Json& c : cases["cases"]) {
    const std::string text = c["text"].get<std::string>();
    const auto ids = tok.encode(text);
    EXPECT_EQ(ids, c["ids"].get<std::vector<tokenizer::TokenId>>()) << text;
    EXPECT_EQ(tok.decode(ids), original.decode(ids)) << text;
  }
  EXPECT_FALSE(tok.is_special(759));  // <think>: a user-defined (non-special) added token
  EXPECT_TRUE(tok.is_special(758));
}

TEST(GgufTokenizer, SiblingTokenizerJsonWins) {
  std::string source;
  (void)gguf_model_tokenizer_json(fixture("qwen35-tiny/model-f32.gguf"), &source);
  EXPECT_EQ(source, fixture("qwen35-tiny/tokenizer.json"));
}

TEST(GgufTokenizer, RefusesWhatItCannotRebuild) {
  auto file_with = [](const std::string& model, const std::string& pre) {
    GgufLayout layout;
    layout.add_metadata("tokenizer.ggml.model", GgufValue::string(model));
    layout.add_metadata("tokenizer.ggml.pre", GgufValue::string(pre));
    layout.add_metadata("tokenizer.ggml.tokens", GgufValue::string_array({"a", "b"}));
    layout.add_metadata("tokenizer.ggml.merges", GgufValue::string_array({"a b c"}));
    return serialize_gguf(layout, [](std::size_t, std::span<uint8_t>) {});
  };
  const std::string path = ::testing::TempDir() + "/gguf_tokenizer_test_" + std::to_string(::getpid()) + ".gguf";
  for (const auto& [model, pre, message] :
       {std::tuple{"llama", "qwen35", "is not supported (only gpt2"}, std::tuple{"gpt2", "llama3", "'llama3' is not supported"},
        std::tuple{"gpt2", "qwen2", "merge 'a b c'"}}) {
    const auto bytes = file_with(model, pre);
    std::FILE* out = std::fopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), out);
    std::fclose(out);
    try {
      (void)tokenizer_json_from_gguf(GgufFile(path));
      ADD_FAILURE() << message;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  std::remove(path.c_str());
}

// The rebuilt text holds the vocabulary, the merges and the added tokens as JSON values equal to those built here
// as Json, whatever bytes the tokens hold: quotes, backslashes, control characters, non-ASCII text, a control token
// spelling the text's internal placeholder. Duplicate tokens and text that is not UTF-8 are refused.
TEST(GgufTokenizer, RebuiltTextHoldsEveryTokenAsJson) {
  const std::string path = ::testing::TempDir() + "/gguf_tokenizer_json_" + std::to_string(::getpid()) + ".gguf";
  const auto rebuilt = [&](const std::vector<std::string>& tokens, const std::vector<int32_t>& types,
                           const std::vector<std::string>& merges) {
    GgufLayout layout;
    layout.add_metadata("tokenizer.ggml.model", GgufValue::string("gpt2"));
    layout.add_metadata("tokenizer.ggml.pre", GgufValue::string("qwen35"));
    layout.add_metadata("tokenizer.ggml.tokens", GgufValue::string_array(tokens));
    layout.add_metadata("tokenizer.ggml.token_type", GgufValue::i32_array(types));
    layout.add_metadata("tokenizer.ggml.merges", GgufValue::string_array(merges));
    const auto bytes = serialize_gguf(layout, [](std::size_t, std::span<uint8_t>) {});
    std::FILE* out = std::fopen(path.c_str(), "wb");
    EXPECT_NE(out, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), out);
    std::fclose(out);
    return tokenizer_json_from_gguf(GgufFile(path));
  };
  const std::vector<std::string> tokens = {"a", "b", "ab", "\"q\"", "back\\slash", "tab\t", "\x01vocab\x01", "\x7f",
                                           "\xC3\xA9t\xC3\xA9", "\xE2\x80\xA8", "<|c|>", "\x01merges\x01", "z"};
  const std::vector<int32_t> types = {1, 1, 1, 1, 1, 1, 3, 1, 1, 6, 3, 4, 5};
  const std::vector<std::string> merges = {"a b", "\"q\" back\\slash", "\xC3\xA9t\xC3\xA9 tab\t"};
  const Json got = Json::parse(rebuilt(tokens, types, merges));
  Json vocab = Json::object(), added = Json::array(), merge_pairs = Json::array();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (types[i] == 1 || types[i] == 6) vocab[tokens[i]] = i;
    if (types[i] == 3 || types[i] == 4)
      added.push_back({{"id", i}, {"content", tokens[i]}, {"single_word", false}, {"lstrip", false},
                       {"rstrip", false}, {"normalized", false}, {"special", types[i] == 3}});
  }
  for (const std::string& m : merges) {
    const std::size_t space = m.find(' ');
    merge_pairs.push_back(Json::array({m.substr(0, space), m.substr(space + 1)}));
  }
  EXPECT_EQ(got["model"]["vocab"], vocab);
  EXPECT_EQ(got["model"]["merges"], merge_pairs);
  EXPECT_EQ(got["added_tokens"], added);
  EXPECT_EQ(got["model"]["type"], "BPE");
  EXPECT_EQ(got["decoder"]["type"], "ByteLevel");
  EXPECT_EQ(got["normalizer"]["type"], "NFC");
  // Refused: a token twice in the vocabulary, and tokens or merges that are not UTF-8.
  for (const auto& [bad_tokens, bad_merges, message] :
       {std::tuple{std::vector<std::string>{"a", "b", "a"}, std::vector<std::string>{}, "'a' appears twice"},
        std::tuple{std::vector<std::string>{"a", "b\xC3", "c"}, std::vector<std::string>{}, "not valid UTF-8"},
        std::tuple{std::vector<std::string>{"a", "b", "c"}, std::vector<std::string>{"a \xFF"}, "not valid UTF-8"}}) {
    try {
      (void)rebuilt(bad_tokens, std::vector<int32_t>(bad_tokens.size(), 1), bad_merges);
      ADD_FAILURE() << message;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace verdict::formats
