// Every case of fixtures/clef-tiny/cases.json posted over HTTP to a server that registers the
// checkpoint as clef-tiny and clef-tiny-short (max length 480), as the fixture's README says.
#include <gtest/gtest.h>

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
