// The packed GEMMs (pack() + matmul): every ISA against the scalar twins of their numerical contracts
// (ref::matmul_int8, ref::matmul_bf16, ref::matmul_fma), the contracts against the fp32 product, and
// independence of each result from n, the batch and the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/ref/ref.h"
#include "kernels/thread_pool.h"
#include "test_util.h"

namespace verdict::kernels {
namespace {

using testing::AmxScope;
using testing::AvxVnniScope;
using testing::Bf16ProductsScope;
using testing::IsaScope;
using testing::kGgmlIq4Values;
using testing::make_weight;
using testing::random_floats;
using testing::supported_isas;
using testing::WeightStreamsScope;

constexpr double kEps = std::numeric_limits<float>::epsilon();

// matmul on the active ISA into a NaN-filled output.
std::vector<float> run(const WeightMatrix& w, const std::vector<float>& x, int64_t n) {
  std::vector<float> y(static_cast<std::size_t>(n * w.rows), std::numeric_limits<float>::quiet_NaN());
  matmul(w, x.data(), n, y.data());
  return y;
}

struct Int8Case {
  WeightType type;
  int bits, group_size;
  int64_t rows, cols, n;
};

std::string describe(const Int8Case& k) {
  return "type " + std::to_string(int(k.type)) + " bits " + std::to_string(k.bits) + "/g" +
         std::to_string(k.group_size) + " " + std::to_string(k.rows) + "x" + std::to_string(k.cols) + " n=" +
         std::to_string(k.n);
}

// Σ over the terms of the Int8 contract's sum of |term| (the fp32 rounding bound scales with it) and the
// quantization bound Σ_b 0.5625 · d_b · Σ_c (|scaled_c| + |min_c| for K-quants, Q4_1, Q5_1) of one (row, token):
// half a step of q plus the rounding of d_b, and for Q4_1 and Q5_1 the rounding of the block sum their min
// multiplies, |min| · 2^−11 · |S_b| (ops.h).
struct Bounds {
  double magnitude = 0.0, quantization = 0.0;
};

Bounds int8_bounds(const WeightMatrix& w, const float* x, int64_t r) {
  Bounds out;
  const bool super = ref::super_block_activations(w);
  const bool q8_1 = w.type == WeightType::Q4_1 || w.type == WeightType::Q5_1;
  const int64_t block = super ? 256 : 32;
  std::vector<int8_t> q(static_cast<std::size_t>(block));
  for (int64_t b = 0; b < w.cols / block; ++b) {
    float d = 0.0f;
    (super ? ref::quantize_super_block : ref::quantize_block)(x + b * block, q.data(), d);
    double min = 0.0, sum_x = 0.0;
    for (int64_t i = 0; i < block; ++i) {
      double scaled = 0.0;
      ref::int8_parts(w, r, b * block + i, scaled, min);
      const double xq = d * q[static_cast<std::size_t>(i)];
      out.magnitude += std::fabs(scaled * xq) + std::fabs(min * (super ? xq : x[b * block + i]));
      out.quantization += (std::fabs(scaled) + (super || q8_1 ? std::fabs(min) : 0.0)) * d * 0.5625;
      sum_x += x[b * block + i];
    }
    if (q8_1) out.quantization += std::fabs(min) * std::ldexp(1.0, -11) * (std::fabs(sum_x) + 18.0 * d);
  }
  return out;
}

const Int8Case kInt8Cases[] = {
    {WeightType::Q8_0, 0, 0, 1, 32, 1},      {WeightType::Q8_0, 0, 0, 17, 64, 7},
    {WeightType::Q8_0, 0, 0, 40, 96, 13},    {WeightType::Q8_0, 0, 0, 70, 160, 66},
    {WeightType::Q4_0, 0, 0, 5, 32, 3},      {WeightType::Q4_0, 0, 0, 33, 128, 8},
    {WeightType::Q4_0, 0, 0, 48, 64, 1},     {WeightType::Q4_K, 0, 0, 3, 256, 2},
    {WeightType::Q4_K, 0, 0, 31, 512, 11},   {WeightType::MlxAffine, 4, 32, 7, 64, 5},
    {WeightType::MlxAffine, 4, 64, 18, 128, 9}, {WeightType::MlxAffine, 4, 128, 35, 256, 6},
    {WeightType::MlxAffine, 8, 32, 9, 96, 4},  {WeightType::MlxAffine, 8, 64, 16, 64, 1},
    {WeightType::MlxAffine, 8, 128, 50, 384, 14}, {WeightType::Q6_K, 0, 0, 5, 256, 3},
    {WeightType::Q6_K, 0, 0, 37, 512, 9},       {WeightType::Q6_K, 0, 0, 16, 768, 1},
    {WeightType::MlxAffine, 6, 32, 11, 96, 5},  {WeightType::MlxAffine, 6, 64, 33, 256, 1},
    {WeightType::MlxAffine, 6, 128, 20, 384, 9}, {WeightType::Q5_K, 0, 0, 3, 256, 2},
    {WeightType::Q5_K, 0, 0, 37, 512, 11},      {WeightType::Q5_K, 0, 0, 16, 768, 1},
    {WeightType::Q3_K, 0, 0, 5, 256, 3},        {WeightType::Q3_K, 0, 0, 37, 512, 9},
    {WeightType::Q3_K, 0, 0, 16, 768, 1},       {WeightType::Q2_K, 0, 0, 5, 256, 3},
    {WeightType::Q2_K, 0, 0, 37, 512, 9},       {WeightType::Q2_K, 0, 0, 16, 768, 1},
    {WeightType::IQ4_NL, 0, 0, 5, 32, 3},
    {WeightType::IQ4_NL, 0, 0, 33, 128, 8},     {WeightType::IQ4_NL, 0, 0, 48, 64, 1},
    {WeightType::IQ4_XS, 0, 0, 5, 256, 3},      {WeightType::IQ4_XS, 0, 0, 37, 512, 9},
    {WeightType::IQ4_XS, 0, 0, 16, 768, 1},     {WeightType::Q4_1, 0, 0, 5, 32, 3},
    {WeightType::Q4_1, 0, 0, 33, 128, 8},       {WeightType::Q5_0, 0, 0, 5, 32, 3},
    {WeightType::Q5_0, 0, 0, 33, 128, 8},       {WeightType::Q5_0, 0, 0, 48, 64, 1},
    {WeightType::Q5_1, 0, 0, 5, 32, 3},         {WeightType::Q5_1, 0, 0, 33, 128, 8},
    {WeightType::Q5_1, 0, 0, 48, 64, 1},
    // 4-bit records through the AVX-512 prefill tiles' strips (from 64 tokens, gemm_avx512.cc)
    {WeightType::Q4_0, 0, 0, 35, 96, 70},       {WeightType::Q4_K, 0, 0, 19, 256, 67},
    {WeightType::MlxAffine, 4, 64, 21, 128, 65}, {WeightType::IQ4_NL, 0, 0, 17, 64, 66},
    {WeightType::IQ4_XS, 0, 0, 18, 256, 69},    {WeightType::Q4_1, 0, 0, 33, 64, 64}};

TEST(PackedInt8, MatchesTwinOnEveryIsaAndContractBoundsTheError) {
  std::mt19937 rng(21);
  for (const Int8Case& k : kInt8Cases) {
    auto w = make_weight(rng, k.type, k.rows, k.cols, k.bits, k.group_size);
    ASSERT_EQ(preferred_pack(w.view), PackKind::Int8) << describe(k);
    PackedWeight p = pack(w.view);
    ASSERT_NE(p.view(), nullptr);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    auto x = random_floats(rng, k.n * k.cols, -2.0f, 2.0f);
    if (k.n > 1) x[5] = 40.0f;  // an outlier in one block
    std::vector<float> twin(static_cast<std::size_t>(k.n * k.rows)), exact(twin.size());
    ref::matmul_int8(w.view, x.data(), k.n, twin.data());
    ref::matmul(w.view, x.data(), k.n, exact.data());
    for (int64_t t = 0; t < k.n; ++t)
      for (int64_t r = 0; r < k.rows; ++r) {
        const Bounds b = int8_bounds(w.view, x.data() + t * k.cols, r);
        const std::size_t at = static_cast<std::size_t>(t * k.rows + r);
        // The documented contract: |int8 − fp32| ≤ Σ_b 0.5625 · d_b · Σ |scaled| (+ rounding).
        ASSERT_LE(std::fabs(double(twin[at]) - exact[at]), b.quantization * 1.0001 + 1e-5 * b.magnitude + 1e-30)
            << describe(k);
      }
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      const std::vector<float> y = run(packed, x, k.n);
      for (int64_t t = 0; t < k.n; ++t)
        for (int64_t r = 0; r < k.rows; ++r) {
          const Bounds b = int8_bounds(w.view, x.data() + t * k.cols, r);
          const double tol = 2.0 * double(k.cols / 32 + 8) * kEps * b.magnitude + 1e-30;
          const std::size_t at = static_cast<std::size_t>(t * k.rows + r);
          ASSERT_NEAR(y[at], twin[at], tol) << isa_name(isa) << " " << describe(k) << " row " << r << " t " << t;
        }
    }
  }
}

// Extreme stored values (both ends of every type's range) times activations of ±127: with unit scales the
// integer dot products are the results, so every ISA must reproduce the twin exactly. A kernel whose 16-bit
// pair sums saturated (e.g. vpmaddubsw on unsigned 8-bit weights: 2 · 255 · 127 > 32767) or whose 4-bit
// int16 block sums overflowed would be off by thousands.
struct ExtremeCase {
  WeightType type;
  int bits, group_size;
  int64_t rows, cols;
  int lo, hi;  // stored integer range (Q8_0: the signed q)
};

// Sets the stored integer of (r, c) to q, and unit scales (Q4_K, Q5_K: sc = m = 1, d = dmin = 1; Q6_K: d = 1,
// scales 1; Q3_K: d = 1, scale fields 33 (scale 1); Q2_K: d = dmin = 1, sc = m = 1; Q4_1, Q5_1: d = m = 1; MLX:
// scale 1, bias `bias`) so that W = q (Q4_0: q − 8, Q5_0: q − 16, Q4_1, Q5_1: q + 1, Q4_K, Q5_K, Q2_K: q − 1,
// Q6_K: q − 32, Q3_K: q − 4, MLX: q + bias). IQ4_NL, IQ4_XS (d = 1, IQ4_XS's scale fields 33): q is the nibble,
// W its value in ggml's kvalues_iq4nl (−127 for 0, 113 for 15).
void put_q(testing::RandomWeight& w, int64_t r, int64_t c, int q) {
  const WeightMatrix& v = w.view;
  const auto rb = static_cast<std::size_t>(v.row_bytes());
  const auto row = static_cast<std::size_t>(r) * rb, col = static_cast<std::size_t>(c);
  auto nibble = [](uint8_t& byte, bool high, int value) {
    byte = high ? static_cast<uint8_t>((byte & 0x0F) | (value << 4)) : static_cast<uint8_t>((byte & 0xF0) | value);
  };
  switch (v.type) {
    case WeightType::Q8_0:
      w.blocks[row + col / 32 * 34 + 2 + col % 32] = static_cast<uint8_t>(static_cast<int8_t>(q));
      break;
    case WeightType::Q4_0:
    case WeightType::IQ4_NL:
      nibble(w.blocks[row + col / 32 * 18 + 2 + col % 16], col % 32 >= 16, q);
      break;
    case WeightType::Q4_1:
      nibble(w.blocks[row + col / 32 * 20 + 4 + col % 16], col % 32 >= 16, q);
      break;
    case WeightType::Q5_0:
    case WeightType::Q5_1: {  // Q4_0's nibbles after d (m) and qh, bit 4 at bit col % 32 of qh
      uint8_t* b = w.blocks.data() + row + col / 32 * block_bytes(v.type);
      const std::size_t qh = v.type == WeightType::Q5_0 ? 2 : 4, i = col % 32;
      nibble(b[qh + 4 + i % 16], i >= 16, q & 0xF);
      uint8_t& hi = b[qh + i / 8];
      hi = static_cast<uint8_t>((hi & ~(1u << (i % 8))) | ((q >> 4) << (i % 8)));
      break;
    }
    case WeightType::IQ4_XS: {  // sub-block j's 16 bytes at 8 + 16j: Q4_0's nibble layout
      const std::size_t i = col % 256;
      nibble(w.blocks[row + col / 256 * 136 + 8 + i / 32 * 16 + i % 16], i % 32 >= 16, q);
      break;
    }
    case WeightType::Q4_K: {
      const std::size_t i = col % 256;
      nibble(w.blocks[row + col / 256 * 144 + 16 + i / 64 * 32 + i % 32], (i / 32) % 2 == 1, q);
      break;
    }
    case WeightType::Q5_K: {  // the low 4 bits as Q4_K's nibbles (after the 32 bytes of qh), bit 4 in bit i / 32 of qh
      uint8_t* b = w.blocks.data() + row + col / 256 * 176;
      const std::size_t i = col % 256, j = i / 32;
      nibble(b[48 + i / 64 * 32 + i % 32], j % 2 == 1, q & 0xF);
      uint8_t& hi = b[16 + i % 32];
      hi = static_cast<uint8_t>((hi & ~(1u << j)) | ((q >> 4) << j));
      break;
    }
    case WeightType::Q3_K: {  // the low 2 bits in qs, bit 2 in hmask (ggml's block_q3_K)
      uint8_t* b = w.blocks.data() + row + col / 256 * 110;
      const std::size_t i = col % 256, shift = 2 * ((i % 128) / 32);
      uint8_t& lo = b[32 + 32 * (i / 128) + i % 32];
      lo = static_cast<uint8_t>((lo & ~(3u << shift)) | ((q & 3) << shift));
      uint8_t& hi = b[i % 32];
      hi = static_cast<uint8_t>((hi & ~(1u << (i / 32))) | ((q >> 2) << (i / 32)));
      break;
    }
    case WeightType::Q2_K: {  // Q3_K's low 2 bits, in qs at byte 16 (ggml's block_q2_K)
      uint8_t& lo = w.blocks[row + col / 256 * 84 + 16 + 32 * (col % 256 / 128) + col % 32];
      const std::size_t shift = 2 * ((col % 128) / 32);
      lo = static_cast<uint8_t>((lo & ~(3u << shift)) | (q << shift));
      break;
    }
    case WeightType::Q6_K: {  // the low 4 bits in ql, the high 2 in qh (ggml's block_q6_K)
      uint8_t* b = w.blocks.data() + row + col / 256 * 210;
      const std::size_t i = col % 256, half = i / 128, k = i % 128, quad = k / 32, l = k % 32;
      nibble(b[64 * half + 32 * (quad % 2) + l], quad >= 2, q & 0xF);
      uint8_t& hi = b[128 + 32 * half + l];
      hi = static_cast<uint8_t>((hi & ~(3u << (2 * quad))) | ((q >> 4) << (2 * quad)));
      break;
    }
    default: {
      uint8_t* bytes = reinterpret_cast<uint8_t*>(w.packed.data()) + row;
      if (v.bits == 8) {
        bytes[col] = static_cast<uint8_t>(q);
      } else if (v.bits == 4) {
        nibble(bytes[col / 2], col % 2 == 1, q);
      } else {  // bits col · bits .. of the row, LSB first, across bytes
        for (int i = 0; i < v.bits; ++i) {
          const std::size_t bit = col * static_cast<std::size_t>(v.bits) + static_cast<std::size_t>(i);
          const auto mask = static_cast<uint8_t>(1u << (bit % 8));
          bytes[bit / 8] = static_cast<uint8_t>((q >> i) & 1 ? bytes[bit / 8] | mask : bytes[bit / 8] & ~mask);
        }
      }
      break;
    }
  }
}

void unit_scales(testing::RandomWeight& w, float bias) {
  const WeightMatrix& v = w.view;
  const uint16_t one = f32_to_f16(1.0f);
  auto put_one = [&](std::size_t at) {
    w.blocks[at] = static_cast<uint8_t>(one & 0xFF);
    w.blocks[at + 1] = static_cast<uint8_t>(one >> 8);
  };
  if (v.type == WeightType::MlxAffine) {
    for (float& s : w.scales) s = 1.0f;
    for (float& b : w.biases) b = bias;
    return;
  }
  const auto bb = static_cast<std::size_t>(block_bytes(v.type));
  for (std::size_t at = 0; at < w.blocks.size(); at += bb) {
    if (v.type == WeightType::Q6_K) {
      put_one(at + 208);
      for (std::size_t k = 0; k < 16; ++k) w.blocks[at + 192 + k] = 1;
      continue;
    }
    if (v.type == WeightType::Q3_K) {  // every 6-bit field 33 = 0b10'0001: nibbles 1, high bits 2
      put_one(at + 108);
      for (std::size_t k = 0; k < 8; ++k) w.blocks[at + 96 + k] = 0x11;
      for (std::size_t k = 8; k < 12; ++k) w.blocks[at + 96 + k] = 0xAA;
      continue;
    }
    if (v.type == WeightType::Q2_K) {  // sc = m = 1 in every scale byte, d = dmin = 1
      for (std::size_t k = 0; k < 16; ++k) w.blocks[at + k] = 0x11;
      put_one(at + 80);
      put_one(at + 82);
      continue;
    }
    put_one(at);
    if (v.type == WeightType::Q4_1 || v.type == WeightType::Q5_1) put_one(at + 2);  // m = 1
    if (v.type == WeightType::IQ4_XS) {  // every 6-bit field 33: nibbles 1 in scales_l, 2-bit fields 2 in scales_h
      w.blocks[at + 2] = w.blocks[at + 3] = 0xAA;
      for (std::size_t k = 4; k < 8; ++k) w.blocks[at + k] = 0x11;
    }
    if (v.type == WeightType::Q4_K || v.type == WeightType::Q5_K) {
      put_one(at + 2);
      // get_scale_min_k4: sub-blocks 0–3 take sc = scales[j] & 63, m = scales[j + 4] & 63; 4–7 the nibbles
      // of scales[j + 4] (and bits 6–7 of scales[j − 4], scales[j], here 0).
      for (std::size_t k = 0; k < 8; ++k) w.blocks[at + 4 + k] = 1;
      for (std::size_t k = 8; k < 12; ++k) w.blocks[at + 4 + k] = 0x11;
    }
  }
}

TEST(PackedInt8, ExtremeValuesGiveExactIntegerSumsOnEveryIsa) {
  const ExtremeCase cases[] = {{WeightType::Q8_0, 0, 0, 37, 96, -128, 127},
                               {WeightType::Q4_0, 0, 0, 37, 96, 0, 15},
                               {WeightType::Q4_K, 0, 0, 37, 256, 0, 15},
                               {WeightType::Q6_K, 0, 0, 37, 512, 0, 63},
                               {WeightType::Q5_K, 0, 0, 37, 512, 0, 31},
                               {WeightType::Q3_K, 0, 0, 37, 512, 0, 7},
                               {WeightType::Q2_K, 0, 0, 37, 512, 0, 3},
                               {WeightType::IQ4_NL, 0, 0, 37, 96, 0, 15},
                               {WeightType::IQ4_XS, 0, 0, 37, 512, 0, 15},
                               {WeightType::Q4_1, 0, 0, 37, 96, 0, 15},
                               {WeightType::Q5_0, 0, 0, 37, 96, 0, 31},
                               {WeightType::Q5_1, 0, 0, 37, 96, 0, 31},
                               {WeightType::MlxAffine, 8, 32, 37, 96, 0, 255},
                               {WeightType::MlxAffine, 4, 32, 37, 96, 0, 15},
                               {WeightType::MlxAffine, 8, 64, 16, 64, 0, 255},
                               {WeightType::MlxAffine, 4, 64, 9, 64, 0, 15},
                               {WeightType::MlxAffine, 6, 32, 37, 96, 0, 63},
                               {WeightType::MlxAffine, 6, 64, 16, 128, 0, 63}};
  std::mt19937 rng(25);
  for (const ExtremeCase& k : cases) {
    const std::string what = "type " + std::to_string(int(k.type)) + " bits " + std::to_string(k.bits) + " " +
                             std::to_string(k.rows) + "x" + std::to_string(k.cols);
    auto w = make_weight(rng, k.type, k.rows, k.cols, k.bits, k.group_size);
    unit_scales(w, k.bits == 8 ? 1.0f : -1.0f);
    // Rows all at the top of the range, all at the bottom, then mixed.
    for (int64_t r = 0; r < k.rows; ++r)
      for (int64_t c = 0; c < k.cols; ++c) {
        const bool high = r % 4 == 0 || (r % 4 != 1 && (r * 7 + c * 3) % 5 >= 2);
        put_q(w, r, c, high ? k.hi : k.lo);
      }
    double scaled = 0.0, min = 0.0;
    ref::int8_parts(w.view, 1, 0, scaled, min);  // the setters hit the intended bottom value
    ASSERT_EQ(scaled + min, k.type == WeightType::Q8_0 ? -128.0
                            : k.type == WeightType::Q4_0 ? -8.0
                            : k.type == WeightType::Q4_K || k.type == WeightType::Q5_K ? -1.0
                            : k.type == WeightType::Q2_K ? -1.0
                            : k.type == WeightType::Q6_K ? -32.0
                            : k.type == WeightType::Q3_K ? -4.0
                            : k.type == WeightType::IQ4_NL || k.type == WeightType::IQ4_XS ? -127.0
                            : k.type == WeightType::Q4_1 || k.type == WeightType::Q5_1 ? 1.0
                            : k.type == WeightType::Q5_0 ? -16.0
                            : k.bits == 8 ? 1.0 : -1.0) << what;
    PackedWeight p = pack(w.view);
    ASSERT_NE(p.view(), nullptr) << what;
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    // Tokens: all +127, all −127, alternating, a sign pattern, random; every block has |x| = 127 somewhere, so
    // d = 1 and q = x exactly.
    const int64_t n = 7;
    std::vector<float> x(static_cast<std::size_t>(n * k.cols));
    std::uniform_int_distribution<int> any(-127, 127);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t c = 0; c < k.cols; ++c) {
        float v = 127.0f;
        switch (t % 5) {
          case 1: v = -127.0f; break;
          case 2: v = c % 2 == 0 ? 127.0f : -127.0f; break;
          case 3: v = (c * 5 + t) % 3 == 0 ? -127.0f : 127.0f; break;
          case 4: v = c % 32 == 0 ? -127.0f : static_cast<float>(any(rng)); break;
          default: break;
        }
        x[static_cast<std::size_t>(t * k.cols + c)] = v;
      }
    std::vector<float> twin(static_cast<std::size_t>(n * k.rows));
    ref::matmul_int8(w.view, x.data(), n, twin.data());
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      for (int64_t len : {n, int64_t{2}, int64_t{1}}) {
        const std::vector<float> y = run(packed, x, len);
        for (int64_t t = 0; t < len; ++t)
          for (int64_t r = 0; r < k.rows; ++r) {
            const std::size_t at = static_cast<std::size_t>(t * k.rows + r);
            ASSERT_EQ(y[at], twin[at]) << isa_name(isa) << " " << what << " n=" << len << " row " << r << " t " << t;
          }
      }
    }
  }
}

