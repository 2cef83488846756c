#include "chat/stop.h"

#include <algorithm>

namespace verdict::chat {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (auto& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
  for (const auto& s : stops_) longest_ = std::max(longest_, s.size());
}

std::string StopMatcher::push(std::string_view text) {
  if (stopped_) return {};
  std::string buffer = std::move(held_);
  held_.clear();
  buffer.append(text);
  if (stops_.empty()) return buffer;

  // The earliest stop string in the buffer (the longest one when several start there).
  std::size_t first = std::string::npos;
  const std::string* which = nullptr;
  for (const auto& s : stops_) {
    const std::size_t at = buffer.find(s);
    if (at == std::string::npos) continue;
    if (at < first || (at == first && s.size() > which->size())) {
      first = at;
      which = &s;
    }
  }
  if (which != nullptr) {
    stopped_ = true;
    matched_ = *which;
    buffer.resize(first);
    return buffer;
  }

  // Hold back the longest tail that is a proper prefix of some stop string.
  std::size_t hold = std::min(buffer.size(), longest_ - 1);
  for (; hold > 0; --hold) {
    const std::string_view tail(buffer.data() + buffer.size() - hold, hold);
    const bool prefix = std::any_of(stops_.begin(), stops_.end(), [&](const std::string& s) {
      return s.size() > hold && std::string_view(s).substr(0, hold) == tail;
    });
    if (prefix) break;
  }
  held_.assign(buffer, buffer.size() - hold, hold);
  buffer.resize(buffer.size() - hold);
  return buffer;
}

std::string StopMatcher::finish() {
  if (stopped_) return {};
  std::string out = std::move(held_);
  held_.clear();
  return out;
}

}  // namespace verdict::chat
