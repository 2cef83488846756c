// The filters: Jinja2's built-ins that chat templates use, with Jinja2's signatures and semantics
// (Python str() for conversions; `tojson` is transformers' json.dumps override). This file has the
// string and number filters and the registry; list and dict filters are in collection_filters.cc.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/jinja/errors.h"
#include "chat/jinja/filter_support.h"
#include "chat/jinja/py_format.h"
#include "chat/jinja/text.h"

namespace verdict::chat::jinja {
namespace {

using namespace filters;  // the shared helpers and the list and dict filters

Value f_abs(Runtime&, const Value& v, const CallArgs&) {
  if (v.is_float()) return Value::number(std::fabs(v.as_float()));
  if (v.is_int()) {
    if (v.as_int() == INT64_MIN) throw RenderError("integer overflow");
    return Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
  }
  if (v.is_bool()) return Value::integer(v.as_bool() ? 1 : 0);
  throw RenderError(std::string("bad operand type for abs(): '") + v.type_name() + "'");
}

Value f_attr(Runtime&, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"name"}, "attr");
  if (!a.has(0) || !a.get(0)->is_string()) throw RenderError("attr() expects an attribute name");
  if (!v.is_object()) return Value();
  const Value* found = v.as_object().find(a.get(0)->as_string());
  return found ? *found : Value();
}

Value f_capitalize(Runtime& rt, const Value& v, const CallArgs&) { return Value::string(text::capitalize(str(rt, v))); }

Value f_lower(Runtime& rt, const Value& v, const CallArgs&) { return Value::string(text::lower(str(rt, v))); }

Value f_upper(Runtime& rt, const Value& v, const CallArgs&) { return Value::string(text::upper(str(rt, v))); }

// Jinja2's title filter (not str.title): words start after runs of whitespace, '-', '(', '{', '[' or
// '<'; each word's first character is uppercased and the rest lowercased ("it's" → "It's").
Value f_title(Runtime& rt, const Value& v, const CallArgs&) {
  const std::string s = str(rt, v);
  std::string out;
  bool word_start = true;
  for (std::size_t i = 0; i < s.size();) {
    const text::Decoded d = text::decode_at(s, i);
    const std::string_view cp(s.data() + i, d.len);
    const bool separator =
        d.valid && (text::is_space(d.cp) || d.cp == '-' || d.cp == '(' || d.cp == '{' || d.cp == '[' || d.cp == '<');
    if (separator)
      out.append(cp);
    else
      out += word_start ? text::upper(cp) : text::lower(cp);
    word_start = separator;
    i += d.len;
  }
  return Value::string(std::move(out));
}

Value f_safe(Runtime&, const Value& v, const CallArgs&) { return v; }

Value f_center(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"width"}, "center");
  const int64_t width = int_arg(a, 0, 80, "center width");
  std::string s = str(rt, v);
  const auto len = static_cast<int64_t>(text::length(s));
  if (width <= len) return Value::string(std::move(s));
  rt.check_bytes(s.size() + static_cast<std::size_t>(width - len));
  const int64_t pad = width - len;
  const int64_t left = pad / 2 + (pad & width & 1);  // CPython's str.center rounding
  return Value::string(std::string(static_cast<std::size_t>(left), ' ') + s +
                       std::string(static_cast<std::size_t>(pad - left), ' '));
}

Value f_length(Runtime&, const Value& v, const CallArgs&) {
  switch (v.kind()) {
    case Value::Kind::String: return Value::integer(static_cast<int64_t>(text::length(v.as_string())));
    case Value::Kind::Array: return Value::integer(static_cast<int64_t>(v.as_array().size()));
    case Value::Kind::Object: return Value::integer(static_cast<int64_t>(v.as_object().size()));
    case Value::Kind::Undefined: return Value::integer(0);
    default: throw RenderError(std::string("object of type '") + v.type_name() + "' has no len()");
  }
}

Value f_default(Runtime&, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"default_value", "boolean"}, "default");
  const bool use = v.is_undefined() || (bool_arg(a, 1, false) && !v.truthy());
  if (!use) return v;
  return a.has(0) ? *a.get(0) : Value::string("");
}

