// 32 clients × 10 different decision requests at once give byte-identical answers to the same
// requests sent one at a time, and the engine really batched records of different clients.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>

#include "fake_step_models.h"
#include "test_server.h"

namespace verdict::server::testing {
namespace {

std::vector<std::string> ten_requests() {
  const char* states[] = {"The invoice was charged twice this month.", "I cannot log in since the update.",
                          "Please add a dark mode to the app.", "La aplicación se cierra al exportar.",
                          "My card expired; how do I change it?", "Everything works fine, thanks!",
                          "The export to PDF loses the images.", "Refund the duplicate charge please.",
                          "Password reset emails never arrive.", "Could you support CSV import?"};
  std::vector<std::string> out;
  for (int i = 0; i < 10; ++i) {
    out.push_back(std::string(R"({"model":"clef-tiny","state":")") + states[i] +
                  R"(","questions":{"team":{"type":"choice","criteria":{"bill":"","bug":""}},"urgent":{"type":"noul","criteria":{"true":"y","false":"n"}}}})");
  }
  return out;
}

double metric(const std::string& text, const std::string& sample) {
  const std::size_t at = text.find("\n" + sample + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + sample.size() + 2));
}

// Posts every request once, in order, then from `clients` clients at once (each in its own order);
// every concurrent answer must equal the sequential one byte for byte (latency aside).
// With a gate, the engine's first concurrent step is held until eight records wait, so that sharing
// is certain even with a backbone much faster than HTTP.
void check_concurrent_equals_sequential(TestServer& server, const std::vector<std::string>& requests, int clients,
                                        const std::shared_ptr<engine::testing::Gate>& gate = nullptr) {
  std::vector<std::string> sequential;
  {
    httplib::Client client = server.client();
    for (const std::string& body : requests) {
      const auto res = post_systemone(client, body);
      ASSERT_TRUE(res);
      ASSERT_EQ(res->status, 200) << res->body;
      sequential.push_back(comparable_response(res->body).dump());
    }
  }
  if (gate) gate->close();
  std::vector<std::vector<std::string>> got(static_cast<std::size_t>(clients), std::vector<std::string>(requests.size()));
  std::vector<int> failures(static_cast<std::size_t>(clients), 0);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client = server.client();
      client.set_keep_alive(true);
      std::vector<std::size_t> order(requests.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(c)));
      for (std::size_t i : order) {
        const auto res = post_systemone(client, requests[i]);
        if (!res || res->status != 200) {
          ++failures[static_cast<std::size_t>(c)];
          continue;
        }
        got[static_cast<std::size_t>(c)][i] = comparable_response(res->body).dump();
      }
    });
  }
  if (gate) {
    for (int spin = 0; spin < 5000 && server.registry().status("clef-tiny")->engine->queued < 8; ++spin)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    gate->open();
  }
  for (auto& t : threads) t.join();
  for (int c = 0; c < clients; ++c) {
    EXPECT_EQ(failures[static_cast<std::size_t>(c)], 0) << "client " << c;
    for (std::size_t i = 0; i < requests.size(); ++i)
      EXPECT_EQ(got[static_cast<std::size_t>(c)][i], sequential[i]) << "client " << c << " request " << i;
  }

  // The engine really shared forward steps between clients.
  httplib::Client client = server.client();
  const auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  const double decisions = static_cast<double>(requests.size()) * (clients + 1);
  EXPECT_GT(metric(res->body, R"(verdict_engine_step_sequences_max{model="clef-tiny"})"), 1.0);
  EXPECT_EQ(metric(res->body, R"(verdict_decisions_total{model="clef-tiny"})"), decisions);
  const auto stats = server.registry().status("clef-tiny")->engine;
  ASSERT_TRUE(stats.has_value());
  EXPECT_GT(stats->max_step_sequences, 1);
  EXPECT_LT(stats->steps, stats->jobs_done);  // fewer forward steps than records
}

// The issue's 32 clients × 10 requests. The backbone is a fast stand-in whose rows depend on each
// sequence's whole prefix (tests/engine/fake_step_models.h), so any mix-up of slots, chunks or rows
// between batched requests changes the answers; the tokenizer, the head and the answers are real.
TEST(Concurrency, ThirtyTwoClientsGetTheAnswersOfSequentialRuns) {
  auto gate = std::make_shared<engine::testing::Gate>();
  registry::RegistryOptions o = clef_tiny_registry();
  o.wrap_step_model = [gate](const std::string&, std::unique_ptr<engine::StepModel> real) -> std::unique_ptr<engine::StepModel> {
    return std::make_unique<engine::testing::GatedStepModel>(
        std::make_unique<engine::testing::PrefixHashModel>(real->hidden_size(), real->vocab_size(), real->slots(),
                                                           real->max_tokens()),
        gate);
  };
  TestServer server(std::move(o), test_server_options());
  check_concurrent_equals_sequential(server, ten_requests(), 32, gate);
}

// The same with the real Qwen3.5 backbone, on a smaller scale (it is the slow part under sanitizers).
TEST(Concurrency, RealBackboneBatchedAnswersEqualSequentialOnes) {
  registry::RegistryOptions options = clef_tiny_registry();
  // These records are long enough that steps of the default 512 tokens hold one each (no shared step).
  options.batch.max_batch_tokens = 8192;
  TestServer server(std::move(options), test_server_options());
  std::vector<std::string> requests = ten_requests();
  requests.resize(4);
  check_concurrent_equals_sequential(server, requests, 8);
}

}  // namespace
}  // namespace verdict::server::testing
