#include "server/api.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "server/errors.h"
#include "server/log.h"
#include "server/models_routes.h"
#include "server/request_id.h"
#include "server/chat_route.h"
#include "server/systemone_route.h"

namespace verdict::server {
namespace {

using Clock = std::chrono::steady_clock;

bool is_v1(const Route& route) { return route.label.rfind("/v1/", 0) == 0; }

class InFlight {
 public:
  explicit InFlight(std::atomic<int>& count) : count_(count) { ++count_; }
  ~InFlight() { --count_; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  std::atomic<int>& count_;
};

}  // namespace

Api::Api(registry::Registry& registry, ServerOptions options)
    : registry_(registry), options_(std::move(options)), keys_(options_.api_keys) {}

bool Api::origin_allowed(const std::string& origin) const {
  for (const std::string& allowed : options_.cors_origins)
    if (allowed == "*" || allowed == origin) return true;
  return false;
}

void Api::add_cors(const HttpRequest& request, HttpResponse& response) const {
  if (options_.cors_origins.empty()) return;
  const std::optional<std::string> origin = find_header(request.headers, "Origin");
  if (!origin || !origin_allowed(*origin)) return;
  const bool any = std::find(options_.cors_origins.begin(), options_.cors_origins.end(), "*") != options_.cors_origins.end();
  response.set_header("Access-Control-Allow-Origin", any ? "*" : *origin);
  if (!any) response.set_header("Vary", "Origin");
  response.set_header("Access-Control-Expose-Headers", "x-request-id, Retry-After");
}

HttpResponse Api::preflight(const HttpRequest& request, const Route& route) const {
  HttpResponse res;
  res.status = 204;
  res.content_type.clear();
  res.set_header("Allow", allow_header(route));
  const std::optional<std::string> origin = find_header(request.headers, "Origin");
  if (!options_.cors_origins.empty() && origin && origin_allowed(*origin)) {
    res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, x-request-id");
    res.set_header("Access-Control-Max-Age", "600");
  }
  return res;
}

std::string Api::too_large_message() const {
  return "request body too large: maximum is " + std::to_string(options_.max_body_bytes) + " bytes";
}

std::size_t Api::drain_limit() const { return options_.max_body_bytes + kDrainAllowance; }

HttpResponse Api::handle(HttpRequest& request) {
  // Read before the request counts as in flight: one that /metrics showed in flight when the shutdown
  // began is served to the end (the drain waits for it); only requests arriving after it are refused.
  const bool arrived_draining = draining();
  InFlight in_flight(in_flight_);
  const Clock::time_point start = Clock::now();
  RequestInfo info;
  info.request_id = request_id_for(find_header(request.headers, "x-request-id"));
  info.received_at = start;
  const std::optional<Route> route = match_route(request.path);

  HttpResponse res;
  bool body_read = false;
  try {
    const std::optional<std::string> encoding = find_header(request.headers, "Content-Encoding");
    if (!route) {
      res = error_response(404, "not_found", "unknown endpoint: " + request.method + " " + request.path);  // R1
    } else if (request.method == "OPTIONS") {
      res = preflight(request, *route);
    } else if (!route_allows(*route, request.method)) {  // R2
      res = error_response(405, "method_not_allowed", "method " + request.method + " not allowed on " + request.path);
      res.set_header("Allow", allow_header(*route));
    } else if (const AuthResult auth = route->needs_key ? keys_.check(find_header(request.headers, "Authorization"))
                                                        : AuthResult::kAllowed;
               auth != AuthResult::kAllowed) {  // A1, A2
      res = auth == AuthResult::kMissing
                ? error_response(401, "missing_api_key", "missing API key: send \"Authorization: Bearer <key>\"")
                : error_response(401, "invalid_api_key", "invalid API key");
      res.set_header("WWW-Authenticate", "Bearer");
    } else if (is_v1(*route) && !registry_.ready()) {  // O2
      res = error_response(503, "server_starting", "server is starting; retry later", 1);
    } else if (is_v1(*route) && arrived_draining) {  // O5
      res = error_response(503, "shutting_down", "server is shutting down", 1);
    } else if (encoding && !encoding->empty() && *encoding != "identity") {  // B0
      res = error_response(400, "unsupported_encoding", "unsupported Content-Encoding: " + *encoding);
    } else if (request.content_length && *request.content_length > options_.max_body_bytes) {  // B1, declared
      res = error_response(413, "request_too_large", too_large_message());
      res.close_connection = true;
    } else {
      std::string body;
      BodyRead read;
      if (request.has_body) {
        read = request.read_body(body, options_.max_body_bytes, drain_limit());
        body_read = true;
      } else {
        read.complete = true;
      }
      if (read.exceeded) {  // B1, found while reading
        res = error_response(413, "request_too_large", too_large_message());
        res.close_connection = true;
        res.abort_connection = !read.complete;
      } else if (!read.complete) {
        res = error_response(400, "invalid_request", "the request body could not be read");
        res.close_connection = res.abort_connection = true;
      } else {
        info.received_at = Clock::now();
        res = dispatch(request, *route, body, info);
      }
    }
  } catch (const std::exception& e) {
    log_line("request " + info.request_id + ": internal error: " + e.what());
    res = error_response(500, "internal_error", "internal server error (request id " + info.request_id + ")");
  }

  // A body left unread by an early refusal is read and discarded (within the drain limit), so
  // that the client, which may still be sending it, gets the response; past the limit the
  // connection is shut down.
  if (request.has_body && !body_read) {
    std::string scratch;
    if (!request.read_body(scratch, 0, drain_limit()).complete) res.close_connection = res.abort_connection = true;
  }
  if (draining()) res.close_connection = true;
  res.set_header("x-request-id", info.request_id);
  add_cors(request, res);

  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  metrics_.record_request(route ? route->label : "unmatched", res.status, seconds);
  if (options_.access_log || res.status >= 500) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", seconds * 1000);
    log_line(info.request_id + " " + request.method + " " + request.path + " " + std::to_string(res.status) + " " + ms +
             " ms" + (info.model.empty() ? "" : " model=" + info.model));
  }
  return res;
}

HttpResponse Api::dispatch(HttpRequest& request, const Route& route, const std::string& body, RequestInfo& info) {
  switch (route.endpoint) {
    case Endpoint::kSystemOne: return answer_systemone({registry_, options_, metrics_}, request, body, info);
    case Endpoint::kChatCompletions:
      return answer_completion({registry_, options_, metrics_}, request, body, info, chat::Endpoint::kChat);
    case Endpoint::kCompletions:
      return answer_completion({registry_, options_, metrics_}, request, body, info, chat::Endpoint::kCompletions);
    case Endpoint::kModels: return list_models(registry_);
    case Endpoint::kModel: return get_model(registry_, route.model);
    case Endpoint::kModelAction: return model_action(registry_, route.model, route.action, info.request_id);
    case Endpoint::kHealth: return health(registry_, draining());
    case Endpoint::kMetrics: {
      HttpResponse res;
      res.content_type = "text/plain; version=0.0.4; charset=utf-8";
      res.body = metrics_.render(registry_, in_flight());
      return res;
    }
  }
  return error_response(404, "not_found", "unknown endpoint: " + request.method + " " + request.path);
}

HttpResponse Api::library_error(int status, const std::string& method, const std::string& path,
                                const std::optional<std::string>& request_id) {
  HttpResponse res;
  const std::string rid = request_id_for(request_id);
  const std::optional<Route> route = path.empty() || path.front() != '/' ? std::nullopt : match_route(path);
  if (status == 413) {
    res = error_response(413, "request_too_large", too_large_message());
  } else if (status == 414) {
    res = error_response(414, "uri_too_long", "request URI too long");
  } else if (!method.empty() && route && !route_allows(*route, method)) {
    res = error_response(405, "method_not_allowed", "method " + method + " not allowed on " + path);
    res.set_header("Allow", allow_header(*route));
  } else if (!method.empty() && !path.empty() && path.front() == '/' && !route) {
    res = error_response(404, "not_found", "unknown endpoint: " + method + " " + path);
  } else if (status >= 500) {
    res = error_response(500, "internal_error", "internal server error (request id " + rid + ")");
  } else {
    res = error_response(400, "invalid_request", "malformed HTTP request");
  }
  res.set_header("x-request-id", rid);
  metrics_.record_request(route ? route->label : "unmatched", res.status, 0);
  return res;
}

}  // namespace verdict::server
