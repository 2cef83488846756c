// One-line log messages on stderr ("2026-01-02T03:04:05Z verdict: ..."), safe from any thread.
#pragma once
#include <string_view>

namespace verdict::server {

void log_line(std::string_view message);

}  // namespace verdict::server
