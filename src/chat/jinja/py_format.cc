#include "chat/jinja/py_format.h"

#include <utf8proc.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat/jinja/callable.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/text.h"

namespace verdict::chat::jinja {
namespace {

void check(const std::string& out, std::size_t max_bytes) {
  if (out.size() > max_bytes) throw RenderError("output too large (limit " + std::to_string(max_bytes) + " bytes)");
}

void append_hex(std::string& out, const char* prefix, unsigned value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%0*x", prefix, digits, value);
  out.append(buf);
}

bool printable(char32_t cp) {
  if (cp == ' ') return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS: return false;
    default: return true;
  }
}

void append_string_repr(std::string& out, std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out.push_back(quote);
  for (std::size_t i = 0; i < s.size();) {
    const text::Decoded d = text::decode_at(s, i);
    if (!d.valid) {
      append_hex(out, "\\x", static_cast<unsigned char>(s[i]), 2);
    } else if (d.cp == static_cast<char32_t>(quote) || d.cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(d.cp));
    } else if (d.cp == '\n') {
      out.append("\\n");
    } else if (d.cp == '\r') {
      out.append("\\r");
    } else if (d.cp == '\t') {
      out.append("\\t");
    } else if (d.cp < 0x20 || d.cp == 0x7F) {
      append_hex(out, "\\x", d.cp, 2);
    } else if (d.cp < 0x80 || printable(d.cp)) {
      out.append(s.substr(i, d.len));
    } else if (d.cp <= 0xFF) {
      append_hex(out, "\\x", d.cp, 2);
    } else if (d.cp <= 0xFFFF) {
      append_hex(out, "\\u", d.cp, 4);
    } else {
      append_hex(out, "\\U", d.cp, 8);
    }
    i += d.len;
  }
  out.push_back(quote);
}

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const text::Decoded d = text::decode_at(s, i);
    const char32_t cp = d.valid ? d.cp : 0xFFFD;
    switch (cp) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        if (cp < 0x20 || (ensure_ascii && cp == 0x7F)) {
          append_hex(out, "\\u", cp, 4);
        } else if (ensure_ascii && cp >= 0x80) {
          if (cp >= 0x10000) {
            const char32_t v = cp - 0x10000;
            append_hex(out, "\\u", 0xD800 + (v >> 10), 4);
            append_hex(out, "\\u", 0xDC00 + (v & 0x3FF), 4);
          } else {
            append_hex(out, "\\u", cp, 4);
          }
        } else if (d.valid) {
          out.append(s.substr(i, d.len));
        } else {
          text::append_utf8(out, 0xFFFD);
        }
    }
    i += d.len;
  }
  out.push_back('"');
}

void append_container_str(std::string& out, const Value& v, std::size_t max_bytes);

void append_repr_impl(std::string& out, const Value& v, std::size_t max_bytes) {
  switch (v.kind()) {
    case Value::Kind::Undefined: out.append("Undefined"); break;
    case Value::Kind::String: append_string_repr(out, v.as_string()); break;
    case Value::Kind::Array:
    case Value::Kind::Object: append_container_str(out, v, max_bytes); break;
    default: append_str(out, v, max_bytes);
  }
  check(out, max_bytes);
}

void append_dict_body(std::string& out, const Object& o, std::size_t max_bytes) {
  out.push_back('{');
  bool first = true;
  for (const auto& [k, item] : o.entries()) {
    if (!first) out.append(", ");
    first = false;
    append_string_repr(out, k);
    out.append(": ");
    append_repr_impl(out, item, max_bytes);
  }
  out.push_back('}');
}

void append_container_str(std::string& out, const Value& v, std::size_t max_bytes) {
  if (v.is_array()) {
    out.push_back('[');
    bool first = true;
    for (const auto& item : v.as_array()) {
      if (!first) out.append(", ");
      first = false;
      append_repr_impl(out, item, max_bytes);
    }
    out.push_back(']');
    return;
  }
  const Object& o = v.as_object();
  switch (o.flavor()) {
    case Object::Flavor::Dict: append_dict_body(out, o, max_bytes); break;
    case Object::Flavor::Namespace:
      out.append("<Namespace ");
      append_dict_body(out, o, max_bytes);
      out.push_back('>');
      break;
    case Object::Flavor::Loop: {
      const Value* index = o.find("index");
      const Value* length = o.find("length");
      out.append("<LoopContext ");
      if (index != nullptr && length != nullptr && index->is_int() && length->is_int())
        out.append(std::to_string(index->as_int()) + "/" + std::to_string(length->as_int()));
      out.push_back('>');
      break;
    }
  }
}

