// The HTTP exchange as the application sees it, independent of the HTTP library: the adapter
// (http_server.cc) fills an HttpRequest, Api answers with an HttpResponse.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace verdict::server {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive header lookup (the first value), nullopt when absent.
std::optional<std::string> find_header(const Headers& headers, std::string_view name);

// What reading a request body gave.
struct BodyRead {
  bool complete = false;  // every byte of the body was consumed (the connection can be reused)
  bool exceeded = false;  // the body is longer than the bytes kept
};

struct HttpRequest {
  std::string method;
  std::string path;  // decoded, without the query
  Headers headers;
  // Whether a body follows the headers (Content-Length > 0 or chunked) and its declared length.
  bool has_body = false;
  std::optional<std::size_t> content_length;
  // Reads the body: keeps up to `keep` bytes in `body`, discards the rest, and stops reading once
  // more than `drain` bytes came (the rest stays unread). Called at most once.
  std::function<BodyRead(std::string& body, std::size_t keep, std::size_t drain)> read_body;
  // False once the client has gone (polled while a request waits for the model).
  std::function<bool()> client_connected;
};

struct HttpResponse {
  int status = 200;
  Headers headers;
  std::string body;
  std::string content_type = "application/json";
  // Ask the client to close the connection after this response (Connection: close).
  bool close_connection = false;
  // Request bytes were left unread: the connection cannot carry another request and is shut down
  // once the response is written.
  bool abort_connection = false;
  // A streamed body (Server-Sent Events): when set, `body` is ignored and the adapter sends the
  // headers, then calls `stream` with a writer that sends one piece at once (chunked transfer
  // encoding). The writer returns false once the client is gone; `stream` then returns early.
  // `stream` is called at most once; when it never is (the connection broke first) it is destroyed
  // unused, so it must release what it holds in its destructor.
  using Writer = std::function<bool(std::string_view data)>;
  std::function<void(const Writer& write)> stream;

  void set_header(std::string name, std::string value);
};

}  // namespace verdict::server
