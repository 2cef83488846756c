#include "chat/jinja/text.h"

#include <utf8proc.h>

#include <algorithm>

#include "chat/jinja/errors.h"
#include "core/utf8.h"

namespace verdict::chat::jinja::text {
namespace {

utf8proc_category_t category(char32_t cp) { return utf8proc_category(static_cast<utf8proc_int32_t>(cp)); }

char32_t map_upper(char32_t cp) { return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(cp))); }
char32_t map_lower(char32_t cp) { return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))); }
char32_t map_title(char32_t cp) { return static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(cp))); }

bool is_cased(char32_t cp) {
  const auto c = category(cp);
  if (c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT) return true;
  return map_upper(cp) != cp || map_lower(cp) != cp;
}

bool is_lower_cp(char32_t cp) { return is_cased(cp) && map_lower(cp) == cp && map_upper(cp) != cp; }
bool is_upper_cp(char32_t cp) { return is_cased(cp) && map_upper(cp) == cp && map_lower(cp) != cp; }

bool is_alpha_cp(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
         c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_LO;
}

bool is_digit_cp(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ND || (c == UTF8PROC_CATEGORY_NO && (cp == 0xB2 || cp == 0xB3 || cp == 0xB9));
}

bool is_numeric_cp(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

// Applies a per-code-point mapping; invalid bytes are copied.
template <typename F>
std::string map_each(std::string_view s, F&& f) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const Decoded d = decode_at(s, i);
    if (d.valid)
      append_utf8(out, f(d.cp));
    else
      out.append(s.substr(i, d.len));
    i += d.len;
  }
  return out;
}

template <typename P>
bool all_of_cps(std::string_view s, P&& pred) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size();) {
    const Decoded d = decode_at(s, i);
    if (!d.valid || !pred(d.cp)) return false;
    i += d.len;
  }
  return true;
}

bool in_set(std::string_view chars, char32_t cp, bool valid, std::string_view raw) {
  for (std::size_t i = 0; i < chars.size();) {
    const Decoded d = decode_at(chars, i);
    if (valid ? (d.valid && d.cp == cp) : (!d.valid && chars.substr(i, d.len) == raw)) return true;
    i += d.len;
  }
  return false;
}

void check_size(std::size_t size, std::size_t max_bytes) {
  if (size > max_bytes) throw RenderError("string too long (limit " + std::to_string(max_bytes) + " bytes)");
}

// Code point index of byte offset `byte` (a code point boundary).
int64_t cp_index(std::string_view s, std::size_t byte) { return static_cast<int64_t>(length(s.substr(0, byte))); }

}  // namespace

Decoded decode_at(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return {b0, 1, true};
  std::size_t len = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0)
    len = 2, cp = b0 & 0x1F, min = 0x80;
  else if ((b0 & 0xF0) == 0xE0)
    len = 3, cp = b0 & 0x0F, min = 0x800;
  else if ((b0 & 0xF8) == 0xF0)
    len = 4, cp = b0 & 0x07, min = 0x10000;
  else
    return {0xFFFD, 1, false};
  if (i + len > s.size()) return {0xFFFD, 1, false};
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return {0xFFFD, 1, false};
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0xFFFD, 1, false};
  return {cp, len, true};
}

void append_utf8(std::string& out, char32_t cp) { utf8::append_code_point(out, cp); }

std::size_t length(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) i += decode_at(s, i).len;
  return n;
}

std::vector<std::size_t> boundaries(std::string_view s) {
  std::vector<std::size_t> out;
  out.reserve(s.size() + 1);
  for (std::size_t i = 0; i < s.size();) {
    out.push_back(i);
    i += decode_at(s, i).len;
  }
  out.push_back(s.size());
  return out;
}

bool is_space(char32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F)) return true;
  if (cp < 0x80) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::string strip(std::string_view s, bool left, bool right, std::optional<std::string_view> chars) {
  const auto bounds = boundaries(s);
  const std::size_t n = bounds.size() - 1;
  auto strippable = [&](std::size_t k) {
    const Decoded d = decode_at(s, bounds[k]);
    if (!chars) return d.valid && is_space(d.cp);
    return in_set(*chars, d.cp, d.valid, s.substr(bounds[k], d.len));
  };
  std::size_t begin = 0, end = n;
  if (left)
    while (begin < end && strippable(begin)) ++begin;
  if (right)
    while (end > begin && strippable(end - 1)) --end;
  return std::string(s.substr(bounds[begin], bounds[end] - bounds[begin]));
}

std::string upper(std::string_view s) { return map_each(s, map_upper); }
std::string lower(std::string_view s) { return map_each(s, map_lower); }

std::string title(std::string_view s) {
  bool previous_cased = false;
  return map_each(s, [&](char32_t cp) {
    const char32_t mapped = previous_cased ? map_lower(cp) : map_title(cp);
    previous_cased = is_cased(cp);
    return mapped;
  });
}

std::string capitalize(std::string_view s) {
  bool first = true;
  return map_each(s, [&](char32_t cp) {
    const char32_t mapped = first ? map_upper(cp) : map_lower(cp);
    first = false;
    return mapped;
  });
}

bool is_lower(std::string_view s) {
  bool cased = false;
  for (std::size_t i = 0; i < s.size();) {
    const Decoded d = decode_at(s, i);
    i += d.len;
    if (!d.valid) continue;
    if (is_upper_cp(d.cp) || category(d.cp) == UTF8PROC_CATEGORY_LT) return false;
    cased = cased || is_lower_cp(d.cp);
  }
  return cased;
}

