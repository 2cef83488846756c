// UTF-8 helpers shared by the tokenizer, the chat templates and the JSON reader: classification of byte
// sequences with the "maximal subpart" rule
// (WHATWG, Python "replace", Rust String::from_utf8_lossy), lossy repair, code point iteration.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace verdict::utf8 {

enum class SeqStatus : uint8_t {
  Valid,      // `len` bytes form one well-formed code point
  Invalid,    // the first `len` bytes (>= 1) are a maximal invalid subpart: one U+FFFD
  Truncated,  // the `len` bytes up to the end are a valid prefix that more bytes could complete
};

struct Seq {
  SeqStatus status;
  uint32_t len;
};

// Classifies the sequence starting at p[0]; n >= 1.
Seq classify(const unsigned char* p, std::size_t n);

inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// True when `s` is well-formed UTF-8.
bool is_valid(std::string_view s);

// Appends `bytes` to `out`, replacing every maximal invalid subpart (and a truncated tail) by U+FFFD.
void append_lossy(std::string& out, std::string_view bytes);

// Returns `s` itself when it is valid UTF-8, else a repaired copy stored in `storage`.
std::string_view repair(std::string_view s, std::string& storage);

// Appends the UTF-8 encoding of `cp` (a Unicode scalar value).
void append_code_point(std::string& out, char32_t cp);

// Decodes the code point at s[i] of valid UTF-8 and advances i past it.
inline char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  auto cont = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k]) & 0x3Fu); };
  char32_t cp;
  if (b0 < 0xE0) {
    cp = (static_cast<char32_t>(b0 & 0x1Fu) << 6) | cont(1);
    i += 2;
  } else if (b0 < 0xF0) {
    cp = (static_cast<char32_t>(b0 & 0x0Fu) << 12) | (cont(1) << 6) | cont(2);
    i += 3;
  } else {
    cp = (static_cast<char32_t>(b0 & 0x07u) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
    i += 4;
  }
  return cp;
}

// Decodes the code point that ends at s[end - 1] of valid UTF-8; `end` moves to its first byte.
inline char32_t prev_code_point(std::string_view s, std::size_t& end) {
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0u) == 0x80u) --start;
  std::size_t i = start;
  char32_t cp = next_code_point(s, i);
  end = start;
  return cp;
}

// Byte length of the code point whose lead byte is `b0` (valid UTF-8).
inline std::size_t sequence_length(unsigned char b0) {
  if (b0 < 0x80) return 1;
  if (b0 < 0xE0) return 2;
  if (b0 < 0xF0) return 3;
  return 4;
}

}  // namespace verdict::utf8