// Q2_K, Q3_K and Q6_K products sum whole super-blocks in integers (kernel_table.h), and the AVX-512 prefill tiles
// fold each Q2_K and Q3_K value and its scale into one byte: Q3_K's sc · q + 127 spans 3 .. 255 only at the
// scales' ends (−32 · −4 = 128). Scales at both ends (Q3_K: every field 0, scale −32, in the first super-block and
// 63, scale 31, in the second; Q2_K: sc = m = 15; Q6_K: −128, then 127), values at both ends and activations of
// ±127 give integer results, which every ISA, in the GEMV and the prefill tiles, must reproduce exactly. Q6_K's
// half sums (up to 16 · 32 · 127, past int16) times its scales take two halves per super-block to their largest
// (the others hold 0: stored 32): a super-block's I then stays below 2^24, exact in fp32.
TEST(PackedInt8, FoldedScalesAtTheirEndsGiveExactIntegerSums) {
  std::mt19937 rng(29);
  for (WeightType type : {WeightType::Q3_K, WeightType::Q2_K, WeightType::Q6_K}) {
    const int64_t rows = 37, cols = 512, n = 9;
    auto w = make_weight(rng, type, rows, cols);
    unit_scales(w, 0.0f);
    const int hi = type == WeightType::Q3_K ? 7 : type == WeightType::Q6_K ? 63 : 3;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t half = c % 256 / 16;
        const bool zero = type == WeightType::Q6_K && half != 0 && half != 9;
        put_q(w, r, c, zero ? 32 : (r * 3 + c * 7) % 4 == 0 ? hi : 0);
      }
      for (int64_t sb = 0; sb < cols / 256; ++sb) {
        uint8_t* b = w.blocks.data() + static_cast<std::size_t>(r * w.view.row_bytes() + sb * block_bytes(type));
        if (type == WeightType::Q3_K) {
          std::fill(b + 96, b + 108, static_cast<uint8_t>(sb == 0 ? 0x00 : 0xFF));
        } else if (type == WeightType::Q6_K) {  // scales[16] after ql[128] and qh[64]
          std::fill(b + 192, b + 208, static_cast<uint8_t>(sb == 0 ? 0x80 : 0x7F));
        } else {
          std::fill(b, b + 16, static_cast<uint8_t>(0xFF));
        }
      }
    }
    double scaled = 0.0, min = 0.0;
    ref::int8_parts(w.view, 0, 0, scaled, min);  // row 0, column 0: the top value times the scale
    ASSERT_EQ(scaled + min, type == WeightType::Q3_K ? -96.0 : type == WeightType::Q6_K ? -3968.0 : 30.0);
    ref::int8_parts(w.view, 1, 0, scaled, min);  // row 1, column 0: the bottom one
    ASSERT_EQ(scaled + min, type == WeightType::Q3_K ? 128.0 : type == WeightType::Q6_K ? 4096.0 : -15.0);
    ref::int8_parts(w.view, 1, 256, scaled, min);  // row 1, the second super-block's bottom value
    ASSERT_EQ(scaled + min, type == WeightType::Q3_K ? -124.0 : type == WeightType::Q6_K ? -4064.0 : -15.0);
    PackedWeight p = pack(w.view);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    std::vector<float> x(static_cast<std::size_t>(n * cols));
    std::uniform_int_distribution<int> any(-127, 127);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t c = 0; c < cols; ++c)
        x[static_cast<std::size_t>(t * cols + c)] = t % 3 == 0   ? 127.0f
                                                    : t % 3 == 1 ? -127.0f
                                                    : c % 64 == 0 ? 127.0f
                                                                  : static_cast<float>(any(rng));
    std::vector<float> twin(static_cast<std::size_t>(n * rows));
    ref::matmul_int8(w.view, x.data(), n, twin.data());
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      for (int64_t len : {n, int64_t{4}, int64_t{1}}) {
        const std::vector<float> y = run(packed, x, len);
        for (int64_t i = 0; i < len * rows; ++i)
          ASSERT_EQ(y[static_cast<std::size_t>(i)], twin[static_cast<std::size_t>(i)])
              << isa_name(isa) << " type " << int(type) << " n=" << len << " output " << i;
      }
    }
  }
}

