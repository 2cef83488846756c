#include "server/errors.h"

#include <cmath>

namespace verdict::server {

int retry_after_seconds(std::optional<double> estimate_seconds) {
  if (!estimate_seconds || !std::isfinite(*estimate_seconds)) return 1;
  const double s = std::ceil(*estimate_seconds);
  return s < 1 ? 1 : s > 60 ? 60 : static_cast<int>(s);
}

HttpResponse error_response(int status, std::string_view code, std::string_view message,
                            std::optional<int> retry_after) {
  HttpResponse res;
  res.status = status;
  res.body = decision::error_body(status, code, message);
  if (status == 429 || status == 503) res.set_header("Retry-After", std::to_string(retry_after.value_or(1)));
  return res;
}

HttpResponse error_response(const decision::DecisionError& error) {
  std::optional<int> retry_after;
  if (const auto* r = dynamic_cast<const RetryableError*>(&error)) retry_after = r->retry_after();
  return error_response(error.status(), error.code(), error.what(), retry_after);
}

}  // namespace verdict::server
