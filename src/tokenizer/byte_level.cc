#include "tokenizer/byte_level.h"

#include "core/utf8.h"

namespace verdict::tokenizer::byte_level {

namespace {

struct Tables {
  std::array<char32_t, 256> code_point{};
  std::array<std::array<char, 2>, 256> spelling{};
  std::array<uint8_t, 256> spelling_len{};
  std::array<int16_t, 512> byte_of{};  // every alphabet code point is below 0x144

  Tables() {
    byte_of.fill(-1);
    auto printable = [](int b) {
      return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const char32_t cp = printable(b) ? static_cast<char32_t>(b) : next++;
      code_point[static_cast<std::size_t>(b)] = cp;
      byte_of[cp] = static_cast<int16_t>(b);
      std::string s;
      utf8::append_code_point(s, cp);
      spelling_len[static_cast<std::size_t>(b)] = static_cast<uint8_t>(s.size());
      for (std::size_t k = 0; k < s.size(); ++k) spelling[static_cast<std::size_t>(b)][k] = s[k];
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

std::string_view char_for_byte(uint8_t b) {
  const Tables& t = tables();
  return {t.spelling[b].data(), t.spelling_len[b]};
}

int byte_for_char(char32_t cp) {
  if (cp >= 512) return -1;
  return tables().byte_of[cp];
}

void encode(std::string_view bytes, std::string& out) {
  const Tables& t = tables();
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    out.append(t.spelling[b].data(), t.spelling_len[b]);
  }
}

bool decode(std::string_view chars, std::string& out) {
  const std::size_t mark = out.size();
  std::size_t i = 0;
  while (i < chars.size()) {
    const char32_t cp = utf8::next_code_point(chars, i);
    const int b = byte_for_char(cp);
    if (b < 0) {
      out.resize(mark);
      return false;
    }
    out.push_back(static_cast<char>(static_cast<uint8_t>(b)));
  }
  return true;
}

}  // namespace verdict::tokenizer::byte_level
