// verdict serve: the HTTP server (systemone-api.md) over the registry's models, until SIGINT or
// SIGTERM, then a graceful shutdown (in-flight requests finish, exit code 0).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cli/args.h"
#include "core/error.h"
#include "decision/json_value.h"
#include "kernels/thread_pool.h"
#include "modelgen/generator.h"
#include "registry/memory.h"
#include "registry/model_spec.h"
#include "registry/registry.h"
#include "server/api.h"
#include "server/auth.h"
#include "server/http_server.h"
#include "server/log.h"

namespace verdict::cli {

extern const char kServeUsage[] =
    "usage: verdict serve [--model [NAME=]DIR]... [--models DIR] [options]\n"
    "\n"
    "Serves decision models (POST /v1/systemone) and chat models (POST /v1/chat/completions and\n"
    "/v1/completions, OpenAI-compatible, streaming) over HTTP, with GET /v1/models, GET /v1/models/{id},\n"
    "GET /health, GET /metrics, and POST /v1/models/{id}/load|unload|pin|unpin. Models load on first\n"
    "use and share a memory budget; concurrent requests for a model are batched into shared forward\n"
    "passes (continuous batching for chat). SIGINT or SIGTERM stops accepting connections, lets\n"
    "requests in flight finish and exits 0.\n"
    "Without --model or --models, serves two demo models, made once (presets of `verdict make-model`)\n"
    "into $XDG_CACHE_HOME/verdict/ or ~/.cache/verdict/: the decision model `clef-demo` (clef-tiny) and\n"
    "the chat model `qwen-demo`; their weights are random and their answers meaningless.\n"
    "\n"
    "models:\n"
    "  --model [NAME=]DIR        serve the checkpoint in DIR, as NAME (default: the folder's name);\n"
    "                            repeatable. The kind is read from the files: a Clef checkpoint\n"
    "                            (joint_head.safetensors + joint_head_config.json) is a decision model,\n"
    "                            its backbone safetensors or one qwen35 .gguf file beside the head;\n"
    "                            anything else (or a .gguf file) a chat model.  --model clef=~/models/clef-flash\n"
    "  --models DIR              serve every checkpoint folder and .gguf file inside DIR, named after\n"
    "                            it (a .gguf file without the extension)      --models ~/models\n"
    "  --default-decision-model NAME\n"
    "                            the model answering \"model\": \"default\" and the aliases (default: the\n"
    "                            first decision model)                --default-decision-model clef\n"
    "  --decision-alias NAME     an alias of the default decision model; repeatable (default:\n"
    "                            jev-latest; `default` always is one) --decision-alias my-judge\n"
    "  --max-length NAME=N       context limit of a decision model in tokens (default 16384; at most the\n"
    "                            backbone's max_position_embeddings)  --max-length clef=8192\n"
    "  --preload                 load every model at start instead of on first use\n"
    "  --pin NAME                keep NAME loaded: loaded at start, never evicted nor unloaded by --ttl;\n"
    "                            repeatable                           --pin clef\n"
    "  --max-memory SIZE         memory budget for loaded models (weights + state + scratch): bytes,\n"
    "                            512M, 8G, 1.5G or 60% of RAM (default 75% of RAM). A load that would\n"
    "                            exceed it evicts the least recently used idle models first; if that\n"
    "                            cannot make room the request gets 503.  --max-memory 12G\n"
    "  --ttl SECONDS             unload models idle this long (pinned ones excepted)  --ttl 900\n"
    "\n"
    "HTTP:\n"
    "  --host ADDR               address to listen on (default 127.0.0.1)   --host 0.0.0.0\n"
    "  --port N                  port (default 8000; 0 picks a free one)    --port 8080\n"
    "  --api-key KEY             require `Authorization: Bearer KEY` on every route but /health;\n"
    "                            repeatable (also: env VERDICT_API_KEY)     --api-key s3cret\n"
    "  --api-key-file FILE       keys, one per line ('#' comments)          --api-key-file keys.txt\n"
    "  --cors-origin ORIGIN      allow browsers from ORIGIN; repeatable, * for any\n"
    "                            --cors-origin https://app.example.com\n"
    "  --max-body-bytes N        largest request body (default 33554432; larger ones get 413)\n"
    "  --http-threads N          connections served at once (default 256)  --http-threads 512\n"
    "  --read-timeout-s N        the most a read of headers or body may stall (default 30)\n"
    "  --idle-timeout-s N        close keep-alive connections idle this long (default 5)\n"
    "  --shutdown-timeout-s N    on SIGINT/SIGTERM, wait this long for requests in flight (default 30)\n"
    "  --access-log              log one line per request on stderr\n"
    "\n"
    "decisions (systemone-api.md §13):\n"
    "  --truncate                cut over-long states instead of refusing them with 413 (a request's\n"
    "                            \"truncate\" still overrides)\n"
    "  --max-questions N         questions per request (default 256)\n"
    "  --max-choice-options N    options per choice question (default 255)\n"
    "  --max-score-levels N      levels per score question (default 64)\n"
    "  --max-json-depth N        nesting of the request body (default 128)\n"
    "  --max-images N, --max-audio N, --max-videos N   media items per request (default 8, 4, 4)\n"
    "  --decision-cache SIZE     prefix cache per decision model: records resume from the saved\n"
    "                            state after the constant record prefix, or after a state sent\n"
    "                            before with other questions (usage.cached_tokens); same answers,\n"
    "                            bit for bit. Counts against --max-memory. 0 turns it off\n"
    "                            (default 256M)                        --decision-cache 1G\n"
    "\n"
    "scheduling:\n"
    "  --max-queue N             requests waiting per model before 429 (default 64)   --max-queue 256\n"
    "  --queue-timeout-s N       a request that waited this long to start is refused with 503 (default 60)\n"
    "  --max-batch-tokens N      tokens per batched forward step (default 512)\n"
    "  --prefill-chunk N         tokens of one record per step; longer records are prefilled in\n"
    "                            chunks interleaved with others (default 512; rounded down to a\n"
    "                            multiple of 64, the Qwen3.5 prefill grid)\n"
    "  --max-sequences N         records prefilled at once per model; each holds a state slot sized\n"
    "                            for the model's max length (default 4)\n"
    "  --chat-slots N            chat streams generating at once per chat model; more wait in the\n"
    "                            queue (default 16)                   --chat-slots 32\n"
    "  --ctx-size N              tokens per chat stream, prompt and completion together; each slot\n"
    "                            holds this much state (default 4096, at most the backbone's\n"
    "                            max_position_embeddings)             --ctx-size 8192\n"
    "  --threads N               compute threads (default: $VERDICT_THREADS or every hardware thread)\n"
    "\n"
    "example:\n"
    "  verdict serve --model clef-tiny=fixtures/clef-tiny/bf16 --port 8000\n"
    "  curl -s http://localhost:8000/v1/systemone -H \"Content-Type: application/json\" \\\n"
    "    -d '{\"model\": \"default\", \"state\": \"Checkout fails\", \"questions\": {\"urgent\": {\"type\": \"noul\"}}}'\n";

namespace {

using Clock = std::chrono::steady_clock;

std::size_t positive(Args& args, std::string_view name, std::size_t fallback, long long max = 1LL << 40) {
  const auto v = args.integer(name, 1, max);
  return v ? static_cast<std::size_t>(*v) : fallback;
}

// "NAME=N" for --max-length.
std::pair<std::string, std::size_t> name_and_length(const std::string& value) {
  const std::size_t eq = value.rfind('=');
  std::size_t n = 0;
  if (eq == std::string::npos || eq == 0) throw UsageError("--max-length needs NAME=N, got '" + value + "'");
  const std::string digits = value.substr(eq + 1);
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || n < 1)
    throw UsageError("--max-length " + value + ": N must be a positive integer");
  return {value.substr(0, eq), n};
}

std::string demo_model_dir(const std::string& name) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/verdict/" + name;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/verdict/" + name;
}

