#include "server/systemone_route.h"

#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "decision/decision.h"
#include "decision/render.h"
#include "engine/compute_gate.h"
#include "engine/job.h"
#include "registry/errors.h"
#include "server/admission.h"
#include "server/errors.h"
#include "server/log.h"

namespace verdict::server {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(25);

// Waits for the engine to run a record, giving up when the client leaves (the job is dropped) or
// when it has not started by the queue deadline (rule O4).
class EngineWait {
 public:
  EngineWait(engine::Scheduler& scheduler, const HttpRequest& request, Clock::time_point deadline,
             const ServerOptions& options)
      : scheduler_(scheduler), request_(request), deadline_(deadline), options_(options) {}

  decision::HiddenRows run(std::span<const decision::TokenId> ids, std::span<const int64_t> seams,
                           AwaitingLoad& awaiting) {
    // From here on the engine queue bounds the request. Released before the submission, not after: once
    // submitted the job may start (and another request arrive) before this thread runs again, and a
    // request counted in both places made that one a spurious 429.
    awaiting.release();
    std::shared_ptr<engine::Job> job;
    try {
      job = scheduler_.submit(std::vector<engine::TokenId>(ids.begin(), ids.end()),
                              std::vector<int64_t>(seams.begin(), seams.end()));
    } catch (const engine::QueueFullError& e) {
      throw RetryableError(429, "queue_full", e.what(), retry_after_seconds(scheduler_.estimated_wait_seconds()));
    }
    while (!job->wait_until(Clock::now() + kPollInterval)) {
      if (request_.client_connected && !request_.client_connected()) {
        scheduler_.cancel(job);
        throw ClientGone();
      }
      if (Clock::now() >= deadline_ && !job->started() && scheduler_.cancel_queued(job)) throw queue_timeout();
    }
    decision::HiddenRows rows;
    try {
      rows.data = job->take_hidden();
    } catch (const engine::JobCancelled&) {
      throw RetryableError(503, "shutting_down", "server is shutting down", 1);
    }
    rows.rows = ids.size();
    rows.cols = static_cast<std::size_t>(job->hidden_size());
    rows.cached_tokens = job->cached_tokens();
    return rows;
  }

  RetryableError queue_timeout() const {
    return queue_timeout_error(options_, retry_after_seconds(scheduler_.estimated_wait_seconds()));
  }

 private:
  engine::Scheduler& scheduler_;
  const HttpRequest& request_;
  Clock::time_point deadline_;
  const ServerOptions& options_;
};

}  // namespace

HttpResponse answer_systemone(const SystemOneContext& context, const HttpRequest& request, const std::string& body,
                              RequestInfo& info) {
  const ServerOptions& options = context.options;
  try {
    decision::Value parsed = decision::read_request_body(body, options.limits);           // J1–J3
    const decision::Envelope envelope = decision::check_envelope(parsed);                 // V1–V3
    registry::Lease lease = context.registry.resolve_decision(decision::trim_ascii_whitespace(envelope.model));  // M1, M2
    info.model = lease.name();
    const decision::DecisionRequest decision_request =
        decision::build_request(std::move(parsed), options.limits, lease.media(), lease.name());  // Q, D
    const bool truncate = decision_request.truncate.value_or(options.truncate_by_default);
    // Length rules (C1, C2) come before admission: check them before waiting for weights.
    if (!lease.resident()) (void)lease.encoder().encode(decision_request, lease.max_length(), truncate);

    // Admission: wait for the weights (O3 when they cannot be loaded), then the engine queue.
    const Clock::time_point deadline = Clock::now() + options.queue_timeout;
    AwaitingLoad awaiting(context.metrics, lease.name(), options.max_queue);
    registry::LoadedModel* model = &wait_for_weights(lease, request, deadline, options);

    EngineWait wait(model->scheduler(), request, deadline, options);
    const decision::DecisionModel decision_model{
        lease.encoder(), model->head(),
        [&](std::span<const decision::TokenId> ids, std::span<const int64_t> seams) {
          return wait.run(ids, seams, awaiting);
        },
        model->lexical()};
    decision::DecideOptions decide;
    decide.max_length = lease.max_length();
    decide.truncate_by_default = options.truncate_by_default;
    decide.request_id = info.request_id;
    // The head: on every core when no step runs (a sequential client's decisions), else on this thread
    // beside the step (concurrent ones).
    decide.run_head = [&](const std::function<void()>& head) {
      engine::run_beside_steps(model->scheduler().gate(), head);
    };
    const decision::Decision decision = decision::decide(decision_request, decision_model, decide);

    const double latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - info.received_at).count();
    const decision::Usage usage = decision::decision_usage(decision, latency_ms, true);
    HttpResponse res;
    res.body = decision::response_json(lease.name(), decision.answers, usage);
    context.metrics.add_decision(lease.name(), decision.record.input_ids.size());
    return res;
  } catch (...) {
    return model_route_error(info.request_id);
  }
}

}  // namespace verdict::server