Value f_escape(Runtime& rt, const Value& v, const CallArgs&) {
  const std::string s = str(rt, v);
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  rt.check_bytes(out.size());
  return Value::string(std::move(out));
}

Value f_float(Runtime&, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"default"}, "float");
  const Value fallback = a.has(0) ? *a.get(0) : Value::number(0.0);
  if (v.is_number() || v.is_bool()) return Value::number(v.as_double());
  double d = 0;
  if (v.is_string() && parse_python_float(v.as_string(), d)) return Value::number(d);
  return fallback;
}

Value f_int(Runtime&, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"default", "base"}, "int");
  const Value fallback = a.has(0) ? *a.get(0) : Value::integer(0);
  const int64_t base = int_arg(a, 1, 10, "int base");
  if (v.is_int()) return v;
  if (v.is_bool()) return Value::integer(v.as_bool() ? 1 : 0);
  if (v.is_float()) {
    const double d = std::trunc(v.as_float());
    if (!(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)) return fallback;
    return Value::integer(static_cast<int64_t>(d));
  }
  if (v.is_string()) {
    int64_t i = 0;
    if (parse_python_int(v.as_string(), static_cast<int>(base), i)) return Value::integer(i);
    double d = 0;
    if (parse_python_float(v.as_string(), d)) {
      d = std::trunc(d);
      if (d >= -9.2233720368547758e18 && d < 9.2233720368547758e18) return Value::integer(static_cast<int64_t>(d));
    }
  }
  return fallback;
}

// Jinja2's indent: the first line and blank lines are left alone unless `first` / `blank`.
Value f_indent(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"width", "first", "blank"}, "indent");
  std::string unit = "    ";
  if (a.has(0)) {
    const Value& w = *a.get(0);
    if (w.is_string())
      unit = w.as_string();
    else {
      const int64_t n = int_arg(a, 0, 4, "indent width");
      rt.check_bytes(static_cast<std::size_t>(std::max<int64_t>(n, 0)));
      unit.assign(static_cast<std::size_t>(std::max<int64_t>(n, 0)), ' ');
    }
  }
  const bool first = bool_arg(a, 1, false), blank = bool_arg(a, 2, false);
  const std::vector<std::string> lines = text::splitlines(str(rt, v) + "\n");
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out.push_back('\n');
    if (i == 0 ? first : (blank || !lines[i].empty())) out += unit;
    out += lines[i];
    rt.check_bytes(out.size());
  }
  rt.charge_bytes(out.size());
  return Value::string(std::move(out));
}

Value f_replace(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"old", "new", "count"}, "replace");
  if (!a.has(0) || !a.has(1)) throw RenderError("replace() expects old and new strings");
  const int64_t count = int_arg(a, 2, -1, "replace count");
  std::string out = text::replace(str(rt, v), str(rt, *a.get(0)), str(rt, *a.get(1)), count, rt.max_bytes());
  rt.charge_bytes(out.size());
  return Value::string(std::move(out));
}

Value f_round(Runtime&, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"precision", "method"}, "round");
  const int64_t precision = int_arg(a, 0, 0, "round precision");
  const std::string method = a.has(1) && a.get(1)->is_string() ? a.get(1)->as_string() : "common";
  if (!v.is_number() && !v.is_bool())
    throw RenderError(std::string("round() expects a number, got '") + v.type_name() + "'");
  if (method != "common" && method != "ceil" && method != "floor")
    throw RenderError("round() method must be 'common', 'ceil' or 'floor'");
  if (method == "common" && (v.is_int() || v.is_bool()) && precision >= 0)
    return Value::integer(v.is_int() ? v.as_int() : v.as_bool());
  const double d = v.as_double();
  if (!std::isfinite(d) || precision > 300 || precision < -300) return Value::number(d);
  if (method == "common") {
    if (precision >= 0) {
      // printf rounds the exact binary value, ties to even: Python's round().
      char buf[512];
      std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<int64_t>(precision, 100)), d);
      return Value::number(std::strtod(buf, nullptr));
    }
    const double scale = std::pow(10.0, static_cast<double>(-precision));
    return Value::number(std::nearbyint(d / scale) * scale);
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  return Value::number((method == "ceil" ? std::ceil(d * scale) : std::floor(d * scale)) / scale);
}

