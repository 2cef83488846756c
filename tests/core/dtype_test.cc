#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace verdict {
namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(DType, NamesAndSizes) {
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::F64), 8u);
  EXPECT_EQ(dtype_size(DType::U32), 4u);
  EXPECT_EQ(dtype_name(DType::BF16), "BF16");
  EXPECT_EQ(dtype_from_name("U32"), DType::U32);
  EXPECT_FALSE(dtype_from_name("Q7").has_value());
  EXPECT_FALSE(dtype_from_name("f32").has_value());  // safetensors names are upper case
}

TEST(DType, F16MatchesTheCompilersHalfOnEveryValue) {
  // _Float16 conversions are the IEEE reference here; every one of the 65,536 halves is checked.
  for (uint32_t h = 0; h < 65536; ++h) {
    _Float16 ref;
    const auto h16 = static_cast<uint16_t>(h);
    std::memcpy(&ref, &h16, sizeof ref);
    const float want = static_cast<float>(ref);
    const float got = f16_to_f32(h16);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
      continue;
    }
    ASSERT_EQ(bits_of(got), bits_of(want)) << "half 0x" << std::hex << h;
    ASSERT_EQ(f32_to_f16(got), h16) << "round trip of half 0x" << std::hex << h;
  }
}

TEST(DType, F32ToF16RoundsToNearestEven) {
  // Random floats across the whole range against the compiler's conversion.
  uint32_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float f = from_bits(state);
    if (std::isnan(f)) continue;
    const _Float16 ref = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &ref, sizeof want);
    ASSERT_EQ(f32_to_f16(f), want) << f;
  }
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808000u)), 0x3f80);  // tie -> even
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f818000u)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808001u)), 0x3f81);  // above the tie
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xc000);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bits_of(bf16_to_f32(0x8000)), 0x80000000u);  // -0.0 kept
}

}  // namespace
}  // namespace verdict
