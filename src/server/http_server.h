// The HTTP/1.1 front end (cpp-httplib): keep-alive, Content-Length and chunked request bodies,
// a pool of worker threads (one per connection being served), read/write/idle timeouts, and a
// graceful shutdown. Every request goes to Api::handle; the library only moves bytes.
#pragma once
#include <chrono>
#include <memory>
#include <thread>

#include "server/api.h"

namespace verdict::server {

class HttpServer {
 public:
  explicit HttpServer(Api& api);
  // Stops listening and joins the worker threads (idle keep-alive connections end within the idle
  // timeout).
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the configured host and port (port 0: an ephemeral one) and serves on background
  // threads. Returns the bound port. Throws verdict::Error when the address cannot be bound.
  int start();
  int port() const { return port_; }

  // Graceful shutdown: new requests on open connections get 503 shutting_down, the listener
  // closes, and requests in flight run to completion until `deadline`. True when all finished
  // (their responses written).
  bool shutdown(std::chrono::steady_clock::time_point deadline);
  // Requests being handled or written right now.
  int active() const;

 private:
  struct Impl;
  Api& api_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace verdict::server
