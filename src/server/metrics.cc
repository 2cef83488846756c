#include "server/metrics.h"

#include <cstdio>

namespace verdict::server {
namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void family(const char* name, const char* type, const char* help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  void sample(const std::string& name, const std::string& labels, double value) {
    out_ += name;
    if (!labels.empty()) out_ += "{" + labels + "}";
    out_ += ' ';
    out_ += number(value);
    out_ += '\n';
  }

 private:
  std::string& out_;
};

std::string label(const char* key, const std::string& value) { return std::string(key) + "=\"" + escape_label(value) + "\""; }

}  // namespace

std::string escape_label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void Metrics::record_request(const std::string& route, int status, double seconds) {
  std::lock_guard lock(mutex_);
  ++requests_[{route, status}];
  Latency& l = latency_[route];
  std::size_t b = 0;
  while (b < kLatencyBuckets.size() && seconds > kLatencyBuckets[b]) ++b;
  ++l.counts[b];
  l.sum += seconds;
  ++l.count;
}

void Metrics::add_decision(const std::string& model, uint64_t input_tokens) {
  std::lock_guard lock(mutex_);
  ModelCounters& m = models_[model];
  ++m.decisions;
  m.prompt_tokens += input_tokens;
}

void Metrics::add_generation(const std::string& model, uint64_t prompt_tokens, uint64_t completion_tokens) {
  std::lock_guard lock(mutex_);
  ModelCounters& m = models_[model];
  ++m.completions;
  m.prompt_tokens += prompt_tokens;
  m.completion_tokens += completion_tokens;
}

int Metrics::add_awaiting_load(const std::string& model, int delta) {
  std::lock_guard lock(mutex_);
  return models_[model].awaiting_load += delta;
}

int Metrics::awaiting_load(const std::string& model) const {
  std::lock_guard lock(mutex_);
  const auto it = models_.find(model);
  return it == models_.end() ? 0 : it->second.awaiting_load;
}

