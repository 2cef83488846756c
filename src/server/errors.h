// Error responses of the server (systemone-api.md §2.8, §9, §12): every error body is
// {"error":{"message","type","code"}}; 429 and 503 carry Retry-After.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "decision/errors.h"
#include "server/http_types.h"

namespace verdict::server {

// A refusal that tells the client when to come back (O1, O3, O4): 429 or 503 + Retry-After.
class RetryableError : public decision::DecisionError {
 public:
  RetryableError(int status, std::string code, const std::string& message, int retry_after)
      : DecisionError(status, std::move(code), message), retry_after_(retry_after) {}
  int retry_after() const { return retry_after_; }

 private:
  int retry_after_;
};

// The client disconnected while its request waited; nothing can be answered.
class ClientGone : public Error {
 public:
  ClientGone() : Error("client disconnected") {}
};

// Retry-After seconds from an estimate: rounded up, clamped to [1, 60]; 1 without an estimate.
int retry_after_seconds(std::optional<double> estimate_seconds);

// The JSON error response; 429 and 503 get Retry-After (`retry_after`, default 1).
HttpResponse error_response(int status, std::string_view code, std::string_view message,
                            std::optional<int> retry_after = std::nullopt);
HttpResponse error_response(const decision::DecisionError& error);

}  // namespace verdict::server
