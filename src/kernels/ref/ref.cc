#include "kernels/ref/ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/dtype.h"

namespace verdict::kernels::ref {
namespace {

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return f16_to_f32(h);
}

// ggml's get_scale_min_k4: the 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes.
void q4k_scale_min(int j, const uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Value i (0..255) of a Q6_K block b as ggml's dequantize_row_q6_K reads it: W = ds · q with
// ds = d · scales[i / 16] (exact in fp32) and q = q6 − 32.
void q6k_value(const uint8_t* b, int i, float& ds, int& q) {
  const uint8_t* ql = b + 64 * (i / 128);
  const uint8_t* qh = b + 128 + 32 * (i / 128);
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192) + 8 * (i / 128);
  const int k = i % 128, quad = k / 32, l = k % 32;
  const uint8_t lo = ql[l + (quad % 2) * 32];
  const int nibble = quad < 2 ? (lo & 0xF) : (lo >> 4);
  q = (nibble | (((qh[l] >> (2 * quad)) & 3) << 4)) - 32;
  ds = half_at(b + 208) * static_cast<float>(sc[l / 16 + 2 * quad]);
}

// Value i (0..255) of a Q5_K block b as ggml's dequantize_row_q5_K reads it: sub-block j = i / 32 has
// Q4_K's 6-bit scale sc and min m; q = (its Q4_K nibble) + 16 · (bit j of qh[i % 32]), W = (d·sc)·q − dmin·m.
void q5k_value(const uint8_t* b, int i, int& sc, int& m, int& q) {
  const int j = i / 32;
  q4k_scale_min(j, b + 4, sc, m);
  const uint8_t* qh = b + 16;
  const uint8_t byte = b[48 + (i / 64) * 32 + i % 32];
  q = (j % 2 == 0 ? (byte & 0xF) : (byte >> 4)) | (((qh[i % 32] >> j) & 1) << 4);
}

// Value i (0..255) of a Q3_K block b as ggml's dequantize_row_q3_K reads it: the 16 scales rearranged
// from 12 bytes by its 32-bit masks, then in half n = i / 128, pass j = (i % 128) / 32 the 2 bits at
// shift 2j of qs[32n + i % 32], minus 4 unless bit 4n + j of hmask[i % 32] is set; W = (d · (sc − 32)) · q.
void q3k_value(const uint8_t* b, int i, float& ds, int& q) {
  uint32_t aux[4];
  std::memcpy(aux, b + 96, 12);
  const uint32_t tmp = aux[2], kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
  aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
  aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
  aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
  aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
  int8_t scales[16];
  std::memcpy(scales, aux, 16);
  const int n = i / 128, j = (i % 128) / 32, l = i % 32;
  q = ((b[32 + 32 * n + l] >> (2 * j)) & 3) - ((b[l] & (1 << (4 * n + j))) != 0 ? 0 : 4);
  ds = half_at(b + 108) * static_cast<float>(scales[8 * n + 2 * j + l / 16] - 32);
}

// Value i (0..255) of a Q2_K block b as ggml's dequantize_row_q2_K reads it: in half n = i / 128, pass
// j = (i % 128) / 32 the 2 bits at shift 2j of qs[32n + i % 32] (qs at byte 16), with the scale byte
// scales[8n + 2j + (i % 32) / 16]; W = (d · (low nibble)) · q − dmin · (high nibble). Returns the fp32 d · sc
// and dmin · m in dl, ml.
void q2k_value(const uint8_t* b, int i, float& dl, float& ml, int& q) {
  const int n = i / 128, j = (i % 128) / 32, l = i % 32;
  q = (b[16 + 32 * n + l] >> (2 * j)) & 3;
  const uint8_t sc = b[8 * n + 2 * j + l / 16];
  dl = half_at(b + 80) * static_cast<float>(sc & 0xF);
  ml = half_at(b + 82) * static_cast<float>(sc >> 4);
}

// Value i (0..255) of an IQ4_XS block b as ggml's dequantize_row_iq4_xs reads it: sub-block j = i / 32 has the
// 6-bit scale ls (low 4 bits in scales_l[j / 2] at bit 4 · (j % 2), high 2 at bit 2j of the 16-bit scales_h),
// and value kvalues_iq4nl[nibble]; W = (d · (ls − 32)) · value.
void iq4xs_value(const uint8_t* b, int i, float& dl, int& q) {
  const int j = i / 32, l = i % 32;
  uint16_t scales_h;
  std::memcpy(&scales_h, b + 2, sizeof scales_h);
  const int ls = ((b[4 + j / 2] >> (4 * (j % 2))) & 0xF) | (((scales_h >> (2 * j)) & 3) << 4);
  dl = half_at(b) * static_cast<float>(ls - 32);
  const uint8_t byte = b[8 + 16 * j + l % 16];
  q = kIq4Values[l < 16 ? (byte & 0xF) : (byte >> 4)];
}

// Value i (0..31) of a Q4_1, Q5_0 or Q5_1 block b as stored: the nibble of qs[i % 16] (low for i < 16), for
// Q5_0 and Q5_1 plus 16 · bit i of the 32-bit little-endian qh; qs and qh follow d (and Q4_1/Q5_1's m).
int legacy_value(WeightType t, const uint8_t* b, int i) {
  const int head = t == WeightType::Q5_0 ? 2 : 4;
  const bool five = t != WeightType::Q4_1;
  const uint8_t byte = b[head + (five ? 4 : 0) + i % 16];
  int q = i < 16 ? (byte & 0xF) : (byte >> 4);
  if (five) q += 16 * ((b[head + i / 8] >> (i % 8)) & 1);
  return q;
}

float ggml_weight_at(const WeightMatrix& w, int64_t r, int64_t c) {
  const uint8_t* row = w.blocks + r * w.row_bytes();
  const int64_t bv = block_values(w.type);
  const uint8_t* b = row + (c / bv) * block_bytes(w.type);
  const int i = static_cast<int>(c % bv);
  switch (w.type) {
    case WeightType::F16:
      return half_at(b);
    case WeightType::Q8_0:
      return static_cast<float>(static_cast<int8_t>(b[2 + i])) * half_at(b);
    case WeightType::Q4_0: {
      const uint8_t byte = b[2 + i % 16];
      const int q = i < 16 ? (byte & 0xF) : (byte >> 4);
      return static_cast<float>(q - 8) * half_at(b);
    }
    case WeightType::Q5_0:
      return static_cast<float>(legacy_value(w.type, b, i) - 16) * half_at(b);
    case WeightType::Q4_1:
    case WeightType::Q5_1: {
      const float scaled = static_cast<float>(legacy_value(w.type, b, i)) * half_at(b);
      return scaled + half_at(b + 2);
    }
    case WeightType::IQ4_NL: {
      const uint8_t byte = b[2 + i % 16];
      return half_at(b) * static_cast<float>(kIq4Values[i < 16 ? (byte & 0xF) : (byte >> 4)]);
    }
    case WeightType::IQ4_XS: {
      float dl = 0.0f;
      int q = 0;
      iq4xs_value(b, i, dl, q);
      return dl * static_cast<float>(q);
    }
    case WeightType::Q4_K: {
      const float d = half_at(b), dmin = half_at(b + 2);
      const uint8_t* scales = b + 4;
      const uint8_t* qs = b + 16;
      const int j = i / 32;  // sub-block; pairs (2k, 2k+1) share the bytes qs[32k .. 32k+31]
      const uint8_t byte = qs[(i / 64) * 32 + i % 32];
      const int q = j % 2 == 0 ? (byte & 0xF) : (byte >> 4);
      int sc = 0, m = 0;
      q4k_scale_min(j, scales, sc, m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = dmin * static_cast<float>(m);
      const float scaled = d1 * static_cast<float>(q);
      return scaled - m1;
    }
    case WeightType::Q5_K: {
      int sc = 0, m = 0, q = 0;
      q5k_value(b, i, sc, m, q);
      const float d1 = half_at(b) * static_cast<float>(sc);
      const float m1 = half_at(b + 2) * static_cast<float>(m);
      const float scaled = d1 * static_cast<float>(q);
      return scaled - m1;
    }
    case WeightType::Q6_K: {
      float ds = 0.0f;
      int q = 0;
      q6k_value(b, i, ds, q);
      return ds * static_cast<float>(q);
    }
    case WeightType::Q3_K: {
      float ds = 0.0f;
      int q = 0;
      q3k_value(b, i, ds, q);
      return ds * static_cast<float>(q);
    }
    case WeightType::Q2_K: {
      float dl = 0.0f, ml = 0.0f;
      int q = 0;
      q2k_value(b, i, dl, ml, q);
      const float scaled = dl * static_cast<float>(q);
      return scaled - ml;
    }
    default:
      return 0.0f;
  }
}

}  // namespace

namespace {

// The stored integer of (r, c) of an MLX matrix: bits c · bits .. of its row, LSB first (a value may
// straddle two words: 3, 5 and 6 bits).
uint32_t mlx_value(const WeightMatrix& w, int64_t r, int64_t c) {
  const uint32_t* row = w.packed + r * w.packed_row_words();
  const int64_t bit = c * w.bits;
  const int64_t word = bit / 32;
  const int shift = static_cast<int>(bit % 32);
  uint64_t v = row[word] >> shift;
  if (shift + w.bits > 32) v |= static_cast<uint64_t>(row[word + 1]) << (32 - shift);
  return static_cast<uint32_t>(v) & ((1u << w.bits) - 1u);
}

}  // namespace

float weight_at(const WeightMatrix& w, int64_t r, int64_t c) {
  switch (w.type) {
    case WeightType::F32:
      return w.f32[r * w.cols + c];
    case WeightType::BF16:
      return bf16_to_f32(w.bf16[r * w.cols + c]);
    case WeightType::MlxAffine: {
      const uint32_t q = mlx_value(w, r, c);
      const int64_t g = r * w.groups_per_row() + c / w.group_size;
      const float scaled = w.scales[g] * static_cast<float>(q);
      return scaled + w.biases[g];
    }
    case WeightType::F16:
    case WeightType::Q8_0:
    case WeightType::Q4_0:
    case WeightType::Q4_1:
    case WeightType::Q5_0:
    case WeightType::Q5_1:
    case WeightType::Q2_K:
    case WeightType::Q3_K:
    case WeightType::Q4_K:
    case WeightType::Q5_K:
    case WeightType::Q6_K:
    case WeightType::IQ4_NL:
    case WeightType::IQ4_XS:
      return ggml_weight_at(w, r, c);
  }
  return 0.0f;
}

void dequantize_row(const WeightMatrix& w, int64_t r, float* out) {
  for (int64_t c = 0; c < w.cols; ++c) out[c] = weight_at(w, r, c);
}

void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y) {
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < w.rows; ++r) {
      double acc = 0.0;
      for (int64_t c = 0; c < w.cols; ++c)
        acc += static_cast<double>(weight_at(w, r, c)) * static_cast<double>(x[t * w.cols + c]);
      y[t * w.rows + r] = static_cast<float>(acc);
    }
  }
}

