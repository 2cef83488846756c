// The ggml weight types (F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K–Q6_K, IQ4_NL, IQ4_XS): dequantization against
// hand-built blocks whose values are worked out here from the format description, and every ISA against the
// scalar twins.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "kernels/ref/ref.h"
#include "test_util.h"

namespace verdict::kernels {
namespace {

using testing::expect_matmul_close;
using testing::IsaScope;
using testing::kGgmlIq4Values;
using testing::make_weight;
using testing::random_floats;
using testing::supported_isas;

void put16(std::vector<uint8_t>& b, std::size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v & 0xFF);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}

WeightMatrix view_of(WeightType type, int64_t rows, int64_t cols, const std::vector<uint8_t>& blocks) {
  WeightMatrix w;
  w.type = type;
  w.rows = rows;
  w.cols = cols;
  w.blocks = blocks.data();
  return w;
}

// Dequantizes row r with the active ISA and with the scalar twin; both must equal `want` exactly.
void expect_row(const WeightMatrix& w, int64_t r, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(w.row_bytes() * w.rows, w.row_bytes() * w.rows);
  std::vector<float> ref_row(static_cast<std::size_t>(w.cols));
  ref::dequantize_row(w, r, ref_row.data());
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    std::vector<float> got(static_cast<std::size_t>(w.cols));
    dequantize_row(w, r, got.data());
    for (int64_t c = 0; c < w.cols; ++c) {
      ASSERT_EQ(got[c], want[c]) << what << " " << isa_name(isa) << " col " << c;
      ASSERT_EQ(ref_row[c], want[c]) << what << " ref col " << c;
    }
  }
}

TEST(GgmlTypes, RowBytes) {
  WeightMatrix w;
  w.cols = 512;
  w.type = WeightType::F16;
  EXPECT_EQ(w.row_bytes(), 1024);
  w.type = WeightType::Q8_0;
  EXPECT_EQ(w.row_bytes(), 16 * 34);
  w.type = WeightType::Q4_0;
  EXPECT_EQ(w.row_bytes(), 16 * 18);
  w.type = WeightType::Q4_K;
  EXPECT_EQ(w.row_bytes(), 2 * 144);
  w.type = WeightType::Q5_K;
  EXPECT_EQ(w.row_bytes(), 2 * 176);
  w.type = WeightType::Q6_K;
  EXPECT_EQ(w.row_bytes(), 2 * 210);
  w.type = WeightType::Q3_K;
  EXPECT_EQ(w.row_bytes(), 2 * 110);
  w.type = WeightType::Q2_K;
  EXPECT_EQ(w.row_bytes(), 2 * 84);
  w.type = WeightType::IQ4_NL;
  EXPECT_EQ(w.row_bytes(), 16 * 18);
  w.type = WeightType::IQ4_XS;
  EXPECT_EQ(w.row_bytes(), 2 * 136);
  w.type = WeightType::Q4_1;
  EXPECT_EQ(w.row_bytes(), 16 * 20);
  w.type = WeightType::Q5_0;
  EXPECT_EQ(w.row_bytes(), 16 * 22);
  w.type = WeightType::Q5_1;
  EXPECT_EQ(w.row_bytes(), 16 * 24);
}

TEST(GgmlTypes, F16KnownValues) {
  // 1, −2, 0.5, 65504 (largest half), 2^−24 (smallest subnormal), −0.
  const uint16_t halves[] = {0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001, 0x8000};
  std::vector<uint8_t> b(12);
  for (int i = 0; i < 6; ++i) put16(b, static_cast<std::size_t>(2 * i), halves[i]);
  expect_row(view_of(WeightType::F16, 1, 6, b), 0, {1.0f, -2.0f, 0.5f, 65504.0f, std::ldexp(1.0f, -24), -0.0f},
             "f16");
}

