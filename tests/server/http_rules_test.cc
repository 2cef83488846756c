// The common HTTP rules of systemone-api.md §2 and §9–§12 over real connections: routing (R1, R2),
// authentication (A1, A2), body rules (B0, B1), request ids, CORS, start-up and draining, overload
// (O1, O4), client disconnects, /v1/models, /health and /metrics.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "fake_step_models.h"
#include "prometheus_text.h"
#include "support/fixtures.h"
#include "server/request_id.h"
#include "test_server.h"

namespace verdict::server::testing {
namespace {

using engine::testing::Gate;
using engine::testing::GatedStepModel;


std::string error_code(const httplib::Result& res) { return OrderedJson::parse(res->body).at("error").at("code"); }

registry::RegistryOptions with_chat_model() {
  registry::RegistryOptions o = clef_tiny_registry();
  o.models.push_back({"qwen-chat", verdict::testing::fixture("qwen35-tiny"), registry::ModelKind::kChat});
  return o;
}

registry::RegistryOptions gated(const std::shared_ptr<Gate>& gate) {
  registry::RegistryOptions o = clef_tiny_registry();
  o.slots = 1;
  o.wrap_step_model = [gate](const std::string&, std::unique_ptr<engine::StepModel> inner) -> std::unique_ptr<engine::StepModel> {
    return std::make_unique<GatedStepModel>(std::move(inner), gate);
  };
  return o;
}

// `req_` followed by 24 lowercase hex digits.
bool is_generated_id(const std::string& id) {
  if (id.size() != 28 || id.rfind("req_", 0) != 0) return false;
  return id.find_first_not_of("0123456789abcdef", 4) == std::string::npos;
}

bool is_date(const std::string& d) {  // YYYY-MM-DD
  if (d.size() != 10 || d[4] != '-' || d[7] != '-') return false;
  for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u})
    if (d[i] < '0' || d[i] > '9') return false;
  return true;
}

