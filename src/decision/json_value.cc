#include "decision/json_value.h"

#include <charconv>
#include <cmath>

namespace verdict::decision {

namespace {

[[noreturn]] void kind_error(const char* wanted) { throw Error(std::string("JSON value is not ") + wanted); }

// True for the canonical decimal text of an integer: '-'? (0 | [1-9][0-9]*).
bool is_integer_text(std::string_view s) {
  std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  if (i >= s.size()) return false;
  if (s[i] == '0') return i + 1 == s.size();
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

}  // namespace

Value Value::boolean(bool b) {
  Value v;
  v.data_ = b;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.data_ = i;
  return v;
}

Value Value::integer_text(std::string_view digits) {
  if (!is_integer_text(digits)) throw Error("not an integer: '" + std::string(digits) + "'");
  int64_t parsed = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
  if (ec == std::errc() && ptr == digits.data() + digits.size()) return integer(parsed);  // "-0" -> 0
  Value v;
  v.data_ = Box<BigInt>(BigInt{std::string(digits)});
  return v;
}

Value Value::floating(double d) {
  Value v;
  v.data_ = d;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.data_ = Box<std::string>(std::move(s));
  return v;
}

Value Value::array() {
  Value v;
  v.data_ = Box<std::vector<Value>>();
  return v;
}

Value Value::object() {
  Value v;
  v.data_ = Box<std::vector<Member>>();
  return v;
}

Value::Kind Value::kind() const {
  switch (data_.index()) {
    case 0:
      return Kind::kNull;
    case 1:
      return Kind::kBool;
    case 2:
    case 4:
      return Kind::kInt;
    case 3:
      return Kind::kFloat;
    case 5:
      return Kind::kString;
    case 6:
      return Kind::kArray;
    default:
      return Kind::kObject;
  }
}

bool Value::as_bool() const {
  if (const bool* b = std::get_if<bool>(&data_)) return *b;
  kind_error("a boolean");
}

double Value::as_float() const {
  if (const double* d = std::get_if<double>(&data_)) return *d;
  kind_error("a float");
}

const std::string& Value::as_string() const {
  if (const auto* s = std::get_if<Box<std::string>>(&data_)) return **s;
  kind_error("a string");
}

std::string Value::int_text() const {
  if (const int64_t* i = std::get_if<int64_t>(&data_)) return std::to_string(*i);
  if (const auto* b = std::get_if<Box<BigInt>>(&data_)) return (*b)->digits;
  kind_error("an integer");
}

bool Value::int_fits_int64() const { return std::holds_alternative<int64_t>(data_); }

int64_t Value::int64_value() const {
  if (const int64_t* i = std::get_if<int64_t>(&data_)) return *i;
  kind_error("an integer in the int64 range");
}

const std::vector<Value>& Value::items() const {
  if (const auto* a = std::get_if<Box<std::vector<Value>>>(&data_)) return **a;
  kind_error("an array");
}

std::vector<Value>& Value::items() {
  if (auto* a = std::get_if<Box<std::vector<Value>>>(&data_)) return **a;
  kind_error("an array");
}

const std::vector<Member>& Value::members() const {
  if (const auto* o = std::get_if<Box<std::vector<Member>>>(&data_)) return **o;
  kind_error("an object");
}

std::vector<Member>& Value::members() {
  if (auto* o = std::get_if<Box<std::vector<Member>>>(&data_)) return **o;
  kind_error("an object");
}

std::size_t Value::size() const {
  if (is_array()) return items().size();
  if (is_object()) return members().size();
  return 0;
}

const Value* Value::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const Member& m : members()) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

Value* Value::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value*>(this)->find(key));
}

void Value::set(std::string key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
    return;
  }
  members().push_back(Member{std::move(key), std::move(value)});
}

void Value::push_back(Value value) { items().push_back(std::move(value)); }

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kNull:
      return false;
    case Kind::kBool:
      return as_bool();
    case Kind::kInt:
      return !(int_fits_int64() && int64_value() == 0);  // big integers are never 0
    case Kind::kFloat:
      return as_float() != 0.0;
    case Kind::kString:
      return !as_string().empty();
    case Kind::kArray:
      return !items().empty();
    case Kind::kObject:
      return !members().empty();
  }
  return false;
}

bool operator==(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kNull:
      return true;
    case Value::Kind::kBool:
      return a.as_bool() == b.as_bool();
    case Value::Kind::kInt:
      return a.int_text() == b.int_text();
    case Value::Kind::kFloat: {
      // Bitwise identity of the parsed double (so 0.0 and -0.0 differ, as their renderings do).
      const double x = a.as_float(), y = b.as_float();
      return x == y && std::signbit(x) == std::signbit(y);
    }
    case Value::Kind::kString:
      return a.as_string() == b.as_string();
    case Value::Kind::kArray:
      return a.items() == b.items();
    case Value::Kind::kObject: {
      const auto& ma = a.members();
      const auto& mb = b.members();
      if (ma.size() != mb.size()) return false;
      for (std::size_t i = 0; i < ma.size(); ++i) {
        if (ma[i].key != mb[i].key || !(ma[i].value == mb[i].value)) return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace verdict::decision
