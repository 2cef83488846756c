// Admission shared by the model routes: a request waiting for its model's weights counts against
// the model's queue (rule O1), and gives up when the client leaves or the queue deadline passes
// (rule O4).
#pragma once
#include <chrono>
#include <string>

#include "registry/registry.h"
#include "server/errors.h"
#include "server/http_types.h"
#include "server/metrics.h"
#include "server/options.h"

namespace verdict::server {

// Counts a request among those awaiting the model's load while alive; throws RetryableError 429
// when max_queue requests already wait.
class AwaitingLoad {
 public:
  AwaitingLoad(Metrics& metrics, std::string model, std::size_t max_queue);
  ~AwaitingLoad() { release(); }
  AwaitingLoad(const AwaitingLoad&) = delete;
  AwaitingLoad& operator=(const AwaitingLoad&) = delete;
  void release();

 private:
  Metrics& metrics_;
  std::string model_;
  bool held_ = false;
};

// The model's weights, loading them if needed. Throws ClientGone when the client leaves and
// RetryableError 503 queue_timeout at `deadline`; the registry's load errors pass through.
registry::LoadedModel& wait_for_weights(registry::Lease& lease, const HttpRequest& request,
                                        std::chrono::steady_clock::time_point deadline, const ServerOptions& options);

// Inside a catch block of a model route: the response for the exception being handled — its own
// status for a DecisionError (RetryableError included), 503 insufficient_memory, 500
// model_load_failed, 499 for a client gone, else 500 internal_error (logged with the request id).
HttpResponse model_route_error(const std::string& request_id);

// The 503 queue_timeout refusal.
RetryableError queue_timeout_error(const ServerOptions& options, int retry_after);

}  // namespace verdict::server