// The AVX2 kernel (vpmaddubsw) and the AVX-512 VNNI kernel (vpdpbusd) run the same fp32 steps per lane
// after exact integer sums: their results agree bit for bit.
TEST(PackedInt8, Avx2AndAvx512VnniAgreeBitForBit) {
  __builtin_cpu_init();
  if (!isa_supported(Isa::Avx2) || !isa_supported(Isa::Avx512) || !__builtin_cpu_supports("avx512vnni"))
    GTEST_SKIP() << "needs AVX2 and AVX-512 VNNI";
  std::mt19937 rng(26);
  for (const Int8Case& k : kInt8Cases) {
    auto w = make_weight(rng, k.type, k.rows, k.cols, k.bits, k.group_size);
    PackedWeight p = pack(w.view);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    auto x = random_floats(rng, k.n * k.cols, -3.0f, 3.0f);
    std::vector<float> y[2];
    for (int i = 0; i < 2; ++i) {
      IsaScope scope(i == 0 ? Isa::Avx2 : Isa::Avx512);
      y[i] = run(packed, x, k.n);
    }
    ASSERT_EQ(0, std::memcmp(y[0].data(), y[1].data(), y[0].size() * sizeof(float))) << describe(k);
  }
}

// The AVX-512 and AVX-VNNI prefill tiles fold the records without factors by the biased fold (kernel_table.h): the
// integer sums start from the bits of 1.5 · 2^23, and one fused multiply-add takes that back out as it multiplies
// by d. That gives the contract's bits only while 1.5 · 2^23 · d is a finite float; from max|x| ≈ 3.4 · 10^33 on
// the products fold as before. At every activation scale from subnormal products to past that limit, on 9 tokens
// and on 70 (4-bit records from strips), the results of the AVX-512 tiles and of the AVX2 tiles on AVX-VNNI (where
// the CPU has them) are those of the AVX2 tiles on vpmaddubsw (which fold in the contract's order) bit for bit; a
// NaN only where the other is a NaN.
TEST(PackedInt8, BiasedFoldGivesTheContractsBitsAtEveryScale) {
  __builtin_cpu_init();
  if (!isa_supported(Isa::Avx2)) GTEST_SKIP() << "needs AVX2";
  const bool avx512 = isa_supported(Isa::Avx512) && __builtin_cpu_supports("avx512vnni");
  if (!avx512 && !avx_vnni_supported()) GTEST_SKIP() << "needs AVX-512 VNNI or AVX-VNNI";
  const Int8Case cases[] = {{WeightType::Q8_0, 0, 0, 50, 128, 0},      {WeightType::Q4_0, 0, 0, 50, 128, 0},
                            {WeightType::Q5_0, 0, 0, 50, 128, 0},      {WeightType::IQ4_NL, 0, 0, 50, 128, 0},
                            {WeightType::Q4_1, 0, 0, 50, 128, 0},      {WeightType::Q5_1, 0, 0, 50, 128, 0},
                            {WeightType::MlxAffine, 4, 64, 50, 128, 0}, {WeightType::MlxAffine, 8, 32, 50, 128, 0},
                            {WeightType::MlxAffine, 6, 64, 50, 128, 0}};
  // 0: the four blocks of a token at 1e-30, 1e-3, 1e3 and 1e30 (one product, biased throughout).
  const float scales[] = {0.0f, 1e-36f, 1e-3f, 1.0f, 1e6f, 1e30f, 3e33f, 4e33f, 1e36f};
  std::mt19937 rng(31);
  for (Int8Case k : cases) {
    auto w = make_weight(rng, k.type, k.rows, k.cols, k.bits, k.group_size);
    PackedWeight p = pack(w.view);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    for (int64_t n : {int64_t{9}, int64_t{70}}) {
      k.n = n;
      const auto unit = random_floats(rng, n * k.cols, -1.0f, 1.0f);
      for (float scale : scales) {
        std::vector<float> x(unit.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
          const float block_scale[] = {1e-30f, 1e-3f, 1e3f, 1e30f};
          x[i] = unit[i] * (scale != 0.0f ? scale : block_scale[(i % static_cast<std::size_t>(k.cols)) / 32 % 4]);
        }
        std::vector<float> contract;
        {
          IsaScope scope(Isa::Avx2);
          AvxVnniScope vnni(false);
          contract = run(packed, x, n);
        }
        for (int tiles = 0; tiles < 2; ++tiles) {
          if (tiles == 0 ? !avx512 : !avx_vnni_supported()) continue;
          IsaScope scope(tiles == 0 ? Isa::Avx512 : Isa::Avx2);
          const std::vector<float> y = run(packed, x, n);
          const std::string what = describe(k) + (tiles == 0 ? " avx512" : " avx-vnni") + " scale " +
                                   std::to_string(scale);
          for (std::size_t i = 0; i < y.size(); ++i) {
            if (std::isnan(y[i]) || std::isnan(contract[i])) {
              ASSERT_TRUE(std::isnan(y[i]) && std::isnan(contract[i])) << what << " at " << i;
            } else {
              ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(contract[i]))
                  << what << " at " << i << ": " << y[i] << " vs " << contract[i];
            }
          }
        }
      }
    }
  }
}

