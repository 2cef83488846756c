// Leases, deferred unloads, eviction under the memory budget, pins and TTL, seen through HTTP.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_step_models.h"
#include "test_server.h"

namespace verdict::server::testing {
namespace {

using engine::testing::Gate;
using engine::testing::GatedStepModel;

constexpr const char* kShortRequest =
    R"({"model":"%s","state":"Checkout fails for every customer.","questions":{"urgent":{"type":"noul"}}})";

std::string request_for(const std::string& model) {
  std::string body = kShortRequest;
  body.replace(body.find("%s"), 2, model);
  return body;
}

// Three registrations of the tiny checkpoint; forward steps of `gated` models pass through `gate`.
registry::RegistryOptions three_models(const std::shared_ptr<Gate>& gate, std::vector<std::string> gated) {
  registry::RegistryOptions o;
  for (const char* name : {"a", "b", "c"}) o.models.push_back({name, clef_tiny_dir(), registry::ModelKind::kDecision});
  o.max_length = {{"a", 2048}, {"b", 2048}, {"c", 2048}};
  o.slots = 2;
  o.wrap_step_model = [gate, gated](const std::string& name, std::unique_ptr<engine::StepModel> inner)
      -> std::unique_ptr<engine::StepModel> {
    if (std::find(gated.begin(), gated.end(), name) == gated.end()) return inner;
    return std::make_unique<GatedStepModel>(std::move(inner), gate);
  };
  return o;
}

// The registry's log lines (RegistryOptions::log), collected from whichever thread writes them.
struct LogLines {
  std::mutex mutex;
  std::vector<std::string> lines;

  static std::shared_ptr<LogLines> attach(registry::RegistryOptions& o) {
    auto log = std::make_shared<LogLines>();
    o.log = [log](const std::string& line) {
      std::lock_guard lock(log->mutex);
      log->lines.push_back(line);
    };
    return log;
  }
  // How many lines start with `prefix`.
  int count(const std::string& prefix) {
    std::lock_guard lock(mutex);
    int n = 0;
    for (const std::string& l : lines) n += l.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }
};

std::size_t one_model_estimate() {
  registry::RegistryOptions o = three_models(nullptr, {});
  registry::Registry r(o);
  r.initialize();
  return r.status("a")->memory_bytes;
}

std::string state_of(TestServer& server, const std::string& name) { return server.registry().status(name)->state_name(); }

int post_status(TestServer& server, const std::string& model) {
  httplib::Client client = server.client();
  const auto res = post_systemone(client, request_for(model));
  return res ? res->status : -1;
}

TEST(Leases, UnloadRequestedWhileADecisionRunsIsDeferredUntilItCompletes) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  TestServer server(three_models(gate, {"a"}), test_server_options());
  auto in_flight = std::async(std::launch::async, [&] {
    httplib::Client client = server.client();
    return post_systemone(client, request_for("a"));
  });
  ASSERT_TRUE(gate->wait_entered(1));  // loaded, encoded and in the engine: held inside forward

  httplib::Client admin = server.client();
  const auto unload = admin.Post("/v1/models/a/unload");
  ASSERT_TRUE(unload);
  EXPECT_EQ(unload->status, 202) << unload->body;
  EXPECT_EQ(OrderedJson::parse(unload->body).at("state"), "loaded");
  EXPECT_TRUE(server.registry().status("a")->unload_pending);
  EXPECT_EQ(state_of(server, "a"), "loaded");

  gate->open();
  const auto res = in_flight.get();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(OrderedJson::parse(res->body).at("model"), "a");
  EXPECT_TRUE(eventually([&] { return state_of(server, "a") == "unloaded"; }));
  // The next request loads it again.
  EXPECT_EQ(post_status(server, "a"), 200);
  EXPECT_EQ(server.registry().status("a")->loads, 2u);
}

TEST(Leases, ALeasedModelIsNeverEvicted) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  registry::RegistryOptions o = three_models(gate, {"a"});
  o.max_memory_bytes = one_model_estimate() * 3 / 2;  // room for one model
  TestServer server(std::move(o), test_server_options());
  auto in_flight = std::async(std::launch::async, [&] { return post_status(server, "a"); });
  ASSERT_TRUE(gate->wait_entered(1));