bool is_upper(std::string_view s) {
  bool cased = false;
  for (std::size_t i = 0; i < s.size();) {
    const Decoded d = decode_at(s, i);
    i += d.len;
    if (!d.valid) continue;
    if (is_lower_cp(d.cp) || category(d.cp) == UTF8PROC_CATEGORY_LT) return false;
    cased = cased || is_upper_cp(d.cp);
  }
  return cased;
}

bool is_alpha(std::string_view s) { return all_of_cps(s, is_alpha_cp); }
bool is_digit(std::string_view s) { return all_of_cps(s, is_digit_cp); }
bool is_alnum(std::string_view s) {
  return all_of_cps(s, [](char32_t cp) { return is_alpha_cp(cp) || is_numeric_cp(cp); });
}
bool is_all_space(std::string_view s) { return all_of_cps(s, is_space); }

std::string replace(std::string_view s, std::string_view old_sub, std::string_view new_sub, int64_t count,
                    std::size_t max_bytes) {
  std::string out;
  int64_t done = 0;
  if (old_sub.empty()) {
    const auto bounds = boundaries(s);
    for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
      if (count < 0 || done < count) {
        out.append(new_sub);
        ++done;
      }
      out.append(s.substr(bounds[k], bounds[k + 1] - bounds[k]));
      check_size(out.size(), max_bytes);
    }
    if (count < 0 || done < count) out.append(new_sub);
    check_size(out.size(), max_bytes);
    return out;
  }
  std::size_t pos = 0;
  while (count < 0 || done < count) {
    const std::size_t hit = s.find(old_sub, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(new_sub);
    check_size(out.size(), max_bytes);
    pos = hit + old_sub.size();
    ++done;
  }
  out.append(s.substr(pos));
  check_size(out.size(), max_bytes);
  return out;
}

namespace {

// Whitespace runs of s as [begin, end) byte pairs, left to right.
std::vector<std::pair<std::size_t, std::size_t>> words(std::string_view s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t i = 0;
  while (i < s.size()) {
    Decoded d = decode_at(s, i);
    if (d.valid && is_space(d.cp)) {
      i += d.len;
      continue;
    }
    const std::size_t begin = i;
    while (i < s.size()) {
      d = decode_at(s, i);
      if (d.valid && is_space(d.cp)) break;
      i += d.len;
    }
    out.emplace_back(begin, i);
  }
  return out;
}

}  // namespace

std::vector<std::string> split(std::string_view s, std::optional<std::string_view> sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (!sep) {
    const auto w = words(s);
    for (std::size_t k = 0; k < w.size(); ++k) {
      if (maxsplit >= 0 && static_cast<int64_t>(k) == maxsplit) {
        out.emplace_back(s.substr(w[k].first));
        return out;
      }
      out.emplace_back(s.substr(w[k].first, w[k].second - w[k].first));
    }
    return out;
  }
  if (sep->empty()) throw RenderError("empty separator");
  std::size_t pos = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    const std::size_t hit = s.find(*sep, pos);
    if (hit == std::string_view::npos) break;
    out.emplace_back(s.substr(pos, hit - pos));
    pos = hit + sep->size();
  }
  out.emplace_back(s.substr(pos));
  return out;
}

std::vector<std::string> rsplit(std::string_view s, std::optional<std::string_view> sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (!sep) {
    const auto w = words(s);
    for (std::size_t k = w.size(); k-- > 0;) {
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        // Python keeps the remaining head as it is, leading whitespace included.
        out.emplace_back(s.substr(0, w[k].second));
        break;
      }
      out.emplace_back(s.substr(w[k].first, w[k].second - w[k].first));
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
  if (sep->empty()) throw RenderError("empty separator");
  std::size_t end = s.size();
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    if (end < sep->size()) break;
    const std::size_t hit = s.rfind(*sep, end - sep->size());
    if (hit == std::string_view::npos) break;
    out.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
    end = hit;
  }
  out.emplace_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> splitlines(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0, i = 0;
  while (i < s.size()) {
    const Decoded d = decode_at(s, i);
    const bool brk = d.valid && (d.cp == '\n' || d.cp == '\r' || d.cp == 0x0B || d.cp == 0x0C ||
                                 (d.cp >= 0x1C && d.cp <= 0x1E) || d.cp == 0x85 || d.cp == 0x2028 || d.cp == 0x2029);
    if (!brk) {
      i += d.len;
      continue;
    }
    out.emplace_back(s.substr(start, i - start));
    i += d.len;
    if (d.cp == '\r' && i < s.size() && s[i] == '\n') ++i;
    start = i;
  }
  if (start < s.size()) out.emplace_back(s.substr(start));
  return out;
}

int64_t count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(length(s)) + 1;
  int64_t n = 0;
  for (std::size_t pos = s.find(sub); pos != std::string_view::npos; pos = s.find(sub, pos + sub.size())) ++n;
  return n;
}

int64_t find(std::string_view s, std::string_view sub) {
  const std::size_t hit = s.find(sub);
  return hit == std::string_view::npos ? -1 : cp_index(s, hit);
}

int64_t rfind(std::string_view s, std::string_view sub) {
  const std::size_t hit = s.rfind(sub);
  return hit == std::string_view::npos ? -1 : cp_index(s, hit);
}

}  // namespace verdict::chat::jinja::text