Value f_string(Runtime& rt, const Value& v, const CallArgs&) { return v.is_string() ? v : Value::string(str(rt, v)); }

// transformers: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Value f_tojson(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"ensure_ascii", "indent", "separators", "sort_keys"}, "tojson");
  JsonFormat format;
  format.ensure_ascii = bool_arg(a, 0, false);
  if (a.has(1) && !a.get(1)->is_none()) {
    const Value& indent = *a.get(1);
    if (indent.is_string()) {
      format.indent = indent.as_string();
    } else {
      const int64_t n = int_arg(a, 1, 0, "tojson indent");
      if (n > 64) throw RenderError("tojson indent too large");
      format.indent = std::string(static_cast<std::size_t>(std::max<int64_t>(n, 0)), ' ');
    }
    format.item_separator.assign(1, ',');  // json.dumps drops the space after ',' when indenting
  }
  if (a.has(2) && !a.get(2)->is_none()) {
    const Value& sep = *a.get(2);
    if (!sep.is_array() || sep.as_array().size() != 2 || !sep.as_array()[0].is_string() ||
        !sep.as_array()[1].is_string())
      throw RenderError("tojson separators must be a pair of strings");
    format.item_separator = sep.as_array()[0].as_string();
    format.key_separator = sep.as_array()[1].as_string();
  }
  format.sort_keys = bool_arg(a, 3, false);
  std::string out;
  append_json(out, v, format, rt.max_bytes());
  rt.charge_bytes(out.size());
  return Value::string(std::move(out));
}

Value f_trim(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"chars"}, "trim");
  if (a.has(0) && !a.get(0)->is_none()) {
    const std::string chars = str(rt, *a.get(0));
    return Value::string(text::strip(str(rt, v), true, true, chars));
  }
  return Value::string(text::strip(str(rt, v), true, true));
}

Value f_wordcount(Runtime& rt, const Value& v, const CallArgs&) {
  const std::string s = str(rt, v);
  int64_t words = 0;
  bool in_word = false;
  for (std::size_t i = 0; i < s.size();) {
    const text::Decoded d = text::decode_at(s, i);
    const std::string_view cp(s.data() + i, d.len);
    const bool word_char = d.valid && (d.cp == '_' || text::is_alnum(cp));
    if (word_char && !in_word) ++words;
    in_word = word_char;
    i += d.len;
  }
  return Value::integer(words);
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr FilterEntry kFilters[] = {
    {"abs", f_abs},
    {"attr", f_attr},
    {"batch", f_batch},
    {"capitalize", f_capitalize},
    {"center", f_center},
    {"count", f_length},
    {"d", f_default},
    {"default", f_default},
    {"dictsort", f_dictsort},
    {"e", f_escape},
    {"escape", f_escape},
    {"first", f_first},
    {"float", f_float},
    {"indent", f_indent},
    {"int", f_int},
    {"items", f_items},
    {"join", f_join},
    {"last", f_last},
    {"length", f_length},
    {"list", f_list},
    {"lower", f_lower},
    {"map", f_map},
    {"max", f_max},
    {"min", f_min},
    {"reject", f_reject},
    {"rejectattr", f_rejectattr},
    {"replace", f_replace},
    {"reverse", f_reverse},
    {"round", f_round},
    {"safe", f_safe},
    {"select", f_select},
    {"selectattr", f_selectattr},
    {"sort", f_sort},
    {"string", f_string},
    {"sum", f_sum},
    {"title", f_title},
    {"tojson", f_tojson},
    {"trim", f_trim},
    {"unique", f_unique},
    {"upper", f_upper},
    {"wordcount", f_wordcount},
};

}  // namespace

FilterFn find_filter(std::string_view name) {
  for (const auto& f : kFilters)
    if (f.name == name) return f.fn;
  return nullptr;
}

}  // namespace verdict::chat::jinja
