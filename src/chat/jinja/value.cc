#include "chat/jinja/value.h"

#include <algorithm>

#include "chat/jinja/callable.h"
#include "chat/jinja/errors.h"

namespace verdict::chat::jinja {
namespace {

constexpr std::size_t kIndexThreshold = 16;

void check_nesting(int depth) {
  if (depth > kMaxNesting)
    throw RenderError("value nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
}

template <typename JsonT>
Value convert_json(const JsonT& j, int level) {
  if (level > kMaxNesting) check_nesting(level);
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value::boolean(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::integer(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.template get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value::integer(static_cast<int64_t>(u));
      return Value::number(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float: return Value::number(j.template get<double>());
    case nlohmann::json::value_t::string: return Value::string(j.template get<std::string>());
    case nlohmann::json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(convert_json(item, level + 1));
      return Value::array(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      std::vector<std::pair<std::string, Value>> entries;
      entries.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it)
        entries.emplace_back(it.key(), convert_json(it.value(), level + 1));
      return make_object(std::move(entries));
    }
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded: break;
  }
  return Value::none();
}

}  // namespace

Value Value::none() {
  Value v;
  v.kind_ = Kind::None;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.data_ = b;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::Int;
  v.data_ = i;
  return v;
}

Value Value::number(double d) {
  Value v;
  v.kind_ = Kind::Float;
  v.data_ = d;
  return v;
}

Value Value::string(std::string s) { return string(std::make_shared<const std::string>(std::move(s))); }

Value Value::string(std::shared_ptr<const std::string> s) {
  Value v;
  v.kind_ = Kind::String;
  v.data_ = std::move(s);
  return v;
}

Value Value::array(std::vector<Value> items) {
  auto data = std::make_shared<ArrayData>();
  int depth = 0;
  bool has_namespace = false;
  for (const auto& item : items) {
    depth = std::max(depth, item.depth());
    has_namespace = has_namespace || item.holds_namespace();
  }
  check_nesting(depth + 1);
  data->items = std::move(items);
  data->depth = depth + 1;
  data->has_namespace = has_namespace;
  Value v;
  v.kind_ = Kind::Array;
  v.data_ = ArrayPtr(std::move(data));
  return v;
}

Value Value::object(std::shared_ptr<Object> o) {
  Value v;
  v.kind_ = Kind::Object;
  v.data_ = std::move(o);
  return v;
}

Value Value::callable(std::shared_ptr<const Callable> c) {
  Value v;
  v.kind_ = Kind::Callable;
  v.data_ = std::move(c);
  return v;
}

Value Value::from_json(const nlohmann::ordered_json& j) { return convert_json(j, 0); }
Value Value::from_json(const nlohmann::json& j) { return convert_json(j, 0); }

double Value::as_double() const {
  switch (kind_) {
    case Kind::Int: return static_cast<double>(as_int());
    case Kind::Float: return as_float();
    case Kind::Bool: return as_bool() ? 1.0 : 0.0;
    default: return 0.0;
  }
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return as_bool();
    case Kind::Int: return as_int() != 0;
    case Kind::Float: return as_float() != 0.0;
    case Kind::String: return !as_string().empty();
    case Kind::Array: return !as_array().empty();
    case Kind::Object: return as_object().is_namespace() || as_object().size() > 0;
    case Kind::Callable: return true;
  }
  return false;
}

// A bound method counts as its receiver: it keeps it alive.
int Value::depth() const {
  if (kind_ == Kind::Array) return std::get<ArrayPtr>(data_)->depth;
  if (kind_ == Kind::Object) return as_object().depth();
  if (kind_ == Kind::Callable) return as_callable().receiver.depth();
  return 0;
}

bool Value::holds_namespace() const {
  if (kind_ == Kind::Array) return std::get<ArrayPtr>(data_)->has_namespace;
  if (kind_ == Kind::Object) return as_object().has_namespace();
  if (kind_ == Kind::Callable) return as_callable().receiver.holds_namespace();
  return false;
}

const char* Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined: return "undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::Array: return "list";
    case Kind::Object:
      return as_object().is_namespace()                     ? "Namespace"
             : as_object().flavor() == Object::Flavor::Loop ? "LoopContext"
                                                            : "dict";
    case Kind::Callable: return "function";
  }
  return "?";
}

const Value* Object::find(std::string_view key) const {
  if (!index_.empty()) {
    const auto it = index_.find(std::string(key));
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  for (const auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

void Object::set(std::string key, Value value) {
  check_nesting(value.depth() + 1);
  if (flavor_ == Flavor::Namespace && value.holds_namespace())
    throw RenderError("a namespace cannot hold another namespace");
  depth_ = std::max(depth_, value.depth() + 1);
  has_namespace_ = has_namespace_ || value.holds_namespace();
  if (!index_.empty()) {
    const auto it = index_.find(key);
    if (it != index_.end()) {
      entries_[it->second].second = std::move(value);
      return;
    }
    index_.emplace(key, entries_.size());
    entries_.emplace_back(std::move(key), std::move(value));
    return;
  }
  for (auto& [k, v] : entries_)
    if (k == key) {
      v = std::move(value);
      return;
    }
  entries_.emplace_back(std::move(key), std::move(value));
  if (entries_.size() > kIndexThreshold)
    for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
}

Value make_object(std::vector<std::pair<std::string, Value>> entries, Object::Flavor flavor) {
  auto object = std::make_shared<Object>(flavor);
  for (auto& [k, v] : entries) object->set(std::move(k), std::move(v));
  return Value::object(std::move(object));
}

namespace {

bool is_numeric(const Value& v) { return v.is_number() || v.is_bool(); }

}  // namespace

bool equals(const Value& a, const Value& b) {
  if (is_numeric(a) && is_numeric(b)) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    const int64_t x = a.is_bool() ? int64_t{a.as_bool()} : a.as_int();
    const int64_t y = b.is_bool() ? int64_t{b.as_bool()} : b.as_int();
    return x == y;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.as_string() == b.as_string();
    case Value::Kind::Array: {
      const auto& x = a.as_array();
      const auto& y = b.as_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!equals(x[i], y[i])) return false;
      return true;
    }
    case Value::Kind::Object: {
      if (&a.as_object() == &b.as_object()) return true;
      if (a.as_object().is_namespace() || b.as_object().is_namespace()) return false;  // identity only
      const auto& x = a.as_object();
      const auto& y = b.as_object();
      if (x.size() != y.size()) return false;
      for (const auto& [k, v] : x.entries()) {
        const Value* other = y.find(k);
        if (other == nullptr || !equals(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::Callable: return &a.as_callable() == &b.as_callable();
    default: return false;
  }
}

bool less(const Value& a, const Value& b) {
  if (is_numeric(a) && is_numeric(b)) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    const int64_t x = a.is_bool() ? int64_t{a.as_bool()} : a.as_int();
    const int64_t y = b.is_bool() ? int64_t{b.as_bool()} : b.as_int();
    return x < y;
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if (a.is_array() && b.is_array()) {
    const auto& x = a.as_array();
    const auto& y = b.as_array();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  throw RenderError(std::string("'<' not supported between instances of '") + a.type_name() + "' and '" +
                    b.type_name() + "'");
}

}  // namespace verdict::chat::jinja
