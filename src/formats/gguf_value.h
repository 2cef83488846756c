// One GGUF metadata value: a scalar (integers, floats, bool, string) or an array of scalars.
// Values own their data, so the same type serves the reader and the writer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::formats {

enum class GgufValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8, Array = 9,
  U64 = 10, I64 = 11, F64 = 12,
};

// "u32", "string", "array", ...
std::string_view gguf_value_type_name(GgufValueType t);
// Bytes of one element of a fixed-size scalar type (0 for String and Array).
std::size_t gguf_scalar_size(GgufValueType t);
bool gguf_is_integer(GgufValueType t);
bool gguf_is_float(GgufValueType t);

class GgufValue {
 public:
  GgufValue() = default;
  static GgufValue u32(uint32_t v);
  static GgufValue i32(int32_t v);
  static GgufValue u64(uint64_t v);
  static GgufValue f32(float v);
  static GgufValue boolean(bool v);
  static GgufValue string(std::string v);
  static GgufValue string_array(std::vector<std::string> v);
  static GgufValue i32_array(const std::vector<int32_t>& v);
  static GgufValue u32_array(const std::vector<uint32_t>& v);
  // A scalar of a fixed-size type from its little-endian bytes (what the reader builds).
  static GgufValue scalar(GgufValueType type, const uint8_t* le_bytes);
  // An array of a fixed-size element type from `count` little-endian elements.
  static GgufValue array(GgufValueType elem, const uint8_t* le_bytes, uint64_t count);

  GgufValueType type() const { return type_; }
  GgufValueType element_type() const { return elem_; }  // arrays
  bool is_array() const { return type_ == GgufValueType::Array; }
  uint64_t size() const;                                 // array elements (1 for a scalar)

  // Scalars: integer value (any integer type; nullopt for others or a u64 above INT64_MAX),
  // float value (F32/F64 and integers), bool, string.
  std::optional<int64_t> as_int() const;
  std::optional<double> as_double() const;
  std::optional<bool> as_bool() const;
  const std::string* as_string() const;
  // Arrays: element i as an integer / double (nullopt for the wrong element type), strings.
  std::optional<int64_t> int_at(uint64_t i) const;
  std::optional<double> double_at(uint64_t i) const;
  const std::vector<std::string>* strings() const;

  // The little-endian bytes of a fixed-size scalar or numeric array (what the writer emits).
  const std::vector<uint8_t>& raw() const { return raw_; }
  // A short human-readable rendering (arrays abbreviated), for `verdict info`.
  std::string to_string(std::size_t max_items = 8) const;

 private:
  GgufValueType type_ = GgufValueType::U8;
  GgufValueType elem_ = GgufValueType::U8;
  std::vector<uint8_t> raw_;         // fixed-size scalar or numeric array elements
  std::string str_;                  // String
  std::vector<std::string> strs_;    // array of String
  uint64_t count_ = 0;               // array elements
};

}  // namespace verdict::formats
