// round4, softmax and the answer shapes of clef-decision.md §8 / systemone-api.md §8.
#include "decision/answers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "decision/render.h"

namespace verdict::decision {
namespace {

TEST(Round, PythonRoundSemantics) {
  EXPECT_EQ(round4(0.03125), 0.0312);  // exact tie → even
  EXPECT_EQ(round4(0.03135), 0.0314);  // 0.03135 is above the tie in binary
  EXPECT_EQ(round4(0.00015), 0.0001);  // just below the tie in binary
  EXPECT_EQ(round4(0.9763104915618896), 0.9763);
  EXPECT_EQ(round4(1.2239282727241516), 1.2239);
  EXPECT_EQ(round4(0.99995), 1.0);
  EXPECT_EQ(round4(1.0), 1.0);
  EXPECT_EQ(round4(0.0), 0.0);
  EXPECT_TRUE(std::signbit(round4(-0.00001)));
  EXPECT_EQ(round4(-0.00001), 0.0);
  EXPECT_EQ(round4(2.5e10), 2.5e10);
  EXPECT_EQ(round4(1e300), 1e300);
  EXPECT_EQ(round_decimals(48.25, 1), 48.2);
  EXPECT_EQ(round_decimals(48.35, 1), 48.4);  // 48.35 is above the tie in binary
  EXPECT_TRUE(std::isnan(round4(std::nan(""))));
  EXPECT_EQ(format_float(round4(0.9659035801887512)), "0.9659");
  EXPECT_EQ(format_float(round4(0.019429918378591537)), "0.0194");
  EXPECT_EQ(format_float(round4(0.01466647069901228)), "0.0147");
}

TEST(Round, AgreesWithGlibcPrintf) {
  // glibc formats exactly under round-to-nearest; an independent implementation of the same rule.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 100000; ++i) {
    double x = unit(rng);
    if (i % 3 == 0) x = std::ldexp(std::floor(std::ldexp(x, 20)), -20);  // many exact binary ties
    if (i % 5 == 0) x *= 100.0;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f", x);
    ASSERT_EQ(round4(x), std::strtod(buf, nullptr)) << buf;
  }
}

TEST(Softmax, Fp32WithMaxSubtraction) {
  const std::vector<double> p = softmax_f32(std::vector<double>{1000.0, 1000.0});
  EXPECT_EQ(p[0], 0.5);
  EXPECT_EQ(p[1], 0.5);
  EXPECT_EQ(softmax_f32(std::vector<double>{3.7}), (std::vector<double>{1.0}));
  const std::vector<double> q = softmax_f32(std::vector<double>{0.0, std::log(3.0)});
  EXPECT_NEAR(q[0], 0.25, 1e-7);
  EXPECT_EQ(q[0], static_cast<double>(static_cast<float>(q[0])));  // values are fp32
}

DecisionRequest sample_request() {
  const Value body = read_json(R"({"model":"clef","state":"s","questions":{
      "large":{"type":"noul"},
      "status":{"type":"choice","criteria":{"paid":"p","overdue":"o","draft":"d"}},
      "urgency":{"type":"score","criteria":["Can wait",{"n":1.0},null]}}})");
  return build_request(body, RequestLimits{}, MediaSupport{}, "clef");
}

TEST(Answers, WorkedExampleOfTheSpec) {
  const DecisionRequest req = sample_request();
  // Head order: noul true/false; choice draft, overdue, paid; score 0, 1, 2.
  const std::vector<std::vector<double>> p = {{0.9763104915618896, 0.023689471185207367},
                                              {0.01466647069901228, 0.9659035801887512, 0.019429918378591537},
                                              {0.13032102584838867, 0.515429675579071, 0.3542492985725403}};
  const Value a = build_answers(req, p);
  EXPECT_EQ(
      write_json(a, false),
      R"({"large":{"type":"noul","noul":0.9763},)"
      R"("status":{"type":"choice","choice":"overdue","confidence":0.9659,"probabilities":{"paid":0.0194,"overdue":0.9659,"draft":0.0147}},)"
      R"("urgency":{"type":"score","score":1.2239,"confidence":0.5154,"legend":{"0":"Can wait","1":{"n":1.0},"2":null},"probabilities":{"0":0.1303,"1":0.5154,"2":0.3542}}})");
}

TEST(Answers, TiesGoToTheEarliestKeyInRequestOrder) {
  const DecisionRequest req = sample_request();
  const std::vector<std::vector<double>> p = {
      {0.5, 0.5}, {1.0 / 3, 1.0 / 3, 1.0 / 3}, {1.0 / 3, 1.0 / 3, 1.0 / 3}};
  const Value a = build_answers(req, p);
  EXPECT_EQ(a.find("status")->find("choice")->as_string(), "paid");  // head order would say "draft"
  EXPECT_EQ(write_json(*a.find("urgency")->find("score"), false), "1.0");
  EXPECT_EQ(write_json(*a.find("large")->find("noul"), false), "0.5");
}

TEST(Answers, NonFiniteProbabilitiesAreAnInternalFault) {
  const DecisionRequest req = sample_request();
  const std::vector<std::vector<double>> p = {{NAN, 0.5}, {0.2, 0.3, 0.5}, {0.2, 0.3, 0.5}};
  try {
    build_answers(req, p, "req_abc");
    ADD_FAILURE();
  } catch (const DecisionError& e) {
    EXPECT_EQ(e.status(), 500);
    EXPECT_EQ(e.type(), "server_error");
    EXPECT_EQ(e.code(), "non_finite_output");
    EXPECT_STREQ(e.what(), "internal server error: non-finite scores (request id req_abc)");
  }
}

TEST(Usage, FieldOrderAndRounding) {
  Usage u;
  u.input_tokens = 291;
  EXPECT_EQ(write_json(usage_value(u), false), R"({"input_tokens":291,"output_tokens":0})");
  u.latency_ms = 48.26;
  u.cached_tokens = 0;
  u.truncated_tokens = 5;
  EXPECT_EQ(
      write_json(usage_value(u), false),
      R"({"input_tokens":291,"output_tokens":0,"latency_ms":48.3,"cached_tokens":0,"truncated_tokens":5})");
  u.latency_ms = 112.0;
  u.truncated_tokens.reset();
  EXPECT_EQ(
      response_json("clef-flash", Value::object(), u),
      R"({"model":"clef-flash","answers":{},"usage":{"input_tokens":291,"output_tokens":0,"latency_ms":112.0,"cached_tokens":0}})");
}

TEST(Errors, BodiesAndTypes) {
  const DecisionError e(413, "context_length_exceeded", "maximum context length exceeded: a \"b\"");
  EXPECT_EQ(
      e.body(),
      R"({"error":{"message":"maximum context length exceeded: a \"b\"","type":"invalid_request_error","code":"context_length_exceeded"}})");
  EXPECT_EQ(error_type_for(404, "model_not_found"), "invalid_request_error");
  EXPECT_EQ(error_type_for(404, "not_found"), "not_found_error");
  EXPECT_EQ(error_type_for(401, "missing_api_key"), "authentication_error");
  EXPECT_EQ(error_type_for(405, "method_not_allowed"), "invalid_request_error");
  EXPECT_EQ(error_type_for(429, "queue_full"), "rate_limit_error");
  EXPECT_EQ(error_type_for(503, "server_starting"), "unavailable_error");
  EXPECT_EQ(error_type_for(500, "internal_error"), "server_error");
}

}  // namespace
}  // namespace verdict::decision
