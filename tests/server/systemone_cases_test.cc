// Every case of fixtures/clef-tiny/cases.json posted over HTTP to a server that registers the
// checkpoint as clef-tiny and clef-tiny-short (max length 480), as the fixture's README says.
#include <gtest/gtest.h>

#include "support/scoped_env.h"
#include "test_server.h"

namespace verdict::server::testing {
namespace {

class SystemOneCases : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new TestServer(clef_tiny_registry(), test_server_options()); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static TestServer* server_;
};

TestServer* SystemOneCases::server_ = nullptr;

TEST_F(SystemOneCases, EveryFixtureCaseOverHttp) {
  const OrderedJson& cases = clef_tiny_cases().at("cases");
  ASSERT_EQ(cases.size(), 34u);
  httplib::Client client = server_->client();
  for (const OrderedJson& c : cases) {
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const auto res = post_systemone(client, c.at("request_json").get<std::string>());
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    const OrderedJson& expected = c.at("expected");
    ASSERT_EQ(res->status, expected.at("status").get<int>()) << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    EXPECT_TRUE(res->has_header("x-request-id"));
    if (res->status == 200) {
      const OrderedJson& want = expected.at("response");
      EXPECT_EQ(comparable_response(res->body), want) << res->body;
    } else {
      const OrderedJson got = OrderedJson::parse(res->body);
      ASSERT_EQ(got.size(), 1u);
      const OrderedJson& error = got.at("error");
      EXPECT_EQ(error.at("message"), expected.at("error").at("message").get<std::string>());
      EXPECT_EQ(error.at("type"), expected.at("error").at("type").get<std::string>());
      EXPECT_EQ(error.at("code"), expected.at("error").at("code").get<std::string>());
      EXPECT_EQ(got.dump(), R"({"error":{"message":)" + OrderedJson(error.at("message")).dump() + R"(,"type":)" +
                                OrderedJson(error.at("type")).dump() + R"(,"code":)" + OrderedJson(error.at("code")).dump() + "}}");
    }
  }
}

// Every number of `got` within `tolerance` of `want`, everything else equal (same members, same strings).
void expect_close(const OrderedJson& got, const OrderedJson& want, double tolerance, const std::string& where) {
  if (want.is_number_float()) {
    ASSERT_TRUE(got.is_number()) << where;
    EXPECT_NEAR(got.get<double>(), want.get<double>(), tolerance) << where;
  } else if (want.is_object()) {
    ASSERT_TRUE(got.is_object()) << where;
    ASSERT_EQ(got.size(), want.size()) << where;
    for (const auto& [key, value] : want.items()) {
      ASSERT_TRUE(got.contains(key)) << where << "." << key;
      expect_close(got.at(key), value, tolerance, where + "." + key);
    }
  } else {
    EXPECT_EQ(got, want) << where;
  }
}

// The fixture's answers come from exact fp32 activations (the tests' VERDICT_PACK=0). The default packed
// backbone rounds activations to bf16, as the reference's bf16 backbone does: its probabilities stay within
// the spec's end-to-end tolerance (abs ≤ 0.01 per probability, clef-decision.md §7), with the same choices.
TEST(SystemOneCasesPacked, TheDefaultPackedBackboneStaysWithinTheSpecTolerance) {
  const verdict::testing::ScopedEnv packed("VERDICT_PACK", nullptr);
  TestServer server(clef_tiny_registry(), test_server_options());
  httplib::Client client = server.client();
  int compared = 0;
  for (const OrderedJson& c : clef_tiny_cases().at("cases")) {
    const OrderedJson& expected = c.at("expected");
    if (expected.at("status").get<int>() != 200) continue;
    const std::string name = c.at("name").get<std::string>();
    const auto res = post_systemone(client, c.at("request_json").get<std::string>());
    ASSERT_TRUE(res) << name;
    ASSERT_EQ(res->status, 200) << name << ": " << res->body;
    expect_close(comparable_response(res->body), expected.at("response"), 0.01, name);
    ++compared;
  }
  EXPECT_GE(compared, 20);
}

TEST_F(SystemOneCases, MemberOrderOfTheEnvelopeAndUsage) {
  httplib::Client client = server_->client();
  const OrderedJson& c = clef_tiny_cases().at("cases").at(0);
  const auto res = post_systemone(client, c.at("request_json").get<std::string>());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const OrderedJson j = OrderedJson::parse(res->body);
  std::vector<std::string> keys, usage;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  for (const auto& [k, v] : j.at("usage").items()) usage.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"model", "answers", "usage"}));
  EXPECT_EQ(usage, (std::vector<std::string>{"input_tokens", "output_tokens", "latency_ms", "cached_tokens"}));
  EXPECT_EQ(j.at("usage").at("cached_tokens"), 0);
  EXPECT_EQ(j.at("usage").at("output_tokens"), 0);
}

TEST_F(SystemOneCases, CurlShapedRequestWithAFormContentType) {
  // `curl -d` sends application/x-www-form-urlencoded; the body is JSON all the same (§2.1).
  httplib::Client client = server_->client();
  const std::string body =
      R"({"model": "default", "state": "The color is red.", "questions": {"warmup": {"type": "choice", "criteria": {"red": "Red", "blue": "Blue"}}}})";
  const auto res = client.Post("/v1/systemone", body, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const OrderedJson j = OrderedJson::parse(res->body);
  EXPECT_EQ(j.at("model"), "clef-tiny");
  EXPECT_EQ(j.at("answers").at("warmup").at("type"), "choice");
}

}  // namespace
}  // namespace verdict::server::testing