void append_json_impl(std::string& out, const Value& v, const JsonFormat& f, int level, std::size_t max_bytes) {
  check(out, max_bytes);
  auto newline = [&](int lvl) {
    if (!f.indent) return;
    out.push_back('\n');
    for (int i = 0; i < lvl; ++i) {
      out.append(*f.indent);
      check(out, max_bytes);
    }
  };
  switch (v.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: out.append("null"); return;
    case Value::Kind::Bool: out.append(v.as_bool() ? "true" : "false"); return;
    case Value::Kind::Int: out.append(std::to_string(v.as_int())); return;
    case Value::Kind::Float: {
      const double d = v.as_float();
      if (std::isnan(d))
        out.append("NaN");
      else if (std::isinf(d))
        out.append(d > 0 ? "Infinity" : "-Infinity");
      else
        out.append(float_repr(d));
      return;
    }
    case Value::Kind::String: append_json_string(out, v.as_string(), f.ensure_ascii); return;
    case Value::Kind::Array: {
      const auto& items = v.as_array();
      if (items.empty()) {
        out.append("[]");
        return;
      }
      out.push_back('[');
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out.append(f.item_separator);
        newline(level + 1);
        append_json_impl(out, items[i], f, level + 1, max_bytes);
      }
      newline(level);
      out.push_back(']');
      return;
    }
    case Value::Kind::Object: {
      const Object& o = v.as_object();
      if (o.flavor() != Object::Flavor::Dict)
        throw RenderError(std::string("Object of type ") + v.type_name() + " is not JSON serializable");
      if (o.size() == 0) {
        out.append("{}");
        return;
      }
      std::vector<const std::pair<std::string, Value>*> entries;
      entries.reserve(o.size());
      for (const auto& e : o.entries()) entries.push_back(&e);
      if (f.sort_keys)
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto* a, const auto* b) { return a->first < b->first; });
      out.push_back('{');
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) out.append(f.item_separator);
        newline(level + 1);
        append_json_string(out, entries[i]->first, f.ensure_ascii);
        out.append(f.key_separator);
        append_json_impl(out, entries[i]->second, f, level + 1, max_bytes);
      }
      newline(level);
      out.push_back('}');
      return;
    }
    case Value::Kind::Callable: throw RenderError("Object of type function is not JSON serializable");
  }
}

}  // namespace

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form: "d.ddde±XX".
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  const std::size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      const auto int_len = static_cast<std::size_t>(exponent + 1);
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out.append(digits, 0, int_len);
        out += '.';
        out.append(digits, int_len);
      }
    } else {
      out += "0.";
      out.append(static_cast<std::size_t>(-exponent - 1), '0');
      out += digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) {
    out += '.';
    out.append(digits, 1);
  }
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
  return out + exp_buf;
}

void append_str(std::string& out, const Value& v, std::size_t max_bytes) {
  switch (v.kind()) {
    case Value::Kind::Undefined: break;
    case Value::Kind::None: out.append("None"); break;
    case Value::Kind::Bool: out.append(v.as_bool() ? "True" : "False"); break;
    case Value::Kind::Int: out.append(std::to_string(v.as_int())); break;
    case Value::Kind::Float: out.append(float_repr(v.as_float())); break;
    case Value::Kind::String: out.append(v.as_string()); break;
    case Value::Kind::Array:
    case Value::Kind::Object: append_container_str(out, v, max_bytes); break;
    case Value::Kind::Callable: out.append(describe(v.as_callable())); break;
  }
  check(out, max_bytes);
}

std::string to_str(const Value& v, std::size_t max_bytes) {
  if (v.is_string()) return v.as_string();
  std::string out;
  append_str(out, v, max_bytes);
  return out;
}

void append_repr(std::string& out, const Value& v, std::size_t max_bytes) { append_repr_impl(out, v, max_bytes); }

void append_json(std::string& out, const Value& v, const JsonFormat& format, std::size_t max_bytes) {
  append_json_impl(out, v, format, 0, max_bytes);
  check(out, max_bytes);
}

}  // namespace verdict::chat::jinja
