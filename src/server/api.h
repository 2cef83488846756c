// The application behind the HTTP adapter: request ids, CORS, routing (R1, R2), authentication
// (A1, A2), start-up and draining (O2, O5), body rules (B0, B1), then the route, and metrics and
// the access log for every exchange. It never sees the HTTP library, so it is tested directly.
#pragma once
#include <atomic>
#include <string>

#include "registry/registry.h"
#include "server/auth.h"
#include "server/http_types.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/router.h"
#include "server/systemone_route.h"

namespace verdict::server {

// Bytes beyond max_body_bytes that are still read and discarded after a refusal, so that clients
// that send the whole body before reading get the response instead of a reset.
inline constexpr std::size_t kDrainAllowance = 16u << 20;

class Api {
 public:
  Api(registry::Registry& registry, ServerOptions options);

  // Answers one request. Reads the body through request.read_body when the route needs it (or to
  // drain it after an early refusal). Never throws.
  HttpResponse handle(HttpRequest& request);

  // An error the HTTP library detected before routing (malformed request line or headers, an
  // over-long URI, a method it does not know): the JSON error response for it.
  HttpResponse library_error(int status, const std::string& method, const std::string& path,
                             const std::optional<std::string>& request_id);

  // Shutdown: from now on /v1/* answers 503 shutting_down and /health 503 "draining".
  void begin_draining() { draining_.store(true); }
  bool draining() const { return draining_.load(); }
  // Requests being handled right now.
  int in_flight() const { return in_flight_.load(); }

  const ServerOptions& options() const { return options_; }
  Metrics& metrics() { return metrics_; }

 private:
  HttpResponse dispatch(HttpRequest& request, const Route& route, const std::string& body, RequestInfo& info);
  void add_cors(const HttpRequest& request, HttpResponse& response) const;
  HttpResponse preflight(const HttpRequest& request, const Route& route) const;
  bool origin_allowed(const std::string& origin) const;
  std::string too_large_message() const;
  // The most body bytes read (and discarded) to answer a refused request cleanly.
  std::size_t drain_limit() const;

  registry::Registry& registry_;
  const ServerOptions options_;
  const ApiKeys keys_;
  Metrics metrics_;
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};
};

}  // namespace verdict::server
