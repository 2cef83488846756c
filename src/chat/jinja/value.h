// The values a template computes with: Python's None/bool/int/float/str/list/dict as Jinja2 sees them,
// plus `undefined` (a missing variable or attribute: falsy, prints as "", attribute access on it gives
// undefined again, as @huggingface/jinja does) and callables (macros, builtins, bound methods).
//
// Strings, lists and dicts are shared, so copying a Value is cheap. Lists and plain dicts are never
// changed after construction; only namespace() objects are (`{% set ns.x = ... %}`). Dicts keep
// insertion order (Python dicts do, and `tojson` must print keys in the order the request gave).
//
// Every container knows its nesting depth; building one deeper than kMaxNesting is a RenderError, so
// no recursive walk over a value (printing, tojson, comparison, destruction) can exhaust the stack.
// A namespace may not contain another namespace (directly or inside a list/dict), which rules out
// reference cycles.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace verdict::chat::jinja {

inline constexpr int kMaxNesting = 200;

class Value;
class Object;
struct Callable;  // defined by the interpreter (callable.h)

struct ArrayData {
  std::vector<Value> items;
  int depth = 1;
  bool has_namespace = false;
};

class Value {
 public:
  enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, Array, Object, Callable };

  Value() = default;  // undefined
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value number(double d);
  static Value string(std::string s);
  static Value string(std::shared_ptr<const std::string> s);
  // Throws RenderError when an item nests too deeply.
  static Value array(std::vector<Value> items);
  static Value object(std::shared_ptr<Object> o);
  static Value callable(std::shared_ptr<const Callable> c);

  // JSON → Value (objects keep their key order). Throws RenderError past kMaxNesting.
  static Value from_json(const nlohmann::ordered_json& j);
  static Value from_json(const nlohmann::json& j);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }
  bool is_callable() const { return kind_ == Kind::Callable; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  // int, float or bool as a double (Python's numeric tower: bool is an int).
  double as_double() const;
  const std::string& as_string() const { return *std::get<StringPtr>(data_); }
  const std::shared_ptr<const std::string>& string_ptr() const { return std::get<StringPtr>(data_); }
  const std::vector<Value>& as_array() const { return std::get<ArrayPtr>(data_)->items; }
  Object& as_object() const { return *std::get<ObjectPtr>(data_); }
  const std::shared_ptr<Object>& object_ptr() const { return std::get<ObjectPtr>(data_); }
  const Callable& as_callable() const { return *std::get<CallablePtr>(data_); }

  // Python truthiness (undefined and None are false; empty str/list/dict are false).
  bool truthy() const;
  // Nesting depth: 0 for scalars, 1 + the deepest item for containers.
  int depth() const;
  // True for a namespace or a container holding one.
  bool holds_namespace() const;
  // Python's type name, for error messages ("str", "int", "list", "dict", "undefined", ...).
  const char* type_name() const;

 private:
  using StringPtr = std::shared_ptr<const std::string>;
  using ArrayPtr = std::shared_ptr<const ArrayData>;
  using ObjectPtr = std::shared_ptr<Object>;
  using CallablePtr = std::shared_ptr<const Callable>;

  Kind kind_ = Kind::Undefined;
  std::variant<std::monostate, bool, int64_t, double, StringPtr, ArrayPtr, ObjectPtr, CallablePtr> data_;
};

// A dict with string keys in insertion order, or a namespace (the only mutable kind).
class Object {
 public:
  enum class Flavor : uint8_t { Dict, Namespace, Loop };
  explicit Object(Flavor flavor = Flavor::Dict) : flavor_(flavor) {}

  Flavor flavor() const { return flavor_; }
  bool is_namespace() const { return flavor_ == Flavor::Namespace; }
  std::size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  const Value* find(std::string_view key) const;
  // Inserts or replaces (a replaced key keeps its position). Throws RenderError when the value
  // nests too deeply, or when it holds a namespace and this object is one.
  void set(std::string key, Value value);
  int depth() const { return depth_; }
  bool has_namespace() const { return has_namespace_ || flavor_ == Flavor::Namespace; }

 private:
  Flavor flavor_;
  std::vector<std::pair<std::string, Value>> entries_;
  std::unordered_map<std::string, std::size_t> index_;  // built once the object grows past a few keys
  int depth_ = 1;
  bool has_namespace_ = false;
};

Value make_object(std::vector<std::pair<std::string, Value>> entries, Object::Flavor flavor = Object::Flavor::Dict);

// Python ==: numbers compare by value (1 == 1.0 == True), containers deeply, dict order ignored;
// undefined equals only undefined.
bool equals(const Value& a, const Value& b);
// Python <, for sorting and the comparison operators: numbers, strings (code point order) and lists
// (lexicographic). Throws RenderError("'<' not supported between ...") otherwise.
bool less(const Value& a, const Value& b);

}  // namespace verdict::chat::jinja