// Under the AVX2 ISA, the tiles on AVX-VNNI (vpdpbusd on ymm) and on vpmaddubsw + vpmaddwd give the same
// results bit for bit, for every Int8 record kind, at every n of the cases (tile edges included), on 1 and 2
// threads; with extreme weights and activations too.
TEST(PackedInt8, Avx2VnniAndMaddubsTilesAgreeBitForBit) {
  if (!avx_vnni_supported()) GTEST_SKIP() << "needs AVX-VNNI";
  std::mt19937 rng(30);
  const int saved_threads = num_threads();
  IsaScope isa(Isa::Avx2);
  for (const Int8Case& k : kInt8Cases) {
    auto w = make_weight(rng, k.type, k.rows, k.cols, k.bits, k.group_size);
    PackedWeight p = pack(w.view);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    for (float range : {3.0f, 1e4f}) {
      auto x = random_floats(rng, k.n * k.cols, -range, range);
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        std::vector<float> y[2];
        for (int vnni = 0; vnni < 2; ++vnni) {
          AvxVnniScope scope(vnni == 1);
          y[vnni] = run(packed, x, k.n);
        }
        ASSERT_EQ(0, std::memcmp(y[0].data(), y[1].data(), y[0].size() * sizeof(float)))
            << describe(k) << " threads " << threads;
      }
    }
  }
  set_num_threads(saved_threads);
}

// llama.cpp multiplies Q8_0, Q4_0, Q5_0 and IQ4_NL weights with activations quantized to ggml's block_q8_0
// (quantize_row_q8_0: q = round-to-even(x · 127 / max|x|), d stored as fp16) and sums d_w · d_x · Σ q_w · q_x
// per block in fp32; Q4_1 and Q5_1 weights (W = d_w · q_w + m) with block_q8_1 (the same q and d, and
// s = fp16(max|x| / 127 · Σ q_x)), adding m · s per block.
// Written here from that description, with core's fp16 conversion: every ISA's packed product must give
// the same sums, so verdict and llama.cpp see the same integers on the same GGUF file.
TEST(PackedInt8, LegacyTypesAndIQ4_NLUseGgmlQ8_0AndQ8_1Activations) {
  std::mt19937 rng(27);
  for (WeightType type : {WeightType::Q8_0, WeightType::Q4_0, WeightType::IQ4_NL, WeightType::Q5_0, WeightType::Q4_1,
                          WeightType::Q5_1}) {
    const int64_t rows = 35, cols = 160, n = 9;
    auto w = make_weight(rng, type, rows, cols);
    PackedWeight p = pack(w.view);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    auto x = random_floats(rng, n * cols, -3.0f, 3.0f);
    for (int64_t c = 32; c < 64; ++c) x[static_cast<std::size_t>(c)] *= 0.01f;  // a block of small values
    const bool has_m = type == WeightType::Q4_1 || type == WeightType::Q5_1;
    const bool five = type == WeightType::Q5_0 || type == WeightType::Q5_1;
    const int64_t bb = block_bytes(type);
    const int64_t qs_at = 2 + (has_m ? 2 : 0) + (five ? 4 : 0);  // the nibbles, after d, m and qh
    std::vector<double> want(static_cast<std::size_t>(n * rows)), magnitude(want.size());
    for (int64_t t = 0; t < n; ++t)
      for (int64_t b = 0; b < cols / 32; ++b) {
        const float* xb = x.data() + t * cols + b * 32;
        float amax = 0.0f;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(xb[i]));
        const float dx = f16_to_f32(f32_to_f16(amax / 127.0f)), id = 127.0f / amax;
        int qx[32], qx_sum = 0;
        for (int i = 0; i < 32; ++i) {
          qx[i] = static_cast<int>(std::nearbyint(xb[i] * id));
          qx_sum += qx[i];
        }
        const float sx = f16_to_f32(f32_to_f16(amax / 127.0f * static_cast<float>(qx_sum)));
        for (int64_t r = 0; r < rows; ++r) {
          const uint8_t* blk = w.view.blocks + r * w.view.row_bytes() + b * bb;
          const auto half = [&](int at) { return f16_to_f32(static_cast<uint16_t>(blk[at] | (blk[at + 1] << 8))); };
          const float dw = half(0);
          uint32_t qh = 0;
          if (five) std::memcpy(&qh, blk + (has_m ? 4 : 2), sizeof qh);
          int64_t sum = 0;
          for (int i = 0; i < 32; ++i) {
            const int nibble = i < 16 ? blk[qs_at + i] & 0xF : blk[qs_at + i - 16] >> 4;
            const int q5 = nibble | static_cast<int>(((qh >> i) & 1u) << 4);
            const int qw = type == WeightType::Q8_0   ? static_cast<int8_t>(blk[2 + i])
                           : type == WeightType::Q4_0 ? nibble - 8
                           : type == WeightType::IQ4_NL ? kGgmlIq4Values[nibble]
                           : type == WeightType::Q5_0 ? q5 - 16
                           : type == WeightType::Q5_1 ? q5
                                                      : nibble;
            sum += static_cast<int64_t>(qw) * qx[i];
          }
          const double term = static_cast<double>(dw * dx) * static_cast<double>(sum);
          const double min_term = has_m ? static_cast<double>(half(2)) * sx : 0.0;
          want[static_cast<std::size_t>(t * rows + r)] += term + min_term;
          magnitude[static_cast<std::size_t>(t * rows + r)] += std::fabs(term) + std::fabs(min_term);
        }
      }
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      const std::vector<float> y = run(packed, x, n);
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(y[i], want[i], 64.0 * kEps * magnitude[i] + 1e-30)
            << isa_name(isa) << " type " << int(type) << " output " << i;
    }
  }
}

