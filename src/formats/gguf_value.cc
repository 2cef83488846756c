#include "formats/gguf_value.h"

#include <cstdio>
#include <cstring>
#include <limits>

namespace verdict::formats {
namespace {

uint64_t load_le(const uint8_t* p, std::size_t n) {
  uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

template <typename T>
std::vector<uint8_t> le_bytes(T v) {
  std::vector<uint8_t> out(sizeof(T));
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<uint8_t>(bits >> (8 * i));
  return out;
}

// The little-endian bytes of every element.
template <typename T>
std::vector<uint8_t> le_array(const std::vector<T>& values) {
  std::vector<uint8_t> out;
  out.reserve(values.size() * sizeof(T));
  for (T v : values) {
    const std::vector<uint8_t> b = le_bytes(v);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

// Element `p` (little-endian, `type`) as int64; nullopt for non-integers and u64 above INT64_MAX.
std::optional<int64_t> int_of(GgufValueType type, const uint8_t* p) {
  const uint64_t bits = load_le(p, gguf_scalar_size(type));
  switch (type) {
    case GgufValueType::U8: case GgufValueType::U16: case GgufValueType::U32: return static_cast<int64_t>(bits);
    case GgufValueType::I8: return static_cast<int8_t>(bits);
    case GgufValueType::I16: return static_cast<int16_t>(bits);
    case GgufValueType::I32: return static_cast<int32_t>(bits);
    case GgufValueType::I64: return static_cast<int64_t>(bits);
    case GgufValueType::U64:
      if (bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(bits);
    default: return std::nullopt;
  }
}

std::optional<double> double_of(GgufValueType type, const uint8_t* p) {
  if (type == GgufValueType::F32) {
    const auto bits = static_cast<uint32_t>(load_le(p, 4));
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  if (type == GgufValueType::F64) {
    const uint64_t bits = load_le(p, 8);
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (const auto i = int_of(type, p)) return static_cast<double>(*i);
  return std::nullopt;
}

}  // namespace

std::string_view gguf_value_type_name(GgufValueType t) {
  switch (t) {
    case GgufValueType::U8: return "u8";
    case GgufValueType::I8: return "i8";
    case GgufValueType::U16: return "u16";
    case GgufValueType::I16: return "i16";
    case GgufValueType::U32: return "u32";
    case GgufValueType::I32: return "i32";
    case GgufValueType::F32: return "f32";
    case GgufValueType::Bool: return "bool";
    case GgufValueType::String: return "string";
    case GgufValueType::Array: return "array";
    case GgufValueType::U64: return "u64";
    case GgufValueType::I64: return "i64";
    case GgufValueType::F64: return "f64";
  }
  return "?";
}

std::size_t gguf_scalar_size(GgufValueType t) {
  switch (t) {
    case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::Bool: return 1;
    case GgufValueType::U16: case GgufValueType::I16: return 2;
    case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::F32: return 4;
    case GgufValueType::U64: case GgufValueType::I64: case GgufValueType::F64: return 8;
    case GgufValueType::String: case GgufValueType::Array: return 0;
  }
  return 0;
}

bool gguf_is_integer(GgufValueType t) {
  return t == GgufValueType::U8 || t == GgufValueType::I8 || t == GgufValueType::U16 || t == GgufValueType::I16 ||
         t == GgufValueType::U32 || t == GgufValueType::I32 || t == GgufValueType::U64 || t == GgufValueType::I64;
}

bool gguf_is_float(GgufValueType t) { return t == GgufValueType::F32 || t == GgufValueType::F64; }

GgufValue GgufValue::scalar(GgufValueType type, const uint8_t* le) {
  GgufValue v;
  v.type_ = type;
  v.raw_.assign(le, le + gguf_scalar_size(type));
  return v;
}

GgufValue GgufValue::array(GgufValueType elem, const uint8_t* le, uint64_t count) {
  GgufValue v;
  v.type_ = GgufValueType::Array;
  v.elem_ = elem;
  v.count_ = count;
  if (count > 0) v.raw_.assign(le, le + count * gguf_scalar_size(elem));
  return v;
}

GgufValue GgufValue::u32(uint32_t x) { GgufValue v; v.type_ = GgufValueType::U32; v.raw_ = le_bytes(x); return v; }
GgufValue GgufValue::i32(int32_t x) { GgufValue v; v.type_ = GgufValueType::I32; v.raw_ = le_bytes(x); return v; }
GgufValue GgufValue::u64(uint64_t x) { GgufValue v; v.type_ = GgufValueType::U64; v.raw_ = le_bytes(x); return v; }
GgufValue GgufValue::f32(float x) { GgufValue v; v.type_ = GgufValueType::F32; v.raw_ = le_bytes(x); return v; }

GgufValue GgufValue::boolean(bool x) {
  GgufValue v;
  v.type_ = GgufValueType::Bool;
  v.raw_ = {static_cast<uint8_t>(x ? 1 : 0)};
  return v;
}

GgufValue GgufValue::string(std::string x) {
  GgufValue v;
  v.type_ = GgufValueType::String;
  v.str_ = std::move(x);
  return v;
}

GgufValue GgufValue::string_array(std::vector<std::string> x) {
  GgufValue v;
  v.type_ = GgufValueType::Array;
  v.elem_ = GgufValueType::String;
  v.count_ = x.size();
  v.strs_ = std::move(x);
  return v;
}

GgufValue GgufValue::i32_array(const std::vector<int32_t>& x) {
  return array(GgufValueType::I32, le_array(x).data(), x.size());
}

GgufValue GgufValue::u32_array(const std::vector<uint32_t>& x) {
  return array(GgufValueType::U32, le_array(x).data(), x.size());
}

uint64_t GgufValue::size() const { return is_array() ? count_ : 1; }

std::optional<int64_t> GgufValue::as_int() const {
  if (!gguf_is_integer(type_)) return std::nullopt;
  return int_of(type_, raw_.data());
}

std::optional<double> GgufValue::as_double() const {
  if (!gguf_is_integer(type_) && !gguf_is_float(type_)) return std::nullopt;
  return double_of(type_, raw_.data());
}

std::optional<bool> GgufValue::as_bool() const {
  if (type_ != GgufValueType::Bool) return std::nullopt;
  return raw_[0] != 0;
}

const std::string* GgufValue::as_string() const { return type_ == GgufValueType::String ? &str_ : nullptr; }

std::optional<int64_t> GgufValue::int_at(uint64_t i) const {
  if (!is_array() || i >= count_ || !gguf_is_integer(elem_)) return std::nullopt;
  return int_of(elem_, raw_.data() + i * gguf_scalar_size(elem_));
}

std::optional<double> GgufValue::double_at(uint64_t i) const {
  if (!is_array() || i >= count_ || (!gguf_is_integer(elem_) && !gguf_is_float(elem_))) return std::nullopt;
  return double_of(elem_, raw_.data() + i * gguf_scalar_size(elem_));
}

const std::vector<std::string>* GgufValue::strings() const {
  return is_array() && elem_ == GgufValueType::String ? &strs_ : nullptr;
}

std::string GgufValue::to_string(std::size_t max_items) const {
  auto scalar_text = [&](GgufValueType t, const uint8_t* p) -> std::string {
    if (t == GgufValueType::Bool) return p[0] ? "true" : "false";
    if (gguf_is_float(t)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", *double_of(t, p));
      return buf;
    }
    if (t == GgufValueType::U64) return std::to_string(load_le(p, 8));
    return std::to_string(*int_of(t, p));
  };
  if (type_ == GgufValueType::String) return "\"" + (str_.size() > 60 ? str_.substr(0, 60) + "..." : str_) + "\"";
  if (!is_array()) return scalar_text(type_, raw_.data());
  std::string s = "[";
  for (uint64_t i = 0; i < count_ && i < max_items; ++i) {
    if (i) s += ", ";
    if (elem_ == GgufValueType::String) s += "\"" + strs_[i] + "\"";
    else s += scalar_text(elem_, raw_.data() + i * gguf_scalar_size(elem_));
  }
  if (count_ > max_items) s += ", ... (" + std::to_string(count_) + " items)";
  return s + "]";
}

}  // namespace verdict::formats
