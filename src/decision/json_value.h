// A JSON value that keeps everything a Clef prompt depends on (clef-decision.md §4.7):
//   * int vs float as written in the source text (`1.0` stays a float, `1` an int);
//   * integers of any size, exactly (as decimal digits when they do not fit in int64);
//   * member order of every object;
//   * duplicate keys resolved like Python's json.loads: the last value wins, at the first key's position.
//
// read_json() is a strict RFC 8259 reader (UTF-8 validated, no NaN/Infinity, no unpaired surrogate
// escapes) with a bounded nesting depth. It is iterative, so hostile nesting cannot exhaust the stack.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/error.h"

namespace verdict::decision {

class Value;
struct Member;

// A deep-copying owning pointer: keeps Value small (16 bytes) while staying copyable.
template <class T>
class Box {
 public:
  Box() : ptr_(std::make_unique<T>()) {}
  explicit Box(T value) : ptr_(std::make_unique<T>(std::move(value))) {}
  Box(const Box& other) : ptr_(std::make_unique<T>(*other.ptr_)) {}
  Box(Box&&) noexcept = default;
  Box& operator=(const Box& other) {
    if (this != &other) ptr_ = std::make_unique<T>(*other.ptr_);
    return *this;
  }
  Box& operator=(Box&&) noexcept = default;
  ~Box() = default;

  T& operator*() { return *ptr_; }
  const T& operator*() const { return *ptr_; }
  T* operator->() { return ptr_.get(); }
  const T* operator->() const { return ptr_.get(); }

 private:
  std::unique_ptr<T> ptr_;
};

class Value {
 public:
  enum class Kind : uint8_t { kNull, kBool, kInt, kFloat, kString, kArray, kObject };

  Value() = default;  // null
  static Value null() { return Value(); }
  static Value boolean(bool b);
  static Value integer(int64_t i);
  // An integer from its decimal text: an optional '-' and digits without leading zeros ("-0" is 0).
  // Throws verdict::Error for anything else.
  static Value integer_text(std::string_view digits);
  static Value floating(double d);
  static Value string(std::string s);
  static Value array();
  static Value object();

  Kind kind() const;
  bool is_null() const { return kind() == Kind::kNull; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_array() const { return kind() == Kind::kArray; }
  bool is_object() const { return kind() == Kind::kObject; }

  // Accessors; each throws verdict::Error when the value has another kind.
  bool as_bool() const;
  double as_float() const;
  const std::string& as_string() const;
  // The exact decimal text of an integer ("0", "-12", "18446744073709551615").
  std::string int_text() const;
  // True when the integer fits in int64 (then int64_value() is exact).
  bool int_fits_int64() const;
  int64_t int64_value() const;

  const std::vector<Value>& items() const;
  std::vector<Value>& items();
  const std::vector<Member>& members() const;
  std::vector<Member>& members();
  // Number of items or members (0 for scalars).
  std::size_t size() const;

  // Object member lookup (nullptr when absent or not an object).
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  // Sets a member: replaces the value of an existing key in place, else appends.
  void set(std::string key, Value value);
  // Appends to an array.
  void push_back(Value value);

  // Python truthiness: null, false, 0, 0.0, -0.0, "", [] and {} are false.
  bool truthy() const;

  // Structural equality (int vs float distinguished; object members compared in order).
  friend bool operator==(const Value& a, const Value& b);

 private:
  struct BigInt {
    std::string digits;  // canonical decimal text, outside the int64 range
    bool operator==(const BigInt&) const = default;
  };
  using Storage = std::variant<std::monostate, bool, int64_t, double, Box<BigInt>, Box<std::string>,
                               Box<std::vector<Value>>, Box<std::vector<Member>>>;
  Storage data_;
};

struct Member {
  std::string key;
  Value value;
};

// What went wrong while reading, in the order the SystemOne rules report them (J1, J2, J3).
enum class JsonErrorKind { kSyntax, kTooDeep, kFloatOverflow };

class JsonError : public Error {
 public:
  JsonError(JsonErrorKind kind, const std::string& message) : Error(message), kind_(kind) {}
  JsonErrorKind kind() const { return kind_; }

 private:
  JsonErrorKind kind_;
};

struct JsonReadOptions {
  // Deepest nesting accepted: every array or object opens one level, the outermost is level 1.
  // Must be between 1 and kMaxJsonDepthLimit.
  std::size_t max_depth = 128;
};

// Upper bound for JsonReadOptions::max_depth (values are destroyed and written recursively).
inline constexpr std::size_t kMaxJsonDepthLimit = 4096;

// Parses one JSON text (a leading UTF-8 byte-order mark is skipped). Errors are reported in rule
// order: any syntax error (kSyntax) wins over excessive depth (kTooDeep), which wins over a float
// token that overflows a double (kFloatOverflow); underflow to zero is accepted (sign kept).
// The message names the byte offset of a syntax error.
Value read_json(std::string_view text, const JsonReadOptions& options = {});

}  // namespace verdict::decision
