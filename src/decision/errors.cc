#include "decision/errors.h"

#include "decision/render.h"

namespace verdict::decision {

std::string error_type_for(int status, std::string_view code) {
  switch (status) {
    case 400:
    case 405:
    case 413:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 404:
      return code == "not_found" ? "not_found_error" : "invalid_request_error";
    case 429:
      return "rate_limit_error";
    case 503:
      return "unavailable_error";
    default:
      return "server_error";
  }
}

std::string error_body(int status, std::string_view code, std::string_view message) {
  std::string out = "{\"error\":{\"message\":";
  append_json_string(out, message);
  out += ",\"type\":";
  append_json_string(out, error_type_for(status, code));
  out += ",\"code\":";
  append_json_string(out, code);
  out += "}}";
  return out;
}

std::string DecisionError::type() const { return error_type_for(status_, code_); }

std::string DecisionError::body() const { return error_body(status_, code_, what()); }

}  // namespace verdict::decision
