// POST /v1/systemone (systemone-api.md §3–§9): validation in rule order, model resolution with a
// lease, record encoding, admission to the model's engine, the joint head and the answers.
#pragma once
#include <chrono>
#include <string>

#include "registry/registry.h"
#include "server/http_types.h"
#include "server/metrics.h"
#include "server/options.h"

namespace verdict::server {

struct SystemOneContext {
  registry::Registry& registry;
  const ServerOptions& options;
  Metrics& metrics;
};

struct RequestInfo {
  std::string request_id;
  std::chrono::steady_clock::time_point received_at;  // the full body was read
  std::string model;                                  // set once resolved (for the log)
};

HttpResponse answer_systemone(const SystemOneContext& context, const HttpRequest& request, const std::string& body,
                              RequestInfo& info);

}  // namespace verdict::server
