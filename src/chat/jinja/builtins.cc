#include "chat/jinja/builtins.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "chat/jinja/errors.h"
#include "chat/jinja/py_format.h"
#include "chat/jinja/text.h"

namespace verdict::chat::jinja {

void Runtime::charge(int64_t steps) {
  steps_ += steps;
  if (steps_ > limits_.max_steps)
    throw RenderError("template needs too much work (limit " + std::to_string(limits_.max_steps) + " steps)");
}

void Runtime::check_items(std::size_t n) const {
  if (n > limits_.max_items) throw RenderError("list too long (limit " + std::to_string(limits_.max_items) + " items)");
}

void Runtime::check_bytes(std::size_t n) const {
  if (n > limits_.max_output_bytes)
    throw RenderError("string too long (limit " + std::to_string(limits_.max_output_bytes) + " bytes)");
}

BoundArgs::BoundArgs(const CallArgs& args, std::initializer_list<std::string_view> names, std::string_view function)
    : values_(names.size(), nullptr) {
  if (args.positional.size() > names.size())
    throw RenderError(std::string(function) + "() takes at most " + std::to_string(names.size()) + " argument(s) (" +
                      std::to_string(args.positional.size()) + " given)");
  for (std::size_t i = 0; i < args.positional.size(); ++i) values_[i] = &args.positional[i];
  for (const auto& [key, value] : args.keyword) {
    std::size_t i = 0;
    for (const auto name : names) {
      if (name == key) break;
      ++i;
    }
    if (i == names.size())
      throw RenderError(std::string(function) + "() got an unexpected keyword argument '" + key + "'");
    if (values_[i] != nullptr)
      throw RenderError(std::string(function) + "() got multiple values for argument '" + key + "'");
    values_[i] = &value;
  }
}

std::string describe(const Callable& c) {
  switch (c.kind) {
    case Callable::Kind::Builtin: return "<function " + c.name + ">";
    case Callable::Kind::Method: return "<method " + c.name + ">";
    case Callable::Kind::Macro: return "<macro " + c.name + ">";
    case Callable::Kind::Caller: return "<macro caller>";
  }
  return "<function>";
}

Value lookup_path(const Value& v, std::string_view path) {
  Value current = v;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = path.find('.', start);
    const std::string_view part =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (current.is_object()) {
      const Value* found = current.as_object().find(part);
      current = found ? *found : Value();
    } else if (current.is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos) {
      const auto& items = current.as_array();
      const std::size_t index = part.size() > 18 ? items.size() : std::stoull(std::string(part));
      current = index < items.size() ? items[index] : Value();
    } else {
      return Value();
    }
    if (dot == std::string_view::npos) return current;
    start = dot + 1;
  }
}

bool parse_python_int(std::string_view s, int base, int64_t& out) {
  std::string t = text::strip(s, true, true);
  bool negative = false;
  std::size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) negative = t[i++] == '-';
  if (i + 1 < t.size() && t[i] == '0') {
    const char p = static_cast<char>(t[i + 1] | 0x20);
    const int prefixed = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefixed != 0 && (base == 0 || base == prefixed)) {
      base = prefixed;
      i += 2;
      if (i < t.size() && t[i] == '_') ++i;
    }
  }
  if (base == 0) base = 10;
  if (base < 2 || base > 36 || i >= t.size()) return false;
  uint64_t value = 0;
  bool digit_before = false;
  for (; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '_') {
      if (!digit_before || i + 1 >= t.size() || t[i + 1] == '_') return false;
      continue;
    }
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
      d = (c | 0x20) - 'a' + 10;
    else
      return false;
    if (d >= base) return false;
    if (value > (static_cast<uint64_t>(INT64_MAX) + 1 - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base))
      return false;
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    digit_before = true;
  }
  if (!digit_before) return false;
  if (!negative && value > static_cast<uint64_t>(INT64_MAX)) return false;
  out = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return true;
}

bool parse_python_float(std::string_view s, double& out) {
  std::string t = text::strip(s, true, true);
  std::string cleaned;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '_') {
      const bool between = i > 0 && i + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[i - 1])) &&
                           std::isdigit(static_cast<unsigned char>(t[i + 1]));
      if (!between) return false;
      continue;
    }
    cleaned.push_back(t[i]);
  }
  if (cleaned.empty()) return false;
  std::string lower = text::lower(cleaned);
  std::string_view body = lower;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == "inf" || body == "infinity") {
    out = negative ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (body == "nan") {
    out = std::nan("");
    return true;
  }
  // Python accepts digits with an optional point and exponent; no hex floats.
  for (const char c : body)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' || c == '-')) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(cleaned.c_str(), &end);
  if (end != cleaned.c_str() + cleaned.size()) return false;
  out = v;
  return true;
}

