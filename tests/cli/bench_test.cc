// `verdict bench`: the JSON external checks read, and its usage errors.
#include <gtest/gtest.h>

#include "core/json.h"
#include "support/fixtures.h"
#include "support/process.h"

namespace verdict {
namespace {

using testing::fixture;
using testing::run_process;
using testing::verdict_bin;

TEST(Bench, JsonReportsBothRates) {
  for (const std::string& model : {fixture("qwen35-tiny"), fixture("qwen35-tiny/model-f32.gguf")}) {
    const auto r = run_process(verdict_bin(), {"bench", "--model", model, "--n-prompt", "32", "--n-gen", "4",
                                               "--repetitions", "2", "--threads", "1", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json out = parse_json(r.out, "bench output");
    ASSERT_TRUE(out.is_object()) << r.out;
    EXPECT_EQ(out.size(), 2u) << r.out;
    EXPECT_GT(out.at("prompt_tokens_per_s").get<double>(), 0) << r.out;
    EXPECT_GT(out.at("gen_tokens_per_s").get<double>(), 0) << r.out;
  }
}

TEST(Bench, TextAndSkippedTests) {
  const auto r = run_process(verdict_bin(), {"bench", "--model", fixture("qwen35-tiny"), "--n-prompt", "0", "--n-gen",
                                             "3", "--repetitions", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("pp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tg3"), std::string::npos) << r.out;
}

TEST(Bench, UsageErrorsExitTwo) {
  EXPECT_EQ(run_process(verdict_bin(), {"bench"}).exit_code, 2);
  EXPECT_EQ(run_process(verdict_bin(), {"bench", "--model", fixture("qwen35-tiny"), "--n-prompt", "0", "--n-gen", "0"}).exit_code, 2);
  EXPECT_EQ(run_process(verdict_bin(), {"bench", "--model", fixture("qwen35-tiny"), "--repetitions", "0"}).exit_code, 2);
  EXPECT_EQ(run_process(verdict_bin(), {"bench", "--model", "/nonexistent"}).exit_code, 1);
}

}  // namespace
}  // namespace verdict
