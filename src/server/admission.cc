#include "server/admission.h"

#include "registry/errors.h"
#include "server/errors.h"
#include "server/log.h"

namespace verdict::server {

AwaitingLoad::AwaitingLoad(Metrics& metrics, std::string model, std::size_t max_queue)
    : metrics_(metrics), model_(std::move(model)) {
  if (metrics_.add_awaiting_load(model_, +1) > static_cast<int>(max_queue)) {
    metrics_.add_awaiting_load(model_, -1);
    throw RetryableError(429, "queue_full", "server busy: the queue for model '" + model_ + "' is full; retry later", 1);
  }
  held_ = true;
}

void AwaitingLoad::release() {
  if (held_) metrics_.add_awaiting_load(model_, -1);
  held_ = false;
}

RetryableError queue_timeout_error(const ServerOptions& options, int retry_after) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(options.queue_timeout).count();
  return RetryableError(503, "queue_timeout",
                        "request waited more than " + std::to_string(seconds) + " s in the queue; retry later",
                        retry_after);
}

registry::LoadedModel& wait_for_weights(registry::Lease& lease, const HttpRequest& request,
                                        std::chrono::steady_clock::time_point deadline, const ServerOptions& options) {
  bool client_left = false;
  try {
    return lease.ensure_loaded([&] {
      client_left = request.client_connected && !request.client_connected();
      return !client_left && std::chrono::steady_clock::now() < deadline;
    });
  } catch (const registry::WaitAbandoned&) {
    if (client_left) throw ClientGone();
    throw queue_timeout_error(options, 1);
  }
}

HttpResponse model_route_error(const std::string& request_id) {
  try {
    throw;
  } catch (const decision::DecisionError& e) {
    return error_response(e);
  } catch (const registry::InsufficientMemoryError& e) {
    log_line("request " + request_id + ": " + e.what() + " — " + e.detail());
    return error_response(503, "insufficient_memory", e.what(), 1);
  } catch (const registry::LoadFailedError& e) {
    log_line("request " + request_id + ": " + e.what());
    return error_response(500, "model_load_failed",
                          "model '" + e.model() + "' failed to load: " + e.reason() + " (request id " + request_id + ")");
  } catch (const ClientGone&) {
    HttpResponse res = error_response(499, "client_closed_request", "client disconnected");
    res.close_connection = true;
    return res;
  } catch (const std::exception& e) {
    log_line("request " + request_id + ": internal error: " + e.what());
  } catch (...) {
    log_line("request " + request_id + ": internal error (unknown exception)");
  }
  return error_response(500, "internal_error", "internal server error (request id " + request_id + ")");
}

}  // namespace verdict::server
