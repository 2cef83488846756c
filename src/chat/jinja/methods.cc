// Methods callable on values, as Python has them: str methods (startswith, split, strip, replace,
// find, ...), dict.get/items/keys/values, and loop.cycle. Lists have none (the sandbox Jinja2 runs
// chat templates in forbids mutating them).
#include <algorithm>

#include "chat/jinja/builtins.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/py_format.h"
#include "chat/jinja/text.h"

namespace verdict::chat::jinja {
namespace {

const std::string& self_str(const Value& self) { return self.as_string(); }

std::optional<std::string_view> optional_str(const BoundArgs& a, std::size_t i, const char* method) {
  if (!a.has(i) || a.get(i)->is_none()) return std::nullopt;
  if (!a.get(i)->is_string()) throw RenderError(std::string(method) + "() argument must be str or None");
  return std::string_view(a.get(i)->as_string());
}

const std::string& required_str(const BoundArgs& a, std::size_t i, const char* method) {
  if (!a.has(i) || !a.get(i)->is_string()) throw RenderError(std::string(method) + "() expects a string argument");
  return a.get(i)->as_string();
}

int64_t optional_int(const BoundArgs& a, std::size_t i, int64_t fallback, const char* method) {
  if (!a.has(i) || a.get(i)->is_none()) return fallback;
  if (a.get(i)->is_int()) return a.get(i)->as_int();
  throw RenderError(std::string(method) + "() expects an integer argument");
}

Value string_list(Runtime& rt, std::vector<std::string> parts) {
  rt.check_items(parts.size());
  rt.charge(static_cast<int64_t>(parts.size()));
  std::vector<Value> items;
  items.reserve(parts.size());
  for (auto& p : parts) items.push_back(Value::string(std::move(p)));
  return Value::array(std::move(items));
}

// startswith/endswith(prefix or tuple of prefixes)
Value affix(const Value& self, const CallArgs& args, bool start, const char* method) {
  const BoundArgs a(args, {"prefix"}, method);
  if (!a.has(0)) throw RenderError(std::string(method) + "() takes at least 1 argument");
  const std::string& s = self_str(self);
  auto test = [&](const Value& p) {
    if (!p.is_string()) throw RenderError(std::string(method) + "() argument must be str or a tuple of str");
    const std::string& x = p.as_string();
    return x.size() <= s.size() &&
           (start ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0);
  };
  const Value& p = *a.get(0);
  if (p.is_array()) return Value::boolean(std::any_of(p.as_array().begin(), p.as_array().end(), test));
  return Value::boolean(test(p));
}

Value m_startswith(Runtime&, const Value& self, const CallArgs& args) { return affix(self, args, true, "startswith"); }
Value m_endswith(Runtime&, const Value& self, const CallArgs& args) { return affix(self, args, false, "endswith"); }

Value strip_method(const Value& self, const CallArgs& args, bool left, bool right, const char* method) {
  const BoundArgs a(args, {"chars"}, method);
  return Value::string(text::strip(self_str(self), left, right, optional_str(a, 0, method)));
}

Value m_strip(Runtime&, const Value& self, const CallArgs& args) {
  return strip_method(self, args, true, true, "strip");
}
Value m_lstrip(Runtime&, const Value& self, const CallArgs& args) {
  return strip_method(self, args, true, false, "lstrip");
}
Value m_rstrip(Runtime&, const Value& self, const CallArgs& args) {
  return strip_method(self, args, false, true, "rstrip");
}

Value m_split(Runtime& rt, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {"sep", "maxsplit"}, "split");
  return string_list(rt, text::split(self_str(self), optional_str(a, 0, "split"), optional_int(a, 1, -1, "split")));
}

Value m_rsplit(Runtime& rt, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {"sep", "maxsplit"}, "rsplit");
  return string_list(rt, text::rsplit(self_str(self), optional_str(a, 0, "rsplit"), optional_int(a, 1, -1, "rsplit")));
}

Value m_splitlines(Runtime& rt, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {}, "splitlines");
  return string_list(rt, text::splitlines(self_str(self)));
}

Value m_replace(Runtime& rt, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {"old", "new", "count"}, "replace");
  std::string out = text::replace(self_str(self), required_str(a, 0, "replace"), required_str(a, 1, "replace"),
                                  optional_int(a, 2, -1, "replace"), rt.max_bytes());
  rt.charge_bytes(out.size());
  return Value::string(std::move(out));
}

Value no_args(const CallArgs& args, const char* method) {
  const BoundArgs a(args, {}, method);
  return Value();
}

Value m_lower(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "lower");
  return Value::string(text::lower(self_str(self)));
}
Value m_upper(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "upper");
  return Value::string(text::upper(self_str(self)));
}
Value m_title(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "title");
  return Value::string(text::title(self_str(self)));
}
Value m_capitalize(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "capitalize");
  return Value::string(text::capitalize(self_str(self)));
}
Value m_isdigit(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "isdigit");
  return Value::boolean(text::is_digit(self_str(self)));
}
Value m_isalpha(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "isalpha");
  return Value::boolean(text::is_alpha(self_str(self)));
}
Value m_isalnum(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "isalnum");
  return Value::boolean(text::is_alnum(self_str(self)));
}
Value m_isspace(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "isspace");
  return Value::boolean(text::is_all_space(self_str(self)));
}
Value m_islower(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "islower");
  return Value::boolean(text::is_lower(self_str(self)));
}
Value m_isupper(Runtime&, const Value& self, const CallArgs& args) {
  no_args(args, "isupper");
  return Value::boolean(text::is_upper(self_str(self)));
}

