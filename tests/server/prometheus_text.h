// A strict reader of the Prometheus text exposition format (0.0.4), for checking /metrics.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace verdict::server::testing {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct PromText {
  std::map<std::string, std::string> types;  // family → counter, gauge, histogram, ...
  std::vector<PromSample> samples;
  // The value of the sample with this name and exactly these labels (NaN when absent).
  double value(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;
};

// Parses `text`; appends one message per violation to `errors` (line number and reason): names,
// label syntax and escapes, values, TYPE before samples, one TYPE per family, samples of a family
// together, histogram buckets cumulative and ending in +Inf equal to _count.
PromText parse_prometheus(const std::string& text, std::vector<std::string>& errors);

}  // namespace verdict::server::testing