// llama.cpp multiplies Q2_K–Q6_K and IQ4_XS weights with activations quantized to ggml's block_q8_K
// (quantize_row_q8_K_ref: per 256 values, max = the value of largest magnitude, iscale = −127 / max,
// q = round-to-even(iscale · x), d = 1 / iscale in fp32, bsums = Σ q per 16) and sums d_w · d_x times the
// integer dot products, the mins times bsums. Written here from that description (the weights' parts from
// ref::int8_parts, which the dequantization tests pin to ggml): every ISA must give those sums.
TEST(PackedInt8, KQuantProductsUseGgmlQ8_KActivations) {
  std::mt19937 rng(28);
  for (WeightType type :
       {WeightType::Q4_K, WeightType::Q5_K, WeightType::Q6_K, WeightType::Q3_K, WeightType::Q2_K, WeightType::IQ4_XS}) {
    const int64_t rows = 21, cols = 768, n = 6;
    auto w = make_weight(rng, type, rows, cols);
    PackedWeight p = pack(w.view);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    auto x = random_floats(rng, n * cols, -3.0f, 3.0f);
    for (int64_t c = 256; c < 288; ++c) x[static_cast<std::size_t>(c)] *= 0.01f;  // a block of small values
    x[static_cast<std::size_t>(cols + 300)] = -9.0f;  // a negative largest value (iscale > 0)
    std::vector<double> want(static_cast<std::size_t>(n * rows)), magnitude(want.size());
    for (int64_t t = 0; t < n; ++t)
      for (int64_t sb = 0; sb < cols / 256; ++sb) {
        const float* xs = x.data() + t * cols + sb * 256;
        float max = 0.0f, amax = 0.0f;
        for (int i = 0; i < 256; ++i)
          if (std::fabs(xs[i]) > amax) {
            amax = std::fabs(xs[i]);
            max = xs[i];
          }
        const float iscale = -127.0f / max, dx = 1 / iscale;
        int qx[256];
        for (int i = 0; i < 256; ++i) qx[i] = std::min(127, static_cast<int>(std::nearbyint(iscale * xs[i])));
        for (int64_t r = 0; r < rows; ++r) {
          double sum = 0.0, mins = 0.0;
          for (int i = 0; i < 256; ++i) {
            double scaled = 0.0, min = 0.0;
            ref::int8_parts(w.view, r, sb * 256 + i, scaled, min);
            sum += scaled * qx[i];
            mins += min * qx[i];
          }
          const double term = static_cast<double>(dx) * (sum + mins);
          want[static_cast<std::size_t>(t * rows + r)] += term;
          magnitude[static_cast<std::size_t>(t * rows + r)] += std::fabs(dx * sum) + std::fabs(dx * mins);
        }
      }
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      for (int64_t len : {n, int64_t{1}}) {
        const std::vector<float> y = run(packed, x, len);
        for (std::size_t i = 0; i < static_cast<std::size_t>(len * rows); ++i)
          ASSERT_NEAR(y[i], want[i], 64.0 * kEps * magnitude[i] + 1e-30)
              << isa_name(isa) << " type " << int(type) << " output " << i << " n=" << len;
      }
    }
  }
}

// Outside half's normal range the activation scale keeps float's exponent but still 11 significant bits.
TEST(PackedInt8, ActivationScaleHasHalfPrecisionAndFloatRange) {
  for (float amax : {1e-7f, 3e-5f, 0.5f, 1.0f, 127.0f, 3.3e3f, 1e7f, 1e12f}) {
    float x[32] = {};
    x[7] = amax;
    x[20] = -0.3f * amax;
    int8_t q[32];
    float d = 0.0f;
    ref::quantize_block(x, q, d);
    const double exact = static_cast<double>(amax / 127.0f);
    EXPECT_LE(std::fabs(d - exact), exact * std::ldexp(1.0, -11)) << amax;
    int e = 0;
    const double m = std::frexp(static_cast<double>(d), &e);
    EXPECT_EQ(std::ldexp(m, 11), std::nearbyint(std::ldexp(m, 11))) << amax;  // ≤ 11 significant bits
    if (amax >= 127.0f * 6.1035156e-5f && amax <= 127.0f * 65504.0f) {
      EXPECT_EQ(d, f16_to_f32(f32_to_f16(amax / 127.0f))) << amax;
    }
    EXPECT_EQ(q[7], 127);
    EXPECT_EQ(q[20], -38);
  }
}

// The kernel tables this CPU runs, by name: the portable one first.
std::vector<std::pair<std::string, const cpu::KernelTable*>> runnable_tables() {
  std::vector<std::pair<std::string, const cpu::KernelTable*>> tables = {{"generic", &cpu::generic_table()}};
  if (isa_supported(Isa::Avx2)) tables.emplace_back("avx2", &cpu::avx2_table());
  if (isa_supported(Isa::Avx512)) tables.emplace_back("avx512", &cpu::avx512_table());
  return tables;
}

// Every table's quantize_rows (block_q8_0 activations) gives ref::quantize_block's q and d and their Σq bit for
// bit, and the AVX2 and AVX-512 tables the same Σx (they take 8 and 16 blocks at a time, with single blocks
// after the last group: every column count from 1 to 40 blocks), on rows of ordinary, tiny, huge and
// zero values and with zero blocks among others. A d below float's normal range (max|x| < 127 · 2^−126) is
// rounded on the grid of 2^−136 by every table (ops.h), not to 11 significant bits as the twin does: there the
// tables must agree with each other.
TEST(PackedInt8, EveryTableQuantizesActivationsAsTheTwin) {
  std::mt19937 rng(41);
  const auto tables = runnable_tables();
  constexpr int64_t kRows = 6;
  for (int64_t blocks = 1; blocks <= 40; ++blocks) {
    const int64_t cols = blocks * cpu::kQBlock;
    const auto n = static_cast<std::size_t>(kRows * blocks);
    std::vector<float> x = random_floats(rng, kRows * cols, -4.0f, 4.0f);
    for (int64_t c = 0; c < cols; ++c) {
      x[static_cast<std::size_t>(1 * cols + c)] *= 1e-30f;  // tiny, d still normal
      x[static_cast<std::size_t>(2 * cols + c)] *= 1e30f;
      x[static_cast<std::size_t>(3 * cols + c)] = 0.0f;
      x[static_cast<std::size_t>(5 * cols + c)] *= 2.5e-37f;  // d subnormal, 127 / max|x| still finite
    }
    for (int64_t b = 0; b < blocks; b += 3)  // zero blocks among ordinary ones
      std::fill_n(x.begin() + 4 * cols + b * cpu::kQBlock, cpu::kQBlock, 0.0f);
    std::vector<int8_t> q0;
    std::vector<float> d0, xsum_avx2;
    std::vector<int32_t> qsum0;
    for (const auto& [name, table] : tables) {
      std::vector<int8_t> q(static_cast<std::size_t>(kRows * cols), 99);
      std::vector<float> d(n, -1.0f), xsum(n, -1.0f);
      std::vector<int32_t> qsum(n, -1);
      table->quantize_rows(x.data(), 0, kRows, cols, q.data(), d.data(), qsum.data(), xsum.data());
      const std::string where = name + ", blocks " + std::to_string(blocks);
      if (name == "generic") {
        for (int64_t i = 0; i < kRows * blocks; ++i) {
          const auto bi = static_cast<std::size_t>(i);
          int8_t want[cpu::kQBlock];
          float want_d = 0.0f;
          ref::quantize_block(x.data() + i * cpu::kQBlock, want, want_d);
          ASSERT_EQ(0, std::memcmp(want, q.data() + i * cpu::kQBlock, sizeof want)) << where << ", block " << i;
          if (i / blocks != 5) {
            ASSERT_EQ(want_d, d[bi]) << where << ", block " << i;
          }
          int32_t s = 0;
          double sx = 0.0, sa = 0.0;
          for (int64_t c = 0; c < cpu::kQBlock; ++c) {
            const double v = x[static_cast<std::size_t>(i * cpu::kQBlock + c)];
            s += want[c];
            sx += v;
            sa += std::fabs(v);
          }
          ASSERT_EQ(s, qsum[bi]) << where << ", block " << i;
          ASSERT_LE(std::fabs(xsum[bi] - sx), 8 * kEps * sa + 1e-44) << where << ", block " << i;
        }
        q0 = q;
        d0 = d;
        qsum0 = qsum;
      } else {
        ASSERT_EQ(q0, q) << where;
        ASSERT_EQ(0, std::memcmp(d0.data(), d.data(), n * sizeof(float))) << where;
        ASSERT_EQ(qsum0, qsum) << where;
      }
      if (name == "avx2") xsum_avx2 = xsum;
      if (name == "avx512" && !xsum_avx2.empty()) {
        ASSERT_EQ(0, std::memcmp(xsum_avx2.data(), xsum.data(), n * sizeof(float))) << where;
      }
    }
  }
}