TEST(GgmlTypes, Q8_0KnownValues) {
  // Two rows of two blocks; block (r, k) has d = 0.25 · (1 + r + k) and q[j] = j − 16 (negated for odd k).
  const int64_t rows = 2, cols = 64;
  std::vector<uint8_t> b(static_cast<std::size_t>(rows * 2 * 34));
  std::vector<std::vector<float>> want(rows, std::vector<float>(cols));
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < 2; ++k) {
      const std::size_t at = static_cast<std::size_t>((r * 2 + k) * 34);
      const float d = 0.25f * static_cast<float>(1 + r + k);  // 0.25, 0.5, 0.75: exact halves
      put16(b, at, f32_to_f16(d));
      for (int j = 0; j < 32; ++j) {
        const int q = (k % 2 ? -1 : 1) * (j - 16);
        b[at + 2 + static_cast<std::size_t>(j)] = static_cast<uint8_t>(static_cast<int8_t>(q));
        want[r][static_cast<std::size_t>(k * 32 + j)] = static_cast<float>(q) * d;
      }
    }
  const WeightMatrix w = view_of(WeightType::Q8_0, rows, cols, b);
  for (int r = 0; r < rows; ++r) expect_row(w, r, want[static_cast<std::size_t>(r)], "q8_0");
  // Spot values: row 1 block 1 (d = 0.75), j = 0 → q = 16 → 12.
  EXPECT_EQ(want[1][32], 12.0f);
}

TEST(GgmlTypes, Q4_0KnownValues) {
  // d = −1.5; qs[i] = i | (15 − i) << 4 → element i < 16 is (i − 8) · d, element 16 + i is (7 − i) · d.
  std::vector<uint8_t> b(18);
  put16(b, 0, 0xBE00);  // −1.5
  for (int i = 0; i < 16; ++i) b[2 + static_cast<std::size_t>(i)] = static_cast<uint8_t>(i | ((15 - i) << 4));
  std::vector<float> want(32);
  for (int i = 0; i < 16; ++i) {
    want[static_cast<std::size_t>(i)] = -1.5f * static_cast<float>(i - 8);
    want[static_cast<std::size_t>(16 + i)] = -1.5f * static_cast<float>(7 - i);
  }
  EXPECT_EQ(want[0], 12.0f);
  EXPECT_EQ(want[16], -10.5f);
  expect_row(view_of(WeightType::Q4_0, 1, 32, b), 0, want, "q4_0");
}

TEST(GgmlTypes, Q4_1KnownValues) {
  // {f16 d = 0.5; f16 m = −3; qs[16]}: qs[i] = i | (15 − i) << 4 → element i < 16 is 0.5 · i − 3, element
  // 16 + i is 0.5 · (15 − i) − 3.
  std::vector<uint8_t> b(20);
  put16(b, 0, 0x3800);  // 0.5
  put16(b, 2, 0xC200);  // −3
  for (int i = 0; i < 16; ++i) b[4 + static_cast<std::size_t>(i)] = static_cast<uint8_t>(i | ((15 - i) << 4));
  std::vector<float> want(32);
  for (int i = 0; i < 16; ++i) {
    want[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i) - 3.0f;
    want[static_cast<std::size_t>(16 + i)] = 0.5f * static_cast<float>(15 - i) - 3.0f;
  }
  EXPECT_EQ(want[0], -3.0f);
  EXPECT_EQ(want[16], 4.5f);
  expect_row(view_of(WeightType::Q4_1, 1, 32, b), 0, want, "q4_1");
}

// A Q5_0 / Q5_1 block's 5-bit values: element i < 16 takes the low nibble of qs[i], element 16 + i the high one,
// and bit 4 of element e is bit e of the little-endian 32-bit qh. Here value e = (7 · e + 3) mod 32.
int five_bit_value(int e) { return (7 * e + 3) % 32; }
void put_five_bit_values(std::vector<uint8_t>& b, std::size_t qh_at, std::size_t qs_at) {
  uint32_t qh = 0;
  for (int e = 0; e < 32; ++e) {
    const int v = five_bit_value(e);
    b[qs_at + static_cast<std::size_t>(e % 16)] |= static_cast<uint8_t>((v & 0xF) << (e < 16 ? 0 : 4));
    qh |= static_cast<uint32_t>(v >> 4) << e;
  }
  for (int k = 0; k < 4; ++k) b[qh_at + static_cast<std::size_t>(k)] = static_cast<uint8_t>(qh >> (8 * k));
}

