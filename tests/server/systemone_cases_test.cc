// Every case of fixtures/clef-tiny/cases.json posted over HTTP to a server that registers the
// checkpoint as clef-tiny and clef-tiny-short (max length 480), as the fixture's README says.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include "models/qwen35/gguf_export.h"
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

// Posts every fixture case. A case the fixture refuses must get its status and error message; for one it
// answers, the comparable response, the expected one and the case name go to `check`. Returns how many
// were answered.
int for_each_case(httplib::Client& client,
                  const std::function<void(const OrderedJson&, const OrderedJson&, const std::string&)>& check) {
  int answered = 0;
  for (const OrderedJson& c : clef_tiny_cases().at("cases")) {
    const OrderedJson& expected = c.at("expected");
    const std::string name = c.at("name").get<std::string>();
    const auto res = post_systemone(client, c.at("request_json").get<std::string>());
    if (!res || res->status != expected.at("status").get<int>()) {
      ADD_FAILURE() << name << ": " << (res ? res->body : httplib::to_string(res.error()));
      continue;
    }
    if (res->status != 200) {
      EXPECT_EQ(OrderedJson::parse(res->body).at("error").at("message"), expected.at("error").at("message")) << name;
      continue;
    }
    check(comparable_response(res->body), expected.at("response"), name);
    ++answered;
  }
  return answered;
}

// The fixture's answers come from exact fp32 activations (the tests' VERDICT_PACK=0). The default packed
// backbone rounds activations to bf16, as the reference's bf16 backbone does: its probabilities stay within
// the spec's end-to-end tolerance (abs ≤ 0.01 per probability, clef-decision.md §7), with the same choices.
TEST(SystemOneCasesPacked, TheDefaultPackedBackboneStaysWithinTheSpecTolerance) {
  const verdict::testing::ScopedEnv packed("VERDICT_PACK", nullptr);
  TestServer server(clef_tiny_registry(), test_server_options());
  httplib::Client client = server.client();
  const int compared = for_each_case(client, [](const OrderedJson& got, const OrderedJson& want, const std::string& name) {
    expect_close(got, want, 0.01, name);
  });
  EXPECT_GE(compared, 20);
}

