// DecisionError: a SystemOne error with its HTTP status, `code` and exact message
// (systemone-api.md §5 and §12). Everything the decision layer refuses is reported this way, so the
// server and the CLI can write the error body without knowing which rule fired.
#pragma once
#include <string>
#include <string_view>
#include <utility>

#include "core/error.h"

namespace verdict::decision {

class DecisionError : public Error {
 public:
  DecisionError(int status, std::string code, const std::string& message)
      : Error(message), status_(status), code_(std::move(code)) {}

  int status() const { return status_; }
  const std::string& code() const { return code_; }
  // The error `type` for the status and code (systemone-api.md §12).
  std::string type() const;
  // {"error":{"message":…,"type":…,"code":…}}
  std::string body() const;

 private:
  int status_;
  std::string code_;
};

// The `type` of §12 for a status and code: invalid_request_error (400, 404 model_not_found, 405,
// 413), authentication_error (401), not_found_error (404 not_found), rate_limit_error (429),
// unavailable_error (503), server_error (500 and anything else).
std::string error_type_for(int status, std::string_view code);

// Writes an error body for any status, code and message.
std::string error_body(int status, std::string_view code, std::string_view message);

}  // namespace verdict::decision