TEST(GgmlTypes, Q5_0KnownValues) {
  // {f16 d = −0.25; u8 qh[4]; qs[16]}: W = (q − 16) · d.
  std::vector<uint8_t> b(22, 0);
  put16(b, 0, 0xB400);  // −0.25
  put_five_bit_values(b, 2, 6);
  std::vector<float> want(32);
  for (int e = 0; e < 32; ++e)
    want[static_cast<std::size_t>(e)] = static_cast<float>(five_bit_value(e) - 16) * -0.25f;
  EXPECT_EQ(want[0], 3.25f);    // q = 3
  EXPECT_EQ(want[2], -0.25f);   // q = 17: bit 4 set
  EXPECT_EQ(want[16], -0.75f);  // q = 19: the high nibble 3, bit 16 of qh
  EXPECT_EQ(want[31], -3.0f);   // q = 28
  expect_row(view_of(WeightType::Q5_0, 1, 32, b), 0, want, "q5_0");
}

TEST(GgmlTypes, Q5_1KnownValues) {
  // {f16 d = 0.125; f16 m = 1.5; u8 qh[4]; qs[16]}: W = q · d + m.
  std::vector<uint8_t> b(24, 0);
  put16(b, 0, 0x3000);  // 0.125
  put16(b, 2, 0x3E00);  // 1.5
  put_five_bit_values(b, 4, 8);
  std::vector<float> want(32);
  for (int e = 0; e < 32; ++e)
    want[static_cast<std::size_t>(e)] = static_cast<float>(five_bit_value(e)) * 0.125f + 1.5f;
  EXPECT_EQ(want[2], 3.625f);   // q = 17
  EXPECT_EQ(want[16], 3.875f);  // q = 19
  expect_row(view_of(WeightType::Q5_1, 1, 32, b), 0, want, "q5_1");
}

