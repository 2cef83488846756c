// Graceful shutdown: requests in flight complete, the listener closes, and `verdict serve` exits 0
// on SIGTERM or SIGINT.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <future>
#include <optional>
#include <thread>

#include "fake_step_models.h"
#include "test_server.h"

extern char** environ;

namespace verdict::server::testing {
namespace {

using engine::testing::Gate;
using engine::testing::GatedStepModel;


TEST(Shutdown, InFlightRequestsCompleteAndTheListenerCloses) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  registry::RegistryOptions o = clef_tiny_registry();
  o.wrap_step_model = [gate](const std::string&, std::unique_ptr<engine::StepModel> inner) -> std::unique_ptr<engine::StepModel> {
    return std::make_unique<GatedStepModel>(std::move(inner), gate);
  };
  TestServer server(std::move(o), test_server_options());
  std::vector<std::future<int>> in_flight;
  for (int i = 0; i < 3; ++i) {
    in_flight.push_back(std::async(std::launch::async, [&] {
      httplib::Client c = server.client();
      const auto res = post_systemone(c, kNoul);
      return res ? res->status : -1;
    }));
  }
  ASSERT_TRUE(gate->wait_entered(1));
  for (int spin = 0; spin < 1000 && server.http().active() < 3; ++spin) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(server.http().active(), 3);

  auto stopped = std::async(std::launch::async, [&] {
    return server.http().shutdown(std::chrono::steady_clock::now() + std::chrono::seconds(30));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(stopped.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);  // waiting for them
  EXPECT_LT(connect_loopback(server.port()), 0);  // no longer accepting
  gate->open();
  for (auto& r : in_flight) EXPECT_EQ(r.get(), 200);
  EXPECT_TRUE(stopped.get());
}

TEST(Shutdown, TheDeadlineBoundsTheWait) {
  auto gate = std::make_shared<Gate>();
  gate->close();
  registry::RegistryOptions o = clef_tiny_registry();
  o.wrap_step_model = [gate](const std::string&, std::unique_ptr<engine::StepModel> inner) -> std::unique_ptr<engine::StepModel> {
    return std::make_unique<GatedStepModel>(std::move(inner), gate);
  };
  TestServer server(std::move(o), test_server_options());
  auto in_flight = std::async(std::launch::async, [&] {
    httplib::Client c = server.client();
    const auto res = post_systemone(c, kNoul);
    return res ? res->status : -1;
  });
  ASSERT_TRUE(gate->wait_entered(1));
  EXPECT_FALSE(server.http().shutdown(std::chrono::steady_clock::now() + std::chrono::milliseconds(100)));
  gate->open();
  EXPECT_EQ(in_flight.get(), 200);
}

// `verdict serve` as a process: its stderr is read until it reports the port.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> args) {
    int pipe_fds[2];
    EXPECT_EQ(::pipe(pipe_fds), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    std::vector<std::string> argv = {VERDICT_SERVE_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, VERDICT_SERVE_BIN, &actions, nullptr, cargv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    err_ = pipe_fds[0];
  }
  ~ServeProcess() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(err_);
  }

  // Reads stderr until a line contains `marker`; returns what follows it on that line ("" when the
  // stream ends first).
  std::optional<std::string> wait_for(const std::string& marker) {
    std::string line;
    char c = 0;
    while (::read(err_, &c, 1) == 1) {
      log_ += c;
      if (c != '\n') {
        line += c;
        continue;
      }
      const std::size_t at = line.find(marker);
      if (at != std::string::npos) return line.substr(at + marker.size());
      line.clear();
    }
    return std::nullopt;
  }
  // The port of "listening on http://127.0.0.1:PORT".
  int wait_for_port() {
    const std::optional<std::string> rest = wait_for("listening on http://127.0.0.1:");
    return rest ? std::atoi(rest->c_str()) : 0;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  int wait_exit() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(err_, buf, sizeof buf)) > 0) log_.append(buf, static_cast<std::size_t>(n));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& log() const { return log_; }