namespace {

// v rounded to 11 significant bits: frexp's mantissa in [0.5, 1) times 2^11 is the significand, rounded to
// nearest even.
double round_to_11_bits(float v) {
  int e = 0;
  const double m = std::frexp(static_cast<double>(v), &e);
  return std::ldexp(std::nearbyint(std::ldexp(m, 11)), e - 11);
}

}  // namespace

void quantize_block(const float* x, int8_t* q, float& d) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int i = 0; i < 32; ++i) q[i] = static_cast<int8_t>(std::nearbyint(x[i] * inv));
  d = static_cast<float>(round_to_11_bits(amax / 127.0f));  // half precision, float's range
}

void quantize_super_block(const float* x, int8_t* q, float& d) {
  float amax = 0.0f;
  for (int i = 0; i < 256; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int i = 0; i < 256; ++i) q[i] = static_cast<int8_t>(std::nearbyint(x[i] * inv));
  d = amax != 0.0f ? 1.0f / inv : 0.0f;
}

double q8_1_block_sum(const float* x, int32_t qsum) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  return round_to_11_bits(amax / 127.0f * static_cast<float>(qsum));  // the product in fp32, as ggml
}

bool super_block_activations(const WeightMatrix& w) {
  return w.type == WeightType::Q2_K || w.type == WeightType::Q3_K || w.type == WeightType::Q4_K ||
         w.type == WeightType::Q5_K || w.type == WeightType::Q6_K || w.type == WeightType::IQ4_XS;
}