// A decision folder whose backbone is clef-tiny converted to a GGUF file of `type`, beside copies of the
// joint head and nothing else: no config.json and no tokenizer.json, so the encoder tokenizes with the
// tokenizer the GGUF metadata describes (docs/gguf.md, "Decision models with a GGUF backbone").
class GgufDecisionFolder {
 public:
  GgufDecisionFolder(formats::GgmlType type, const std::string& tag)
      : dir_(::testing::TempDir() + "/clef_tiny_" + tag + "_" + std::to_string(::getpid())) {
    std::filesystem::create_directories(dir_);
    models::qwen35::GgufExportOptions options;
    options.type = type;
    models::qwen35::export_gguf(clef_tiny_dir(), dir_ + "/backbone.gguf", options);
    for (const char* file : {"joint_head.safetensors", "joint_head_config.json"})
      std::filesystem::copy_file(clef_tiny_dir() + "/" + file, dir_ + "/" + file,
                                 std::filesystem::copy_options::overwrite_existing);
  }
  ~GgufDecisionFolder() { std::filesystem::remove_all(dir_); }
  GgufDecisionFolder(const GgufDecisionFolder&) = delete;
  GgufDecisionFolder& operator=(const GgufDecisionFolder&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// An F32 GGUF holds the bf16 checkpoint's weights exactly, so with exact activations (the tests'
// VERDICT_PACK=0) every case gets the fixture's answer: same token counts (the GGUF tokenizer metadata
// encodes the records as tokenizer.json does), probabilities within one step of round4 (1e-4), the same
// errors.
TEST(SystemOneCasesGguf, AnF32GgufBackboneAnswersEveryCaseAsTheCheckpoint) {
  const GgufDecisionFolder folder(formats::GgmlType::F32, "f32");
  TestServer server(clef_tiny_registry(folder.dir()), test_server_options());
  httplib::Client client = server.client();
  const int answered = for_each_case(client, [](const OrderedJson& got, const OrderedJson& want, const std::string& name) {
    expect_close(got, want, 1.0001e-4, name);
  });
  EXPECT_GE(answered, 20);
  // /v1/models dates the model by its .gguf file.
  const auto models = client.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_GT(OrderedJson::parse(models->body).at("data").at(0).at("created").get<int64_t>(), 0) << models->body;
}

// The spec's acceptance check for a quantized backbone (clef-decision.md §7): abs ≤ 0.14 per probability
// (so also per confidence, the largest one, and per score, Σ k · p_k, within 0.14 · Σ k), top-1 reported,
// not required. Everything else (types, legends, usage token counts) equal. Returns whether the
// choices agree.
bool expect_within_quantized_bound(const OrderedJson& got, const OrderedJson& want, const std::string& name) {
  constexpr double kBound = 0.14;
  bool same_top1 = true;
  EXPECT_EQ(got.at("usage"), want.at("usage")) << name;
  EXPECT_EQ(got.at("model"), want.at("model")) << name;
  const OrderedJson& answers = want.at("answers");
  EXPECT_EQ(got.at("answers").size(), answers.size()) << name;
  for (const auto& [question, w] : answers.items()) {
    const std::string where = name + "." + question;
    if (!got.at("answers").contains(question)) {
      ADD_FAILURE() << where << " missing";
      continue;
    }
    const OrderedJson& g = got.at("answers").at(question);
    EXPECT_EQ(g.size(), w.size()) << where;
    EXPECT_EQ(g.at("type"), w.at("type")) << where;
    const std::string type = w.at("type").get<std::string>();
    if (type == "noul") {
      EXPECT_NEAR(g.at("noul").get<double>(), w.at("noul").get<double>(), kBound) << where;
      same_top1 = same_top1 && (g.at("noul").get<double>() >= 0.5) == (w.at("noul").get<double>() >= 0.5);
      continue;
    }
    for (const auto& [option, p] : w.at("probabilities").items())
      EXPECT_NEAR(g.at("probabilities").at(option).get<double>(), p.get<double>(), kBound) << where << "." << option;
    EXPECT_NEAR(g.at("confidence").get<double>(), w.at("confidence").get<double>(), kBound) << where;
    const auto top1 = [](const OrderedJson& probabilities) {
      std::string best;
      double p = -1.0;
      for (const auto& [option, value] : probabilities.items())
        if (value.get<double>() > p) best = option, p = value.get<double>();
      return best;
    };
    same_top1 = same_top1 && top1(g.at("probabilities")) == top1(w.at("probabilities"));
    if (type == "choice") {
      EXPECT_EQ(g.at("choice").get<std::string>(), top1(g.at("probabilities"))) << where;
    } else {
      EXPECT_EQ(g.at("legend"), w.at("legend")) << where;
      double levels = 0.0;
      for (const auto& [level, text] : w.at("legend").items()) levels += std::fabs(std::stod(level));
      EXPECT_NEAR(g.at("score").get<double>(), w.at("score").get<double>(), kBound * levels) << where;
    }
  }
  return same_top1;
}

// A Q8_0 GGUF backbone on the default packed kernels, against the bf16 checkpoint's goldens.
TEST(SystemOneCasesGguf, AQ8_0GgufBackboneStaysWithinTheQuantizedTolerance) {
  const verdict::testing::ScopedEnv packed("VERDICT_PACK", nullptr);
  const GgufDecisionFolder folder(formats::GgmlType::Q8_0, "q8_0");
  TestServer server(clef_tiny_registry(folder.dir()), test_server_options());
  httplib::Client client = server.client();
  int agreeing = 0;
  const int compared = for_each_case(client, [&](const OrderedJson& got, const OrderedJson& want, const std::string& name) {
    agreeing += expect_within_quantized_bound(got, want, name) ? 1 : 0;
  });
  EXPECT_GE(compared, 20);
  std::printf("Q8_0 GGUF backbone: all answers of %d of %d cases keep the golden top-1\n", agreeing, compared);
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

// The prefix cache (--decision-cache, clef-decision.md §5): a record resumes at the end of the constant
// prefix or of a state sent before, reports it in usage.cached_tokens, and answers exactly as a server
// without a cache does.
TEST(SystemOnePrefixCache, RecordsResumeAtTheirSeamsWithTheAnswersOfAServerWithoutCache) {
  const auto body = [](const std::string& state, const std::string& questions) {
    return R"({"model":"clef-tiny","state":")" + state + R"(","questions":)" + questions + "}";
  };
  const std::string q1 = R"({"team":{"type":"choice","criteria":{"bill":"Billing","bug":"A defect"}}})";
  const std::string q2 = R"({"urgent":{"type":"noul"},"tone":{"type":"score","criteria":["calm","upset","furious"]}})";
  const std::string s1 = "The invoice was charged twice this month and nobody answers my emails.";
  const std::string s2 = "Dark mode, please.";
  const std::vector<std::string> bodies = {body(s1, q1), body(s1, q1), body(s1, q2), body(s2, q1), body(s2, q2)};

  registry::RegistryOptions no_cache = clef_tiny_registry();
  no_cache.decision_cache_bytes = 0;
  TestServer plain(std::move(no_cache), test_server_options());
  TestServer cached(clef_tiny_registry(), test_server_options());
  httplib::Client plain_client = plain.client(), client = cached.client();
  std::vector<int64_t> reused, input;
  for (const std::string& b : bodies) {
    const auto want = post_systemone(plain_client, b);
    const auto got = post_systemone(client, b);
    ASSERT_TRUE(want && got);
    ASSERT_EQ(got->status, 200) << got->body;
    const OrderedJson w = OrderedJson::parse(want->body), g = OrderedJson::parse(got->body);
    EXPECT_EQ(w.at("usage").at("cached_tokens"), 0);
    EXPECT_EQ(g.at("answers"), w.at("answers")) << b;
    reused.push_back(g.at("usage").at("cached_tokens").get<int64_t>());
    input.push_back(g.at("usage").at("input_tokens").get<int64_t>());
  }
  const int64_t prefix = reused[3];  // s2 is new: only the record prefix P was saved before
  EXPECT_GT(prefix, 0);
  EXPECT_EQ(reused[0], 0);                           // nothing saved yet
  EXPECT_GT(reused[1], prefix);                      // the same record: P and the state s1
  EXPECT_LT(reused[1], input[1]);                    // the schema is never saved (no seam after it)
  EXPECT_EQ(reused[2], reused[1]);                   // s1 with other questions: P and s1 again
  EXPECT_GT(reused[4], prefix);                      // s2 again, other questions

  const std::string metrics = cached.client().Get("/metrics")->body;
  EXPECT_NE(metrics.find("verdict_prefix_cache_hits_total{model=\"clef-tiny\"} 4"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("verdict_prefix_cache_entries{model=\"clef-tiny\"} 3"), std::string::npos) << metrics;
  EXPECT_NE(plain.client().Get("/metrics")->body.find("verdict_prefix_cache_hits_total{model=\"clef-tiny\"} 0"),
            std::string::npos);
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
