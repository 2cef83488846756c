#include "modelgen/bpe_trainer.h"

#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>

namespace verdict::modelgen {
namespace {

// GPT-2's bytes_to_unicode: the printable bytes map to themselves, in this order; the other 68 bytes map
// to U+0100 onwards, in byte order.
const std::array<unsigned char, 256>& id_to_byte() {
  static const std::array<unsigned char, 256> table = [] {
    std::array<unsigned char, 256> t{};
    std::array<bool, 256> printable{};
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      printable[static_cast<std::size_t>(b)] = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      if (printable[static_cast<std::size_t>(b)]) t[static_cast<std::size_t>(n++)] = static_cast<unsigned char>(b);
    }
    for (int b = 0; b < 256; ++b)
      if (!printable[static_cast<std::size_t>(b)]) t[static_cast<std::size_t>(n++)] = static_cast<unsigned char>(b);
    return t;
  }();
  return table;
}

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

enum class CharClass { Letter, Digit, Space, Newline, Other };

// Decodes the code point at s[i] (lenient: a stray byte counts as one character); returns its length.
std::size_t next_char(std::string_view s, std::size_t i, uint32_t& cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  if (i + len > s.size()) len = 1;
  cp = len == 1 ? c : c & (0xFFu >> (len + 1));
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  return len;
}

CharClass classify(uint32_t cp) {
  if (cp == '\n' || cp == '\r') return CharClass::Newline;
  if (cp == ' ' || cp == '\t' || cp == 0x3000 || cp == 0xA0) return CharClass::Space;
  if (cp >= '0' && cp <= '9') return CharClass::Digit;
  if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return CharClass::Letter;
  if (cp < 0x80) return CharClass::Other;
  // CJK and full-width punctuation; everything else beyond ASCII counts as a letter (marks included).
  if ((cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFF00 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) ||
      (cp >= 0x2000 && cp <= 0x206F) || cp == 0xBF || cp == 0xA1 || cp == 0x0964)
    return CharClass::Other;
  return CharClass::Letter;
}

// Words of the simplified pre-tokenizer, with their counts.
std::map<std::string, int64_t> split_words(std::string_view text) {
  struct Char {
    std::size_t begin, len;
    CharClass cls;
  };
  std::vector<Char> chars;
  for (std::size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const std::size_t len = next_char(text, i, cp);
    chars.push_back({i, len, classify(cp)});
    i += len;
  }
  std::map<std::string, int64_t> words;
  std::size_t i = 0;
  auto run_end = [&](std::size_t from, CharClass cls) {
    while (from < chars.size() && chars[from].cls == cls) ++from;
    return from;
  };
  while (i < chars.size()) {
    std::size_t end = i + 1;
    const CharClass c = chars[i].cls;
    const bool letter_follows = i + 1 < chars.size() && chars[i + 1].cls == CharClass::Letter;
    if (c == CharClass::Letter) {
      end = run_end(i, CharClass::Letter);
    } else if ((c == CharClass::Space || c == CharClass::Other) && letter_follows) {
      end = run_end(i + 1, CharClass::Letter);
    } else if (c == CharClass::Other) {
      end = run_end(i, CharClass::Other);
    } else if (c == CharClass::Space || c == CharClass::Newline) {
      end = run_end(i, c);
    }
    const std::size_t b = chars[i].begin, e = chars[end - 1].begin + chars[end - 1].len;
    ++words[std::string(text.substr(b, e - b))];
    i = end;
  }
  return words;
}

struct Word {
  std::vector<int> symbols;
  int64_t count = 0;
};

using Pair = std::pair<int, int>;

void count_pairs(const Word& w, std::map<Pair, int64_t>& counts, int64_t sign) {
  for (std::size_t k = 0; k + 1 < w.symbols.size(); ++k) {
    auto it = counts.try_emplace({w.symbols[k], w.symbols[k + 1]}, 0).first;
    it->second += sign * w.count;
    if (it->second == 0) counts.erase(it);
  }
}

}  // namespace

std::string byte_symbol(unsigned char b) {
  const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
  if (printable) return utf8(b);
  int n = 0;
  for (int x = 0; x < b; ++x)
    if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174)) ++n;
  return utf8(static_cast<uint32_t>(256 + n));
}

unsigned char byte_of_id(int id) { return id_to_byte()[static_cast<std::size_t>(id)]; }

std::string to_byte_symbols(std::string_view bytes) {
  std::string s;
  for (char c : bytes) s += byte_symbol(static_cast<unsigned char>(c));
  return s;
}

BpeVocab learn_bpe(std::string_view text, std::size_t max_tokens) {
  BpeVocab vocab;
  std::array<int, 256> id_of_byte{};
  for (int id = 0; id < 256; ++id) {
    vocab.tokens.push_back(byte_symbol(byte_of_id(id)));
    id_of_byte[byte_of_id(id)] = id;
  }
  std::unordered_map<std::string, int> token_ids;
  for (int id = 0; id < 256; ++id) token_ids[vocab.tokens[static_cast<std::size_t>(id)]] = id;

  std::vector<Word> words;
  for (const auto& [word, count] : split_words(text)) {
    Word w;
    w.count = count;
    for (char c : word) w.symbols.push_back(id_of_byte[static_cast<unsigned char>(c)]);
    words.push_back(std::move(w));
  }
  std::map<Pair, int64_t> counts;
  for (const Word& w : words) count_pairs(w, counts, +1);

  while (vocab.tokens.size() < max_tokens && !counts.empty()) {
    auto best = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it)
      if (it->second > best->second) best = it;  // strict: the smallest pair wins ties
    if (best->second < 2) break;
    const Pair pair = best->first;
    const std::string& left = vocab.tokens[static_cast<std::size_t>(pair.first)];
    const std::string& right = vocab.tokens[static_cast<std::size_t>(pair.second)];
    std::string merged = left + right;
    vocab.merges.emplace_back(left, right);
    int merged_id;
    if (auto it = token_ids.find(merged); it != token_ids.end()) {
      merged_id = it->second;
    } else {
      merged_id = static_cast<int>(vocab.tokens.size());
      token_ids.emplace(merged, merged_id);
      vocab.tokens.push_back(std::move(merged));
    }
    for (Word& w : words) {
      bool present = false;
      for (std::size_t k = 0; k + 1 < w.symbols.size() && !present; ++k)
        present = w.symbols[k] == pair.first && w.symbols[k + 1] == pair.second;
      if (!present) continue;
      count_pairs(w, counts, -1);
      std::vector<int> out;
      for (std::size_t k = 0; k < w.symbols.size(); ++k) {
        if (k + 1 < w.symbols.size() && w.symbols[k] == pair.first && w.symbols[k + 1] == pair.second) {
          out.push_back(merged_id);
          ++k;
        } else {
          out.push_back(w.symbols[k]);
        }
      }
      w.symbols = std::move(out);
      count_pairs(w, counts, +1);
    }
  }
  return vocab;
}

}  // namespace verdict::modelgen
