// Request ids (systemone-api.md §2.4): the client's `x-request-id` when it is 1–128 printable
// ASCII characters, else `req_` + 24 lowercase hex digits.
#pragma once
#include <optional>
#include <string>

namespace verdict::server {

std::string request_id_for(const std::optional<std::string>& sent);
std::string generate_request_id();

}  // namespace verdict::server
