// read_json(): a strict, iterative RFC 8259 reader producing decision::Value.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "core/utf8.h"
#include "decision/json_value.h"

namespace verdict::decision {

namespace {

class Reader {
 public:
  Reader(std::string_view text, std::size_t max_depth)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), max_depth_(max_depth) {}

  Value run();

 private:
  struct Frame {
    Value container;
    std::string key;  // pending member key (objects)
    bool object = false;
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw JsonError(JsonErrorKind::kSyntax,
                    "invalid JSON at byte " + std::to_string(p_ - begin_) + ": " + what);
  }

  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool at_end() const { return p_ >= end_; }
  std::size_t depth() const { return frames_.size() + skipped_.size(); }
  bool building() const { return !too_deep_; }
  bool top_is_object() const { return skipped_.empty() ? frames_.back().object : skipped_.back(); }

  void open(bool object);
  Value close();
  void attach(Value v);
  void read_key();
  Value scalar();
  void literal(std::string_view word);
  Value number();
  void string_into(std::string& out);
  uint32_t hex4();
  static void append_utf8(std::string& out, uint32_t cp);
  static void dedupe(std::vector<Member>& members);

  const char* begin_;
  const char* p_;
  const char* end_;
  std::size_t max_depth_;
  std::vector<Frame> frames_;
  std::vector<bool> skipped_;  // containers opened beyond max_depth_ (true = object)
  bool too_deep_ = false;
  bool overflow_ = false;
};

Value Reader::run() {
  if (end_ - p_ >= 3 && static_cast<unsigned char>(p_[0]) == 0xEF &&
      static_cast<unsigned char>(p_[1]) == 0xBB && static_cast<unsigned char>(p_[2]) == 0xBF) {
    p_ += 3;
  }
  skip_ws();
  Value result;
  bool done = false;
  while (!done) {
    // A value starts here.
    if (at_end()) fail("expected a value");
    Value v;
    const char c = *p_;
    if (c == '{' || c == '[') {
      ++p_;
      const bool object = c == '{';
      open(object);
      skip_ws();
      if (!at_end() && *p_ == (object ? '}' : ']')) {
        ++p_;
        v = close();
      } else {
        if (object) read_key();
        continue;  // the first element or member value
      }
    } else {
      v = scalar();
    }
    // A value is complete: attach it and consume separators, closing containers as they end.
    for (;;) {
      if (depth() == 0) {
        result = std::move(v);
        done = true;
        break;
      }
      attach(std::move(v));
      skip_ws();
      if (at_end()) fail("unexpected end of input inside a container");
      const bool object = top_is_object();
      const char d = *p_;
      if (d == ',') {
        ++p_;
        skip_ws();
        if (object) read_key();
        break;  // next value
      }
      if (d == (object ? '}' : ']')) {
        ++p_;
        v = close();
        continue;
      }
      fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
  skip_ws();
  if (!at_end()) fail("unexpected text after the value");
  if (too_deep_) {
    throw JsonError(JsonErrorKind::kTooDeep,
                    "JSON nesting deeper than " + std::to_string(max_depth_) + " levels");
  }
  if (overflow_) throw JsonError(JsonErrorKind::kFloatOverflow, "JSON number too large for a double");
  return result;
}

void Reader::open(bool object) {
  if (!skipped_.empty() || depth() + 1 > max_depth_) {
    too_deep_ = true;
    skipped_.push_back(object);
    return;
  }
  Frame f;
  f.object = object;
  if (building()) f.container = object ? Value::object() : Value::array();
  frames_.push_back(std::move(f));
}

Value Reader::close() {
  if (!skipped_.empty()) {
    skipped_.pop_back();
    return Value();
  }
  Value v = std::move(frames_.back().container);
  const bool object = frames_.back().object;
  frames_.pop_back();
  if (building() && object) dedupe(v.members());
  return v;
}

void Reader::attach(Value v) {
  if (!skipped_.empty() || !building()) return;
  Frame& top = frames_.back();
  if (top.object) {
    top.container.members().push_back(Member{std::move(top.key), std::move(v)});
  } else {
    top.container.items().push_back(std::move(v));
  }
}

void Reader::read_key() {
  if (at_end() || *p_ != '"') fail("expected a string key");
  std::string key;
  string_into(key);
  if (skipped_.empty() && building()) frames_.back().key = std::move(key);
  skip_ws();
  if (at_end() || *p_ != ':') fail("expected ':'");
  ++p_;
  skip_ws();
}

Value Reader::scalar() {
  const char c = *p_;
  if (c == '"') {
    std::string s;
    string_into(s);
    return Value::string(std::move(s));
  }
  if (c == 't') {
    literal("true");
    return Value::boolean(true);
  }
  if (c == 'f') {
    literal("false");
    return Value::boolean(false);
  }
  if (c == 'n') {
    literal("null");
    return Value();
  }
  if (c == '-' || (c >= '0' && c <= '9')) return number();
  fail("expected a value");
}

void Reader::literal(std::string_view word) {
  if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
    fail("invalid literal");
  }
  p_ += word.size();
}

Value Reader::number() {
  const char* start = p_;
  auto digit = [this] { return !at_end() && *p_ >= '0' && *p_ <= '9'; };
  if (*p_ == '-') ++p_;
  if (!digit()) fail("invalid number");
  const char* int_begin = p_;
  if (*p_ == '0') {
    ++p_;
  } else {
    while (digit()) ++p_;
  }
  const char* int_end = p_;
  const char* frac_begin = p_;
  const char* frac_end = p_;
  bool is_float = false;
  int64_t exponent = 0;
  if (!at_end() && *p_ == '.') {
    ++p_;
    if (!digit()) fail("invalid number: digits expected after '.'");
    frac_begin = p_;
    while (digit()) ++p_;
    frac_end = p_;
    is_float = true;
  }
  if (!at_end() && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    bool negative = false;
    if (!at_end() && (*p_ == '+' || *p_ == '-')) negative = *p_++ == '-';
    if (!digit()) fail("invalid number: digits expected in the exponent");
    while (digit()) {
      exponent = std::min<int64_t>(exponent * 10 + (*p_ - '0'), 1'000'000'000);
      ++p_;
    }
    if (negative) exponent = -exponent;
    is_float = true;
  }
  if (!building()) return Value();
  if (!is_float) return Value::integer_text(std::string_view(start, p_ - start));

  double d = 0;
  auto [ptr, ec] = std::from_chars(start, p_, d);
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow: decide from the decimal exponent of the first significant digit.
    int64_t adjusted;
    if (!(int_end - int_begin == 1 && *int_begin == '0')) {
      adjusted = (int_end - int_begin) + exponent;
    } else {
      const char* q = frac_begin;
      while (q < frac_end && *q == '0') ++q;
      adjusted = -(q - frac_begin) + exponent;
    }
    if (adjusted > 0) {
      overflow_ = true;
      return Value();
    }
    d = (*start == '-') ? -0.0 : 0.0;
  } else if (ec != std::errc() || ptr != p_) {
    fail("invalid number");
  }
  return Value::floating(d);
}

uint32_t Reader::hex4() {
  if (end_ - p_ < 4) fail("truncated \\u escape");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = *p_++;
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= static_cast<uint32_t>(c - 'A' + 10);
    } else {
      fail("invalid \\u escape");
    }
  }
  return v;
}