 private:
  pid_t pid_ = -1;
  int err_ = -1;
  bool waited_ = false;
  std::string log_;
};

void shut_down_with(int sig) {
  ServeProcess serve({"--model", "clef-tiny=" + clef_tiny_dir(), "--port", "0", "--max-length", "clef-tiny=2048",
                      "--max-sequences", "4", "--idle-timeout-s", "1"});
  const int port = serve.wait_for_port();
  ASSERT_GT(port, 0) << serve.log();
  ASSERT_TRUE(serve.wait_for("ready")) << serve.log();
  httplib::Client probe("127.0.0.1", port);
  ASSERT_EQ(probe.Get("/health")->status, 200);

  // Twelve decisions at once; the signal comes once all of them are being handled.
  std::vector<std::future<int>> requests;
  for (int i = 0; i < 12; ++i) {
    requests.push_back(std::async(std::launch::async, [&, i] {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(60, 0);
      const std::string body = R"({"model":"clef-tiny","state":"Ticket )" + std::to_string(i) +
                               R"(: checkout fails.","questions":{"urgent":{"type":"noul"},"team":{"type":"choice","criteria":{"billing":"","eng":""}}}})";
      const auto res = c.Post("/v1/systemone", body, "application/json");
      return res ? res->status : -1;
    }));
  }
  const std::string in_flight = "\nverdict_http_requests_in_flight ";
  for (int spin = 0; spin < 2000; ++spin) {
    const auto metrics = probe.Get("/metrics");
    ASSERT_TRUE(metrics);
    const std::size_t at = metrics->body.find(in_flight);
    ASSERT_NE(at, std::string::npos);
    if (std::stoi(metrics->body.substr(at + in_flight.size())) >= 13) break;  // the twelve and this one
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  serve.signal(sig);
  std::vector<int> statuses;
  for (auto& r : requests) statuses.push_back(r.get());
  const int exit_code = serve.wait_exit();
  EXPECT_EQ(statuses, std::vector<int>(12, 200)) << serve.log();
  EXPECT_EQ(exit_code, 0) << serve.log();
  EXPECT_NE(serve.log().find("shutting down"), std::string::npos) << serve.log();
}

TEST(ServeProcess, SigtermFinishesRequestsInFlightAndExitsZero) { shut_down_with(SIGTERM); }

TEST(ServeProcess, SigintToo) { shut_down_with(SIGINT); }

TEST(ServeProcess, WithoutModelsServesTheDemoModel) {
  char cache[] = "/tmp/verdict-cache-XXXXXX";
  ASSERT_NE(::mkdtemp(cache), nullptr);
  ::setenv("XDG_CACHE_HOME", cache, 1);
  {
    ServeProcess serve({"--port", "0", "--max-sequences", "1"});
    const int port = serve.wait_for_port();
    ASSERT_GT(port, 0) << serve.log();
    ASSERT_TRUE(serve.wait_for("ready")) << serve.log();
    EXPECT_NE(serve.log().find("their weights are random"), std::string::npos) << serve.log();
    httplib::Client client("127.0.0.1", port);
    const auto res = client.Post("/v1/systemone", R"({"model":"default","state":"x","questions":{"q":{"type":"noul"}}})",
                                 "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(OrderedJson::parse(res->body).at("model"), "clef-demo");
    // The demo chat model answers on the chat endpoint.
    const auto chat = client.Post("/v1/chat/completions",
                                  R"({"model":"qwen-demo","messages":[{"role":"user","content":"Hi"}],"max_tokens":4})",
                                  "application/json");
    ASSERT_TRUE(chat);
    EXPECT_EQ(chat->status, 200) << chat->body;
    EXPECT_EQ(OrderedJson::parse(chat->body).at("model"), "qwen-demo");
    serve.signal(SIGTERM);
    EXPECT_EQ(serve.wait_exit(), 0) << serve.log();
  }
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_TRUE(registry::is_checkpoint_dir(std::string(cache) + "/verdict/clef-demo"));
  EXPECT_TRUE(registry::is_checkpoint_dir(std::string(cache) + "/verdict/qwen-demo"));
  ASSERT_EQ(std::system(("rm -rf " + std::string(cache)).c_str()), 0);
}

TEST(ServeProcess, UsageErrorsExitTwo) {
  ServeProcess serve({"--model", "/nonexistent/dir"});
  EXPECT_EQ(serve.wait_exit(), 2) << serve.log();
  EXPECT_NE(serve.log().find("not a checkpoint folder"), std::string::npos) << serve.log();
  ServeProcess bad_memory({"--model", clef_tiny_dir(), "--max-memory", "lots"});
  EXPECT_EQ(bad_memory.wait_exit(), 2) << bad_memory.log();
  ServeProcess bad_cache({"--model", clef_tiny_dir(), "--decision-cache", "lots"});
  EXPECT_EQ(bad_cache.wait_exit(), 2) << bad_cache.log();
  EXPECT_NE(bad_cache.log().find("--decision-cache: 'lots' is not a memory size"), std::string::npos) << bad_cache.log();
}

TEST(ServeProcess, StartUpErrorsExitOne) {
  // A max length above the backbone's max_position_embeddings (262144) is a start-up error.
  ServeProcess serve({"--model", "m=" + clef_tiny_dir(), "--port", "0", "--max-length", "m=300000"});
  EXPECT_EQ(serve.wait_exit(), 1) << serve.log();
  EXPECT_NE(serve.log().find("max_position_embeddings"), std::string::npos) << serve.log();
}

}  // namespace
}  // namespace verdict::server::testing
