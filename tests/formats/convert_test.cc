#include "formats/convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "safetensors_writer.h"

namespace verdict::formats {
namespace {

using testing::contains_all;
using testing::error_message;

TensorView view_of(DType dtype, std::vector<int64_t> shape, const std::vector<uint8_t>& bytes,
                   std::size_t offset = 0) {
  return TensorView{"t", dtype, std::move(shape), bytes.data() + offset, bytes.size() - offset, "f.safetensors"};
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

TEST(ToF32, F32IsCopied) {
  const std::vector<float> values = {0.0f, -1.25f, 3.0e38f, std::numeric_limits<float>::denorm_min()};
  const auto bytes = testing::f32_bytes(values);
  const auto out = to_f32(view_of(DType::F32, {2, 2}, bytes));
  ASSERT_EQ(out.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(bits_of(out[i]), bits_of(values[i]));
}

TEST(ToF32, BF16IsTheHighHalf) {
  // 0x3f80 = 1.0, 0xc0a0 = -5.0, 0x3eab = 0.333984375, 0x0001 = smallest bf16 subnormal, 0xff80 = -inf.
  const auto bytes = testing::u16_bytes({0x3f80, 0xc0a0, 0x3eab, 0x0001, 0xff80});
  const auto out = to_f32(view_of(DType::BF16, {5}, bytes));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -5.0f);
  EXPECT_EQ(out[2], 0.333984375f);
  EXPECT_EQ(bits_of(out[3]), 0x00010000u);
  EXPECT_TRUE(std::isinf(out[4]) && out[4] < 0);
}

TEST(ToF32, F16IsExact) {
  const auto bytes = testing::u16_bytes({0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x7c00, 0x3555, 0x03ff});
  const auto out = to_f32(view_of(DType::F16, {8}, bytes));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 65504.0f);
  EXPECT_EQ(out[3], 5.9604644775390625e-08f);  // 2^-24
  EXPECT_EQ(bits_of(out[4]), 0x80000000u);      // -0
  EXPECT_TRUE(std::isinf(out[5]) && out[5] > 0);
  EXPECT_EQ(out[6], 0.333251953125f);
  EXPECT_EQ(out[7], 6.0975551605224609375e-05f);  // largest subnormal 1023 · 2^-24
}

TEST(ToF32, F64RoundsToNearest) {
  const auto bytes = testing::f64_bytes({0.1, 1.0 + 0x1p-24, 1.0 + 0x1.8p-23, 1e300, -2.5});
  const auto out = to_f32(view_of(DType::F64, {5}, bytes));
  EXPECT_EQ(out[0], 0.1f);
  EXPECT_EQ(out[1], 1.0f);               // tie, to even
  EXPECT_EQ(out[2], 1.0f + 0x1p-22f);    // 1.5 ulp rounds up to 2 ulp
  EXPECT_TRUE(std::isinf(out[3]));
  EXPECT_EQ(out[4], -2.5f);
}

TEST(ToF32, UnalignedData) {
  // Data at an odd address: every load must be a memcpy (UBSan flags misaligned typed loads).
  std::vector<uint8_t> bytes(1);
  for (uint8_t b : testing::f32_bytes({1.5f, -3.0f, 7.25f})) bytes.push_back(b);
  auto out = to_f32(view_of(DType::F32, {3}, bytes, 1));
  EXPECT_EQ(out, (std::vector<float>{1.5f, -3.0f, 7.25f}));

  std::vector<uint8_t> halves(1);
  for (uint8_t b : testing::u16_bytes({0x4000, 0xbf80})) halves.push_back(b);
  EXPECT_EQ(to_f32(view_of(DType::BF16, {2}, halves, 1)), (std::vector<float>{2.0f, -1.0f}));
  EXPECT_EQ(to_f32(view_of(DType::F16, {2}, halves, 1))[0], 2.0f);  // 0x4000 is 2.0 in f16 as well

  std::vector<uint8_t> doubles(3);
  for (uint8_t b : testing::f64_bytes({0.5, 4.0})) doubles.push_back(b);
  EXPECT_EQ(to_f32(view_of(DType::F64, {2}, doubles, 3)), (std::vector<float>{0.5f, 4.0f}));
}

TEST(ToF32, IntoASpan) {
  const auto bytes = testing::u16_bytes({0x3f80, 0x4000});
  std::vector<float> out(2);
  to_f32(view_of(DType::BF16, {2}, bytes), out);
  EXPECT_EQ(out, (std::vector<float>{1.0f, 2.0f}));
  std::vector<float> wrong(3);
  EXPECT_TRUE(contains_all(error_message([&] { to_f32(view_of(DType::BF16, {2}, bytes), wrong); }),
                           {"f.safetensors: tensor 't'", "holds 3 values, tensor has 2"}));
}

TEST(ToF32, IntegerDtypesAreRefused) {
  const auto bytes = testing::u32_bytes({1, 2});
  for (DType d : {DType::U32, DType::I32}) {
    EXPECT_TRUE(contains_all(error_message([&] { to_f32(view_of(d, {2}, bytes)); }),
                             {"f.safetensors: tensor 't'", "cannot convert dtype", "to F32"}));
  }
  const std::vector<uint8_t> one(1);
  for (DType d : {DType::U8, DType::I8, DType::BOOL})
    EXPECT_TRUE(contains_all(error_message([&] { to_f32(view_of(d, {1}, one)); }), {"cannot convert dtype"}));
}

TEST(ToF32, InconsistentViewIsRefused) {
  const auto bytes = testing::f32_bytes({1.0f});
  EXPECT_TRUE(contains_all(error_message([&] { to_f32(view_of(DType::F32, {4}, bytes)); }),
                           {"f.safetensors: tensor 't'", "do not hold"}));
}

}  // namespace
}  // namespace verdict::formats
