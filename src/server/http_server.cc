#include "server/http_server.h"

#include <httplib.h>

#include <atomic>
#include <charconv>
#include <string>

#include "core/error.h"
#include "server/connection_probe.h"
#include "server/log.h"

namespace verdict::server {
namespace {

using Clock = std::chrono::steady_clock;

// Set while this worker thread handles a request, until its response is written (the library's
// logger runs after the write, on the same thread).
thread_local bool t_counted = false;
// The connection of the response being written must be shut down after it (request bytes unread).
thread_local bool t_abort = false;

// The header a refused Content-Encoding is moved to, so that the library never decodes the body.
constexpr const char* kRefusedEncoding = "X-Verdict-Refused-Content-Encoding";

// Paths longer than this are refused before the library's regex routing sees them (std::regex
// recurses per character).
constexpr std::size_t kMaxPath = 2048;

bool is_library_header(const std::string& key) {
  return key == "REMOTE_ADDR" || key == "REMOTE_PORT" || key == "LOCAL_ADDR" || key == "LOCAL_PORT";
}

Headers request_headers(const httplib::Request& req) {
  Headers headers;
  for (const auto& [key, value] : req.headers) {
    if (is_library_header(key)) continue;
    headers.emplace_back(key == kRefusedEncoding ? "Content-Encoding" : key, value);
  }
  return headers;
}

std::optional<std::size_t> content_length(const httplib::Request& req) {
  if (!req.has_header("Content-Length")) return std::nullopt;
  const std::string v = req.get_header_value("Content-Length");
  std::size_t n = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || ptr != v.data() + v.size()) return std::nullopt;
  return n;
}

bool is_chunked(const httplib::Request& req) {
  return req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
}

std::optional<std::string> header(const httplib::Request& req, const char* name) {
  if (!req.has_header(name)) return std::nullopt;
  return req.get_header_value(name);
}

void write_response(const HttpResponse& out, httplib::Response& res) {
  t_abort = out.abort_connection;
  res.status = out.status;
  for (const auto& [key, value] : out.headers) res.set_header(key, value);
  if (out.close_connection) res.set_header("Connection", "close");
  if (out.stream) {
    auto stream = out.stream;
    res.set_chunked_content_provider(out.content_type, [stream](size_t, httplib::DataSink& sink) {
      stream([&sink](std::string_view data) { return sink.is_writable() && sink.write(data.data(), data.size()); });
      sink.done();
      return true;
    });
    return;
  }
  if (!out.content_type.empty()) res.set_content(out.body, out.content_type);
}

}  // namespace

// The library listens with a backlog of 5 (a compile-time constant of the packaged library): under
// a burst of connections the kernel drops SYNs and clients stall for a second. Listening again on
// the bound socket raises the backlog.
class Listener : public httplib::Server {
 public:
  void raise_backlog() {
    const socket_t fd = svr_sock_;
    if (fd != INVALID_SOCKET && ::listen(fd, SOMAXCONN) != 0) log_line("cannot raise the listen backlog");
  }
};

struct HttpServer::Impl {
  Listener server;
  std::atomic<int> active{0};
  std::atomic<bool> running{false};
};