std::string Metrics::render(const registry::Registry& registry, int in_flight) const {
  const std::vector<registry::ModelStatus> models = registry.status();
  const registry::MemoryStatus memory = registry.memory();
  std::string out;
  Writer w(out);
  std::lock_guard lock(mutex_);

  w.family("verdict_http_requests_total", "counter", "HTTP requests answered, by route and status.");
  for (const auto& [key, count] : requests_)
    w.sample("verdict_http_requests_total", label("endpoint", key.first) + "," + label("status", std::to_string(key.second)),
             static_cast<double>(count));
  w.family("verdict_http_request_duration_seconds", "histogram", "Time from request to response, by route.");
  for (const auto& [route, l] : latency_) {
    uint64_t cumulative = 0;
    for (std::size_t b = 0; b <= kLatencyBuckets.size(); ++b) {
      cumulative += l.counts[b];
      const std::string le = b < kLatencyBuckets.size() ? number(kLatencyBuckets[b]) : "+Inf";
      w.sample("verdict_http_request_duration_seconds_bucket", label("endpoint", route) + "," + label("le", le),
               static_cast<double>(cumulative));
    }
    w.sample("verdict_http_request_duration_seconds_sum", label("endpoint", route), l.sum);
    w.sample("verdict_http_request_duration_seconds_count", label("endpoint", route), static_cast<double>(l.count));
  }
  w.family("verdict_http_requests_in_flight", "gauge", "HTTP requests being served.");
  w.sample("verdict_http_requests_in_flight", "", in_flight);

  const auto per_kind = [&](registry::ModelKind kind, const char* name, const char* type, const char* help, auto value) {
    w.family(name, type, help);
    for (const registry::ModelStatus& m : models)
      if (m.kind == kind) w.sample(name, label("model", m.name), value(m));
  };
  const auto per_model = [&](const char* name, const char* type, const char* help, auto value) {
    per_kind(registry::ModelKind::kDecision, name, type, help, value);
  };
  const auto counters = [&](const std::string& model) {
    const auto it = models_.find(model);
    return it == models_.end() ? ModelCounters{} : it->second;
  };
  const auto engine = [](const registry::ModelStatus& m) { return m.engine.value_or(engine::SchedulerStats{}); };

  per_model("verdict_queue_depth", "gauge", "Decision requests in the model's engine queue.",
            [&](const auto& m) { return static_cast<double>(engine(m).queued); });
  per_model("verdict_requests_running", "gauge", "Decision requests whose record is being run (holding a state slot).",
            [&](const auto& m) { return static_cast<double>(engine(m).running); });
  per_model("verdict_requests_waiting", "gauge", "Decision requests waiting: queued, or awaiting the model's load.",
            [&](const auto& m) { return static_cast<double>(engine(m).queued) + counters(m.name).awaiting_load; });
  per_model("verdict_decisions_total", "counter", "Decision requests answered.",
            [&](const auto& m) { return static_cast<double>(counters(m.name).decisions); });
  per_model("verdict_prompt_tokens_total", "counter", "Input tokens of the answered decision requests.",
            [&](const auto& m) { return static_cast<double>(counters(m.name).prompt_tokens); });
  per_model("verdict_engine_steps_total", "counter", "Batched forward steps run since the model was loaded.",
            [&](const auto& m) { return static_cast<double>(engine(m).steps); });
  per_model("verdict_engine_tokens_total", "counter", "Tokens run through the backbone since the model was loaded.",
            [&](const auto& m) { return static_cast<double>(engine(m).step_tokens); });
  per_model("verdict_engine_busy_seconds_total", "counter", "Time spent in forward steps since the model was loaded.",
            [&](const auto& m) { return engine(m).busy_seconds; });
  per_model("verdict_engine_tokens_per_second", "gauge", "Prefill throughput: tokens per second of forward time.",
            [&](const auto& m) { return engine(m).tokens_per_second(); });
  per_model("verdict_engine_step_sequences_max", "gauge", "The most sequences one forward step has batched.",
            [&](const auto& m) { return static_cast<double>(engine(m).max_step_sequences); });
  per_model("verdict_prefix_cache_lookups_total", "counter", "Records that looked for a saved prefix (--decision-cache).",
            [&](const auto& m) { return static_cast<double>(engine(m).prefix_cache.lookups); });
  per_model("verdict_prefix_cache_hits_total", "counter", "Records that resumed from a saved prefix.",
            [&](const auto& m) { return static_cast<double>(engine(m).prefix_cache.hits); });
  per_model("verdict_prefix_cache_tokens_total", "counter", "Tokens not run because their rows and state were saved.",
            [&](const auto& m) { return static_cast<double>(engine(m).prefix_cache.hit_tokens); });
  per_model("verdict_prefix_cache_bytes", "gauge", "Bytes held by the prefix cache (states and hidden rows).",
            [&](const auto& m) { return static_cast<double>(engine(m).prefix_cache.bytes); });
  per_model("verdict_prefix_cache_entries", "gauge", "Saved prefixes held.",
            [&](const auto& m) { return static_cast<double>(engine(m).prefix_cache.entries); });
  // Chat models.
  const auto chat = registry::ModelKind::kChat;
  per_kind(chat, "verdict_chat_completions_total", "counter", "Chat and text completions finished.",
           [&](const auto& m) { return static_cast<double>(counters(m.name).completions); });
  per_kind(chat, "verdict_chat_prompt_tokens_total", "counter", "Prompt tokens of the finished completions.",
           [&](const auto& m) { return static_cast<double>(counters(m.name).prompt_tokens); });
  per_kind(chat, "verdict_chat_completion_tokens_total", "counter", "Tokens generated by the finished completions.",
           [&](const auto& m) { return static_cast<double>(counters(m.name).completion_tokens); });
  per_kind(chat, "verdict_chat_streams_running", "gauge", "Generations holding a state slot.",
           [&](const auto& m) { return static_cast<double>(engine(m).generations_running); });
  per_kind(chat, "verdict_chat_streams_queued", "gauge", "Generations waiting for a state slot.",
           [&](const auto& m) { return static_cast<double>(engine(m).generations_queued); });
  per_kind(chat, "verdict_chat_generated_tokens_total", "counter", "Tokens sampled since the model was loaded.",
           [&](const auto& m) { return static_cast<double>(engine(m).generated_tokens); });
  per_kind(chat, "verdict_chat_engine_steps_total", "counter", "Forward steps (prefill chunks and decode) since the model was loaded.",
           [&](const auto& m) { return static_cast<double>(engine(m).steps); });
  w.family("verdict_engine_step_sequences", "histogram", "Sequences batched per forward step.");
  for (const registry::ModelStatus& m : models) {
    if (m.kind != registry::ModelKind::kDecision) continue;
    const engine::SchedulerStats s = engine(m);
    uint64_t cumulative = 0;
    for (std::size_t b = 0; b <= engine::kStepSequenceBuckets.size(); ++b) {
      cumulative += s.step_sequence_counts[b];
      const std::string le = b < engine::kStepSequenceBuckets.size() ? std::to_string(engine::kStepSequenceBuckets[b]) : "+Inf";
      w.sample("verdict_engine_step_sequences_bucket", label("model", m.name) + "," + label("le", le),
               static_cast<double>(cumulative));
    }
    w.sample("verdict_engine_step_sequences_sum", label("model", m.name), static_cast<double>(s.step_sequences));
    w.sample("verdict_engine_step_sequences_count", label("model", m.name), static_cast<double>(s.steps));
  }

  w.family("verdict_model_loaded", "gauge", "1 when the model is resident.");
  for (const registry::ModelStatus& m : models)
    w.sample("verdict_model_loaded", label("model", m.name) + "," + label("kind", registry::kind_name(m.kind)),
             m.resident() ? 1 : 0);
  w.family("verdict_model_memory_bytes", "gauge", "Memory charged to the model against the budget (0 when not resident).");
  for (const registry::ModelStatus& m : models)
    w.sample("verdict_model_memory_bytes", label("model", m.name), m.resident() ? static_cast<double>(m.memory_bytes) : 0);
  w.family("verdict_model_loads_total", "counter", "Completed loads of the model.");
  for (const registry::ModelStatus& m : models)
    w.sample("verdict_model_loads_total", label("model", m.name), static_cast<double>(m.loads));
  w.family("verdict_model_load_seconds", "gauge",
           "The last completed load's duration: reading, repacking, starting the engine (0 before the first).");
  for (const registry::ModelStatus& m : models)
    w.sample("verdict_model_load_seconds", label("model", m.name), m.load_seconds);
  w.family("verdict_memory_budget_bytes", "gauge", "The memory budget for resident models (--max-memory).");
  w.sample("verdict_memory_budget_bytes", "", static_cast<double>(memory.budget));
  w.family("verdict_memory_used_bytes", "gauge", "Memory charged to resident and loading models.");
  w.sample("verdict_memory_used_bytes", "", static_cast<double>(memory.used));
  w.family("verdict_model_evictions_total", "counter", "Models evicted to make room for another.");
  w.sample("verdict_model_evictions_total", "", static_cast<double>(memory.evictions));
  return out;
}

}  // namespace verdict::server
