#include "test_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "core/mapped_file.h"
#include "support/fixtures.h"

namespace verdict::server::testing {

std::string clef_tiny_dir() { return verdict::testing::fixture("clef-tiny/bf16"); }

registry::RegistryOptions clef_tiny_registry(const std::string& dir) {
  registry::RegistryOptions o;
  o.models = {{"clef-tiny", dir, registry::ModelKind::kDecision}, {"clef-tiny-short", dir, registry::ModelKind::kDecision}};
  o.max_length = {{"clef-tiny-short", 480}};
  o.slots = 8;
  return o;
}

ServerOptions test_server_options() {
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.threads = 64;
  o.idle_timeout = std::chrono::seconds(1);
  return o;
}

TestServer::TestServer(registry::RegistryOptions registry_options, ServerOptions server_options) {
  registry_ = std::make_unique<registry::Registry>(std::move(registry_options));
  registry_->initialize();
  api_ = std::make_unique<Api>(*registry_, std::move(server_options));
  http_ = std::make_unique<HttpServer>(*api_);
  http_->start();
}

TestServer::~TestServer() {
  http_->shutdown(std::chrono::steady_clock::now() + std::chrono::seconds(30));
  http_.reset();
  api_.reset();
  registry_.reset();
}

httplib::Client TestServer::client() const {
  httplib::Client c("127.0.0.1", http_->port());
  c.set_read_timeout(60, 0);
  c.set_write_timeout(60, 0);
  return c;
}

httplib::Result post_systemone(httplib::Client& client, const std::string& body, const httplib::Headers& headers) {
  return client.Post("/v1/systemone", headers, body, "application/json");
}

int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string raw_exchange(int port, const std::string& bytes, int wait_ms) {
  const int fd = connect_loopback(port);
  if (fd < 0) return "<connect failed>";
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string out;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

OrderedJson comparable_response(const std::string& body) {
  OrderedJson j = OrderedJson::parse(body);
  OrderedJson& usage = j.at("usage");
  EXPECT_TRUE(usage.at("latency_ms").is_number_float()) << body;
  EXPECT_GE(usage.at("latency_ms").get<double>(), 0.0);
  EXPECT_TRUE(usage.at("cached_tokens").is_number_integer()) << body;
  usage.erase("latency_ms");
  usage.erase("cached_tokens");
  return j;
}

const OrderedJson& clef_tiny_cases() {
  static const OrderedJson cases =
      OrderedJson::parse(read_text_file(verdict::testing::fixture("clef-tiny/cases.json")));
  return cases;
}

std::string case_request(const std::string& name) {
  for (const OrderedJson& c : clef_tiny_cases().at("cases"))
    if (c.at("name") == name) return c.at("request_json").get<std::string>();
  ADD_FAILURE() << "no case " << name;
  return "";
}

bool eventually(const std::function<bool()>& condition, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

}  // namespace verdict::server::testing