void Reader::append_utf8(std::string& out, uint32_t cp) { utf8::append_code_point(out, static_cast<char32_t>(cp)); }

void Reader::string_into(std::string& out) {
  ++p_;  // opening quote
  for (;;) {
    if (at_end()) fail("unterminated string");
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      return;
    }
    if (c == '\\') {
      ++p_;
      if (at_end()) fail("unterminated escape");
      const char e = *p_++;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("unpaired low surrogate escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') fail("unpaired high surrogate escape");
            p_ += 2;
            const uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("unpaired high surrogate escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --p_;
          fail("invalid escape");
      }
      continue;
    }
    if (c < 0x20) fail("raw control character in string");
    if (c < 0x80) {
      const char* run = p_;
      while (p_ < end_ && static_cast<unsigned char>(*p_) >= 0x20 && static_cast<unsigned char>(*p_) < 0x80 &&
             *p_ != '"' && *p_ != '\\') {
        ++p_;
      }
      out.append(run, p_ - run);
      continue;
    }
    // A multi-byte UTF-8 sequence, validated per Unicode Table 3-7 (no overlongs, no surrogates).
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      fail("invalid UTF-8");
    }
    if (static_cast<std::size_t>(end_ - p_) < len) fail("invalid UTF-8");
    for (std::size_t i = 1; i < len; ++i) {
      const auto b = static_cast<unsigned char>(p_[i]);
      const unsigned char min = i == 1 ? lo : 0x80;
      const unsigned char max = i == 1 ? hi : 0xBF;
      if (b < min || b > max) fail("invalid UTF-8");
    }
    out.append(p_, len);
    p_ += len;
  }
}

void Reader::dedupe(std::vector<Member>& members) {
  if (members.size() < 2) return;
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return members[a].key < members[b].key; });
  std::vector<bool> drop(members.size(), false);
  bool any = false;
  for (std::size_t g = 0; g < order.size();) {
    std::size_t e = g + 1;
    while (e < order.size() && members[order[e]].key == members[order[g]].key) ++e;
    if (e - g > 1) {
      // Stable sort keeps occurrences in source order: the first keeps its place, the last its value.
      members[order[g]].value = std::move(members[order[e - 1]].value);
      for (std::size_t k = g + 1; k < e; ++k) drop[order[k]] = true;
      any = true;
    }
    g = e;
  }
  if (!any) return;
  std::size_t w = 0;
  for (std::size_t r = 0; r < members.size(); ++r) {
    if (drop[r]) continue;
    if (w != r) members[w] = std::move(members[r]);
    ++w;
  }
  members.resize(w);
}

}  // namespace

Value read_json(std::string_view text, const JsonReadOptions& options) {
  if (options.max_depth < 1 || options.max_depth > kMaxJsonDepthLimit) {
    throw Error("JSON max_depth must be between 1 and " + std::to_string(kMaxJsonDepthLimit));
  }
  return Reader(text, options.max_depth).run();
}

}  // namespace verdict::decision
