// An in-process verdict server on an ephemeral loopback port, and helpers to talk to it.
#pragma once
#include <httplib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/json.h"
#include "registry/registry.h"
#include "server/api.h"
#include "server/http_server.h"

namespace verdict::server::testing {

using OrderedJson = nlohmann::ordered_json;

// fixtures/clef-tiny/bf16.
std::string clef_tiny_dir();
// The fixture's two registrations of the checkpoint in `dir`: clef-tiny (16,384) and clef-tiny-short (480).
registry::RegistryOptions clef_tiny_registry(const std::string& dir = clef_tiny_dir());
// Loopback, ephemeral port, short idle timeout.
ServerOptions test_server_options();

class TestServer {
 public:
  TestServer(registry::RegistryOptions registry_options, ServerOptions server_options);
  ~TestServer();

  httplib::Client client() const;
  int port() const { return http_->port(); }
  registry::Registry& registry() { return *registry_; }
  Api& api() { return *api_; }
  HttpServer& http() { return *http_; }

 private:
  std::unique_ptr<registry::Registry> registry_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> http_;
};

// POST a body to /v1/systemone (no Content-Type, as `curl -d` would not matter either way).
httplib::Result post_systemone(httplib::Client& client, const std::string& body, const httplib::Headers& headers = {});

// Sends raw bytes on a new connection to 127.0.0.1:port and returns everything read until the
// server closes or `wait_ms` pass without data.
std::string raw_exchange(int port, const std::string& bytes, int wait_ms = 2000);
// A connected socket to 127.0.0.1:port (-1 on failure).
int connect_loopback(int port);

// The response body with the run-dependent usage fields removed (after checking their types).
OrderedJson comparable_response(const std::string& body);

// fixtures/clef-tiny/cases.json, member order kept.
const OrderedJson& clef_tiny_cases();
// The request text of the case named `name`.
std::string case_request(const std::string& name);

// A one-question (noul) request for clef-tiny.
inline const std::string kNoul =
    R"({"model":"clef-tiny","state":"Checkout fails.","questions":{"urgent":{"type":"noul"}}})";

// Polls `condition` every 5 ms until it holds or timeout_ms have passed; returns its last value.
bool eventually(const std::function<bool()>& condition, int timeout_ms = 5000);

}  // namespace verdict::server::testing