HttpServer::HttpServer(Api& api) : api_(api), impl_(std::make_unique<Impl>()) {
  httplib::Server& svr = impl_->server;
  const ServerOptions& o = api_.options();
  const int threads = o.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  svr.set_read_timeout(o.read_timeout.count(), 0);
  svr.set_write_timeout(o.write_timeout.count(), 0);
  svr.set_keep_alive_timeout(o.idle_timeout.count());
  svr.set_keep_alive_max_count(10000);
  svr.set_tcp_nodelay(true);

  auto serve = [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader) {
    // Counted until the logger runs after the write (a previous exchange on this thread that never
    // reached the logger is uncounted here).
    if (!t_counted) ++impl_->active;
    t_counted = true;
    t_abort = false;
    HttpRequest r;
    r.method = req.method;
    r.path = req.path;
    r.headers = request_headers(req);
    r.content_length = content_length(req);
    r.has_body = is_chunked(req) || r.content_length.value_or(0) > 0;
    r.read_body = [reader](std::string& body, std::size_t keep, std::size_t drain) {
      BodyRead read;
      if (reader == nullptr) return read;  // a GET body: the library cannot read it
      std::size_t total = 0;
      read.complete = (*reader)([&](const char* data, size_t n) {
        total += n;
        if (body.size() + n <= keep && !read.exceeded) {
          body.append(data, n);
        } else {
          read.exceeded = true;
        }
        return total <= drain;
      });
      return read;
    };
    auto probe = std::make_shared<ConnectionProbe>(req.remote_addr, req.remote_port, req.local_addr, req.local_port);
    r.client_connected = [probe] { return probe->connected(); };
    write_response(api_.handle(r), res);
  };

  svr.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // A Content-Encoding other than identity is refused (rule B0); the library would decode the
    // body (gzip, deflate, br) while reading it, so the header is moved aside first. The request
    // object belongs to the library's worker and is not const itself.
    auto& headers = const_cast<httplib::Request&>(req).headers;
    headers.erase(kRefusedEncoding);
    const auto encoding = headers.find("Content-Encoding");
    if (encoding != headers.end() && encoding->second != "identity" && !encoding->second.empty()) {
      const std::string value = encoding->second;
      headers.erase("Content-Encoding");
      headers.emplace(kRefusedEncoding, value);
    }
    if (req.path.size() <= kMaxPath) return httplib::Server::HandlerResponse::Unhandled;
    HttpResponse out = api_.library_error(404, req.method, req.path, header(req, "x-request-id"));
    out.close_connection = out.abort_connection = true;
    write_response(out, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  // A client that announces an over-long body with `Expect: 100-continue` gets its refusal before
  // sending it.
  svr.set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
    const std::optional<std::size_t> length = content_length(req);
    if (!length || *length <= api_.options().max_body_bytes) return 100;
    HttpRequest r;
    r.method = req.method;
    r.path = req.path;
    r.headers = request_headers(req);
    r.has_body = true;
    r.content_length = length;
    r.read_body = [](std::string&, std::size_t, std::size_t) { return BodyRead{}; };  // never sent
    HttpResponse out = api_.handle(r);
    out.close_connection = true;
    out.abort_connection = false;
    write_response(out, res);
    return out.status;
  });

  const auto plain = [serve](const httplib::Request& req, httplib::Response& res) { serve(req, res, nullptr); };
  const auto with_body = [serve](const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& reader) { serve(req, res, &reader); };
  svr.Get(".*", plain);
  svr.Options(".*", plain);
  svr.Post(".*", with_body);
  svr.Put(".*", with_body);
  svr.Patch(".*", with_body);
  svr.Delete(".*", with_body);

  // Errors the library answers itself (malformed requests, unknown methods, over-long URIs) get
  // the JSON error body; responses that already have one are left alone.
  svr.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        write_response(api_.library_error(res.status, req.method, req.path, header(req, "x-request-id")), res);
        return httplib::Server::HandlerResponse::Handled;
      }));
  svr.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    write_response(api_.library_error(500, req.method, req.path, header(req, "x-request-id")), res);
  });
  svr.set_logger([this](const httplib::Request& req, const httplib::Response&) {
    if (t_abort) {
      t_abort = false;
      ConnectionProbe(req.remote_addr, req.remote_port, req.local_addr, req.local_port).shut_down();
    }
    if (t_counted) {
      t_counted = false;
      --impl_->active;
    }
  });
}

HttpServer::~HttpServer() {
  if (impl_->running.exchange(false)) impl_->server.stop();
  if (thread_.joinable()) thread_.join();
}

int HttpServer::start() {
  const ServerOptions& o = api_.options();
  Listener& svr = impl_->server;
  if (o.port == 0) {
    port_ = svr.bind_to_any_port(o.host);
    if (port_ <= 0) throw Error("cannot listen on " + o.host + " (an ephemeral port)");
  } else {
    if (!svr.bind_to_port(o.host, o.port))
      throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                  " (address in use, or not an address of this machine)");
    port_ = o.port;
  }
  svr.raise_backlog();
  impl_->running = true;
  thread_ = std::thread([this] {
    if (!impl_->server.listen_after_bind() && impl_->running.load()) log_line("the HTTP listener stopped unexpectedly");
  });
  while (!impl_->server.is_running() && impl_->running.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return port_;
}

int HttpServer::active() const { return impl_->active.load(); }

bool HttpServer::shutdown(std::chrono::steady_clock::time_point deadline) {
  api_.begin_draining();
  if (impl_->running.exchange(false)) impl_->server.stop();
  while (impl_->active.load() > 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return impl_->active.load() == 0;
}

}  // namespace verdict::server
