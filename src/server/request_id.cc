#include "server/request_id.h"

#include <cstdint>
#include <random>

namespace verdict::server {

std::string generate_request_id() {
  thread_local std::mt19937_64 rng([] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }());
  static const char kHex[] = "0123456789abcdef";
  std::string id = "req_";
  uint64_t bits = rng();
  for (int i = 0; i < 24; ++i) {
    if (i == 16) bits = rng();
    id += kHex[bits & 0xF];
    bits >>= 4;
  }
  return id;
}

std::string request_id_for(const std::optional<std::string>& sent) {
  if (sent && !sent->empty() && sent->size() <= 128) {
    bool printable = true;
    for (char c : *sent) printable &= c >= 0x20 && c <= 0x7E;
    if (printable) return *sent;
  }
  return generate_request_id();
}

}  // namespace verdict::server
