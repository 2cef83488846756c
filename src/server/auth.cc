#include "server/auth.h"

#include <cctype>

#include "core/error.h"
#include "core/mapped_file.h"

namespace verdict::server {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0u;
    const unsigned y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0u;
    diff |= x ^ y;
  }
  return diff == 0;
}

ApiKeys::ApiKeys(std::vector<std::string> keys) {
  for (std::string& k : keys)
    if (!k.empty()) keys_.push_back(std::move(k));
}

AuthResult ApiKeys::check(const std::optional<std::string>& authorization) const {
  if (keys_.empty()) return AuthResult::kAllowed;
  if (!authorization) return AuthResult::kMissing;
  const std::string_view header = *authorization;
  const std::size_t space = header.find(' ');
  const std::string_view scheme = header.substr(0, space);
  if (!iequals(scheme, "bearer") || space == std::string_view::npos) return AuthResult::kMissing;
  const std::string_view key = header.substr(space + 1);
  bool known = false;
  for (const std::string& k : keys_) known |= constant_time_equal(key, k);  // no early exit
  return known ? AuthResult::kAllowed : AuthResult::kInvalid;
}

std::vector<std::string> read_key_file(const std::string& path) {
  const std::string text = read_text_file(path);
  std::vector<std::string> keys;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = trim(std::string_view(text).substr(pos, end - pos));
    if (!line.empty() && line.front() != '#') keys.emplace_back(line);
    pos = end + 1;
  }
  if (keys.empty()) throw Error(path + ": no API key in this file");
  return keys;
}

}  // namespace verdict::server