void int8_parts(const WeightMatrix& w, int64_t r, int64_t c, double& scaled, double& min) {
  min = 0.0;
  switch (w.type) {
    case WeightType::Q8_0:
    case WeightType::Q4_0:
    case WeightType::Q5_0:
    case WeightType::IQ4_NL:
      scaled = weight_at(w, r, c);  // d · q, exact in fp32
      return;
    case WeightType::Q4_1:
    case WeightType::Q5_1: {
      const uint8_t* b = w.blocks + r * w.row_bytes() + (c / 32) * block_bytes(w.type);
      scaled = static_cast<double>(half_at(b)) * legacy_value(w.type, b, static_cast<int>(c % 32));
      min = half_at(b + 2);
      return;
    }
    case WeightType::IQ4_XS: {  // the kernels scale each half's integer sums by dl: exact here
      float dl = 0.0f;
      int q = 0;
      iq4xs_value(w.blocks + r * w.row_bytes() + (c / 256) * 136, static_cast<int>(c % 256), dl, q);
      scaled = static_cast<double>(dl) * q;
      return;
    }
    case WeightType::Q4_K: {
      const uint8_t* sb = w.blocks + r * w.row_bytes() + (c / 256) * 144;
      const int i = static_cast<int>(c % 256), j = i / 32;
      int sc = 0, m = 0;
      q4k_scale_min(j, sb + 4, sc, m);
      const uint8_t byte = sb[16 + (i / 64) * 32 + i % 32];
      const int q = j % 2 == 0 ? (byte & 0xF) : (byte >> 4);
      scaled = static_cast<double>(half_at(sb) * static_cast<float>(sc)) * q;
      min = -static_cast<double>(half_at(sb + 2) * static_cast<float>(m));
      return;
    }
    case WeightType::Q5_K: {
      const uint8_t* sb = w.blocks + r * w.row_bytes() + (c / 256) * 176;
      int sc = 0, m = 0, q = 0;
      q5k_value(sb, static_cast<int>(c % 256), sc, m, q);
      scaled = static_cast<double>(half_at(sb) * static_cast<float>(sc)) * q;
      min = -static_cast<double>(half_at(sb + 2) * static_cast<float>(m));
      return;
    }
    case WeightType::Q6_K: {
      // The kernels scale the integer sums of each 16-column half by ds: the product stays exact here
      // (weight_at rounds ds · q to fp32).
      float ds = 0.0f;
      int q = 0;
      q6k_value(w.blocks + r * w.row_bytes() + (c / 256) * 210, static_cast<int>(c % 256), ds, q);
      scaled = static_cast<double>(ds) * q;
      return;
    }
    case WeightType::Q3_K: {  // as Q6_K
      float ds = 0.0f;
      int q = 0;
      q3k_value(w.blocks + r * w.row_bytes() + (c / 256) * 110, static_cast<int>(c % 256), ds, q);
      scaled = static_cast<double>(ds) * q;
      return;
    }
    case WeightType::Q2_K: {  // each half's d · sc times q, and its min −dmin · m
      float dl = 0.0f, ml = 0.0f;
      int q = 0;
      q2k_value(w.blocks + r * w.row_bytes() + (c / 256) * 84, static_cast<int>(c % 256), dl, ml, q);
      scaled = static_cast<double>(dl) * q;
      min = -static_cast<double>(ml);
      return;
    }
    case WeightType::MlxAffine: {
      const int64_t g = r * w.groups_per_row() + c / w.group_size;
      // weight_at = fp32(fp32(s · q) + b); recover q from the stream instead.
      const uint32_t q = mlx_value(w, r, c);
      scaled = static_cast<double>(w.scales[g]) * q;
      min = w.biases[g];
      return;
    }
    default:
      scaled = weight_at(w, r, c);
      return;
  }
}

