#include "decision/render.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace verdict::decision {

std::string format_float(double d) {
  if (!std::isfinite(d)) throw Error("cannot write a non-finite number as JSON");
  std::string out;
  if (std::signbit(d)) out += '-';
  const double a = std::fabs(d);
  // Shortest round-trip digits d1..dn and exponent k with |d| = 0.d1..dn × 10^k.
  std::string digits;
  int k = 1;
  if (a == 0.0) {
    digits.push_back('0');  // (not `= "0"`: GCC 12 -Wrestrict false positive under ASan)
  } else {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, a, std::chars_format::scientific);
    const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));  // "d.ddde±XX"
    const std::size_t e_pos = sci.find('e');
    for (std::size_t i = 0; i < e_pos; ++i) {
      if (sci[i] != '.') digits += sci[i];
    }
    int exp10 = 0;
    std::string_view exp_text = sci.substr(e_pos + 1);
    if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
    std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp10);
    k = exp10 + 1;
  }
  const int n = static_cast<int>(digits.size());
  if (k > -4 && k <= 16) {
    if (k <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-k), '0');
      out += digits;
    } else if (k >= n) {
      out += digits;
      out.append(static_cast<std::size_t>(k - n), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(k));
      out += '.';
      out.append(digits, static_cast<std::size_t>(k), std::string::npos);
    }
    return out;
  }
  out += digits[0];
  if (n > 1) {
    out += '.';
    out.append(digits, 1, std::string::npos);
  }
  const int e = k - 1;
  out += e < 0 ? "e-" : "e+";
  const int mag = e < 0 ? -e : e;
  if (mag < 10) out += '0';
  out += std::to_string(mag);
  return out;
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t run = 0;  // start of the pending run of bytes written raw
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void write_json(const Value& value, bool sort_keys, std::string& out) {
  switch (value.kind()) {
    case Value::Kind::kNull:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += value.as_bool() ? "true" : "false";
      return;
    case Value::Kind::kInt:
      out += value.int_text();
      return;
    case Value::Kind::kFloat:
      out += format_float(value.as_float());
      return;
    case Value::Kind::kString:
      append_json_string(out, value.as_string());
      return;
    case Value::Kind::kArray: {
      out += '[';
      bool first = true;
      for (const Value& item : value.items()) {
        if (!first) out += ',';
        first = false;
        write_json(item, sort_keys, out);
      }
      out += ']';
      return;
    }
    case Value::Kind::kObject: {
      std::vector<const Member*> members;
      members.reserve(value.members().size());
      for (const Member& m : value.members()) members.push_back(&m);
      if (sort_keys) {
        // std::string compares bytes as unsigned char: UTF-8 byte order is code-point order.
        std::stable_sort(members.begin(), members.end(),
                         [](const Member* a, const Member* b) { return a->key < b->key; });
      }
      out += '{';
      bool first = true;
      for (const Member* m : members) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, m->key);
        out += ':';
        write_json(m->value, sort_keys, out);
      }
      out += '}';
      return;
    }
  }
}

std::string write_json(const Value& value, bool sort_keys) {
  std::string out;
  write_json(value, sort_keys, out);
  return out;
}

std::string render(const Value& value) {
  if (value.is_string()) return value.as_string();
  return write_json(value, /*sort_keys=*/true);
}

}  // namespace verdict::decision
