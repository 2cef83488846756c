// Server metrics in the Prometheus text format (version 0.0.4): requests by route and status,
// latency histograms, requests in flight, queue depth, running and waiting decisions, prompt
// tokens, engine throughput and batch sizes, resident models and their memory.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "registry/registry.h"

namespace verdict::server {

// Upper bounds (seconds) of the latency histogram; the last bucket is +Inf.
inline constexpr std::array<double, 13> kLatencyBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                           1.0,   2.5,  5.0,   10.0, 30.0, 60.0};

class Metrics {
 public:
  void record_request(const std::string& route, int status, double seconds);
  void add_decision(const std::string& model, uint64_t input_tokens);
  void add_generation(const std::string& model, uint64_t prompt_tokens, uint64_t completion_tokens);
  // Requests that wait for a model's weights to load (they are not in its engine queue yet).
  // Returns the new count.
  int add_awaiting_load(const std::string& model, int delta);
  int awaiting_load(const std::string& model) const;

  // Everything, with the registry's models and engines; `in_flight` = HTTP requests being served.
  std::string render(const registry::Registry& registry, int in_flight) const;

 private:
  struct Latency {
    std::array<uint64_t, kLatencyBuckets.size() + 1> counts{};  // per bucket, not cumulative
    double sum = 0;
    uint64_t count = 0;
  };
  struct ModelCounters {
    uint64_t decisions = 0;
    uint64_t prompt_tokens = 0;
    uint64_t completions = 0;
    uint64_t completion_tokens = 0;
    int awaiting_load = 0;
  };

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (route, status) → count
  std::map<std::string, Latency> latency_;                    // route → histogram
  std::map<std::string, ModelCounters> models_;
};

// Prometheus label value escaping (backslash, double quote, newline).
std::string escape_label(const std::string& value);

}  // namespace verdict::server
