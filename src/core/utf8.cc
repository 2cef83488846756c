#include "core/utf8.h"

namespace verdict::utf8 {

Seq classify(const unsigned char* p, std::size_t n) {
  const unsigned char b0 = p[0];
  if (b0 < 0x80) return {SeqStatus::Valid, 1};
  uint32_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {SeqStatus::Invalid, 1};
  }
  for (uint32_t k = 1; k < need; ++k) {
    if (k >= n) return {SeqStatus::Truncated, k};
    const unsigned char b = p[k];
    const unsigned char klo = k == 1 ? lo : 0x80, khi = k == 1 ? hi : 0xBF;
    if (b < klo || b > khi) return {SeqStatus::Invalid, k};
  }
  return {SeqStatus::Valid, need};
}

namespace {

// Length of the longest valid prefix of `s`.
std::size_t valid_prefix(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    // Skip ASCII eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t w = 0;
      for (int k = 0; k < 8; ++k) w |= static_cast<uint64_t>(p[i + k]) << (8 * k);
      if ((w & 0x8080808080808080ull) != 0) break;
      i += 8;
    }
    if (i >= n) break;
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const Seq seq = classify(p + i, n - i);
    if (seq.status != SeqStatus::Valid) return i;
    i += seq.len;
  }
  return n;
}

}  // namespace

bool is_valid(std::string_view s) { return valid_prefix(s) == s.size(); }

void append_lossy(std::string& out, std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    const std::size_t good = valid_prefix(bytes.substr(i));
    out.append(bytes.data() + i, good);
    i += good;
    if (i >= n) break;
    const Seq seq = classify(p + i, n - i);
    out.append(kReplacement);
    i += seq.len;
  }
}

std::string_view repair(std::string_view s, std::string& storage) {
  const std::size_t good = valid_prefix(s);
  if (good == s.size()) return s;
  storage.clear();
  storage.reserve(s.size() + 16);
  storage.append(s.data(), good);
  append_lossy(storage, s.substr(good));
  return storage;
}

void append_code_point(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace verdict::utf8
