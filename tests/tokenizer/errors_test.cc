// Malformed or unsupported tokenizer.json files fail to load with a verdict::Error naming the file and
// the problem; bad ids fail to decode.
#include <gtest/gtest.h>

#include "core/error.h"
#include "test_tokenizers.h"

namespace verdict::tokenizer {
namespace {

using testing::tiny_json;

const char* kModel = R"("vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]])";

// Loading `json` throws a verdict::Error whose message contains every one of `parts`.
void expect_error(const std::string& json, std::initializer_list<std::string> parts) {
  try {
    (void)Tokenizer::from_json(json, "broken/tokenizer.json");
    ADD_FAILURE() << "no error for " << json;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("broken/tokenizer.json"), std::string::npos) << message;
    for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

TEST(LoadErrors, BadJson) { expect_error(R"({"model": )", {"invalid JSON"}); }

TEST(LoadErrors, DeepNesting) {
  expect_error(R"({"normalizer": )" + std::string(600, '[') + std::string(600, ']') + "}", {"nesting"});
}

TEST(LoadErrors, MissingModel) { expect_error(R"({"version": "1.0", "normalizer": null})", {"model"}); }

TEST(LoadErrors, UnsupportedParts) {
  expect_error(tiny_json(kModel, "[]", "null", R"({"type": "Frobnicate"})"), {"pre_tokenizer", "Frobnicate"});
  expect_error(tiny_json(kModel, "[]", R"({"type": "BertNormalizer"})"), {"normalizer", "BertNormalizer"});
  expect_error(tiny_json(kModel, "[]", "null", "null", R"({"type": "WordPiece"})"), {"decoder", "WordPiece"});
  expect_error(R"({"model": {"type": "Unigram", "vocab": []}})", {"Unigram"});
  expect_error(tiny_json(kModel, "[]", "null",
                         R"({"type": "Split", "pattern": {"Regex": "x"}, "behavior": "Sideways", "invert": false})"),
               {"Sideways"});
}

TEST(LoadErrors, BadRegex) {
  expect_error(tiny_json(kModel, "[]", "null",
                         R"({"type": "Split", "pattern": {"Regex": "(ab"}, "behavior": "Isolated", "invert": false})"),
               {"invalid regex", "(ab"});
}

TEST(LoadErrors, DropoutIsRefused) {
  expect_error(tiny_json(std::string(kModel) + R"(, "dropout": 0.1)"), {"dropout"});
  EXPECT_NO_THROW((void)Tokenizer::from_json(tiny_json(std::string(kModel) + R"(, "dropout": null)"), "ok.json"));
}

TEST(LoadErrors, MergesMustUseVocabularyTokens) {
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "zz"]])"), {"merge 0", "'zz'"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]])"), {"'ab'"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b c"])"), {"merge 0"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [42])"), {"merge 0"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"], ["a", "b", "c"]])"), {"merge 1"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", 1]])"), {"merge 0"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [{"a": "b"}])"), {"merge 0"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": 1, "ab": 2}, "merges": "a b")"), {"merges"});
}

TEST(LoadErrors, BadVocabularyAndAddedTokens) {
  expect_error(tiny_json(R"("vocab": {"a": -1}, "merges": [])"), {"'a'"});
  expect_error(tiny_json(R"("vocab": ["a"], "merges": [])"), {"vocab"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": "one"}, "merges": [])"), {"'b'"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": [1]}, "merges": [])"), {"'b'"});
  expect_error(tiny_json(R"("vocab": {"a": 0, "b": 1.5}, "merges": [])"), {"'b'"});
  expect_error(tiny_json(kModel, R"([{"id": 5}])"), {"added_tokens[0]", "content"});
  expect_error(tiny_json(kModel, R"([{"content": "x"}])"), {"added_tokens[0]", "id"});
  expect_error(tiny_json(std::string(kModel) + R"(, "unk_token": "<unk>")"), {"unk_token"});
}

TEST(LoadErrors, MissingFileIsNamed) {
  try {
    (void)Tokenizer::from_file("/nonexistent/dir/tokenizer.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/tokenizer.json"), std::string::npos) << e.what();
  }
}

TEST(DecodeErrors, UnknownIdsThrow) {
  const Tokenizer tok = Tokenizer::from_json(tiny_json(kModel), "ok.json");
  EXPECT_EQ(tok.decode(std::vector<TokenId>{2, 0}), "ab a");
  EXPECT_THROW((void)tok.decode(std::vector<TokenId>{3}), Error);
  EXPECT_THROW((void)tok.decode(std::vector<TokenId>{-5}), Error);
  EXPECT_THROW((void)tok.token_bytes(99), Error);
  EXPECT_EQ(tok.id_to_token(99), "");
  EXPECT_FALSE(tok.is_special(99));
  EXPECT_EQ(tok.token_to_id("zz"), std::nullopt);
}

}  // namespace
}  // namespace verdict::tokenizer
