#include "prometheus_text.h"

#include <cmath>
#include <cstdlib>
#include <set>

namespace verdict::server::testing {
namespace {

bool name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

bool parse_value(const std::string& s, double& v) {
  if (s == "+Inf") { v = INFINITY; return true; }
  if (s == "-Inf") { v = -INFINITY; return true; }
  if (s == "NaN") { v = NAN; return true; }
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string sfx = suffix;
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
      const std::string base = name.substr(0, name.size() - sfx.size());
      const auto it = types.find(base);
      if (it != types.end() && (it->second == "histogram" || it->second == "summary")) return base;
    }
  }
  return name;
}

}  // namespace

double PromText::value(const std::string& name, const std::map<std::string, std::string>& labels) const {
  for (const PromSample& s : samples)
    if (s.name == name && s.labels == labels) return s.value;
  return NAN;
}

PromText parse_prometheus(const std::string& text, std::vector<std::string>& errors) {
  PromText out;
  std::set<std::string> finished;  // families whose samples ended
  std::string current;
  std::size_t pos = 0;
  int line_no = 0;
  if (text.empty() || text.back() != '\n') errors.push_back("the text must end with a newline");
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const auto error = [&](const std::string& why) { errors.push_back("line " + std::to_string(line_no) + ": " + why + ": " + line); };
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind("# TYPE ", 0) == 0) {
        const std::string rest = line.substr(7);
        const std::size_t sp = rest.find(' ');
        const std::string name = rest.substr(0, sp);
        const std::string type = sp == std::string::npos ? "" : rest.substr(sp + 1);
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary", "untyped"};
        if (!kTypes.count(type)) error("unknown type");
        if (out.types.count(name)) error("second TYPE for a family");
        out.types[name] = type;
      }
      continue;
    }
    PromSample s;
    std::size_t i = 0;
    while (i < line.size() && name_char(line[i], i == 0)) ++i;
    s.name = line.substr(0, i);
    if (s.name.empty()) { error("no metric name"); continue; }
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::size_t k = i;
        while (k < line.size() && name_char(line[k], k == i)) ++k;
        const std::string key = line.substr(i, k - i);
        if (key.empty() || k + 1 >= line.size() || line[k] != '=' || line[k + 1] != '"') { error("bad label"); break; }
        k += 2;
        std::string value;
        bool closed = false;
        while (k < line.size()) {
          if (line[k] == '\\') {
            if (k + 1 >= line.size()) break;
            const char e = line[k + 1];
            if (e == 'n') value += '\n'; else if (e == '\\' || e == '"') value += e; else error("bad escape");
            k += 2;
          } else if (line[k] == '"') { closed = true; ++k; break; }
          else value += line[k++];
        }
        if (!closed) { error("unterminated label value"); break; }
        if (s.labels.count(key)) error("repeated label");
        s.labels[key] = value;
        if (k < line.size() && line[k] == ',') ++k;
        i = k;
      }
      if (i >= line.size() || line[i] != '}') { error("unterminated labels"); continue; }
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') { error("no value"); continue; }
    if (!parse_value(line.substr(i + 1), s.value)) { error("bad value"); continue; }
    const std::string family = family_of(s.name, out.types);
    if (!out.types.count(family)) error("sample before its TYPE");
    if (family != current) {
      if (finished.count(family)) error("samples of a family are not together");
      if (!current.empty()) finished.insert(current);
      current = family;
    }
    out.samples.push_back(std::move(s));
  }
  // Histograms: cumulative buckets, +Inf last and equal to _count.
  for (const auto& [family, type] : out.types) {
    if (type != "histogram") continue;
    std::map<std::map<std::string, std::string>, std::vector<std::pair<double, double>>> buckets;
    for (const PromSample& s : out.samples) {
      if (s.name != family + "_bucket") continue;
      auto labels = s.labels;
      double le = 0;
      if (!labels.count("le") || !parse_value(labels["le"], le)) { errors.push_back(family + ": bucket without le"); continue; }
      labels.erase("le");
      buckets[labels].push_back({le, s.value});
    }
    for (const auto& [labels, series] : buckets) {
      for (std::size_t b = 1; b < series.size(); ++b)
        if (series[b].first <= series[b - 1].first || series[b].second < series[b - 1].second)
          errors.push_back(family + ": buckets not increasing");
      if (series.empty() || !std::isinf(series.back().first)) errors.push_back(family + ": no +Inf bucket");
      else if (series.back().second != out.value(family + "_count", labels)) errors.push_back(family + ": +Inf != _count");
    }
  }
  return out;
}

}  // namespace verdict::server::testing
