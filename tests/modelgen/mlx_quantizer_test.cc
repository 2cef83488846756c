// The MLX affine quantizer: MLX's choice of scale and bias, bit packing, and the dequantization error.
#include "modelgen/mlx_quantizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "formats/mlx_quant.h"
#include "modelgen/random.h"

namespace verdict::modelgen {
namespace {

struct Quantized {
  std::vector<uint32_t> packed;
  std::vector<uint16_t> scales, biases;
};

Quantized quantize(const std::vector<float>& row, int bits) {
  Quantized q;
  q.packed.resize(row.size() * static_cast<std::size_t>(bits) / 32);
  q.scales.resize(row.size() / kMlxGroupSize);
  q.biases.resize(row.size() / kMlxGroupSize);
  mlx_quantize_row(row, bits, kMlxGroupSize, q.packed, q.scales, q.biases);
  return q;
}

// Element j of a row, read bit by bit (least significant first), independently of the packer.
uint32_t unpack(const std::vector<uint32_t>& packed, int bits, std::size_t j) {
  uint32_t v = 0;
  for (int b = 0; b < bits; ++b) {
    const std::size_t bit = j * static_cast<std::size_t>(bits) + static_cast<std::size_t>(b);
    v |= ((packed[bit / 32] >> (bit % 32)) & 1u) << b;
  }
  return v;
}

std::vector<float> bf16_row(uint64_t seed, std::size_t n, float std) {
  const TensorRng rng(seed, "row");
  std::vector<float> row(n);
  for (std::size_t i = 0; i < n; ++i) row[i] = bf16_to_f32(f32_to_bf16(std * rng.normal(i)));
  return row;
}

TEST(MlxQuantizer, PicksTheExtremeOfLargerMagnitudeAsBias) {
  // Group 0: values in [-1, 0.5] -> |min| larger: bias = -1, positive scale.
  // Group 1: values in [-0.25, 2] -> bias = 2 (the maximum), negative scale.
  std::vector<float> row(128);
  for (std::size_t j = 0; j < 64; ++j) row[j] = -1.0f + 1.5f * static_cast<float>(j) / 63.0f;
  for (std::size_t j = 0; j < 64; ++j) row[64 + j] = 2.0f - 2.25f * static_cast<float>(j) / 63.0f;
  const Quantized q = quantize(row, 4);
  EXPECT_EQ(bf16_to_f32(q.biases[0]), -1.0f);
  EXPECT_GT(bf16_to_f32(q.scales[0]), 0.0f);
  EXPECT_EQ(bf16_to_f32(q.biases[1]), 2.0f);
  EXPECT_LT(bf16_to_f32(q.scales[1]), 0.0f);
  // The bias element itself is q = 0; the group's far end is q = 15.
  EXPECT_EQ(unpack(q.packed, 4, 0), 0u);
  EXPECT_EQ(unpack(q.packed, 4, 64), 0u);
  EXPECT_EQ(unpack(q.packed, 4, 127), 15u);
}

TEST(MlxQuantizer, FollowsMlxArithmeticOnAHandExample) {
  // min = -0.5, max = 0.25: |min| larger, scale = 0.75/15 = 0.05, q0 = rint(-0.5/0.05) = -10,
  // scale = -0.5 / -10 = 0.05, bias = -0.5; w = 0 -> q = rint(0.5/0.05) = 10 (zero exactly representable).
  std::vector<float> row(64, 0.0f);
  row[0] = -0.5f;
  row[1] = 0.25f;
  const Quantized q = quantize(row, 4);
  EXPECT_EQ(bf16_to_f32(q.biases[0]), -0.5f);
  EXPECT_EQ(q.scales[0], f32_to_bf16(-0.5f / -10.0f));
  EXPECT_EQ(unpack(q.packed, 4, 0), 0u);
  EXPECT_EQ(unpack(q.packed, 4, 1), 15u);
  EXPECT_EQ(unpack(q.packed, 4, 2), 10u);
  // A constant group: scale eps, q0 = rint(c / -eps) is huge, so scale = c / q0 and bias = c.
  const Quantized c = quantize(std::vector<float>(64, 0.75f), 8);
  EXPECT_EQ(bf16_to_f32(c.biases[0]), 0.75f);
  for (std::size_t j = 0; j < 64; ++j) EXPECT_EQ(unpack(c.packed, 8, j), 0u);
}

// Dequantization error against the bf16 originals: at most half a step (|scale|) plus what storing the
// scale in bf16 moves the level q by (q·|scale|·2⁻⁸); the far end of a group (q = 2^bits − 1) may be
// clamped by MLX's zero-point adjustment, by at most one step.
TEST(MlxQuantizer, DequantizesWithinHalfAStepPerGroup) {
  for (int bits : {4, 6, 8}) {
    const uint32_t top = (1u << bits) - 1;
    const std::vector<float> row = bf16_row(static_cast<uint64_t>(bits), 64 * 256, 0.05f);
    const Quantized q = quantize(row, bits);
    std::size_t negative = 0, within_half = 0;
    for (std::size_t g = 0; g < q.scales.size(); ++g) {
      const float s = bf16_to_f32(q.scales[g]), b = bf16_to_f32(q.biases[g]);
      negative += s < 0;
      float lo = row[g * 64], hi = lo;
      for (std::size_t j = 0; j < 64; ++j) {
        lo = std::min(lo, row[g * 64 + j]);
        hi = std::max(hi, row[g * 64 + j]);
      }
      EXPECT_TRUE(b == lo || b == hi || b == 0.0f) << "group " << g;
      EXPECT_EQ(s < 0, b == hi && std::abs(hi) >= std::abs(lo)) << "group " << g;
      for (std::size_t j = 0; j < 64; ++j) {
        const std::size_t k = g * 64 + j;
        const uint32_t level = unpack(q.packed, bits, k);
        const float err = std::abs(row[k] - (s * static_cast<float>(level) + b));
        const float slack = std::abs(s) * static_cast<float>(level) / 256.0f + 1e-7f;
        const float bound = (level == top ? 1.0f : 0.5f) * std::abs(s) * 1.01f + slack;
        EXPECT_LE(err, bound) << bits << "-bit group " << g << " element " << j;
        within_half += err <= 0.5f * std::abs(s) * 1.01f + slack;
      }
    }
    const double frac_negative = static_cast<double>(negative) / static_cast<double>(q.scales.size());
    EXPECT_GT(frac_negative, 0.35) << bits;
    EXPECT_LT(frac_negative, 0.65) << bits;
    EXPECT_GE(static_cast<double>(within_half) / static_cast<double>(row.size()), 0.99) << bits;
  }
}

TEST(MlxQuantizer, AgreesWithTheFormatsDequantizer) {
  const std::vector<float> row = bf16_row(11, 192, 0.1f);
  for (int bits : {3, 4, 5, 6, 8}) {
    const Quantized q = quantize(row, bits);
    formats::TensorView w{"x.weight", DType::U32, {1, static_cast<int64_t>(q.packed.size())},
                          reinterpret_cast<const uint8_t*>(q.packed.data()), q.packed.size() * 4, "mem"};
    formats::TensorView s{"x.scales", DType::BF16, {1, 3}, reinterpret_cast<const uint8_t*>(q.scales.data()), 6, "mem"};
    formats::TensorView b{"x.biases", DType::BF16, {1, 3}, reinterpret_cast<const uint8_t*>(q.biases.data()), 6, "mem"};
    const auto qt = formats::make_quantized(w, s, b, {bits, kMlxGroupSize});
    const std::vector<float> deq = formats::mlx_dequantize(qt);
    for (std::size_t j = 0; j < row.size(); ++j) {
      const float expect = bf16_to_f32(q.scales[j / 64]) * static_cast<float>(unpack(q.packed, bits, j)) +
                           bf16_to_f32(q.biases[j / 64]);
      EXPECT_EQ(deq[j], expect) << j;
    }
  }
}

TEST(MlxQuantizer, RefusesMismatchedSizes) {
  std::vector<uint32_t> packed(8);
  std::vector<uint16_t> s(1), b(1);
  const std::vector<float> row(64, 1.0f);
  EXPECT_THROW(mlx_quantize_row(std::vector<float>(60, 1.0f), 4, 64, packed, s, b), Error);
  EXPECT_THROW(mlx_quantize_row(row, 7, 64, packed, s, b), Error);
  EXPECT_THROW(mlx_quantize_row(row, 6, 64, packed, s, b), Error);  // 6-bit needs 12 words
  EXPECT_THROW(mlx_quantize_row(row, 8, 64, packed, s, b), Error);  // 8-bit needs 16 words
}

}  // namespace
}  // namespace verdict::modelgen