// Every table's quantize_rows_super (block_q8_K activations) gives ref::quantize_super_block's q and d, each
// block's Σq, xsum = d · Σq (in fp32) and each 16-column half's Σq (qsum16, asked for or not) bit for bit, for 1 to
// 9 super-blocks of ordinary, tiny, huge and zero values, with zero super-blocks among ordinary ones.
TEST(PackedInt8, EveryTableQuantizesSuperBlocksAsTheTwin) {
  std::mt19937 rng(43);
  const auto tables = runnable_tables();
  constexpr int64_t kRows = 5;
  for (int64_t supers = 1; supers <= 9; ++supers) {
    const int64_t cols = supers * cpu::kSuperCols, blocks = cols / cpu::kQBlock;
    const auto n = static_cast<std::size_t>(kRows * blocks);
    std::vector<float> x = random_floats(rng, kRows * cols, -4.0f, 4.0f);
    for (int64_t c = 0; c < cols; ++c) {
      x[static_cast<std::size_t>(1 * cols + c)] *= 1e-30f;
      x[static_cast<std::size_t>(2 * cols + c)] *= 1e30f;
      x[static_cast<std::size_t>(3 * cols + c)] = 0.0f;
    }
    for (int64_t sb = 0; sb < supers; sb += 2)  // zero super-blocks among ordinary ones
      std::fill_n(x.begin() + 4 * cols + sb * cpu::kSuperCols, cpu::kSuperCols, 0.0f);
    for (const auto& [name, table] : tables) {
      for (bool halves : {true, false}) {
        std::vector<int8_t> q(static_cast<std::size_t>(kRows * cols), 99);
        std::vector<float> d(n, -1.0f), xsum(n, -1.0f);
        std::vector<int32_t> qsum(n, -1), qsum16(2 * n, -1);
        table->quantize_rows_super(x.data(), 0, kRows, cols, q.data(), d.data(), qsum.data(), xsum.data(),
                                   halves ? qsum16.data() : nullptr);
        const std::string where = name + ", super-blocks " + std::to_string(supers) + (halves ? "" : ", no halves");
        for (int64_t i = 0; i < kRows * supers; ++i) {
          int8_t want[cpu::kSuperCols];
          float want_d = 0.0f;
          ref::quantize_super_block(x.data() + i * cpu::kSuperCols, want, want_d);
          ASSERT_EQ(0, std::memcmp(want, q.data() + i * cpu::kSuperCols, sizeof want)) << where << ", super " << i;
          for (int64_t k = 0; k < cpu::kSuperBlocks; ++k) {
            const auto bi = static_cast<std::size_t>(i * cpu::kSuperBlocks + k);
            int32_t half[2] = {0, 0};
            for (int64_t c = 0; c < cpu::kQBlock; ++c) half[c / 16] += want[k * cpu::kQBlock + c];
            ASSERT_EQ(want_d, d[bi]) << where << ", block " << bi;
            ASSERT_EQ(half[0] + half[1], qsum[bi]) << where << ", block " << bi;
            const float want_xsum = want_d * static_cast<float>(half[0] + half[1]);
            ASSERT_EQ(0, std::memcmp(&want_xsum, &xsum[bi], sizeof want_xsum)) << where << ", block " << bi;
            ASSERT_EQ(halves ? half[0] : -1, qsum16[2 * bi]) << where << ", block " << bi;
            ASSERT_EQ(halves ? half[1] : -1, qsum16[2 * bi + 1]) << where << ", block " << bi;
          }
        }
      }
    }
  }
}

// A packed type: its weight type (MLX: bits and group size) and packed form.
struct PackCase {
  WeightType type;
  int bits, group_size;
  PackKind kind;
};

// A random matrix of a PackCase and its packed form (packed.pack set).
struct PackedSetup {
  testing::RandomWeight w;
  PackedWeight p;
  WeightMatrix packed;
};

PackedSetup packed_setup(std::mt19937& rng, const PackCase& k, int64_t rows, int64_t cols) {
  PackedSetup m{make_weight(rng, k.type, rows, cols, k.bits, k.group_size), {}, {}};
  m.p = pack(m.w.view, k.kind);
  m.packed = m.w.view;
  m.packed.pack = m.p.view();
  return m;
}

TEST(PackedBf16, MatchesTwinOnEveryIsa) {
  struct Case {
    int64_t rows, cols, n;
  };
  const Case cases[] = {{1, 2, 1}, {5, 37, 3}, {16, 64, 6}, {33, 130, 7}, {70, 96, 25}, {17, 1024, 13}};
  std::mt19937 rng(22);
  Bf16ProductsScope dot(Bf16Products::Dot);  // the Fma products: PackedBf16.FmaProductsAreTheFmaTwinBitForBit
  for (const Case& k : cases) {
    const auto [w, p, packed] = packed_setup(rng, {WeightType::BF16, 0, 0, PackKind::Bf16}, k.rows, k.cols);
    ASSERT_NE(p.view(), nullptr);
    auto x = random_floats(rng, k.n * k.cols);
    std::vector<float> twin(static_cast<std::size_t>(k.n * k.rows));
    ref::matmul_bf16(w.view, x.data(), k.n, twin.data());
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      const std::vector<float> y = run(packed, x, k.n);
      for (int64_t t = 0; t < k.n; ++t)
        for (int64_t r = 0; r < k.rows; ++r) {
          double magnitude = 0.0;
          for (int64_t c = 0; c < k.cols; ++c)
            magnitude += std::fabs(ref::weight_at(w.view, r, c) * bf16_to_f32(f32_to_bf16(x[t * k.cols + c])));
          const double tol = 2.0 * double(k.cols + 1) * kEps * magnitude + 1e-30;
          const std::size_t at = static_cast<std::size_t>(t * k.rows + r);
          ASSERT_NEAR(y[at], twin[at], tol) << isa_name(isa) << " " << k.rows << "x" << k.cols << " row " << r;
        }
    }
  }
}

// Bf16 records with Bf16Products::Fma (CPUs whose vdpbf16ps is slower than two FMAs, AMX off): the AVX-512 tile
// gives ref::matmul_fma's chain bit for bit, fp32 activations and all (odd columns: the last pair's second half
// is padding; rows around the 16-row panels and the 2-panel tile, n around the 12- and 6-token tiles and the
// decode sizes; 3 threads, which split the last case), and so does every split of the tokens.
TEST(PackedBf16, FmaProductsAreTheFmaTwinBitForBit) {
  if (!isa_supported(Isa::Avx512)) GTEST_SKIP() << "needs AVX-512";
  IsaScope isa(Isa::Avx512);
  AmxScope amx(false);
  Bf16ProductsScope fma(Bf16Products::Fma);
  const int saved_threads = num_threads();
  set_num_threads(3);
  struct Case {
    int64_t rows, cols, n;
  };
  const Case cases[] = {{1, 1, 1},   {5, 37, 3},   {16, 64, 12},   {33, 130, 19}, {70, 95, 25},
                        {17, 1024, 13}, {48, 3, 6}, {200, 33, 2}, {31, 257, 100}, {203, 512, 131}};
  std::mt19937 rng(29);
  for (const Case& k : cases) {
    const auto [w, p, packed] = packed_setup(rng, {WeightType::BF16, 0, 0, PackKind::Bf16}, k.rows, k.cols);
    ASSERT_NE(p.view(), nullptr);
    auto x = random_floats(rng, k.n * k.cols);
    std::vector<float> twin(static_cast<std::size_t>(k.n * k.rows));
    ref::matmul_fma(w.view, x.data(), k.n, twin.data());
    const std::vector<float> y = run(packed, x, k.n);
    ASSERT_EQ(0, std::memcmp(y.data(), twin.data(), y.size() * sizeof(float)))
        << k.rows << "x" << k.cols << " n=" << k.n;
    for (int64_t t = 0; t < k.n; ++t) {
      const std::vector<float> one(x.begin() + t * k.cols, x.begin() + (t + 1) * k.cols);
      const std::vector<float> alone = run(packed, one, 1);
      ASSERT_EQ(0, std::memcmp(alone.data(), twin.data() + t * k.rows, alone.size() * sizeof(float)))
          << k.rows << "x" << k.cols << " token " << t;
    }
  }
  set_num_threads(saved_threads);
}

// F16 and Bf16Fma: every ISA gives the twin's chain of fused multiply-adds bit for bit (rows around the
// 64-row panel and the AVX2 quarter panels, n around the 6- and 5-token tiles and the decode sizes), and the
// twin is the fp32 product up to rounding.
TEST(PackedFma16, MatchesTwinBitForBitOnEveryIsa) {
  struct Case {
    int64_t rows, cols, n;
  };
  const Case cases[] = {{1, 1, 1}, {5, 37, 3}, {64, 64, 6}, {65, 130, 7}, {70, 96, 25}, {17, 1024, 13}, {200, 33, 2}};
  std::mt19937 rng(26);
  const std::pair<WeightType, PackKind> kinds[] = {{WeightType::F16, PackKind::F16},
                                                   {WeightType::BF16, PackKind::Bf16Fma}};
  for (const auto& [type, kind] : kinds) {
    for (const Case& k : cases) {
      auto w = make_weight(rng, type, k.rows, k.cols);
      PackedWeight p = pack(w.view, kind);
      ASSERT_NE(p.view(), nullptr);
      EXPECT_EQ(p.view()->panels, (k.rows + 63) / 64);
      WeightMatrix packed = w.view;
      packed.pack = p.view();
      auto x = random_floats(rng, k.n * k.cols);
      std::vector<float> twin(static_cast<std::size_t>(k.n * k.rows)), exact(twin.size());
      ref::matmul_fma(w.view, x.data(), k.n, twin.data());
      ref::matmul(w.view, x.data(), k.n, exact.data());
      for (int64_t t = 0; t < k.n; ++t)
        for (int64_t r = 0; r < k.rows; ++r) {
          double magnitude = 0.0;
          for (int64_t c = 0; c < k.cols; ++c) magnitude += std::fabs(ref::weight_at(w.view, r, c) * x[t * k.cols + c]);
          const std::size_t at = static_cast<std::size_t>(t * k.rows + r);
          ASSERT_NEAR(twin[at], exact[at], double(k.cols + 1) * kEps * magnitude + 1e-30)
              << int(type) << " " << k.rows << "x" << k.cols;
        }
      for (Isa isa : supported_isas()) {
        IsaScope scope(isa);
        const std::vector<float> y = run(packed, x, k.n);
        ASSERT_EQ(0, std::memcmp(y.data(), twin.data(), y.size() * sizeof(float)))
            << isa_name(isa) << " type " << int(type) << " " << k.rows << "x" << k.cols << " n=" << k.n;
      }
    }
  }
}

