// API keys (systemone-api.md §2.3): `Authorization: Bearer <key>`, scheme case-insensitive, keys
// compared in constant time.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::server {

enum class AuthResult { kAllowed, kMissing, kInvalid };

class ApiKeys {
 public:
  ApiKeys() = default;
  explicit ApiKeys(std::vector<std::string> keys);

  bool enabled() const { return !keys_.empty(); }
  // kAllowed when auth is off or the header carries a known key; kMissing without a Bearer
  // credential; kInvalid for an unknown key.
  AuthResult check(const std::optional<std::string>& authorization) const;

 private:
  std::vector<std::string> keys_;
};

// Equal contents, in time that depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

// Keys of a key file: one per line; surrounding whitespace, empty lines and '#' comments ignored.
// Throws verdict::Error when the file cannot be read or holds no key.
std::vector<std::string> read_key_file(const std::string& path);

}  // namespace verdict::server
