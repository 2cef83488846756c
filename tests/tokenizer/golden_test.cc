// Goldens: ids produced by Hugging Face tokenizers (and independent implementations agreeing with it).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "core/mapped_file.h"
#include "support/fixtures.h"
#include "test_tokenizers.h"

namespace verdict::tokenizer {
namespace {

using testing::qwen3;
using testing::qwen35_tiny;

struct Case {
  std::string text;
  std::vector<TokenId> ids;
};

std::vector<Case> load_jsonl(const std::string& path) {
  std::vector<Case> cases;
  std::istringstream in(read_text_file(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const Json j = Json::parse(line);
    cases.push_back({j.at("text").get<std::string>(), j.at("ids").get<std::vector<TokenId>>()});
  }
  return cases;
}

std::string show_ids(const std::vector<TokenId>& ids) {
  std::string s = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) s.push_back(',');
    s.append(std::to_string(ids[i]));
  }
  s.push_back(']');
  return s;
}

TEST(Qwen3Golden, AllCasesMatchHuggingFace) {
  const auto cases = load_jsonl(verdict::testing::fixture("qwen3-tokenizer/cases.jsonl"));
  ASSERT_EQ(cases.size(), 3000u);
  const Tokenizer& tok = qwen3();
  int mismatches = 0;
  for (const Case& c : cases) {
    const auto ids = tok.encode(c.text);
    if (ids != c.ids) {
      if (++mismatches <= 20)
        ADD_FAILURE() << "text " << Json(c.text).dump() << "\n expected " << show_ids(c.ids) << "\n got      "
                      << show_ids(ids);
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << cases.size() << " cases";
}

TEST(Qwen3Golden, DecodeOfEncodeIsTheNormalizedText) {
  const auto cases = load_jsonl(verdict::testing::fixture("qwen3-tokenizer/cases.jsonl"));
  const Tokenizer& tok = qwen3();
  int failures = 0;
  for (const Case& c : cases) {
    // The golden ids decode to the normalized text as well.
    const std::string expected = tok.normalize(c.text);
    if (tok.decode(tok.encode(c.text)) != expected || tok.decode(c.ids) != expected) {
      if (++failures <= 10) ADD_FAILURE() << "round trip differs for " << Json(c.text).dump();
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(Qwen3Golden, ConcurrentEncodesAgree) {
  // One tokenizer shared by several threads (as the server does): the word cache and the per-thread
  // regex state must not mix results up.
  const auto cases = load_jsonl(verdict::testing::fixture("qwen3-tokenizer/cases.jsonl"));
  const Tokenizer& tok = qwen3();
  constexpr int kThreads = 4;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Every thread walks all cases from a different starting point.
      for (std::size_t k = 0; k < cases.size(); ++k) {
        const Case& c = cases[(k + static_cast<std::size_t>(t) * 750) % cases.size()];
        if (tok.encode(c.text) != c.ids) ++mismatches[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[static_cast<std::size_t>(t)], 0) << "thread " << t;
}

TEST(Qwen3Golden, Sizes) {
  const Tokenizer& tok = qwen3();
  EXPECT_EQ(tok.model_vocab_size(), 151643u);
  EXPECT_EQ(tok.vocab_size(), 151669u);
  EXPECT_EQ(tok.token_to_id("<|im_start|>"), 151644);
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), 151643);
  EXPECT_EQ(tok.id_to_token(151645), "<|im_end|>");
  EXPECT_TRUE(tok.is_special(151645));
  EXPECT_FALSE(tok.is_special(151667));  // <think> is not special
  EXPECT_EQ(tok.added_tokens().size(), 26u);
  EXPECT_EQ(tok.normalizer_name(), "NFC");
  EXPECT_EQ(tok.pre_tokenizer_name(), "Sequence[Split,ByteLevel]");
  EXPECT_EQ(tok.model_type(), "BPE");
  EXPECT_EQ(tok.decoder_name(), "ByteLevel");
}

TEST(Qwen35Golden, TokenizerCasesMatchHuggingFace) {
  const Json doc = load_json_file(verdict::testing::fixture("qwen35-tiny/tokenizer_cases.json"));
  const Tokenizer& tok = qwen35_tiny();
  ASSERT_EQ(doc.at("cases").size(), 14u);
  for (const Json& c : doc.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    const auto expected = c.at("ids").get<std::vector<TokenId>>();
    const auto ids = tok.encode(text);
    EXPECT_EQ(show_ids(ids), show_ids(expected)) << "text " << Json(text).dump();
    EXPECT_EQ(tok.decode(ids), tok.normalize(text)) << "text " << Json(text).dump();
  }
}

TEST(Qwen35Golden, FixtureCheckpointsLoadAndRoundTrip) {
  const std::vector<std::string> folders = {"qwen35-tiny",       "qwen35-tiny-f32",  "qwen35-small",
                                            "qwen35-tiny-mlx4",  "qwen35-tiny-mlx8", "qwen35-small-mlx4",
                                            "clef-tiny/bf16",    "clef-tiny/f32"};
  const std::vector<std::string> texts = {"Hello world!", "Mañana 日本語 🙂", "<|im_start|>user\nhi<|im_end|>\n",
                                          "  x\r\n\ty  ", "e\xCC\x81t\xC3\xA9"};
  for (const std::string& folder : folders) {
    SCOPED_TRACE(folder);
    const Tokenizer tok = Tokenizer::from_file(verdict::testing::fixture(folder + "/tokenizer.json"));
    // Sizes and ids from the fixtures README.
    EXPECT_EQ(tok.model_vocab_size(), 756u);
    EXPECT_EQ(tok.vocab_size(), 765u);
    EXPECT_EQ(tok.token_to_id("<|endoftext|>"), 756);
    EXPECT_EQ(tok.token_to_id("<|im_start|>"), 757);
    EXPECT_EQ(tok.token_to_id("<|im_end|>"), 758);
    EXPECT_EQ(tok.token_to_id("<think>"), 759);
    EXPECT_EQ(tok.token_to_id("<|video_pad|>"), 764);
    EXPECT_TRUE(tok.is_special(757));
    EXPECT_FALSE(tok.is_special(759));
    EXPECT_FALSE(tok.is_special(760));
    EXPECT_EQ(tok.added_tokens().size(), 9u);
    EXPECT_EQ(tok.normalizer_name(), "NFC");
    EXPECT_EQ(tok.pre_tokenizer_name(), "Sequence[Split,ByteLevel]");
    for (const std::string& text : texts) {
      const auto ids = tok.encode(text);
      for (TokenId id : ids) EXPECT_LT(static_cast<std::size_t>(id), tok.vocab_size());
      EXPECT_EQ(tok.decode(ids), tok.normalize(text));
    }
    const auto chat = tok.encode("<|im_start|>user\nhi<|im_end|>\n");
    ASSERT_GE(chat.size(), 3u);
    EXPECT_EQ(chat.front(), 757);
  }
}

}  // namespace
}  // namespace verdict::tokenizer
