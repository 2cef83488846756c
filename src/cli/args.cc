#include "cli/args.h"

#include <algorithm>
#include <charconv>

#include "core/error.h"

namespace verdict::cli {
namespace {

bool is_flag(const std::string& s) { return s.size() > 2 && s[0] == '-' && s[1] == '-'; }

}  // namespace

std::vector<std::string> Args::values(std::string_view name) {
  std::vector<std::string> out;
  const std::string key = "--" + std::string(name);
  for (std::size_t i = 0; i < argv_.size(); ++i) {
    if (used_.count(i)) continue;
    const std::string& a = argv_[i];
    if (a == key) {
      if (i + 1 >= argv_.size()) throw UsageError("option " + key + " needs a value");
      used_.insert(i);
      used_.insert(i + 1);
      out.push_back(argv_[i + 1]);
      ++i;
    } else if (a.rfind(key + "=", 0) == 0) {
      used_.insert(i);
      out.push_back(a.substr(key.size() + 1));
    }
  }
  return out;
}

std::optional<std::string> Args::value(std::string_view name) {
  auto all = values(name);
  if (all.empty()) return std::nullopt;
  return all.back();
}

std::string Args::required(std::string_view name) {
  auto v = value(name);
  if (!v) throw UsageError("missing required option --" + std::string(name));
  return *v;
}

bool Args::flag(std::string_view name) {
  const std::string key = "--" + std::string(name);
  bool found = false;
  for (std::size_t i = 0; i < argv_.size(); ++i) {
    if (!used_.count(i) && argv_[i] == key) {
      used_.insert(i);
      found = true;
    }
  }
  return found;
}

std::optional<long long> Args::integer(std::string_view name, long long min, long long max) {
  auto v = value(name);
  if (!v) return std::nullopt;
  long long out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size() || out < min || out > max)
    throw UsageError("option --" + std::string(name) + " needs an integer in [" + std::to_string(min) +
                     ", " + std::to_string(max) + "], got '" + *v + "'");
  return out;
}

std::vector<int32_t> Args::token_ids(std::string_view name) {
  const std::string text = required(name);
  std::vector<int32_t> ids;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item(text.data() + pos, comma - pos);
    int32_t id = -1;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || id < 0)
      throw UsageError("--" + std::string(name) + ": '" + std::string(item) +
                       "' is not a token id (expected a comma-separated list like 1,2,3)");
    ids.push_back(id);
    pos = comma + 1;
  }
  return ids;
}

std::vector<std::string> Args::positionals() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < argv_.size(); ++i) {
    if (used_.count(i) || is_flag(argv_[i])) continue;
    used_.insert(i);
    out.push_back(argv_[i]);
  }
  return out;
}

void Args::finish() {
  for (std::size_t i = 0; i < argv_.size(); ++i)
    if (!used_.count(i)) {
      if (is_flag(argv_[i])) throw UsageError("unknown option " + argv_[i]);
      throw UsageError("unexpected argument '" + argv_[i] + "'");
    }
}

}  // namespace verdict::cli
