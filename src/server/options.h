// Settings of the HTTP server (systemone-api.md §13 for the decision limits).
#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "decision/request.h"

namespace verdict::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                                 // 0: an ephemeral port
  std::size_t max_body_bytes = 32u << 20;          // rule B1
  decision::RequestLimits limits;                  // rules J2, Q2, Q7, Q9, D4
  bool truncate_by_default = false;                // --truncate (§6)
  std::vector<std::string> api_keys;               // empty: authentication off (§2.3)
  std::vector<std::string> cors_origins;           // empty: CORS off (§2.5); "*" allows any origin
  std::size_t max_queue = 64;                      // per model (O1), also for requests awaiting a load
  std::chrono::milliseconds queue_timeout{60000};  // rule O4
  int threads = 256;                               // HTTP workers = connections served at once
  std::chrono::seconds read_timeout{30};           // headers and body: the most a read may stall
  std::chrono::seconds write_timeout{30};
  std::chrono::seconds idle_timeout{5};            // keep-alive connections without a request
  bool access_log = false;                         // one line per request on stderr
};

}  // namespace verdict::server
