// The routes verdict serves and the methods each accepts (rules R1, R2).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::server {

enum class Endpoint { kSystemOne, kChatCompletions, kCompletions, kModels, kModel, kModelAction, kHealth, kMetrics };
enum class ModelAction { kLoad, kUnload, kPin, kUnpin };

struct Route {
  Endpoint endpoint = Endpoint::kHealth;
  std::string label;            // the route template, for metrics ("/v1/models/{id}")
  std::vector<std::string> methods;  // besides OPTIONS (preflight) and HEAD on GET routes
  std::string model;            // {id} of the model routes
  ModelAction action = ModelAction::kLoad;
  bool needs_key = true;        // every route except /health when keys are configured
};

// The route serving `path`, or nullopt (rule R1).
std::optional<Route> match_route(std::string_view path);
// Whether `method` is served on `route` (HEAD wherever GET is).
bool route_allows(const Route& route, std::string_view method);
// The Allow header: the methods plus OPTIONS ("GET, HEAD, OPTIONS").
std::string allow_header(const Route& route);

}  // namespace verdict::server
