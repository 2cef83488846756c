// `verdict chat` on the random-weight fixture checkpoint: the templated prompt is the one the
// template's source says, greedy chat ids equal `verdict generate`'s greedy ids for that prompt,
// streaming prints what --json reports, and the interactive mode reads turns from stdin.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/json.h"
#include "support/fixtures.h"
#include "support/process.h"

namespace verdict {
namespace {

using testing::fixture;
using testing::id_list;
using testing::run_process;
using testing::verdict_bin;

// Ids the fixture tokenizer can decode: one past the largest vocabulary or added-token id.
int64_t tokenizer_ids() {
  const Json t = load_json_file(fixture("qwen35-tiny/tokenizer.json"));
  int64_t top = 0;
  for (const auto& [piece, id] : t["model"]["vocab"].items()) top = std::max<int64_t>(top, id.get<int64_t>());
  for (const auto& a : t["added_tokens"]) top = std::max<int64_t>(top, a["id"].get<int64_t>());
  return top + 1;
}

Json tokenize(const std::string& text) {
  const auto r = run_process(verdict_bin(), {"tokenize", "--model", fixture("qwen35-tiny")}, text);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return parse_json(r.out, "tokenize output");
}

Json chat_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"chat", "--model", fixture("qwen35-tiny"), "-p", "Hello world", "--temperature",
                                   "0",    "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_process(verdict_bin(), args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return parse_json(r.out, "chat output");
}

TEST(ChatCli, GreedyIdsEqualVerdictGenerateOnTheTemplatedPrompt) {
  for (const bool think : {true, false}) {
    SCOPED_TRACE(think ? "thinking" : "--no-think");
    // The fixture template (tokenizer_config.json): '<|im_start|>' + role + '\n' + content + '<|im_end|>\n'
    // per message, then '<|im_start|>assistant\n' and '<think>\n' (or '<think>\n\n</think>\n\n').
    const std::string prompt = std::string("<|im_start|>user\nHello world<|im_end|>\n<|im_start|>assistant\n") +
                               (think ? "<think>\n" : "<think>\n\n</think>\n\n");
    const Json out = chat_json(think ? std::vector<std::string>{"--max-tokens", "32"}
                                     : std::vector<std::string>{"--max-tokens", "32", "--no-think"});
    EXPECT_EQ(out["prompt_ids"], tokenize(prompt));

    const auto g = run_process(verdict_bin(), {"generate", "--model", fixture("qwen35-tiny"), "--tokens",
                                               id_list(out["prompt_ids"]), "--max-tokens", "32", "--stop-at-eos"});
    ASSERT_EQ(g.exit_code, 0) << g.err;
    const Json want = parse_json(g.out, "generate output")["ids"];
    const Json& got = out["ids"];
    // `generate` takes the argmax over every embedding row; chat only over ids the tokenizer has
    // (this random model's padded rows can win). Compare up to the first such id.
    const int64_t limit = tokenizer_ids();
    std::size_t comparable = 0;
    while (comparable < want.size() && want[comparable].get<int64_t>() < limit) ++comparable;
    ASSERT_TRUE(comparable == want.size() || comparable >= 8) << "too few comparable ids: " << want.dump();
    ASSERT_GE(got.size(), comparable);
    for (std::size_t i = 0; i < comparable; ++i) EXPECT_EQ(got[i], want[i]) << "id " << i;
    for (const auto& id : got) EXPECT_LT(id.get<int64_t>(), limit);
    EXPECT_EQ(out["usage"]["prompt_tokens"], out["prompt_ids"].size());
    EXPECT_EQ(out["usage"]["completion_tokens"], got.size());
  }
}

TEST(ChatCli, StreamingPrintsWhatJsonReports) {
  const Json out = chat_json({"--max-tokens", "20"});
  EXPECT_EQ(out["finish_reason"], "length");
  const auto r = run_process(verdict_bin(), {"chat", "--model", fixture("qwen35-tiny"), "-p", "Hello world",
                                             "--temperature", "0", "--max-tokens", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Not a terminal: the answer on stdout, the reasoning on stderr, each closed by a newline.
  EXPECT_EQ(r.out, out["content"].get<std::string>() + "\n");
  const std::string reasoning = out["reasoning_content"].get<std::string>();
  EXPECT_EQ(r.err, reasoning.empty() ? "" : reasoning + "\n");
}

TEST(ChatCli, SeededSamplingIsReproducible) {
  const Json a = chat_json({"--temperature", "0.9", "--seed", "11", "--max-tokens", "16"});
  const Json b = chat_json({"--temperature", "0.9", "--seed", "11", "--max-tokens", "16"});
  EXPECT_EQ(a["ids"], b["ids"]);
}

TEST(ChatCli, InteractiveReadsTurnsFromStdin) {
  const auto one = run_process(verdict_bin(),
                               {"chat", "--model", fixture("qwen35-tiny"), "--temperature", "0", "--max-tokens", "12"},
                               "Hello world\n/exit\n");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto shot = run_process(verdict_bin(), {"chat", "--model", fixture("qwen35-tiny"), "-p", "Hello world",
                                                "--temperature", "0", "--max-tokens", "12"});
  EXPECT_EQ(one.out, shot.out);  // the first turn is the one-shot answer
  const auto two = run_process(
      verdict_bin(),
      {"chat", "--model", fixture("qwen35-tiny"), "--temperature", "0", "--max-tokens", "12", "--system", "Be brief."},
      "Hi\n\nAgain\n/reset\nOnce more\n");
  EXPECT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(std::count(two.out.begin(), two.out.end(), '\n'), 3);  // three answers, each one line
}

TEST(ChatCli, UsageErrors) {
  EXPECT_EQ(run_process(verdict_bin(), {"chat"}).exit_code, 2);
  EXPECT_EQ(run_process(verdict_bin(), {"chat", "--model", fixture("qwen35-tiny"), "--json"}).exit_code, 2);
  EXPECT_EQ(run_process(verdict_bin(), {"chat", "--model", fixture("qwen35-tiny"), "-p", "x", "--temperature", "-1"})
                .exit_code,
            2);
  EXPECT_EQ(run_process(verdict_bin(), {"chat", "--model", fixture("qwen35-tiny"), "stray"}).exit_code, 2);
  const auto help = run_process(verdict_bin(), {"chat", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: verdict chat --model DIR"), std::string::npos);
  const auto decision = run_process(verdict_bin(), {"chat", "--model", fixture("clef-tiny/f32"), "-p", "x"});
  EXPECT_EQ(decision.exit_code, 1);
  EXPECT_NE(decision.err.find("decision model"), std::string::npos);
}

TEST(ChatCli, AGgufFileChatsLikeItsCheckpointFolder) {
  // The fixture's F32 GGUF holds the same weights; its chat template and tokenizer come from the file
  // (the tokenizer.json beside it wins, docs/gguf.md).
  const std::vector<std::string> common = {"-p", "Hello world", "--temperature", "0", "--max-tokens", "6", "--json"};
  std::vector<std::string> folder = {"chat", "--model", fixture("qwen35-tiny")};
  std::vector<std::string> gguf = {"chat", "--model", fixture("qwen35-tiny/model-f32.gguf")};
  folder.insert(folder.end(), common.begin(), common.end());
  gguf.insert(gguf.end(), common.begin(), common.end());
  const auto a = run_process(verdict_bin(), folder);
  const auto b = run_process(verdict_bin(), gguf);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const Json ja = parse_json(a.out, "folder chat"), jb = parse_json(b.out, "gguf chat");
  EXPECT_EQ(ja["prompt_ids"], jb["prompt_ids"]);
  EXPECT_EQ(ja["ids"], jb["ids"]);
}

}  // namespace
}  // namespace verdict