namespace {

int64_t int_arg(const Value& v, const char* function) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool() ? 1 : 0;
  throw RenderError(std::string(function) + "() expects integers, got '" + v.type_name() + "'");
}

// Jinja2's sandbox caps range() at 100,000 items.
constexpr uint64_t kMaxRange = 100000;

Value fn_range(Runtime& rt, const CallArgs& args) {
  if (!args.keyword.empty()) throw RenderError("range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) throw RenderError("range() expects 1 to 3 arguments");
  int64_t start = 0, stop = 0, step = 1;
  if (p.size() == 1) {
    stop = int_arg(p[0], "range");
  } else {
    start = int_arg(p[0], "range");
    stop = int_arg(p[1], "range");
    if (p.size() == 3) step = int_arg(p[2], "range");
  }
  if (step == 0) throw RenderError("range() arg 3 must not be zero");
  // Count in unsigned arithmetic (no overflow for any int64 bounds), then refuse long ranges.
  uint64_t count = 0;
  if (step > 0 && stop > start) {
    const uint64_t span = static_cast<uint64_t>(stop) - static_cast<uint64_t>(start);
    count = (span - 1) / static_cast<uint64_t>(step) + 1;
  } else if (step < 0 && start > stop) {
    const uint64_t span = static_cast<uint64_t>(start) - static_cast<uint64_t>(stop);
    const uint64_t abs_step = static_cast<uint64_t>(-(step + 1)) + 1;
    count = (span - 1) / abs_step + 1;
  }
  if (count > kMaxRange) throw RenderError("range() too big (more than 100000 items)");
  rt.check_items(static_cast<std::size_t>(count));
  rt.charge(static_cast<int64_t>(count));
  std::vector<Value> items;
  items.reserve(static_cast<std::size_t>(count));
  int64_t v = start;
  for (uint64_t i = 0; i < count; ++i) {
    items.push_back(Value::integer(v));
    if (i + 1 < count) v += step;
  }
  return Value::array(std::move(items));
}

// namespace(mapping?, **kwargs) / dict(mapping?, **kwargs).
Value make_mapping(const CallArgs& args, Object::Flavor flavor, const char* function) {
  if (args.positional.size() > 1) throw RenderError(std::string(function) + "() takes at most 1 positional argument");
  auto object = std::make_shared<Object>(flavor);
  if (!args.positional.empty()) {
    const Value& init = args.positional[0];
    if (init.is_object() && !init.as_object().is_namespace()) {
      for (const auto& [k, v] : init.as_object().entries()) object->set(k, v);
    } else if (init.is_array()) {
      for (const auto& pair : init.as_array()) {
        if (!pair.is_array() || pair.as_array().size() != 2 || !pair.as_array()[0].is_string())
          throw RenderError(std::string(function) + "() expects a mapping or a list of (key, value) pairs");
        object->set(pair.as_array()[0].as_string(), pair.as_array()[1]);
      }
    } else if (!init.is_undefined()) {
      throw RenderError(std::string(function) + "() expects a mapping, got '" + init.type_name() + "'");
    }
  }
  for (const auto& [k, v] : args.keyword) object->set(k, v);
  return Value::object(std::move(object));
}

Value fn_namespace(Runtime&, const CallArgs& args) {
  return make_mapping(args, Object::Flavor::Namespace, "namespace");
}
Value fn_dict(Runtime&, const CallArgs& args) { return make_mapping(args, Object::Flavor::Dict, "dict"); }

Value fn_raise_exception(Runtime& rt, const CallArgs& args) {
  const BoundArgs a(args, {"message"}, "raise_exception");
  throw RaisedException(a.has(0) ? to_str(*a.get(0), rt.max_bytes()) : std::string("raise_exception() called"));
}

// strftime_now(format): the current local time through strftime, as transformers provides it.
Value fn_strftime_now(Runtime&, const CallArgs& args) {
  const BoundArgs a(args, {"format"}, "strftime_now");
  if (!a.has(0) || !a.get(0)->is_string()) throw RenderError("strftime_now() expects a format string");
  const std::string& format = a.get(0)->as_string();
  if (format.size() > 256) throw RenderError("strftime_now() format too long");
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string out(1024, '\0');
  const std::size_t n = format.empty() ? 0 : std::strftime(out.data(), out.size(), format.c_str(), &local);
  out.resize(n);
  return Value::string(std::move(out));
}

struct GlobalEntry {
  std::string_view name;
  BuiltinFn fn;
};

constexpr GlobalEntry kGlobals[] = {
    {"range", fn_range},
    {"namespace", fn_namespace},
    {"dict", fn_dict},
    {"raise_exception", fn_raise_exception},
    {"strftime_now", fn_strftime_now},
};

}  // namespace

BuiltinFn find_global(std::string_view name) {
  for (const auto& g : kGlobals)
    if (g.name == name) return g.fn;
  return nullptr;
}

}  // namespace verdict::chat::jinja