  httplib::Client client = server.client();
  const auto refused = post_systemone(client, request_for("b"));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  EXPECT_EQ(refused->body,
            R"({"error":{"message":"model 'b' cannot be loaded now: memory budget exhausted; retry later","type":"unavailable_error","code":"insufficient_memory"}})");
  EXPECT_EQ(state_of(server, "a"), "loaded");

  gate->open();
  EXPECT_EQ(in_flight.get(), 200);
  // Now `a` is idle: loading `b` evicts it.
  EXPECT_EQ(post_status(server, "b"), 200);
  EXPECT_EQ(state_of(server, "a"), "unloaded");
  EXPECT_EQ(state_of(server, "b"), "loaded");
  EXPECT_EQ(server.registry().memory().evictions, 1u);
}

TEST(Leases, ConcurrentFirstRequestsShareOneLoad) {
  TestServer server(three_models(nullptr, {}), test_server_options());
  std::vector<std::future<int>> requests;
  for (int i = 0; i < 8; ++i) requests.push_back(std::async(std::launch::async, [&] { return post_status(server, "c"); }));
  for (auto& r : requests) EXPECT_EQ(r.get(), 200);
  EXPECT_EQ(server.registry().status("c")->loads, 1u);
}

TEST(MemoryBudget, ThreeModelsInABudgetForTwoEvictTheLeastRecentlyUsed) {
  registry::RegistryOptions o = three_models(nullptr, {});
  o.max_memory_bytes = one_model_estimate() * 5 / 2;
  const auto log = LogLines::attach(o);
  TestServer server(std::move(o), test_server_options());
  EXPECT_EQ(post_status(server, "a"), 200);
  EXPECT_EQ(post_status(server, "b"), 200);
  EXPECT_EQ(post_status(server, "a"), 200);  // a is now more recent than b
  EXPECT_EQ(post_status(server, "c"), 200);
  EXPECT_EQ(state_of(server, "a"), "loaded");
  EXPECT_EQ(state_of(server, "b"), "unloaded");
  EXPECT_EQ(state_of(server, "c"), "loaded");
  const registry::MemoryStatus memory = server.registry().memory();
  EXPECT_EQ(memory.evictions, 1u);
  // The log says what happened: three loads (a once), b evicted for c.
  EXPECT_EQ(log->count("model a loaded in "), 1);
  EXPECT_EQ(log->count("model b loaded in "), 1);
  EXPECT_EQ(log->count("model c loaded in "), 1);
  EXPECT_EQ(log->count("model b evicted to make room for c"), 1);
  EXPECT_EQ(log->count("model a evicted"), 0);
  EXPECT_LE(memory.used, memory.budget);

  // A pinned model is never the victim: pin c, then b evicts a.
  httplib::Client client = server.client();
  const auto pin = client.Post("/v1/models/c/pin");
  ASSERT_TRUE(pin);
  EXPECT_EQ(pin->status, 200);
  EXPECT_EQ(OrderedJson::parse(pin->body).at("state"), "pinned");
  EXPECT_EQ(post_status(server, "b"), 200);
  EXPECT_EQ(state_of(server, "a"), "unloaded");
  EXPECT_EQ(state_of(server, "c"), "pinned");
  const auto unload = client.Post("/v1/models/c/unload");
  ASSERT_TRUE(unload);
  EXPECT_EQ(unload->status, 400);
  EXPECT_EQ(OrderedJson::parse(unload->body).at("error").at("code"), "model_pinned");
}

TEST(MemoryBudget, APinnedModelHoldingTheBudgetMeans503) {
  registry::RegistryOptions o = three_models(nullptr, {});
  o.max_memory_bytes = one_model_estimate() * 3 / 2;
  o.pinned = {"a"};
  TestServer server(std::move(o), test_server_options());
  server.registry().preload({});
  EXPECT_EQ(state_of(server, "a"), "pinned");
  httplib::Client client = server.client();
  const auto res = post_systemone(client, request_for("b"));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(OrderedJson::parse(res->body).at("error").at("code"), "insufficient_memory");
  EXPECT_TRUE(res->has_header("Retry-After"));
  // Unpinned, it is an ordinary idle model and gives way.
  ASSERT_TRUE(client.Post("/v1/models/a/unpin"));
  EXPECT_EQ(post_status(server, "b"), 200);
  EXPECT_EQ(state_of(server, "a"), "unloaded");
}