TEST(Routing, UnknownPathsAndWrongMethodsAreJsonErrors) {
  TestServer server(clef_tiny_registry(), test_server_options());
  httplib::Client client = server.client();
  auto res = client.Get("/v2/nothing");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(res->body, R"({"error":{"message":"unknown endpoint: GET /v2/nothing","type":"not_found_error","code":"not_found"}})");

  res = client.Get("/v1/systemone");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "POST, OPTIONS");
  EXPECT_EQ(res->body,
            R"({"error":{"message":"method GET not allowed on /v1/systemone","type":"invalid_request_error","code":"method_not_allowed"}})");
  res = client.Delete("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "GET, HEAD, OPTIONS");
  res = client.Put("/v1/models", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  res = client.Post("/v1/models/clef-tiny/explode");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);

  const std::string trace = raw_exchange(server.port(), "TRACE /v1/systemone HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(trace.rfind("HTTP/1.1 405", 0), 0u) << trace;
  EXPECT_NE(trace.find(R"({"error":{"message":"method TRACE not allowed on /v1/systemone","type":"invalid_request_error","code":"method_not_allowed"}})"),
            std::string::npos) << trace;
  const std::string garbage = raw_exchange(server.port(), "HELLO\r\n\r\n", 300);
  EXPECT_NE(garbage.find("HTTP/1.1 400"), std::string::npos) << garbage;
  EXPECT_NE(garbage.find(R"("code":"invalid_request")"), std::string::npos) << garbage;
  const std::string long_path = raw_exchange(server.port(), "GET /" + std::string(4000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", 300);
  EXPECT_NE(long_path.find("HTTP/1.1 404"), std::string::npos);
}

TEST(Auth, KeysAreRequiredOnEveryRouteButHealth) {
  ServerOptions options = test_server_options();
  options.api_keys = {"key-one", "key-two"};
  TestServer server(clef_tiny_registry(), options);
  httplib::Client client = server.client();

  auto res = post_systemone(client, kNoul);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(res->body,
            R"({"error":{"message":"missing API key: send \"Authorization: Bearer <key>\"","type":"authentication_error","code":"missing_api_key"}})");
  res = post_systemone(client, kNoul, {{"Authorization", "Basic a2V5LW9uZQ=="}});
  ASSERT_TRUE(res);
  EXPECT_EQ(error_code(res), "missing_api_key");
  res = post_systemone(client, kNoul, {{"Authorization", "Bearer key-three"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->body, R"({"error":{"message":"invalid API key","type":"authentication_error","code":"invalid_api_key"}})");
  res = post_systemone(client, kNoul, {{"Authorization", "Bearer key-on"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(error_code(res), "invalid_api_key");
  res = post_systemone(client, kNoul, {{"Authorization", "bEaReR key-two"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;

  // A1/A2 come before the body rules and validation.
  res = post_systemone(client, "not json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);

  for (const char* path : {"/v1/models", "/v1/models/clef-tiny", "/metrics"}) {
    res = client.Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401) << path;
    res = client.Get(path, {{"Authorization", "Bearer key-one"}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << path;
  }
  res = client.Post("/v1/models/clef-tiny/load");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = client.Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = client.Options("/v1/systemone");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);  // preflight never needs a key
}

TEST(Auth, AuthorizationIsIgnoredWhenNoKeyIsConfigured) {
  TestServer server(clef_tiny_registry(), test_server_options());
  httplib::Client client = server.client();
  const auto res = post_systemone(client, kNoul, {{"Authorization", "Bearer whatever"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(Auth, ReadsKeyFiles) {
  char path[] = "/tmp/verdict-keys-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string text = "# keys\n  alpha  \n\nbeta\n";
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
  EXPECT_EQ(read_key_file(path), (std::vector<std::string>{"alpha", "beta"}));
  ::unlink(path);
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
  EXPECT_FALSE(constant_time_equal("", "a"));
}

TEST(BodyRules, OverLongBodiesAre413) {
  ServerOptions options = test_server_options();
  options.max_body_bytes = 1000;
  TestServer server(clef_tiny_registry(), options);
  httplib::Client client = server.client();
  const std::string too_large = R"({"error":{"message":"request body too large: maximum is 1000 bytes","type":"invalid_request_error","code":"request_too_large"}})";
  auto res = post_systemone(client, std::string(1001, ' '));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(res->body, too_large);
  EXPECT_EQ(res->get_header_value("Connection"), "close");
  res = post_systemone(client, std::string(1000, ' '));  // at the limit: parsed (and not JSON)
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(error_code(res), "invalid_json");

  // Chunked: found to exceed while reading.
  std::string chunked = "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3; ++i) chunked += "190\r\n" + std::string(400, ' ') + "\r\n";
  chunked += "0\r\n\r\n";
  std::string reply = raw_exchange(server.port(), chunked);
  EXPECT_EQ(reply.rfind("HTTP/1.1 413", 0), 0u) << reply;
  EXPECT_NE(reply.find(too_large), std::string::npos);

  // Announced with Expect: 100-continue: refused before the body is sent.
  reply = raw_exchange(server.port(),
                       "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n", 300);
  EXPECT_EQ(reply.rfind("HTTP/1.1 413", 0), 0u) << reply;
  EXPECT_EQ(reply.find("100 Continue"), std::string::npos);
}

TEST(BodyRules, DefaultLimitIs32MiB) {
  TestServer server(clef_tiny_registry(), test_server_options());
  httplib::Client client = server.client();
  const auto res = post_systemone(client, std::string((32u << 20) + 1, ' '));
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(OrderedJson::parse(res->body).at("error").at("message"), "request body too large: maximum is 33554432 bytes");
}

TEST(BodyRules, ContentEncodingOtherThanIdentityIs400) {
  TestServer server(clef_tiny_registry(), test_server_options());
  httplib::Client client = server.client();
  auto res = post_systemone(client, kNoul, {{"Content-Encoding", "gzip"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(res->body,
            R"({"error":{"message":"unsupported Content-Encoding: gzip","type":"invalid_request_error","code":"unsupported_encoding"}})");
  res = post_systemone(client, kNoul, {{"Content-Encoding", "identity"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(RequestIds, EchoedWhenPrintableElseGenerated) {
  TestServer server(clef_tiny_registry(), test_server_options());
  httplib::Client client = server.client();
  auto res = client.Get("/health", {{"x-request-id", "trace-42"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("x-request-id"), "trace-42");
  res = client.Get("/health");
  ASSERT_TRUE(res);
  EXPECT_TRUE(is_generated_id(res->get_header_value("x-request-id"))) << res->get_header_value("x-request-id");
  res = client.Get("/health", {{"x-request-id", std::string(129, 'a')}});
  ASSERT_TRUE(res);
  EXPECT_TRUE(is_generated_id(res->get_header_value("x-request-id")));
  res = client.Get("/nowhere", {{"x-request-id", "abc"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("x-request-id"), "abc");  // errors too
  EXPECT_EQ(request_id_for(std::string(128, 'z')), std::string(128, 'z'));
  EXPECT_NE(request_id_for(std::string("a\x01")), std::string("a\x01"));
}

TEST(Cors, AllowedOriginsGetHeadersAndPreflights) {
  ServerOptions options = test_server_options();
  options.cors_origins = {"https://app.example"};
  options.api_keys = {"k"};
  TestServer server(clef_tiny_registry(), options);
  httplib::Client client = server.client();
  auto res = client.Get("/health", {{"Origin", "https://app.example"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "https://app.example");
  res = client.Get("/health", {{"Origin", "https://evil.example"}});
  ASSERT_TRUE(res);
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
  res = client.Options("/v1/systemone", {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Methods"), "GET, POST, OPTIONS");
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Headers"), "Authorization, Content-Type, x-request-id");
  res = client.Options("/v1/models", {{"Origin", "https://evil.example"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Methods"));
  res = client.Get("/v1/models", {{"Origin", "https://app.example"}});  // a 401 carries it too
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "https://app.example");
}

TEST(Cors, WildcardAllowsAnyOrigin) {
  ServerOptions options = test_server_options();
  options.cors_origins = {"*"};
  TestServer server(clef_tiny_registry(), options);
  httplib::Client client = server.client();
  const auto res = client.Get("/health", {{"Origin", "http://localhost:3000"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "*");
}

TEST(Models, ListCarriesBothShapesWithKindAndState) {
  TestServer server(with_chat_model(), test_server_options());
  httplib::Client client = server.client();
  auto res = client.Get("/v1/models");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const OrderedJson list = OrderedJson::parse(res->body);
  EXPECT_EQ(list.at("object"), "list");
  const OrderedJson& data = list.at("data");
  ASSERT_EQ(data.size(), 3u);
  std::vector<std::string> keys;
  for (const auto& [k, v] : data.at(0).items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"id", "object", "created", "owned_by", "kind", "loaded", "state", "max_length",
                                            "aliases", "architecture"}));
  EXPECT_EQ(data.at(0).at("id"), "clef-tiny");
  EXPECT_EQ(data.at(0).at("object"), "model");
  EXPECT_TRUE(data.at(0).at("created").is_number_integer());
  EXPECT_GT(data.at(0).at("created").get<int64_t>(), 0);
  EXPECT_EQ(data.at(0).at("owned_by"), "verdict");
  EXPECT_EQ(data.at(0).at("kind"), "decision");
  EXPECT_EQ(data.at(0).at("loaded"), false);
  EXPECT_EQ(data.at(0).at("state"), "unloaded");
  EXPECT_EQ(data.at(0).at("max_length"), 16384);
  EXPECT_EQ(data.at(0).at("aliases"), OrderedJson::parse(R"(["default","jev-latest"])"));
  EXPECT_EQ(data.at(0).at("architecture"), OrderedJson::parse(R"({"input_modalities":["text"],"output_modalities":["decisions"]})"));
  EXPECT_EQ(data.at(1).at("id"), "clef-tiny-short");
  EXPECT_EQ(data.at(1).at("max_length"), 480);
  EXPECT_EQ(data.at(1).at("aliases"), OrderedJson::array());
  EXPECT_EQ(data.at(2).at("id"), "qwen-chat");
  EXPECT_EQ(data.at(2).at("kind"), "chat");
  EXPECT_FALSE(data.at(2).contains("max_length"));
  EXPECT_FALSE(data.at(2).contains("aliases"));
  EXPECT_EQ(data.at(2).at("architecture").at("output_modalities"), OrderedJson::parse(R"(["text"])"));
  const OrderedJson& models = list.at("models");
  ASSERT_EQ(models.size(), 2u);  // decision models only
  EXPECT_EQ(models.at(0).at("name"), "clef-tiny");
  EXPECT_EQ(models.at(0).at("description"), "decision model");
  EXPECT_TRUE(is_date(models.at(0).at("release_date").get<std::string>()));
  EXPECT_EQ(models.at(0).size(), 3u);

  ASSERT_EQ(post_systemone(client, kNoul)->status, 200);
  res = client.Get("/v1/models/clef-tiny");
  ASSERT_TRUE(res);
  EXPECT_EQ(OrderedJson::parse(res->body).at("state"), "loaded");
  EXPECT_EQ(OrderedJson::parse(res->body).at("loaded"), true);
  res = client.Get("/v1/models/clef-huge");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(res->body,
            R"({"error":{"message":"model 'clef-huge' not found; available decision models: clef-tiny, clef-tiny-short; aliases: default, jev-latest","type":"invalid_request_error","code":"model_not_found"}})");

  // Model kinds are exclusive (rule M2); aliases resolve to the default decision model.
  res = post_systemone(client, R"({"model":" qwen-chat ","state":"x","questions":{"q":{"type":"noul"}}})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(res->body,
            R"({"error":{"message":"model 'qwen-chat' is a chat model; use /v1/chat/completions","type":"invalid_request_error","code":"model_not_decision"}})");
  res = post_systemone(client, R"({"model":"jev-latest","state":"x","questions":{"q":{"type":"noul"}}})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(OrderedJson::parse(res->body).at("model"), "clef-tiny");
  // Chat models load like decision models.
  res = client.Post("/v1/models/qwen-chat/load");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(OrderedJson::parse(res->body).at("state"), "loaded") << res->body;
}

TEST(Health, ReadyStartingAndDraining) {
  auto registry = std::make_unique<registry::Registry>(clef_tiny_registry());
  ServerOptions options = test_server_options();
  Api api(*registry, options);
  HttpServer http(api);
  http.start();
  httplib::Client client("127.0.0.1", http.port());

  // Before start-up completes: /health is 503 loading and /v1/* is 503 server_starting (O2).
  auto res = client.Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Retry-After"), "1");
  EXPECT_EQ(res->body, R"({"status":"loading","model":"clef-tiny","models":[]})");
  res = client.Post("/v1/systemone", kNoul, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Retry-After"), "1");
  EXPECT_EQ(res->body,
            R"({"error":{"message":"server is starting; retry later","type":"unavailable_error","code":"server_starting"}})");

  registry->initialize();
  res = client.Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body,
            R"({"status":"ok","model":"clef-tiny","models":[{"id":"clef-tiny","kind":"decision","loaded":false},{"id":"clef-tiny-short","kind":"decision","loaded":false}]})");

  api.begin_draining();
  res = client.Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(OrderedJson::parse(res->body).at("status"), "draining");
  res = client.Post("/v1/systemone", kNoul, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->body, R"({"error":{"message":"server is shutting down","type":"unavailable_error","code":"shutting_down"}})");
  EXPECT_TRUE(http.shutdown(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
}

TEST(Overload, AFullQueueIs429AndAStaleOneIs503) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  ServerOptions options = test_server_options();
  options.max_queue = 1;
  options.queue_timeout = std::chrono::milliseconds(1000);
  registry::RegistryOptions r = gated(gate);
  r.max_queue = 1;
  TestServer server(std::move(r), options);
  auto running = std::async(std::launch::async, [&] {
    httplib::Client c = server.client();
    const auto res = post_systemone(c, kNoul);
    return res ? res->status : -1;  // -1: no response
  });
  ASSERT_TRUE(gate->wait_entered(1));
  auto queued = std::async(std::launch::async, [&] {
    httplib::Client c = server.client();
    const auto res = post_systemone(c, kNoul);
    return res ? std::make_pair(res->status, res->body) : std::make_pair(-1, std::string("(no response)"));
  });
  if (!eventually([&] { return server.registry().status("clef-tiny")->engine->queued == 1; })) {
    gate->open();  // let both requests finish (their futures would otherwise wait forever) and say how they ended
    const auto [status, body] = queued.get();
    FAIL() << "the second request was never queued; it ended with " << status << " " << body << ", the first with "
           << running.get();
  }
  httplib::Client client = server.client();
  const auto refused = post_systemone(client, kNoul);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_TRUE(refused->has_header("Retry-After"));
  EXPECT_EQ(refused->body,
            R"({"error":{"message":"server busy: the queue for model 'clef-tiny' is full; retry later","type":"rate_limit_error","code":"queue_full"}})");
  // The queued request does not start within its queue time (the step is held): 503 queue_timeout.
  const auto [status, body] = queued.get();
  EXPECT_EQ(status, 503);
  EXPECT_EQ(body,
            R"({"error":{"message":"request waited more than 1 s in the queue; retry later","type":"unavailable_error","code":"queue_timeout"}})");
  gate->open();
  EXPECT_EQ(running.get(), 200);
}

TEST(Overload, AClientThatLeavesIsDroppedFromTheQueue) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  TestServer server(gated(gate), test_server_options());
  auto running = std::async(std::launch::async, [&] {
    httplib::Client c = server.client();
    return post_systemone(c, kNoul)->status;
  });
  ASSERT_TRUE(gate->wait_entered(1));
  const int fd = connect_loopback(server.port());
  ASSERT_GE(fd, 0);
  const std::string request = "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(kNoul.size()) +
                              "\r\n\r\n" + kNoul;
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  ASSERT_TRUE(eventually([&] { return server.registry().status("clef-tiny")->engine->queued == 1; }));
  ::close(fd);
  EXPECT_TRUE(eventually([&] { return server.registry().status("clef-tiny")->engine->jobs_cancelled == 1; }));
  EXPECT_EQ(server.registry().status("clef-tiny")->engine->queued, 0u);
  gate->open();
  EXPECT_EQ(running.get(), 200);
  EXPECT_EQ(server.registry().status("clef-tiny")->engine->jobs_done, 1u);
}

TEST(Truncation, ServerDefaultTruncates) {
  ServerOptions options = test_server_options();
  options.truncate_by_default = true;
  TestServer server(clef_tiny_registry(), options);
  httplib::Client client = server.client();
  // rechazo_uno_de_mas needs 481 tokens on the 480-token model: one state token is cut.
  auto res = post_systemone(client, case_request("rechazo_uno_de_mas"));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const OrderedJson usage = OrderedJson::parse(res->body).at("usage");
  EXPECT_EQ(usage.at("input_tokens"), 480);
  EXPECT_EQ(usage.at("truncated_tokens"), 1);
  // A request's own `truncate: false` still refuses.
  res = post_systemone(client, case_request("rechazo_truncate_false"));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
}

TEST(Metrics, PrometheusTextWithEveryFamily) {
  TestServer server(clef_tiny_registry(), test_server_options());
  httplib::Client client = server.client();
  ASSERT_EQ(post_systemone(client, kNoul)->status, 200);
  ASSERT_EQ(post_systemone(client, "{")->status, 400);
  ASSERT_EQ(client.Get("/nowhere")->status, 404);
  const auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  std::vector<std::string> errors;
  const PromText text = parse_prometheus(res->body, errors);
  for (const std::string& e : errors) ADD_FAILURE() << e;
  for (const char* family :
       {"verdict_http_requests_total", "verdict_http_request_duration_seconds", "verdict_http_requests_in_flight",
        "verdict_queue_depth", "verdict_requests_running", "verdict_requests_waiting", "verdict_prompt_tokens_total",
        "verdict_decisions_total", "verdict_engine_tokens_per_second", "verdict_engine_step_sequences",
        "verdict_model_loaded", "verdict_model_memory_bytes", "verdict_model_loads_total", "verdict_model_load_seconds",
        "verdict_memory_budget_bytes", "verdict_memory_used_bytes"})
    EXPECT_TRUE(text.types.count(family)) << family;
  EXPECT_EQ(text.value("verdict_http_requests_total", {{"endpoint", "/v1/systemone"}, {"status", "200"}}), 1);
  EXPECT_EQ(text.value("verdict_http_requests_total", {{"endpoint", "/v1/systemone"}, {"status", "400"}}), 1);
  EXPECT_EQ(text.value("verdict_http_requests_total", {{"endpoint", "unmatched"}, {"status", "404"}}), 1);
  EXPECT_EQ(text.value("verdict_http_request_duration_seconds_count", {{"endpoint", "/v1/systemone"}}), 2);
  EXPECT_EQ(text.value("verdict_model_loaded", {{"model", "clef-tiny"}, {"kind", "decision"}}), 1);
  EXPECT_EQ(text.value("verdict_model_loaded", {{"model", "clef-tiny-short"}, {"kind", "decision"}}), 0);
  EXPECT_GT(text.value("verdict_model_memory_bytes", {{"model", "clef-tiny"}}), 0);
  EXPECT_EQ(text.value("verdict_model_loads_total", {{"model", "clef-tiny"}}), 1);
  EXPECT_GT(text.value("verdict_model_load_seconds", {{"model", "clef-tiny"}}), 0);
  EXPECT_EQ(text.value("verdict_model_load_seconds", {{"model", "clef-tiny-short"}}), 0);  // never loaded
  EXPECT_GT(text.value("verdict_prompt_tokens_total", {{"model", "clef-tiny"}}), 0);
  EXPECT_GT(text.value("verdict_engine_tokens_per_second", {{"model", "clef-tiny"}}), 0);
  EXPECT_EQ(text.value("verdict_http_requests_in_flight"), 1);  // this one
}

TEST(Metrics, TheParserRejectsMalformedText) {
  std::vector<std::string> errors;
  parse_prometheus("# TYPE a counter\na{x=\"1} 2\nb 1\n", errors);
  EXPECT_GE(errors.size(), 2u);
}

}  // namespace
}  // namespace verdict::server::testing
