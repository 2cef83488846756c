// `verdict decide` end to end on the clef-tiny release-layout checkpoint: every case of
// clef-tiny/cases.json (float64 backbone + head reference), answers and usage exact, errors exact.
#include <gtest/gtest.h>

#include <fstream>

#include "core/json.h"
#include "support/fixtures.h"
#include "support/process.h"

namespace verdict {
namespace {

using testing::fixture;
using testing::run_process;
using testing::verdict_bin;

void run_cases(const std::string& checkpoint, std::size_t limit) {
  const Json cases = load_json_file(fixture("clef-tiny/cases.json"));
  ASSERT_GE(cases["cases"].size(), 30u);
  const std::string request_path = ::testing::TempDir() + "/decide_request.json";
  std::size_t answered = 0, refused = 0;
  for (const auto& c : cases["cases"]) {
    if (answered + refused >= limit) break;
    SCOPED_TRACE(c["name"].get<std::string>());
    {
      std::ofstream out(request_path, std::ios::binary);
      out << c["request_json"].get<std::string>();
    }
    auto r = run_process(verdict_bin(), {"decide", "--model", fixture(checkpoint), "--request", request_path,
                                         "--max-length", std::to_string(c["max_length"].get<int>())});
    const Json& expected = c["expected"];
    const Json body = parse_json(r.out, "decide output");
    if (expected["status"] == 200) {
      ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
      // verdict decide names the model itself; answers and usage are compared (fixtures README).
      EXPECT_EQ(body["answers"], expected["response"]["answers"]);
      const Json& want_usage = expected["response"]["usage"];
      for (const auto& [key, value] : want_usage.items()) EXPECT_EQ(body["usage"][key], value) << key;
      EXPECT_EQ(body["usage"].contains("truncated_tokens"), want_usage.contains("truncated_tokens"));
      ++answered;
    } else {
      EXPECT_EQ(r.exit_code, 1) << r.out;
      EXPECT_EQ(body["error"]["type"], expected["error"]["type"]);
      EXPECT_EQ(body["error"]["code"], expected["error"]["code"]);
      EXPECT_EQ(body["error"]["message"], expected["error"]["message"]);
      ++refused;
    }
  }
  EXPECT_GT(answered, 0u);
}

TEST(Decide, ClefTinyBf16AllCases) { run_cases("clef-tiny/bf16", 1000); }

TEST(Decide, ClefTinyF32FirstCases) { run_cases("clef-tiny/f32", 8); }

TEST(Decide, ShortcutFlagsAndChatModelRefusal) {
  auto r = run_process(verdict_bin(), {"decide", "--model", fixture("clef-tiny/bf16"), "--state", "El PDF no abre",
                                       "--questions", R"({"urgente": {"type": "noul"}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json body = parse_json(r.out, "decide output");
  const double p = body["answers"]["urgente"]["noul"].get<double>();
  EXPECT_GT(p, 0.0);
  EXPECT_LT(p, 1.0);
  auto chat = run_process(verdict_bin(), {"decide", "--model", fixture("qwen35-tiny"), "--state", "x",
                                          "--questions", R"({"a": {"type": "noul"}})"});
  EXPECT_EQ(chat.exit_code, 1);
  EXPECT_NE(chat.err.find("not a decision model"), std::string::npos) << chat.err;
}

}  // namespace
}  // namespace verdict