// Every packed type (MLX in its three widths), for the tests of batch and thread independence.
const PackCase kPackCases[] = {{WeightType::Q8_0, 0, 0, PackKind::Int8},
                               {WeightType::Q4_0, 0, 0, PackKind::Int8},
                               {WeightType::Q4_K, 0, 0, PackKind::Int8},
                               {WeightType::Q6_K, 0, 0, PackKind::Int8},
                               {WeightType::Q5_K, 0, 0, PackKind::Int8},
                               {WeightType::Q3_K, 0, 0, PackKind::Int8},
                               {WeightType::Q2_K, 0, 0, PackKind::Int8},
                               {WeightType::IQ4_NL, 0, 0, PackKind::Int8},
                               {WeightType::IQ4_XS, 0, 0, PackKind::Int8},
                               {WeightType::Q4_1, 0, 0, PackKind::Int8},
                               {WeightType::Q5_0, 0, 0, PackKind::Int8},
                               {WeightType::Q5_1, 0, 0, PackKind::Int8},
                               {WeightType::MlxAffine, 4, 64, PackKind::Int8},
                               {WeightType::MlxAffine, 8, 32, PackKind::Int8},
                               {WeightType::MlxAffine, 6, 64, PackKind::Int8},
                               {WeightType::BF16, 0, 0, PackKind::Bf16},
                               {WeightType::F16, 0, 0, PackKind::F16},
                               {WeightType::BF16, 0, 0, PackKind::Bf16Fma}};


// Results of a row never depend on which other tokens share the call, nor on the thread count.
TEST(Packed, RowsAreIndependentOfBatchAndThreads) {
  std::mt19937 rng(23);
  const int saved_threads = num_threads();
  const int64_t rows = 203, cols = 512, n = 131;
  for (const PackCase& k : kPackCases) {
    const PackedSetup m = packed_setup(rng, k, rows, cols);
    const WeightMatrix& packed = m.packed;
    auto x = random_floats(rng, n * cols);
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      std::vector<float> all(static_cast<std::size_t>(n * rows));
      set_num_threads(3);
      matmul(packed, x.data(), n, all.data());
      set_num_threads(1);
      for (int64_t t0 : {int64_t{0}, int64_t{7}, int64_t{64}, int64_t{125}}) {
        const int64_t len = t0 == 7 ? 11 : 1;
        std::vector<float> part(static_cast<std::size_t>(len * rows));
        matmul(packed, x.data() + t0 * cols, len, part.data());
        ASSERT_EQ(0, std::memcmp(part.data(), all.data() + t0 * rows, part.size() * sizeof(float)))
            << isa_name(isa) << " type " << int(k.type) << " token " << t0;
      }
    }
  }
  set_num_threads(saved_threads);
}

// matmul_shared_input gives every product what matmul gives it alone, bit for bit, whether consecutive matrices
// share their quantized activations (same format), need other ones (block_q8_0 / q8_1 / q8_K, 16-column sums)
// or are not Int8 at all, on every ISA.
TEST(Packed, SharedInputProductsAreTheSeparateProductsBitForBit) {
  std::mt19937 rng(29);
  const int saved_threads = num_threads();
  set_num_threads(2);
  const int64_t cols = 512;
  const std::vector<std::vector<PackCase>> sequences = {
      {{WeightType::Q8_0, 0, 0, PackKind::Int8}, {WeightType::Q4_0, 0, 0, PackKind::Int8},
       {WeightType::Q5_0, 0, 0, PackKind::Int8}, {WeightType::IQ4_NL, 0, 0, PackKind::Int8}},
      {{WeightType::Q4_K, 0, 0, PackKind::Int8}, {WeightType::Q5_K, 0, 0, PackKind::Int8},
       {WeightType::IQ4_XS, 0, 0, PackKind::Int8}, {WeightType::Q6_K, 0, 0, PackKind::Int8},
       {WeightType::Q3_K, 0, 0, PackKind::Int8}, {WeightType::Q2_K, 0, 0, PackKind::Int8}},
      {{WeightType::Q4_0, 0, 0, PackKind::Int8}, {WeightType::Q4_1, 0, 0, PackKind::Int8},
       {WeightType::Q5_1, 0, 0, PackKind::Int8}, {WeightType::Q4_0, 0, 0, PackKind::Int8}},
      {{WeightType::Q8_0, 0, 0, PackKind::Int8}, {WeightType::Q4_K, 0, 0, PackKind::Int8},
       {WeightType::MlxAffine, 4, 64, PackKind::Int8}, {WeightType::Q8_0, 0, 0, PackKind::Int8}},
      {{WeightType::BF16, 0, 0, PackKind::Bf16}, {WeightType::Q8_0, 0, 0, PackKind::Int8},
       {WeightType::F32, 0, 0, PackKind::None}, {WeightType::Q8_0, 0, 0, PackKind::Int8},
       {WeightType::F16, 0, 0, PackKind::F16}}};
  for (const std::vector<PackCase>& sequence : sequences) {
    std::vector<PackedSetup> ms;
    for (const PackCase& k : sequence) {
      const int64_t rows = std::uniform_int_distribution<int64_t>(1, 80)(rng);
      ms.push_back(packed_setup(rng, k, rows, cols));
    }
    for (int64_t n : {int64_t{1}, int64_t{4}, int64_t{37}}) {
      auto x = random_floats(rng, n * cols);
      for (Isa isa : supported_isas()) {
        IsaScope scope(isa);
        std::vector<std::vector<float>> shared;
        std::vector<MatmulOutput> products;
        for (const PackedSetup& m : ms)
          shared.emplace_back(static_cast<std::size_t>(n * m.packed.rows), std::numeric_limits<float>::quiet_NaN());
        for (std::size_t i = 0; i < ms.size(); ++i) products.push_back({&ms[i].packed, shared[i].data()});
        matmul_shared_input(products, x.data(), n);
        for (std::size_t i = 0; i < ms.size(); ++i) {
          const std::vector<float> alone = run(ms[i].packed, x, n);
          ASSERT_EQ(0, std::memcmp(alone.data(), shared[i].data(), alone.size() * sizeof(float)))
              << isa_name(isa) << " product " << i << " type " << int(sequence[i].type) << " n " << n;
        }
      }
    }
  }
  set_num_threads(saved_threads);
}

TEST(Packed, MovingKeepsTheViewAndUnsupportedTypesStayUnpacked) {
  std::mt19937 rng(24);
  auto w = make_weight(rng, WeightType::Q8_0, 20, 64);
  PackedWeight a = pack(w.view);
  const PackedView* v = a.view();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->panels, 2);
  EXPECT_EQ(v->blocks, 2);
  PackedWeight b = std::move(a);
  EXPECT_EQ(b.view(), v);
  EXPECT_EQ(a.view(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  auto f32 = make_weight(rng, WeightType::F32, 4, 64);
  EXPECT_EQ(preferred_pack(f32.view), PackKind::None);
  EXPECT_EQ(pack(f32.view).view(), nullptr);
  auto f16 = make_weight(rng, WeightType::F16, 4, 256);
  auto bf16 = make_weight(rng, WeightType::BF16, 4, 256);
  for (Isa isa : supported_isas()) {  // F16 and BF16 pack on FMAs where the ISA has F16C and FMA
    IsaScope scope(isa);
    EXPECT_EQ(preferred_pack(f16.view), isa == Isa::Scalar ? PackKind::None : PackKind::F16) << isa_name(isa);
    const PackKind bf16_kind = isa == Isa::Scalar   ? PackKind::None
                               : isa == Isa::Avx512 ? PackKind::Bf16  // with or without AVX-512 BF16
                                                    : PackKind::Bf16Fma;
    EXPECT_EQ(preferred_pack(bf16.view), bf16_kind) << isa_name(isa);
  }
  EXPECT_EQ(pack(f16.view, PackKind::Int8).view(), nullptr);
  EXPECT_EQ(pack(f16.view, PackKind::Bf16Fma).view(), nullptr);
  EXPECT_EQ(pack(bf16.view, PackKind::F16).view(), nullptr);
  EXPECT_EQ(pack(f32.view, PackKind::F16).view(), nullptr);
  auto mlx3 = make_weight(rng, WeightType::MlxAffine, 4, 96, 3, 32);
  EXPECT_EQ(pack(mlx3.view).view(), nullptr);
}

// packed_bytes() tells, from type and shape alone, what pack() allocates; 0 where pack() gives nothing.
TEST(Packed, PackedBytesIsWhatPackAllocates) {
  std::mt19937 rng(27);
  for (const PackCase& k : kPackCases) {
    for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{1, 256}, {17, 512}, {70, 256}}) {
      const PackedSetup m = packed_setup(rng, k, rows, cols);
      WeightMatrix shape_only;
      shape_only.type = k.type;
      shape_only.rows = rows;
      shape_only.cols = cols;
      shape_only.bits = k.bits;
      shape_only.group_size = k.group_size;
      ASSERT_GT(m.p.bytes(), 0);
      EXPECT_EQ(packed_bytes(shape_only, k.kind), m.p.bytes()) << int(k.type) << " " << rows << "x" << cols;
    }
  }
  auto f32 = make_weight(rng, WeightType::F32, 4, 64);
  EXPECT_EQ(packed_bytes(f32.view, PackKind::Int8), 0);
  EXPECT_EQ(packed_bytes(f32.view, PackKind::None), 0);
  auto q8 = make_weight(rng, WeightType::Q8_0, 4, 64);
  EXPECT_EQ(packed_bytes(q8.view, PackKind::Bf16), 0);
}

