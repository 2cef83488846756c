// `verdict tokenize` as external conformance checks drive it: stdin -> JSON ids, --jsonl, --decode.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/json.h"
#include "core/mapped_file.h"
#include "support/fixtures.h"
#include "support/process.h"

namespace verdict {
namespace {

using testing::fixture;
using testing::run_process;
using testing::verdict_bin;

TEST(Tokenize, StdinTextGivesTheGoldenIds) {
  const Json cases = load_json_file(fixture("qwen35-tiny/tokenizer_cases.json"));
  ASSERT_GE(cases["cases"].size(), 14u);
  for (const auto& c : cases["cases"]) {
    const std::string text = c["text"];
    auto r = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny")}, text);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(parse_json(r.out, "output"), c["ids"]) << "text: " << text;
  }
}

TEST(Tokenize, JsonlMatchesTheQwen3Cases) {
  std::ifstream in(fixture("qwen3-tokenizer/cases.jsonl"));
  ASSERT_TRUE(in);
  std::string input, line;
  std::vector<Json> expected;
  while (std::getline(in, line) && expected.size() < 300) {
    const Json c = parse_json(line, "cases.jsonl");
    input += Json{{"text", c["text"]}}.dump() + "\n";
    expected.push_back(c["ids"]);
  }
  auto r = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen3-tokenizer"), "--jsonl"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream out(r.out);
  std::size_t i = 0;
  while (std::getline(out, line)) {
    ASSERT_LT(i, expected.size());
    EXPECT_EQ(parse_json(line, "output")["ids"], expected[i]) << "case " << i;
    ++i;
  }
  EXPECT_EQ(i, expected.size());
}

TEST(Tokenize, DecodeReversesEncode) {
  const std::string text = "¿Qué tal? 日本語 <|im_start|>user\n";
  auto enc = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny")}, text);
  ASSERT_EQ(enc.exit_code, 0) << enc.err;
  auto dec = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny"), "--decode"}, enc.out);
  ASSERT_EQ(dec.exit_code, 0) << dec.err;
  EXPECT_EQ(dec.out, text);
  auto jl = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny"), "--decode", "--jsonl"},
                        "{\"ids\":" + enc.out.substr(0, enc.out.find('\n')) + "}\n");
  ASSERT_EQ(jl.exit_code, 0) << jl.err;
  EXPECT_EQ(parse_json(jl.out, "output")["text"], text);
}

TEST(Tokenize, SpecialTokensAreSingleIdsUnlessDisabled) {
  auto r = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny")}, "<|im_start|>");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse_json(r.out, "output"), Json::parse("[757]"));
  auto plain = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny"), "--no-special"},
                           "<|im_start|>");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_GT(parse_json(plain.out, "output").size(), 1u);
}

TEST(Tokenize, BadInputIsAnErrorNotACrash) {
  auto bad_json = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny"), "--jsonl"},
                              "{\"text\": 12}\n");
  EXPECT_EQ(bad_json.exit_code, 1);
  EXPECT_NE(bad_json.err.find("line 1"), std::string::npos) << bad_json.err;
  auto bad_id = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny"), "--decode"},
                            "[1, 99999]");
  EXPECT_EQ(bad_id.exit_code, 1);
  auto invalid_utf8 = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny")},
                                  std::string("a\xff\xfe b"));
  EXPECT_EQ(invalid_utf8.exit_code, 0) << invalid_utf8.err;
}

}  // namespace
}  // namespace verdict