void matmul_int8(const WeightMatrix& w, const float* x, int64_t n, float* y) {
  // K-quant weights: one scale per 256-column super-block, and the mins multiply the quantized activations.
  const bool super = super_block_activations(w);
  const bool q8_1 = w.type == WeightType::Q4_1 || w.type == WeightType::Q5_1;
  const int64_t block = super ? 256 : 32;
  std::vector<int8_t> q(static_cast<std::size_t>(block));
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < w.rows; ++r) {
      double acc = 0.0;
      for (int64_t b = 0; b < w.cols / block; ++b) {
        const float* xb = x + t * w.cols + b * block;
        float d = 0.0f;
        (super ? quantize_super_block : quantize_block)(xb, q.data(), d);
        double min = 0.0;
        int32_t qsum = 0;
        for (int64_t i = 0; i < block; ++i) {
          double scaled = 0.0;
          int8_parts(w, r, b * block + i, scaled, min);
          const double xq = static_cast<double>(d) * q[static_cast<std::size_t>(i)];
          qsum += q[static_cast<std::size_t>(i)];
          if (q8_1) {
            acc += scaled * xq;
          } else {
            acc += scaled * xq + min * (super ? xq : static_cast<double>(xb[i]));
          }
        }
        if (q8_1) acc += min * q8_1_block_sum(xb, qsum);
      }
      y[t * w.rows + r] = static_cast<float>(acc);
    }
  }
}