// A demo model made once into the cache from a make-model preset.
registry::ModelSpec demo_model(const std::string& name, const std::string& preset) {
  const std::string dir = demo_model_dir(name);
  if (!registry::is_checkpoint_dir(dir)) server::log_line("making the demo model `" + name + "` in " + dir);
  modelgen::GenerateOptions demo;
  demo.preset = preset;
  modelgen::ensure_model(demo, dir);
  return {name, dir, registry::detect_kind(dir)};
}

struct ServeConfig {
  registry::RegistryOptions registry;
  server::ServerOptions server;
  std::vector<std::string> preload;
  std::chrono::seconds shutdown_timeout{30};
  bool demo = false;
};

// Flag values that name missing or unusable files are usage errors (exit code 2).
template <class F>
auto as_usage_error(F&& f) {
  try {
    return f();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

ServeConfig parse(Args& args) {
  ServeConfig c;
  registry::RegistryOptions& r = c.registry;
  server::ServerOptions& s = c.server;
  r.log = [](const std::string& line) { server::log_line(line); };

  for (const std::string& m : args.values("model"))
    r.models.push_back(as_usage_error([&] { return registry::model_from_flag(m); }));
  for (const std::string& dir : args.values("models")) {
    std::vector<registry::ModelSpec> found = as_usage_error([&] { return registry::scan_models_dir(dir); });
    if (found.empty()) throw UsageError("--models " + dir + ": no checkpoint folder inside");
    r.models.insert(r.models.end(), found.begin(), found.end());
  }
  if (r.models.empty()) {
    // The embedded default: a demo decision model and a demo chat model, made once into the cache.
    r.models.push_back(demo_model("clef-demo", "clef-tiny"));
    r.models.push_back(demo_model("qwen-demo", "qwen-demo"));
    c.demo = true;
  }
  r.default_decision_model = args.value("default-decision-model");
  const std::vector<std::string> aliases = args.values("decision-alias");
  if (!aliases.empty()) r.decision_aliases = aliases;
  for (const std::string& v : args.values("max-length")) {
    const auto [name, n] = name_and_length(v);
    r.max_length[name] = n;
  }
  r.pinned = args.values("pin");
  if (args.flag("preload"))
    for (const auto& m : r.models) c.preload.push_back(m.name);
  if (const auto m = args.value("max-memory")) {
    try {
      r.max_memory_bytes = registry::parse_memory_size(*m);
    } catch (const Error& e) {
      throw UsageError(std::string("--max-memory: ") + e.what());
    }
  }
  if (const auto ttl = args.integer("ttl", 1, 1LL << 31)) r.ttl = std::chrono::seconds(*ttl);
  r.slots = static_cast<int64_t>(positive(args, "max-sequences", 4, 4096));
  r.chat_slots = static_cast<int64_t>(positive(args, "chat-slots", 16, 4096));
  r.chat_context = positive(args, "ctx-size", 4096, 1 << 24);
  r.batch.max_batch_tokens = static_cast<int64_t>(positive(args, "max-batch-tokens", 512));
  r.batch.chunk_tokens = static_cast<int64_t>(positive(args, "prefill-chunk", 512));
  r.max_queue = positive(args, "max-queue", 64);
  if (const auto cache = args.value("decision-cache")) {
    try {
      r.decision_cache_bytes = *cache == "0" ? 0 : registry::parse_memory_size(*cache);
    } catch (const Error& e) {
      throw UsageError(std::string("--decision-cache: ") + e.what());
    }
  }

  s.host = args.value("host").value_or("127.0.0.1");
  s.port = static_cast<int>(args.integer("port", 0, 65535).value_or(8000));
  s.api_keys = args.values("api-key");
  if (const auto file = args.value("api-key-file")) {
    const std::vector<std::string> keys = as_usage_error([&] { return server::read_key_file(*file); });
    s.api_keys.insert(s.api_keys.end(), keys.begin(), keys.end());
  }
  if (const char* env = std::getenv("VERDICT_API_KEY"); env != nullptr && *env != '\0') s.api_keys.emplace_back(env);
  s.cors_origins = args.values("cors-origin");
  s.max_body_bytes = positive(args, "max-body-bytes", s.max_body_bytes);
  s.threads = static_cast<int>(positive(args, "http-threads", 256, 65536));
  s.read_timeout = std::chrono::seconds(positive(args, "read-timeout-s", 30, 86400));
  s.write_timeout = s.read_timeout;
  s.idle_timeout = std::chrono::seconds(positive(args, "idle-timeout-s", 5, 86400));
  c.shutdown_timeout = std::chrono::seconds(positive(args, "shutdown-timeout-s", 30, 86400));
  s.access_log = args.flag("access-log");
  s.truncate_by_default = args.flag("truncate");
  s.limits.max_questions = positive(args, "max-questions", 256);
  s.limits.max_choice_options = positive(args, "max-choice-options", 255);
  s.limits.max_score_levels = positive(args, "max-score-levels", 64);
  s.limits.max_json_depth = positive(args, "max-json-depth", 128, static_cast<long long>(decision::kMaxJsonDepthLimit));
  s.limits.max_images = positive(args, "max-images", 8);
  s.limits.max_audio = positive(args, "max-audio", 4);
  s.limits.max_videos = positive(args, "max-videos", 4);
  s.max_queue = r.max_queue;
  s.queue_timeout = std::chrono::seconds(positive(args, "queue-timeout-s", 60, 86400));
  if (const auto threads = args.integer("threads", 1, 1024)) kernels::set_num_threads(static_cast<int>(*threads));
  args.finish();
  return c;
}

std::string describe(const registry::Registry& registry) {
  std::string out;
  for (const registry::ModelStatus& m : registry.status()) {
    out += "\n  " + m.name + " (" + registry::kind_name(m.kind);
    out += std::string(m.kind == registry::ModelKind::kDecision ? ", max length " : ", context ") +
           std::to_string(m.max_length) + ", ~" + registry::format_bytes(m.memory_bytes) + " loaded";
    out += ") " + m.path;
  }
  return out;
}

}  // namespace

int run_serve(Args& args) {
  ServeConfig config = parse(args);

  // Signals are taken by sigwait() below; every thread started from here on inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  registry::Registry registry(config.registry);
  server::Api api(registry, config.server);
  auto http = std::make_unique<server::HttpServer>(api);
  const int port = http->start();
  server::log_line("listening on http://" + config.server.host + ":" + std::to_string(port) +
                   (config.server.api_keys.empty() ? "" : " (API keys required)"));

  // Start-up (tokenizers, estimates, preloads) runs while the server already answers /health.
  std::atomic<bool> started{false};
  std::atomic<bool> failed{false};
  std::string failure;
  std::thread startup([&] {
    try {
      registry.initialize();
      const registry::MemoryStatus memory = registry.memory();
      server::log_line("models (memory budget " + registry::format_bytes(memory.budget) + "):" + describe(registry));
      if (config.demo)
        server::log_line("serving the demo models `clef-demo` and `qwen-demo`: their weights are random, their answers "
                         "meaningless");
      registry.preload(config.preload);
      started = true;
      server::log_line("ready");
    } catch (const std::exception& e) {
      failure = e.what();
      failed = true;
    }
  });

  int exit_code = 0;
  for (;;) {
    const timespec tick{0, 100'000'000};
    const int sig = sigtimedwait(&signals, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) {
      server::log_line(std::string("received ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + ": shutting down");
      break;
    }
    if (failed) {
      server::log_line("start-up failed: " + failure);
      exit_code = 1;
      break;
    }
  }

  const bool drained = http->shutdown(Clock::now() + config.shutdown_timeout);
  if (!drained || !(started || failed)) {
    // Requests still running past the deadline, or a load that cannot be interrupted: leave now.
    server::log_line(drained ? "exiting during start-up" : "shutdown deadline passed with requests in flight; exiting");
    std::fflush(nullptr);
    std::_Exit(exit_code);
  }
  startup.join();
  http.reset();
  server::log_line("stopped");
  return exit_code;
}

}  // namespace verdict::cli