Value m_find(Runtime&, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {"sub"}, "find");
  return Value::integer(text::find(self_str(self), required_str(a, 0, "find")));
}
Value m_rfind(Runtime&, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {"sub"}, "rfind");
  return Value::integer(text::rfind(self_str(self), required_str(a, 0, "rfind")));
}
Value m_index(Runtime&, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {"sub"}, "index");
  const int64_t i = text::find(self_str(self), required_str(a, 0, "index"));
  if (i < 0) throw RenderError("substring not found");
  return Value::integer(i);
}
Value m_count(Runtime&, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {"sub"}, "count");
  return Value::integer(text::count(self_str(self), required_str(a, 0, "count")));
}

Value m_join(Runtime& rt, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {"iterable"}, "join");
  if (!a.has(0) || !a.get(0)->is_array()) throw RenderError("join() expects a list of strings");
  std::string out;
  bool first = true;
  for (const auto& item : a.get(0)->as_array()) {
    if (!item.is_string())
      throw RenderError(std::string("join(): expected str instance, ") + item.type_name() + " found");
    if (!first) out += self_str(self);
    first = false;
    out += item.as_string();
    rt.check_bytes(out.size());
  }
  rt.charge_bytes(out.size());
  return Value::string(std::move(out));
}

Value m_get(Runtime&, const Value& self, const CallArgs& args) {
  const BoundArgs a(args, {"key", "default"}, "get");
  if (!a.has(0)) throw RenderError("get() takes at least 1 argument");
  const Value* found = a.get(0)->is_string() ? self.as_object().find(a.get(0)->as_string()) : nullptr;
  if (found != nullptr) return *found;
  return a.has(1) ? *a.get(1) : Value::none();
}

Value m_items(Runtime& rt, const Value& self, const CallArgs& args) {
  no_args(args, "items");
  std::vector<Value> pairs;
  for (const auto& [k, v] : self.as_object().entries()) pairs.push_back(Value::array({Value::string(k), v}));
  rt.charge(static_cast<int64_t>(pairs.size()));
  return Value::array(std::move(pairs));
}

Value m_keys(Runtime& rt, const Value& self, const CallArgs& args) {
  no_args(args, "keys");
  std::vector<Value> keys;
  for (const auto& [k, v] : self.as_object().entries()) keys.push_back(Value::string(k));
  rt.charge(static_cast<int64_t>(keys.size()));
  return Value::array(std::move(keys));
}

Value m_values(Runtime& rt, const Value& self, const CallArgs& args) {
  no_args(args, "values");
  std::vector<Value> values;
  for (const auto& [k, v] : self.as_object().entries()) values.push_back(v);
  rt.charge(static_cast<int64_t>(values.size()));
  return Value::array(std::move(values));
}

// loop.cycle(a, b, ...): the argument at loop.index0 modulo their count.
Value m_cycle(Runtime&, const Value& self, const CallArgs& args) {
  if (args.positional.empty() || !args.keyword.empty()) throw RenderError("loop.cycle() expects at least one argument");
  const Value* index0 = self.as_object().find("index0");
  const int64_t i = index0 != nullptr && index0->is_int() ? index0->as_int() : 0;
  return args.positional[static_cast<std::size_t>(i) % args.positional.size()];
}

struct MethodEntry {
  std::string_view name;
  MethodFn fn;
};

constexpr MethodEntry kStringMethods[] = {
    {"startswith", m_startswith}, {"endswith", m_endswith}, {"strip", m_strip},     {"lstrip", m_lstrip},
    {"rstrip", m_rstrip},         {"split", m_split},       {"rsplit", m_rsplit},   {"splitlines", m_splitlines},
    {"replace", m_replace},       {"lower", m_lower},       {"upper", m_upper},     {"title", m_title},
    {"capitalize", m_capitalize}, {"find", m_find},         {"rfind", m_rfind},     {"index", m_index},
    {"count", m_count},           {"join", m_join},         {"isdigit", m_isdigit}, {"isalpha", m_isalpha},
    {"isalnum", m_isalnum},       {"isspace", m_isspace},   {"islower", m_islower}, {"isupper", m_isupper},
};

constexpr MethodEntry kDictMethods[] = {{"get", m_get}, {"items", m_items}, {"keys", m_keys}, {"values", m_values}};

constexpr MethodEntry kLoopMethods[] = {{"cycle", m_cycle}};

template <std::size_t N>
MethodFn find_in(const MethodEntry (&table)[N], std::string_view name) {
  for (const auto& m : table)
    if (m.name == name) return m.fn;
  return nullptr;
}

}  // namespace

MethodFn find_method(const Value& receiver, std::string_view name) {
  if (receiver.is_string()) return find_in(kStringMethods, name);
  if (receiver.is_object()) {
    switch (receiver.as_object().flavor()) {
      case Object::Flavor::Dict: return find_in(kDictMethods, name);
      case Object::Flavor::Loop: return find_in(kLoopMethods, name);
      case Object::Flavor::Namespace: return nullptr;
    }
  }
  return nullptr;
}

bool is_method_name(std::string_view name) {
  return find_in(kStringMethods, name) != nullptr || find_in(kDictMethods, name) != nullptr ||
         find_in(kLoopMethods, name) != nullptr;
}

}  // namespace verdict::chat::jinja
