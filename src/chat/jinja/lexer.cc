#include "chat/jinja/lexer.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "chat/jinja/text.h"

namespace verdict::chat::jinja {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// The end of `s` once trailing whitespace (Python str.isspace) is stripped.
std::size_t rstrip_end(std::string_view s) {
  std::size_t end = 0;
  for (std::size_t i = 0; i < s.size();) {
    const text::Decoded d = text::decode_at(s, i);
    i += d.len;
    if (!d.valid || !text::is_space(d.cp)) end = i;
  }
  return end;
}

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size()) {
    const text::Decoded d = text::decode_at(s, i);
    if (!d.valid || !text::is_space(d.cp)) break;
    i += d.len;
  }
  return i;
}

std::string normalize_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  return out;
}

class Lexer {
 public:
  Lexer(std::string source, const LexOptions& options) : src_(std::move(source)), options_(options) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    std::size_t pos = 0;
    bool line_starting = true;
    const std::size_t n = src_.size();
    while (pos < n) {
      const std::size_t tag = find_tag(pos);
      if (tag == std::string::npos) {
        add_text(src_.substr(pos), pos);
        break;
      }
      const char kind = src_[tag + 1];
      const char marker = tag + 2 < n && (src_[tag + 2] == '-' || src_[tag + 2] == '+') ? src_[tag + 2] : '\0';
      std::string_view text(src_.data() + pos, tag - pos);
      if (marker == '-') {
        text = text.substr(0, rstrip_end(text));
      } else if (marker != '+' && options_.lstrip_blocks && kind != '{') {
        const std::size_t nl = text.rfind('\n');
        const std::size_t line = nl == std::string_view::npos ? 0 : nl + 1;
        if (line > 0 || line_starting) {
          const std::string_view tail = text.substr(line);
          if (!tail.empty() && skip_space(tail, 0) == tail.size()) text = text.substr(0, line);
        }
      }
      add_text(std::string(text), pos);
      std::size_t p = tag + 2 + (marker ? 1 : 0);
      if (kind == '#') {
        pos = end_comment(tag, p, line_starting);
      } else if (kind == '%' && is_raw(p)) {
        pos = raw_block(tag, p, line_starting);
      } else {
        pos = tag_tokens(tag, p, kind, line_starting);
      }
    }
    Token end;
    end.type = TokenType::End;
    end.pos = position(n);
    tokens_.push_back(std::move(end));
    return std::move(tokens_);
  }

 private:
  SourcePos position(std::size_t offset) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const auto line = static_cast<std::size_t>(it - line_starts_.begin());
    return {static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1] + 1)};
  }

  [[noreturn]] void fail(std::size_t offset, const std::string& message) const {
    throw SyntaxError(position(offset), message);
  }

  std::size_t find_tag(std::size_t from) const {
    for (std::size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string::npos;
  }

  void add_text(std::string text, std::size_t offset) {
    if (text.empty()) return;
    Token t;
    t.type = TokenType::Text;
    t.text = std::move(text);
    t.pos = position(offset);
    tokens_.push_back(std::move(t));
  }

  void add(TokenType type, std::string text, std::size_t offset) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    t.pos = position(offset);
    tokens_.push_back(std::move(t));
  }

  // After a tag's closing delimiter at `after`: `-` strips whitespace, else trim_blocks drops one
  // newline after block and comment tags. Returns the next position and sets line_starting.
  std::size_t after_tag(std::size_t after, char end_marker, bool block_like, bool& line_starting) const {
    std::size_t pos = after;
    if (end_marker == '-') {
      pos = skip_space(src_, after);
    } else if (end_marker != '+' && block_like && options_.trim_blocks && pos < src_.size() && src_[pos] == '\n') {
      ++pos;
    }
    line_starting = pos > after && src_[pos - 1] == '\n';
    return pos;
  }

  std::size_t end_comment(std::size_t tag, std::size_t p, bool& line_starting) const {
    const std::size_t end = src_.find("#}", p);
    if (end == std::string::npos) fail(tag, "missing end of comment tag '#}'");
    const char marker = end > p && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : '\0';
    return after_tag(end + 2, marker, true, line_starting);
  }

  bool is_raw(std::size_t p) const {
    std::size_t i = p;
    while (i < src_.size() && is_ws(src_[i])) ++i;
    if (src_.compare(i, 3, "raw") != 0) return false;
    i += 3;
    if (i < src_.size() && is_name_char(src_[i])) return false;
    while (i < src_.size() && is_ws(src_[i])) ++i;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) ++i;
    return src_.compare(i, 2, "%}") == 0;
  }

  // `{% raw %}` … `{% endraw %}`: the content is text, untouched.
  std::size_t raw_block(std::size_t tag, std::size_t p, bool& line_starting) {
    std::size_t i = src_.find("%}", p);
    const bool strip_after_begin = src_[i - 1] == '-';
    std::size_t content = i + 2;
    if (strip_after_begin) content = skip_space(src_, content);
    for (std::size_t s = find_tag(content); s != std::string::npos; s = find_tag(s + 1)) {
      if (src_[s + 1] != '%') continue;
      std::size_t k = s + 2;
      const bool strip_before = k < src_.size() && src_[k] == '-';
      if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) ++k;
      while (k < src_.size() && is_ws(src_[k])) ++k;
      if (src_.compare(k, 6, "endraw") != 0) continue;
      k += 6;
      while (k < src_.size() && is_ws(src_[k])) ++k;
      char end_marker = '\0';
      if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) end_marker = src_[k++];
      if (src_.compare(k, 2, "%}") != 0) continue;
      std::string_view body(src_.data() + content, s - content);
      if (strip_before) body = body.substr(0, rstrip_end(body));
      add_text(std::string(body), content);
      return after_tag(k + 2, end_marker, true, line_starting);
    }
    fail(tag, "missing '{% endraw %}' for '{% raw %}'");
  }

  // The tokens of a `{{ … }}` or `{% … %}` tag.
  std::size_t tag_tokens(std::size_t tag, std::size_t p, char kind, bool& line_starting) {
    const bool var = kind == '{';
    add(var ? TokenType::VarBegin : TokenType::BlockBegin, "", tag);
    int depth = 0;
    std::size_t i = p;
    const std::size_t n = src_.size();
    for (;;) {
      while (i < n && is_ws(src_[i])) ++i;
      if (i >= n) fail(tag, var ? "missing end of print tag '}}'" : "missing end of block tag '%}'");
      if (depth == 0) {
        const char* close = var ? "}}" : "%}";
        char marker = '\0';
        std::size_t at = std::string::npos;
        if (src_.compare(i, 2, close) == 0)
          at = i;
        else if ((src_[i] == '-' || (!var && src_[i] == '+')) && src_.compare(i + 1, 2, close) == 0)
          marker = src_[i], at = i + 1;
        if (at != std::string::npos) {
          add(var ? TokenType::VarEnd : TokenType::BlockEnd, "", i);
          return after_tag(at + 2, marker, !var, line_starting);
        }
      }
      const char c = src_[i];
      if (is_name_start(c)) {
        std::size_t j = i + 1;
        while (j < n && is_name_char(src_[j])) ++j;
        add(TokenType::Name, src_.substr(i, j - i), i);
        i = j;
      } else if (is_digit(c)) {
        i = number(i);
      } else if (c == '\'' || c == '"') {
        i = string_literal(i);
      } else {
        i = op(i, depth);
      }
    }
  }

  std::size_t number(std::size_t i) {
    const std::size_t n = src_.size();
    const bool after_dot = !tokens_.empty() && tokens_.back().type == TokenType::Operator && tokens_.back().text == ".";
    auto digits = [&](std::size_t j, auto&& is_d) {
      // digits with single underscores between them
      while (j < n && (is_d(src_[j]) || (src_[j] == '_' && j + 1 < n && is_d(src_[j + 1])))) ++j;
      return j;
    };
    auto dec = [](char ch) { return ch >= '0' && ch <= '9'; };
    if (src_[i] == '0' && i + 1 < n &&
        (src_[i + 1] == 'x' || src_[i + 1] == 'X' || src_[i + 1] == 'o' || src_[i + 1] == 'O' || src_[i + 1] == 'b' ||
         src_[i + 1] == 'B')) {
      const char b = static_cast<char>(src_[i + 1] | 0x20);
      const int base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
      auto is_d = [base](char ch) {
        if (base == 2) return ch == '0' || ch == '1';
        if (base == 8) return ch >= '0' && ch <= '7';
        return (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
      };
      std::size_t j = i + 2;
      if (j < n && src_[j] == '_') ++j;
      const std::size_t end = digits(j, is_d);
      if (end == j) fail(i, "invalid number literal");
      return integer_token(i, end, src_.substr(j, end - j), base);
    }
    std::size_t j = digits(i, dec);
    bool is_float = false;
    if (!after_dot && j + 1 < n && src_[j] == '.' && dec(src_[j + 1])) {
      j = digits(j + 1, dec);
      is_float = true;
    }
    if (!after_dot && j < n && (src_[j] == 'e' || src_[j] == 'E')) {
      std::size_t k = j + 1;
      if (k < n && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < n && dec(src_[k])) {
        j = digits(k, dec);
        is_float = true;
      }
    }
    if (!is_float) return integer_token(i, j, src_.substr(i, j - i), 10);
    std::string literal = src_.substr(i, j - i);
    literal.erase(std::remove(literal.begin(), literal.end(), '_'), literal.end());
    Token t;
    t.type = TokenType::Float;
    t.text = literal;
    t.float_value = std::strtod(literal.c_str(), nullptr);
    t.pos = position(i);
    tokens_.push_back(std::move(t));
    return j;
  }

  std::size_t integer_token(std::size_t start, std::size_t end, std::string digits, int base) {
    digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
    errno = 0;
    const unsigned long long v = std::strtoull(digits.c_str(), nullptr, base);
    if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) fail(start, "integer literal too large");
    Token t;
    t.type = TokenType::Integer;
    t.text = src_.substr(start, end - start);
    t.int_value = static_cast<int64_t>(v);
    t.pos = position(start);
    tokens_.push_back(std::move(t));
    return end;
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // A quoted string with Python escapes (\n, \t, \\, \', \", \xNN, \uNNNN, \UNNNNNNNN, octal, ...).
  std::size_t string_literal(std::size_t start) {
    const char quote = src_[start];
    const std::size_t n = src_.size();
    std::string value;
    std::size_t i = start + 1;
    for (;;) {
      if (i >= n) fail(start, "unterminated string literal");
      const char c = src_[i];
      if (c == quote) break;
      if (c != '\\') {
        value.push_back(c);
        ++i;
        continue;
      }
      if (i + 1 >= n) fail(start, "unterminated string literal");
      const char e = src_[i + 1];
      i += 2;
      switch (e) {
        case 'n': value.push_back('\n'); break;
        case 't': value.push_back('\t'); break;
        case 'r': value.push_back('\r'); break;
        case 'a': value.push_back('\a'); break;
        case 'b': value.push_back('\b'); break;
        case 'f': value.push_back('\f'); break;
        case 'v': value.push_back('\v'); break;
        case '\\': value.push_back('\\'); break;
        case '\'': value.push_back('\''); break;
        case '"': value.push_back('"'); break;
        case '\n': break;
        case 'x':
        case 'u':
        case 'U': {
          const int len = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int k = 0; k < len; ++k) {
            const int h = i + static_cast<std::size_t>(k) < n ? hex_value(src_[i + static_cast<std::size_t>(k)]) : -1;
            if (h < 0) fail(i - 2, std::string("truncated \\") + e + " escape in string literal");
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          i += static_cast<std::size_t>(len);
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) fail(i - 2, "invalid code point in string escape");
          text::append_utf8(value, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && i < n && src_[i] >= '0' && src_[i] <= '7'; ++k, ++i)
              cp = cp * 8 + static_cast<uint32_t>(src_[i] - '0');
            text::append_utf8(value, cp);
          } else {
            value.push_back('\\');  // Python keeps unknown escapes as written
            value.push_back(e);
          }
      }
    }
    add(TokenType::String, std::move(value), start);
    return i + 1;
  }

  std::size_t op(std::size_t i, int& depth) {
    static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const auto two : kTwo) {
      if (src_.compare(i, 2, two) == 0) {
        add(TokenType::Operator, std::string(two), i);
        return i + 2;
      }
    }
    const char c = src_[i];
    static constexpr std::string_view kOne = "+-*/%~<>=()[]{},.:|";
    if (kOne.find(c) == std::string_view::npos) {
      const text::Decoded d = text::decode_at(src_, i);
      fail(i, "unexpected character '" + src_.substr(i, d.len) + "' in tag");
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) fail(i, std::string("unexpected '") + c + "'");
      --depth;
    }
    add(TokenType::Operator, std::string(1, c), i);
    return i + 1;
  }

  std::string src_;
  LexOptions options_;
  std::vector<std::size_t> line_starts_;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const LexOptions& options) {
  std::string src = normalize_newlines(source);
  if (!options.keep_trailing_newline && !src.empty() && src.back() == '\n') src.pop_back();
  return Lexer(std::move(src), options).run();
}

}  // namespace verdict::chat::jinja