// Packs the 6-bit scales and mins of the 8 sub-blocks of a Q4_K super-block into ggml's 12 bytes:
// sub-blocks 0–3 keep scale and min in the low 6 bits of bytes j and j + 4; sub-blocks 4–7 keep their
// low 4 bits in the nibbles of byte j + 4 and their top 2 bits in the top bits of bytes j − 4 (scale)
// and j (min).
void pack_q4k_scales(const int sc[8], const int m[8], uint8_t* out) {
  for (int j = 0; j < 12; ++j) out[j] = 0;
  for (int j = 0; j < 4; ++j) {
    out[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    out[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

TEST(GgmlTypes, Q4_KKnownValues) {
  // One super-block, d = 0.5, dmin = 0.25; sub-block j has scale sc[j], min m[j] (6-bit values chosen to
  // exercise the top bits of the second half), and element l of sub-block j holds q = (l + j) mod 16.
  // Value: (d · sc) · q − dmin · m, all exact in fp32.
  const int sc[8] = {1, 17, 33, 63, 5, 48, 62, 31};
  const int m[8] = {0, 3, 63, 40, 60, 2, 33, 16};
  std::vector<uint8_t> b(144);
  put16(b, 0, 0x3800);  // 0.5
  put16(b, 2, 0x3400);  // 0.25
  pack_q4k_scales(sc, m, b.data() + 4);
  std::vector<float> want(256);
  for (int j = 0; j < 8; ++j)
    for (int l = 0; l < 32; ++l) {
      const int q = (l + j) % 16;
      // Sub-blocks 2k and 2k + 1 share qs[32k .. 32k + 31]: low nibble, then high nibble.
      uint8_t& byte = b[16 + static_cast<std::size_t>(32 * (j / 2) + l)];
      byte = static_cast<uint8_t>(j % 2 == 0 ? ((byte & 0xF0) | q) : ((byte & 0x0F) | (q << 4)));
      want[static_cast<std::size_t>(32 * j + l)] =
          0.5f * static_cast<float>(sc[j]) * static_cast<float>(q) - 0.25f * static_cast<float>(m[j]);
    }
  // Spot values: sub-block 3 (sc 63, m 40), l = 0 → q = 3 → 94.5 − 10; sub-block 6 (sc 62, m 33), l = 5 → q = 11.
  EXPECT_EQ(want[96], 84.5f);
  EXPECT_EQ(want[6 * 32 + 5], 0.5f * 62 * 11 - 0.25f * 33);
  expect_row(view_of(WeightType::Q4_K, 1, 256, b), 0, want, "q4_k");
}

TEST(GgmlTypes, Q4_KScaleBytesDecodeAsGgml) {
  // Hand-decoded bytes: byte 0 = 0b11'000101 (scale 0 = 5, top bits of scale 4 = 3), byte 8 = 0x9A
  // (low nibble of scale 4 = 0xA, of min 4 = 0x9), byte 4 = 0b01'000111 (min 0 = 7, top bits of min 4 = 1).
  // So scale 4 = 0xA | 3 << 4 = 58, min 4 = 0x9 | 1 << 4 = 25; scale 0 = 5, min 0 = 7.
  std::vector<uint8_t> b(144, 0);
  put16(b, 0, 0x3C00);  // d = 1
  put16(b, 2, 0x3C00);  // dmin = 1
  b[4 + 0] = 0xC5;
  b[4 + 4] = 0x47;
  b[4 + 8] = 0x9A;
  for (int l = 0; l < 32; ++l) b[16 + static_cast<std::size_t>(l)] = 0x01;        // sub-blocks 0/1: q = 1, 0
  for (int l = 0; l < 32; ++l) b[16 + 64 + static_cast<std::size_t>(l)] = 0x02;   // sub-blocks 4/5: q = 2, 0
  const WeightMatrix w = view_of(WeightType::Q4_K, 1, 256, b);
  std::vector<float> row(256);
  ref::dequantize_row(w, 0, row.data());
  EXPECT_EQ(row[0], 5.0f - 7.0f);          // 5 · 1 − 7
  EXPECT_EQ(row[128], 58.0f * 2 - 25.0f);  // sub-block 4
  EXPECT_EQ(row[32], 0.0f);                // sub-block 1: scale 0, min 0
}

TEST(GgmlTypes, Q6_KKnownValues) {
  // One super-block, d = 0.125; element i has q = (7 · i) mod 64, value (d · scale[i / 16]) · (q − 32), with
  // scales −128 .. 127 spread over the 16 sub-blocks.
  std::vector<uint8_t> b(210, 0);
  put16(b, 208, 0x3000);  // 0.125
  const int scales[16] = {1, -1, 127, -128, 3, 64, -7, 2, 100, -50, 9, 0, 33, -33, 17, 5};
  for (int s = 0; s < 16; ++s) b[192 + static_cast<std::size_t>(s)] = static_cast<uint8_t>(static_cast<int8_t>(scales[s]));
  std::vector<float> want(256);
  for (int i = 0; i < 256; ++i) {
    const int q = (7 * i) % 64;
    // Layout: half h = i / 128; within it k = i % 128, quarter t = k / 32, l = k % 32. The low 4 bits go to
    // ql[64h + l + 32 (t odd)] (low nibble for t < 2, high for t ≥ 2), the top 2 bits to bits 2t of qh[32h + l].
    const int h = i / 128, k = i % 128, t = k / 32, l = k % 32;
    uint8_t& lo = b[static_cast<std::size_t>(64 * h + l + (t % 2) * 32)];
    lo = static_cast<uint8_t>(t < 2 ? (lo | (q & 0xF)) : (lo | ((q & 0xF) << 4)));
    b[static_cast<std::size_t>(128 + 32 * h + l)] |= static_cast<uint8_t>((q >> 4) << (2 * t));
    want[static_cast<std::size_t>(i)] = (0.125f * static_cast<float>(scales[i / 16])) * static_cast<float>(q - 32);
  }
  EXPECT_EQ(want[1], 0.125f * 1 * (7 - 32));
  expect_row(view_of(WeightType::Q6_K, 1, 256, b), 0, want, "q6_k");
}

TEST(GgmlTypes, Q5_KKnownValues) {
  // One super-block, d = 0.25, dmin = 0.5; sub-block j has scale sc[j], min m[j], and element l of sub-block
  // j holds q = (3l + 5j) mod 32: its low 4 bits in Q4_K's nibble layout (after the 32 bytes of qh), its bit
  // 4 in bit j of qh[l]. Value: (d · sc) · q − dmin · m, exact in fp32.
  const int sc[8] = {2, 63, 17, 40, 33, 1, 62, 9};
  const int m[8] = {5, 0, 63, 12, 48, 31, 2, 60};
  std::vector<uint8_t> b(176, 0);
  put16(b, 0, 0x3400);  // 0.25
  put16(b, 2, 0x3800);  // 0.5
  pack_q4k_scales(sc, m, b.data() + 4);
  std::vector<float> want(256);
  for (int j = 0; j < 8; ++j)
    for (int l = 0; l < 32; ++l) {
      const int q = (3 * l + 5 * j) % 32;
      uint8_t& byte = b[48 + static_cast<std::size_t>(32 * (j / 2) + l)];
      byte = static_cast<uint8_t>(j % 2 == 0 ? ((byte & 0xF0) | (q & 0xF)) : ((byte & 0x0F) | ((q & 0xF) << 4)));
      b[16 + static_cast<std::size_t>(l)] |= static_cast<uint8_t>((q >> 4) << j);
      want[static_cast<std::size_t>(32 * j + l)] =
          0.25f * static_cast<float>(sc[j]) * static_cast<float>(q) - 0.5f * static_cast<float>(m[j]);
    }
  // Spot values: sub-block 1 (sc 63, m 0), l = 9 → q = 32 mod 32 = 0; l = 10 → q = 3 → 47.25; sub-block 7
  // (sc 9, m 60), l = 0 → q = 35 mod 32 = 3 → 6.75 − 30; sub-block 6 (sc 62, m 2), l = 1 → q = 33 mod 32 = 1.
  EXPECT_EQ(want[32 + 9], 0.0f);
  EXPECT_EQ(want[32 + 10], 47.25f);
  EXPECT_EQ(want[7 * 32], 6.75f - 30.0f);
  EXPECT_EQ(want[6 * 32 + 1], 0.25f * 62 - 1.0f);
  // q = 31 (l = 2, j = 5: 6 + 25), the top of the 5-bit range: 0.25 · 1 · 31 − 0.5 · 31.
  EXPECT_EQ(want[5 * 32 + 2], 0.25f * 31 - 15.5f);
  expect_row(view_of(WeightType::Q5_K, 1, 256, b), 0, want, "q5_k");
}

TEST(GgmlTypes, Q3_KKnownValues) {
  // One super-block, d = 0.5; element i has q = (5 · i + i / 64) mod 8, value (d · (s − 32)) · (q − 4) with the
  // 16 sub-blocks' 6-bit fields s spread over 0 .. 63. Layout (ggml's quantize_row_q3_K_ref writes it): the
  // low 2 bits of element i at bits 2 · ((i % 128) / 32) of qs[32 · (i / 128) + i % 32] (bytes 32–95), its
  // bit 2 at bit i / 32 of hmask[i % 32] (bytes 0–31); field s of sub-block j: low 4 bits in byte 96 + j % 8
  // (high nibble for j ≥ 8), top 2 bits at bits 2 · (j / 4) of byte 104 + j % 4.
  std::vector<uint8_t> b(110, 0);
  put16(b, 108, 0x3800);  // 0.5
  const int s[16] = {0, 63, 32, 31, 33, 1, 62, 17, 40, 5, 48, 27, 60, 9, 36, 44};
  for (int j = 0; j < 16; ++j) {
    b[96 + static_cast<std::size_t>(j % 8)] |= static_cast<uint8_t>((s[j] & 0xF) << (j < 8 ? 0 : 4));
    b[104 + static_cast<std::size_t>(j % 4)] |= static_cast<uint8_t>((s[j] >> 4) << (2 * (j / 4)));
  }
  std::vector<float> want(256);
  for (int i = 0; i < 256; ++i) {
    const int q = (5 * i + i / 64) % 8;
    const auto low_at = static_cast<std::size_t>(32 * (i / 128) + i % 32);
    b[32 + low_at] |= static_cast<uint8_t>((q & 3) << (2 * ((i % 128) / 32)));
    b[static_cast<std::size_t>(i % 32)] |= static_cast<uint8_t>((q >> 2) << (i / 32));
    want[static_cast<std::size_t>(i)] = (0.5f * static_cast<float>(s[i / 16] - 32)) * static_cast<float>(q - 4);
  }
  // Spot values: i = 0 → q 0, s 0: (0.5 · −32) · −4 = 64; i = 17 → q 85 mod 8 = 5, s 63: 15.5 · 1;
  // i = 255 → q (1275 + 3) mod 8 = 6, s 44: 6 · 2.
  EXPECT_EQ(want[0], 64.0f);
  EXPECT_EQ(want[17], 15.5f);
  EXPECT_EQ(want[255], 12.0f);
  expect_row(view_of(WeightType::Q3_K, 1, 256, b), 0, want, "q3_k");
}

TEST(GgmlTypes, Q2_KKnownValues) {
  // One super-block {scales[16]; qs[64]; f16 d; f16 dmin}, d = 0.5, dmin = 0.25; element i has
  // q = (3 · i + i / 64) mod 4 at bits 2 · ((i % 128) / 32) of qs[32 · (i / 128) + i % 32] (bytes 16–79), as
  // ggml's quantize_row_q2_K_ref writes it; sub-block j = i / 16 has scale sc_j (low nibble of byte j) and min m_j
  // (high nibble), and the value is (d · sc) · q − dmin · m.
  std::vector<uint8_t> b(84, 0);
  put16(b, 80, 0x3800);  // 0.5
  put16(b, 82, 0x3400);  // 0.25
  const int sc[16] = {0, 15, 7, 1, 8, 3, 12, 5, 9, 2, 14, 6, 11, 4, 13, 10};
  const int m[16] = {15, 0, 3, 9, 1, 12, 6, 2, 7, 14, 0, 11, 5, 8, 10, 4};
  for (int j = 0; j < 16; ++j) b[static_cast<std::size_t>(j)] = static_cast<uint8_t>(sc[j] | (m[j] << 4));
  std::vector<float> want(256);
  for (int i = 0; i < 256; ++i) {
    const int q = (3 * i + i / 64) % 4;
    b[16 + static_cast<std::size_t>(32 * (i / 128) + i % 32)] |= static_cast<uint8_t>(q << (2 * ((i % 128) / 32)));
    want[static_cast<std::size_t>(i)] =
        (0.5f * static_cast<float>(sc[i / 16])) * static_cast<float>(q) - 0.25f * static_cast<float>(m[i / 16]);
  }
  // Spot values: i = 0 → q 0, m 15: −3.75; i = 17 → q 51 mod 4 = 3, sc 15, m 0: 7.5 · 3 = 22.5;
  // i = 255 → q (765 + 3) mod 4 = 0, m 4: −1; i = 70 → q (210 + 1) mod 4 = 3, sc 8, m 1: 12 − 0.25.
  EXPECT_EQ(want[0], -3.75f);
  EXPECT_EQ(want[17], 22.5f);
  EXPECT_EQ(want[255], -1.0f);
  EXPECT_EQ(want[70], 11.75f);
  expect_row(view_of(WeightType::Q2_K, 1, 256, b), 0, want, "q2_k");
}

TEST(GgmlTypes, IQ4_NLKnownValues) {
  // Two blocks {f16 d; qs[16]}: element j < 16 is the low nibble of qs[j], j ≥ 16 the high nibble of
  // qs[j − 16] (Q4_0's layout); W = d · kvalues_iq4nl[nibble]. Block 0: d = 0.25, nibbles j and 15 − j;
  // block 1: d = −2, nibbles (7 · j) mod 16.
  std::vector<uint8_t> b(36, 0);
  put16(b, 0, 0x3400);   // 0.25
  put16(b, 18, 0xC000);  // −2
  std::vector<float> want(64);
  for (int j = 0; j < 16; ++j) {
    b[2 + static_cast<std::size_t>(j)] = static_cast<uint8_t>(j | ((15 - j) << 4));
    want[static_cast<std::size_t>(j)] = 0.25f * static_cast<float>(kGgmlIq4Values[j]);
    want[static_cast<std::size_t>(16 + j)] = 0.25f * static_cast<float>(kGgmlIq4Values[15 - j]);
    const int lo = (7 * j) % 16, hi = (7 * (j + 16)) % 16;
    b[20 + static_cast<std::size_t>(j)] = static_cast<uint8_t>(lo | (hi << 4));
    want[static_cast<std::size_t>(32 + j)] = -2.0f * static_cast<float>(kGgmlIq4Values[lo]);
    want[static_cast<std::size_t>(48 + j)] = -2.0f * static_cast<float>(kGgmlIq4Values[hi]);
  }
  EXPECT_EQ(want[0], -31.75f);  // 0.25 · −127
  EXPECT_EQ(want[16], 28.25f);  // 0.25 · 113
  EXPECT_EQ(want[33], 20.0f);   // −2 · kvalues[7] = −2 · −10
  expect_row(view_of(WeightType::IQ4_NL, 1, 64, b), 0, want, "iq4_nl");
}

TEST(GgmlTypes, IQ4_XSKnownValues) {
  // One super-block {f16 d; u16 scales_h; u8 scales_l[4]; qs[128]}, d = 0.5. Sub-block j (32 values, bytes
  // qs[16j ..] in IQ4_NL's nibble layout) has the 6-bit scale ls_j: low 4 bits in nibble j % 2 of scales_l[j / 2],
  // high 2 at bits 2j of scales_h; W = (d · (ls_j − 32)) · kvalues_iq4nl[nibble]. Element i of sub-block j has
  // nibble (3 · i + j) mod 16.
  std::vector<uint8_t> b(136, 0);
  put16(b, 0, 0x3800);  // 0.5
  const int ls[8] = {0, 63, 32, 31, 33, 1, 62, 17};
  unsigned scales_h = 0;
  for (int j = 0; j < 8; ++j) {
    b[4 + static_cast<std::size_t>(j / 2)] |= static_cast<uint8_t>((ls[j] & 0xF) << (4 * (j % 2)));
    scales_h |= static_cast<unsigned>(ls[j] >> 4) << (2 * j);
  }
  put16(b, 2, static_cast<uint16_t>(scales_h));
  std::vector<float> want(256);
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 32; ++i) {
      const int n = (3 * i + j) % 16;
      b[8 + static_cast<std::size_t>(16 * j + i % 16)] |= static_cast<uint8_t>(n << (i < 16 ? 0 : 4));
      const float dl = 0.5f * static_cast<float>(ls[j] - 32);
      want[static_cast<std::size_t>(32 * j + i)] = dl * static_cast<float>(kGgmlIq4Values[n]);
    }
  EXPECT_EQ(want[0], 2032.0f);    // (0.5 · −32) · −127
  EXPECT_EQ(want[33], -759.5f);   // sub-block 1, i = 1: nibble 4, (0.5 · (63 − 32)) · −49
  expect_row(view_of(WeightType::IQ4_XS, 1, 256, b), 0, want, "iq4_xs");
}

struct MatmulCase {
  WeightType type;
  int64_t rows, cols, n;
};

TEST(GgmlTypes, MatmulAndDequantizeMatchReferenceOnEveryIsa) {
  const MatmulCase cases[] = {{WeightType::F16, 5, 37, 3},    {WeightType::F16, 9, 64, 1},
                           {WeightType::Q8_0, 7, 96, 5},   {WeightType::Q8_0, 33, 64, 66},
                           {WeightType::Q4_0, 1, 32, 1},   {WeightType::Q4_0, 13, 160, 9},
                           {WeightType::Q4_K, 3, 256, 2},  {WeightType::Q4_K, 17, 512, 7},
                           {WeightType::Q6_K, 5, 256, 3},  {WeightType::Q6_K, 9, 768, 4},
                           {WeightType::Q5_K, 3, 256, 2},  {WeightType::Q5_K, 11, 512, 5},
                           {WeightType::Q3_K, 3, 256, 2},  {WeightType::Q3_K, 11, 768, 5},
                           {WeightType::Q2_K, 3, 256, 2},  {WeightType::Q2_K, 11, 768, 5},
                           {WeightType::IQ4_NL, 3, 64, 2}, {WeightType::IQ4_NL, 13, 160, 9},
                           {WeightType::IQ4_XS, 3, 256, 2}, {WeightType::IQ4_XS, 11, 768, 5},
                           {WeightType::Q4_1, 3, 64, 2},   {WeightType::Q4_1, 13, 160, 9},
                           {WeightType::Q5_0, 3, 64, 2},   {WeightType::Q5_0, 13, 160, 9},
                           {WeightType::Q5_1, 3, 64, 2},   {WeightType::Q5_1, 13, 160, 9}};
  std::mt19937 rng(11);
  for (const MatmulCase& k : cases) {
    auto w = make_weight(rng, k.type, k.rows, k.cols);
    ASSERT_NO_THROW(check_weight(w.view, "test"));
    auto x = random_floats(rng, k.n * k.cols);
    std::vector<float> want(static_cast<std::size_t>(k.cols));
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      const std::string what = std::string(isa_name(isa)) + " type " + std::to_string(int(k.type)) + " " +
                               std::to_string(k.rows) + "x" + std::to_string(k.cols);
      expect_matmul_close(w.view, x, k.n, what);
      std::vector<float> got(want.size());
      for (int64_t r = 0; r < k.rows; ++r) {
        dequantize_row(w.view, r, got.data());
        ref::dequantize_row(w.view, r, want.data());
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << what << " row " << r;
      }
    }
  }
}

TEST(GgmlTypes, CheckWeightRefusesBadViews) {
  std::vector<uint8_t> b(210);
  WeightMatrix w = view_of(WeightType::Q4_K, 1, 128, b);
  EXPECT_THROW(check_weight(w, "m"), Error);  // not a multiple of 256
  w.cols = 256;
  EXPECT_NO_THROW(check_weight(w, "m"));
  w.blocks = nullptr;
  EXPECT_THROW(check_weight(w, "m"), Error);
  WeightMatrix q = view_of(WeightType::Q8_0, 1, 33, b);
  EXPECT_THROW(check_weight(q, "m"), Error);
  WeightMatrix f = view_of(WeightType::F16, 1, 33, b);
  EXPECT_NO_THROW(check_weight(f, "m"));
}

}  // namespace
}  // namespace verdict::kernels