TEST(MemoryBudget, TtlUnloadsIdleModels) {
  registry::RegistryOptions o = three_models(nullptr, {});
  o.ttl = std::chrono::milliseconds(150);
  const auto log = LogLines::attach(o);
  TestServer server(std::move(o), test_server_options());
  EXPECT_EQ(post_status(server, "a"), 200);
  EXPECT_TRUE(eventually([&] { return state_of(server, "a") == "unloaded"; }, 3000));
  EXPECT_TRUE(eventually([&] { return log->count("model a unloaded: idle for the TTL (150 ms)") == 1; }, 3000));
}

TEST(MemoryBudget, AModelTooLargeForTheWholeBudgetIs503) {
  registry::RegistryOptions o = three_models(nullptr, {});
  o.max_memory_bytes = one_model_estimate() / 2;
  TestServer server(std::move(o), test_server_options());
  EXPECT_EQ(post_status(server, "a"), 503);
}

TEST(AdminRoutes, LoadUnloadAndErrors) {
  TestServer server(three_models(nullptr, {}), test_server_options());
  httplib::Client client = server.client();
  const auto load = client.Post("/v1/models/b/load");
  ASSERT_TRUE(load);
  EXPECT_EQ(load->status, 200) << load->body;
  const OrderedJson entry = OrderedJson::parse(load->body);
  EXPECT_EQ(entry.at("id"), "b");
  EXPECT_EQ(entry.at("loaded"), true);
  EXPECT_EQ(entry.at("state"), "loaded");
  const auto unload = client.Post("/v1/models/b/unload");
  ASSERT_TRUE(unload);
  EXPECT_EQ(unload->status, 200);
  EXPECT_EQ(OrderedJson::parse(unload->body).at("state"), "unloaded");
  const auto again = client.Post("/v1/models/b/unload");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  const auto missing = client.Post("/v1/models/zzz/load");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body,
            R"({"error":{"message":"model 'zzz' not found; available decision models: a, b, c; aliases: default, jev-latest","type":"invalid_request_error","code":"model_not_found"}})");
  const auto wrong_method = client.Get("/v1/models/b/load");
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 405);
  EXPECT_EQ(wrong_method->get_header_value("Allow"), "POST, OPTIONS");
}

TEST(AdminRoutes, ACorruptCheckpointIs500ModelLoadFailed) {
  // A copy of the checkpoint whose weights file is truncated.
  char dir_template[] = "/tmp/verdict-corrupt-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  for (const char* f : {"config.json", "tokenizer.json", "tokenizer_config.json", "joint_head.safetensors",
                        "joint_head_config.json"}) {
    ASSERT_EQ(std::system(("cp " + clef_tiny_dir() + "/" + f + " " + dir + "/").c_str()), 0);
  }
  ASSERT_EQ(std::system(("head -c 1000 " + clef_tiny_dir() + "/model.safetensors > " + dir + "/model.safetensors").c_str()), 0);
  registry::RegistryOptions o;
  o.models = {{"broken", dir, registry::ModelKind::kDecision}};
  o.max_length = {{"broken", 1024}};
  o.slots = 1;
  const auto log = LogLines::attach(o);
  {
    TestServer server(std::move(o), test_server_options());
    httplib::Client client = server.client();
    const auto res = post_systemone(client, request_for("broken"), {{"x-request-id", "rid-1"}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 500);
    const OrderedJson error = OrderedJson::parse(res->body).at("error");
    EXPECT_EQ(error.at("code"), "model_load_failed");
    EXPECT_EQ(error.at("type"), "server_error");
    const std::string message = error.at("message");
    EXPECT_EQ(message.rfind("model 'broken' failed to load: ", 0), 0u) << message;
    EXPECT_NE(message.find("(request id rid-1)"), std::string::npos) << message;
    EXPECT_EQ(state_of(server, "broken"), "unloaded");
    EXPECT_EQ(log->count("model broken failed to load: "), 1);
    EXPECT_EQ(log->count("model broken loaded"), 0);
  }
  ASSERT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace verdict::server::testing