// Decode streams the packed copy once per token: the packed forms stay within 6 % of the file's bytes
// (Q8_0 and Q4_0 exactly the file's; Q4_K and Q6_K keep the file's factored scales, 19 bytes per row and
// 32 weights against 18, and 27 against 26.25; Q5_K 23 against 22). Q3_K's 3-bit values take the 4-bit
// layout: 19 bytes against the file's 13.75. IQ4_NL is Q4_0's size; IQ4_XS keeps its sub-block scales factored
// (an int8 per block and row, d per 256 columns): 19 bytes against 17. Q5_0 is the file's size; Q4_1 and Q5_1
// take MLX's records (fp32 scale and min): 24 and 28 bytes against 20 and 24. Q2_K keeps its 2-bit values, with
// Q3_K's factors and its int8 mins beside them: 13.5 bytes against 10.5.
TEST(Packed, QuantizedCopiesStayCloseToTheFilesSize) {
  const std::pair<WeightType, double> limits[] = {{WeightType::Q8_0, 1.0},
                                                  {WeightType::Q4_0, 1.0},
                                                  {WeightType::Q4_K, 1.06},
                                                  {WeightType::Q6_K, 1.03},
                                                  {WeightType::Q5_K, 1.05},
                                                  {WeightType::Q3_K, 1.39},
                                                  {WeightType::Q2_K, 1.29},
                                                  {WeightType::IQ4_NL, 1.0},
                                                  {WeightType::IQ4_XS, 1.12},
                                                  {WeightType::Q5_0, 1.0},
                                                  {WeightType::Q4_1, 1.2},
                                                  {WeightType::Q5_1, 1.17}};
  for (const auto& [type, limit] : limits) {
    WeightMatrix w;
    w.type = type;
    w.rows = 1024;
    w.cols = 3584;  // 14 super-blocks of 256
    const double file = static_cast<double>(w.rows * w.row_bytes());
    const double packed = static_cast<double>(packed_bytes(w, PackKind::Int8));
    EXPECT_GT(packed, 0.0) << int(type);
    EXPECT_LE(packed, limit * file) << int(type) << ": " << packed / file << " times the file";
  }
}

// The decode sizes (n = 1 .. 5 tokens, the GEMV tiles) give bit for bit the rows of a 107-token product
// (the prefill tiles; two token blocks of the thread split, 96 + 11, the second not a whole number of
// register tiles), at any thread count and for row counts that are not a multiple of a tile, with either way of
// streaming the weights (one panel at a time with software prefetches, or 4 panels at a time).
TEST(Packed, SmallBatchesMatchTheRowsOfALargeOne) {
  std::mt19937 rng(25);
  const int saved_threads = num_threads();
  // 1536 columns: above kMinParallelWork from n = 1 on with 203 rows, so the small products run threaded (on one
  // thread, 13 panels: three 4-panel tiles and one panel left over); 3072 columns: from 3 tokens on the Int8
  // products take the prefill tile (activations too large for the GEMV tile; under Wide the AVX-512 tiles' 3 and
  // 4 tokens of other than 4-bit records take the GEMV tile, here 3 panels of one); 9216 columns: so does one token
  // under WeightStreams::Prefetch, while under Wide it takes the 4-panel GEMV tile (5 panels: one tile and one
  // panel left over on one thread; on the AVX2 tiles, one 8-half tile and one 2-half one); 60 × 4096: on one thread
  // the AVX2 8-half tile ends in a half of 4 rows. Under Wide, 2 to 4 tokens of the AVX-512 tiles' 8-bit records
  // take the 4-panel GEMV tile at any width (203 × 1536: on one thread three tiles and one panel), those of the
  // other records (4-bit ones with 2 tokens) at 4096 and 9216 columns; on the AVX2 tiles 2 tokens of 8-bit records take
  // the 8-half tile, 3 and 4 tokens a 4-half one, at 3072, 4096 and 9216 columns.
  const int64_t n = 107;
  const std::pair<int64_t, int64_t> shapes[] = {{203, 1536}, {37, 1536}, {1, 1536}, {45, 3072}, {75, 9216}, {60, 4096}};
  for (const PackCase& k : kPackCases)
    for (const auto& [rows, cols] : shapes) {
      const PackedSetup m = packed_setup(rng, k, rows, cols);
      const WeightMatrix& packed = m.packed;
      auto x = random_floats(rng, n * cols);
      for (Isa isa : supported_isas()) {
        IsaScope scope(isa);
        set_num_threads(2);
        const std::vector<float> all = run(packed, x, n);
        // The AVX2 tiles with and without AVX-VNNI (where the CPU has it; both give the same results).
        const int vnni_modes = isa == Isa::Avx2 && avx_vnni_supported() ? 2 : 1;
        for (int vnni = 0; vnni < vnni_modes; ++vnni) {
          AvxVnniScope vnni_scope(vnni == 0);
          for (WeightStreams streams : {WeightStreams::Prefetch, WeightStreams::Wide}) {
            WeightStreamsScope streams_scope(streams);
            for (int threads : {1, 2, 3}) {
              set_num_threads(threads);
              for (int64_t len = 1; len <= 5; ++len)
                for (int64_t t0 : {int64_t{0}, int64_t{50}, n - len}) {
                  std::vector<float> part(static_cast<std::size_t>(len * rows));
                  matmul(packed, x.data() + t0 * cols, len, part.data());
                  ASSERT_EQ(0, std::memcmp(part.data(), all.data() + t0 * rows, part.size() * sizeof(float)))
                      << isa_name(isa) << (vnni == 1 ? " without AVX-VNNI" : "") << " type " << int(k.type)
                      << " bits " << k.bits << " rows " << rows << " n " << len << " token " << t0 << " threads "
                      << threads << " streams " << (streams == WeightStreams::Wide ? "wide" : "prefetch");
                }
            }
          }
        }
      }
    }
  set_num_threads(saved_threads);
}

// The AMX Int8 tiles give the VNNI tiles' results bit for bit (the same integer sums, the same fp32 steps in the
// same order), on token counts around the groups of 16 and the 96-token chunks, shapes around the 16-row panel,
// one and three threads; the sub16 kinds (Q6_K, Q3_K, Q2_K), which stay on VNNI, too.
TEST(PackedAmx, Int8TilesGiveTheVnniResultsBitForBit) {
  if (!amx_supported() || !isa_supported(Isa::Avx512)) GTEST_SKIP() << "needs AMX";
  IsaScope isa(Isa::Avx512);
  std::mt19937 rng(27);
  const int saved_threads = num_threads();
  const std::pair<int64_t, int64_t> shapes[] = {{45, 256}, {16, 512}, {131, 768}};
  for (const PackCase& k : kPackCases) {
    if (k.kind != PackKind::Int8) continue;
    for (const auto& [rows, cols] : shapes) {
      const PackedSetup m = packed_setup(rng, k, rows, cols);
      for (int64_t n : {16, 17, 47, 96, 113, 200}) {
        auto x = random_floats(rng, n * cols, -2.0f, 2.0f);
        for (int threads : {1, 3}) {
          set_num_threads(threads);
          std::vector<float> y[2];
          for (int amx = 0; amx < 2; ++amx) {
            AmxScope scope(amx == 1);
            y[amx] = run(m.packed, x, n);
          }
          ASSERT_EQ(0, std::memcmp(y[0].data(), y[1].data(), y[0].size() * sizeof(float)))
              << "type " << int(k.type) << " bits " << k.bits << " " << rows << "x" << cols << " n=" << n
              << " threads " << threads;
        }
      }
    }
  }
  set_num_threads(saved_threads);
}

// The AMX BF16 tiles keep the Bf16 contract (ref::matmul_bf16's sums up to fp32 order, the bound of
// PackedBf16.MatchesTwinOnEveryIsa) and, as every token of every call runs on them, give a token the same result
// whatever else shares its call (n = 1 against a group of 16 and a 113-token product, which pads its last group).
TEST(PackedAmx, Bf16TilesKeepTheContractAndDoNotDependOnN) {
  if (!amx_supported() || !isa_supported(Isa::Avx512)) GTEST_SKIP() << "needs AMX";
  IsaScope isa(Isa::Avx512);
  AmxScope amx(true);
  std::mt19937 rng(28);
  struct Case {
    int64_t rows, cols;
  };
  for (const Case& k : {Case{17, 64}, Case{40, 96}, Case{64, 1024}, Case{33, 130}}) {
    auto w = make_weight(rng, WeightType::BF16, k.rows, k.cols);
    PackedWeight p = pack(w.view, PackKind::Bf16);
    ASSERT_NE(p.view(), nullptr);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    const int64_t n = 113;
    auto x = random_floats(rng, n * k.cols);
    std::vector<float> twin(static_cast<std::size_t>(n * k.rows));
    ref::matmul_bf16(w.view, x.data(), n, twin.data());
    const std::vector<float> all = run(packed, x, n);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t r = 0; r < k.rows; ++r) {
        double magnitude = 0.0;
        for (int64_t c = 0; c < k.cols; ++c)
          magnitude += std::fabs(ref::weight_at(w.view, r, c) * bf16_to_f32(f32_to_bf16(x[t * k.cols + c])));
        const std::size_t at = static_cast<std::size_t>(t * k.rows + r);
        ASSERT_NEAR(all[at], twin[at], 2.0 * double(k.cols + 1) * kEps * magnitude + 1e-30)
            << k.rows << "x" << k.cols << " token " << t << " row " << r;
      }
    for (const auto& [t0, len] : {std::pair<int64_t, int64_t>{0, 1}, {5, 1}, {16, 16}, {100, 13}}) {
      const std::vector<float> x_part(x.begin() + t0 * k.cols, x.begin() + (t0 + len) * k.cols);
      const std::vector<float> part = run(packed, x_part, len);
      ASSERT_EQ(0, std::memcmp(part.data(), all.data() + t0 * k.rows, part.size() * sizeof(float)))
          << k.rows << "x" << k.cols << " tokens " << t0 << " +" << len;
    }
  }
}

}  // namespace
}  // namespace verdict::kernels
