// libFuzzer target: raw bytes → an HTTP request (method, path, headers, body) → server::Api::handle,
// the whole application path of the server: routing, authentication, CORS, request ids, body
// rules, JSON reading, SystemOne validation, model resolution, record encoding and admission.
// The memory budget is one byte, so no request reaches the backbone: valid requests end in 503
// insufficient_memory. Must never crash, and never answer 500 (bad input never yields a 5xx).
//
// Input: "METHOD PATH\n" then "Name: value\n" header lines, an empty line, then the body.
// Needs the clef-tiny checkpoint: $VERDICT_CLEF_DIR, else $VERDICT_FIXTURES/clef-tiny/bf16.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "registry/registry.h"
#include "server/api.h"

namespace {

using namespace verdict;

std::string checkpoint_dir() {
  if (const char* dir = std::getenv("VERDICT_CLEF_DIR")) return dir;
  const char* fixtures = std::getenv("VERDICT_FIXTURES");
  return std::string(fixtures != nullptr ? fixtures : "../shared/fixtures") + "/clef-tiny/bf16";
}

server::Api& api() {
  static registry::Registry* registry = [] {
    registry::RegistryOptions o;
    o.models = {{"clef-tiny", checkpoint_dir(), registry::ModelKind::kDecision},
                {"clef-tiny-short", checkpoint_dir(), registry::ModelKind::kDecision}};
    o.max_length = {{"clef-tiny-short", 480}};
    o.max_memory_bytes = 1;
    auto* r = new registry::Registry(o);
    r->initialize();
    return r;
  }();
  static server::Api* instance = [] {
    server::ServerOptions s;
    s.api_keys = {"fuzz-key"};
    s.cors_origins = {"https://app.example"};
    s.max_body_bytes = 1 << 16;
    s.limits.max_json_depth = 64;
    return new server::Api(*registry, s);
  }();
  return *instance;
}

std::string_view next_line(std::string_view& rest) {
  const std::size_t nl = rest.find('\n');
  const std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  server::HttpRequest req;
  const std::string_view first = next_line(rest);
  const std::size_t space = first.find(' ');
  req.method = std::string(first.substr(0, space));
  req.path = space == std::string_view::npos ? "/" : std::string(first.substr(space + 1));
  while (!rest.empty()) {
    const std::string_view line = next_line(rest);
    if (line.empty()) break;
    const std::size_t colon = line.find(':');
    std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    req.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  const std::string body(rest);
  req.has_body = !body.empty();
  req.content_length = body.size();
  bool read = false;
  req.read_body = [&](std::string& out, std::size_t keep, std::size_t drain) {
    server::BodyRead r;
    if (read) std::abort();  // the body is read at most once
    read = true;
    r.exceeded = body.size() > keep;
    if (!r.exceeded) out = body;
    r.complete = body.size() <= drain;
    return r;
  };
  req.client_connected = [] { return true; };

  const server::HttpResponse res = api().handle(req);
  if (res.status >= 500 && res.status != 503) {
    std::fprintf(stderr, "status %d: %s\n", res.status, res.body.c_str());
    std::abort();
  }
  if (res.status < 100 || res.status > 599) std::abort();
  return 0;
}
