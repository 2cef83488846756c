// Element types of stored tensors and the scalar conversions between them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace verdict {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL };

// Size of one element in bytes.
std::size_t dtype_size(DType t);
// Safetensors spelling ("F32", "BF16", "U32", ...).
std::string_view dtype_name(DType t);
// Parses a safetensors dtype name; nullopt if unknown.
std::optional<DType> dtype_from_name(std::string_view name);

inline float bf16_to_f32(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even, as PyTorch and MLX do; NaN stays NaN.
inline uint16_t f32_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

// IEEE half to float, exact (subnormals, infinities and NaN included). Inline: loading and packing a model's
// quantized matrices converts one half per 32 weights.
inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  float out;
  if (exp == 0) {
    // zero or subnormal: mant * 2^-24 (exact in fp32)
    out = static_cast<float>(mant) * 0x1p-24f;
    if (sign) out = -out;
    return out;
  }
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// Float to IEEE half, round to nearest even.
uint16_t f32_to_f16(float f);

}  // namespace verdict