void matmul_bf16(const WeightMatrix& w, const float* x, int64_t n, float* y) {
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < w.rows; ++r) {
      double acc = 0.0;
      for (int64_t c = 0; c < w.cols; ++c)
        acc += static_cast<double>(weight_at(w, r, c)) * bf16_to_f32(f32_to_bf16(x[t * w.cols + c]));
      y[t * w.rows + r] = static_cast<float>(acc);
    }
  }
}

void matmul_fma(const WeightMatrix& w, const float* x, int64_t n, float* y) {
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < w.rows; ++r) {
      float acc = 0.0f;
      for (int64_t c = 0; c < w.cols; ++c) acc = std::fma(weight_at(w, r, c), x[t * w.cols + c], acc);
      y[t * w.rows + r] = acc;
    }
  }
}

void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda, const float* B,
              int64_t ldb, float* C, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) acc += static_cast<double>(A[i * lda + p]) * B[p * ldb + j];
      C[i * ldc + j] = static_cast<float>(C[i * ldc + j] + alpha * acc);
    }
}

float dot(const float* a, const float* b, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return static_cast<float>(acc);
}

void axpy(int64_t n, float a, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>(static_cast<double>(y[i]) + static_cast<double>(a) * x[i]);
}

void scale(int64_t n, float a, float* x) {
  for (int64_t i = 0; i < n; ++i) x[i] *= a;
}

void silu_mul(int64_t n, const float* x, const float* m, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    const double s = v / (1.0 + std::exp(-v));
    y[i] = static_cast<float>(m == nullptr ? s : s * m[i]);
  }
}

void conv_silu(int64_t n, int64_t taps, const float* w, const float* const* x, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < taps; ++j) {
      const float p = w[j * n + i] * x[j][i];
      sum += p;
    }
    silu_mul(1, &sum, nullptr, y + i);
  }
}

void softmax(int64_t n, float scale, float* x) {
  double max = -INFINITY;
  for (int64_t i = 0; i < n; ++i) max = std::max(max, static_cast<double>(scale) * x[i]);
  double sum = 0.0;
  std::vector<double> e(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) sum += e[static_cast<std::size_t>(i)] = std::exp(static_cast<double>(scale) * x[i] - max);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(e[static_cast<std::size_t>(i)] / sum);
}

double sum_squares(const float* x, int64_t n) {
  long double acc = 0.0L;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<long double>(x[i]) * x[i];
  return static_cast<double>(acc);
}

}  // namespace verdict::kernels::ref
