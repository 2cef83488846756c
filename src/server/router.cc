#include "server/router.h"

#include <algorithm>

namespace verdict::server {
namespace {

Route make(Endpoint endpoint, std::string label, std::vector<std::string> methods, bool needs_key = true) {
  Route r;
  r.endpoint = endpoint;
  r.label = std::move(label);
  r.methods = std::move(methods);
  r.needs_key = needs_key;
  return r;
}

}  // namespace

std::optional<Route> match_route(std::string_view path) {
  if (path == "/v1/systemone") return make(Endpoint::kSystemOne, "/v1/systemone", {"POST"});
  if (path == "/v1/chat/completions") return make(Endpoint::kChatCompletions, "/v1/chat/completions", {"POST"});
  if (path == "/v1/completions") return make(Endpoint::kCompletions, "/v1/completions", {"POST"});
  if (path == "/v1/models") return make(Endpoint::kModels, "/v1/models", {"GET"});
  if (path == "/health") return make(Endpoint::kHealth, "/health", {"GET"}, false);
  if (path == "/metrics") return make(Endpoint::kMetrics, "/metrics", {"GET"});
  constexpr std::string_view kModels = "/v1/models/";
  if (path.substr(0, kModels.size()) != kModels) return std::nullopt;
  std::string_view rest = path.substr(kModels.size());
  const std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) {
    if (rest.empty()) return std::nullopt;
    Route r = make(Endpoint::kModel, "/v1/models/{id}", {"GET"});
    r.model = std::string(rest);
    return r;
  }
  const std::string_view id = rest.substr(0, slash);
  const std::string_view verb = rest.substr(slash + 1);
  static const std::pair<std::string_view, ModelAction> kActions[] = {
      {"load", ModelAction::kLoad}, {"unload", ModelAction::kUnload}, {"pin", ModelAction::kPin}, {"unpin", ModelAction::kUnpin}};
  if (id.empty()) return std::nullopt;
  for (const auto& [name, action] : kActions) {
    if (verb != name) continue;
    Route r = make(Endpoint::kModelAction, "/v1/models/{id}/" + std::string(name), {"POST"});
    r.model = std::string(id);
    r.action = action;
    return r;
  }
  return std::nullopt;
}

bool route_allows(const Route& route, std::string_view method) {
  if (method == "HEAD") method = "GET";
  return std::find(route.methods.begin(), route.methods.end(), method) != route.methods.end();
}

std::string allow_header(const Route& route) {
  std::string out;
  for (const std::string& m : route.methods) {
    out += (out.empty() ? "" : ", ") + m;
    if (m == "GET") out += ", HEAD";
  }
  return out + ", OPTIONS";
}

}  // namespace verdict::server
