// The portable scalar kernels: the fallback when neither AVX2 nor AVX-512 is available.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/kernel_table.h"

namespace verdict::kernels::cpu {
namespace {

// Row r of W as fp32: a pointer into the weights (F32) or into `scratch`.
const float* row_f32(const WeightMatrix& w, int64_t r, float* scratch) {
  switch (w.type) {
    case WeightType::F32:
      return w.f32 + r * w.cols;
    case WeightType::BF16: {
      const uint16_t* src = w.bf16 + r * w.cols;
      for (int64_t c = 0; c < w.cols; ++c) scratch[c] = bf16_to_f32(src[c]);
      return scratch;
    }
    case WeightType::MlxAffine:
      mlx_dequantize_row_generic(w, r, scratch);
      return scratch;
    default:
      ggml_dequantize_row_generic(w, r, scratch);
      return scratch;
  }
}

float dot_generic(const float* a, const float* b, int64_t n) {
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

void matmul_tile_generic(const WeightMatrix& w, const float* x, int64_t t0, int64_t t1, int64_t r0,
                         int64_t r1, float* y, float* scratch) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* wr = row_f32(w, r, scratch);
    for (int64_t t = t0; t < t1; ++t) y[t * w.rows + r] = dot_generic(wr, x + t * w.cols, w.cols);
  }
}

void dequantize_row_generic(const WeightMatrix& w, int64_t r, float* out) {
  switch (w.type) {
    case WeightType::F32:
      std::memcpy(out, w.f32 + r * w.cols, static_cast<std::size_t>(w.cols) * sizeof(float));
      return;
    case WeightType::BF16:
      for (int64_t c = 0; c < w.cols; ++c) out[c] = bf16_to_f32(w.bf16[r * w.cols + c]);
      return;
    case WeightType::MlxAffine:
      mlx_dequantize_row_generic(w, r, out);
      return;
    default:
      ggml_dequantize_row_generic(w, r, out);
      return;
  }
}

void axpy_generic(int64_t n, float a, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void exp_shifted_generic(int64_t n, float shift, float* x) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i] - shift);
}

void gemm_f32_generic(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda, const float* B,
                      int64_t ldb, float* C, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = C[i * ldc + j];
      for (int64_t p = 0; p < k; ++p) acc = std::fma(alpha * A[i * lda + p], B[p * ldb + j], acc);
      C[i * ldc + j] = acc;
    }
}

void scale_to_generic(int64_t n, float a, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i];
}

void scale_generic(int64_t n, float a, float* x) { scale_to_generic(n, a, x, x); }

void transpose_scaled_generic(int64_t rows, int64_t cols, const float* x, int64_t ldx, const float* f, float* y,
                              int64_t ldy) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[c * ldy + r] = f != nullptr ? f[r] * x[r * ldx + c] : x[r * ldx + c];
}

void silu_mul_generic(int64_t n, const float* x, const float* m, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float s = x[i] / (1.0f + std::exp(-x[i]));
    y[i] = m == nullptr ? s : s * m[i];
  }
}

void conv_silu_generic(int64_t n, int64_t taps, const float* w, const float* const* x, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < taps; ++j) {
      const float p = w[j * n + i] * x[j][i];  // rounded: no contraction into an fma
      sum += p;
    }
    silu_mul_generic(1, &sum, nullptr, y + i);
  }
}

void softmax_generic(int64_t n, float scale, float* x) {
  float max = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    x[i] *= scale;
    max = std::max(max, x[i]);
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i] = std::exp(x[i] - max);
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

double sum_squares_generic(const float* x, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(x[i]) * x[i];
  return acc;
}

float load_half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return f16_to_f32(h);
}

// ggml's dequantize_row_q4_K, one super-block: 4 chunks of 64 values, each two sub-blocks sharing
// 32 bytes (low nibbles first); scales and mins from get_scale_min_k4.
// Q5_K (qh ≠ nullptr: its 32 bytes of fifth bits, sub-block j's in bit j; the nibbles follow them) is
// ggml's dequantize_row_q5_K: the same steps with q + 16 · bit.
void dequantize_q4k_block(const uint8_t* b, float* y, const uint8_t* qh = nullptr) {
  const float d = load_half(b), dmin = load_half(b + 2);
  const uint8_t* s = b + 4;
  const uint8_t* q = qh != nullptr ? b + 48 : b + 16;
  for (int chunk = 0; chunk < 4; ++chunk) {
    float dl[2], ml[2];
    for (int h = 0; h < 2; ++h) {
      int sc = 0, m = 0;
      k_quant_scale_min(2 * chunk + h, s, sc, m);
      dl[h] = d * static_cast<float>(sc);
      ml[h] = dmin * static_cast<float>(m);
    }
    for (int l = 0; l < 32; ++l) {
      const int fifth_lo = qh != nullptr ? ((qh[l] >> (2 * chunk)) & 1) << 4 : 0;
      const int fifth_hi = qh != nullptr ? ((qh[l] >> (2 * chunk + 1)) & 1) << 4 : 0;
      const float lo = dl[0] * static_cast<float>((q[l] & 0xF) | fifth_lo);
      const float hi = dl[1] * static_cast<float>((q[l] >> 4) | fifth_hi);
      y[l] = lo - ml[0];
      y[32 + l] = hi - ml[1];
    }
    q += 32;
    y += 64;
  }
}

// ggml's dequantize_row_q6_K, one super-block: two halves of 128 values.
void dequantize_q6k_block(const uint8_t* b, float* y) {
  const float d = load_half(b + 208);
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  for (int half = 0; half < 2; ++half) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = (d * static_cast<float>(sc[is])) * static_cast<float>(q1);
      y[l + 32] = (d * static_cast<float>(sc[is + 2])) * static_cast<float>(q2);
      y[l + 64] = (d * static_cast<float>(sc[is + 4])) * static_cast<float>(q3);
      y[l + 96] = (d * static_cast<float>(sc[is + 6])) * static_cast<float>(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

// ggml's dequantize_row_q3_K, one super-block: dl = d · (sc − 32), then dl · (q − 4).
void dequantize_q3k_block(const uint8_t* b, float* y) {
  const float d = load_half(b + 108);
  for (int i = 0; i < 16; ++i) {
    const float dl = d * static_cast<float>(q3k_scale(b, i));
    for (int l = 0; l < 16; ++l) y[16 * i + l] = dl * static_cast<float>(q3k_value(b, 16 * i + l) - 4);
  }
}

// ggml's dequantize_row_q2_K, one super-block: dl = d · sc and ml = dmin · m, then dl · q − ml.
void dequantize_q2k_block(const uint8_t* b, float* y) {
  const float d = load_half(b + 80), dmin = load_half(b + 82);
  for (int i = 0; i < 16; ++i) {
    const float dl = d * static_cast<float>(q2k_scale(b, i)), ml = dmin * static_cast<float>(q2k_min(b, i));
    for (int l = 0; l < 16; ++l) y[16 * i + l] = dl * static_cast<float>(q2k_value(b, 16 * i + l)) - ml;
  }
}

// ggml's dequantize_row_iq4_xs for one super-block: sub-block j's scale dl = d · (ls − 32), then dl · value.
void dequantize_iq4xs_block(const uint8_t* b, float* y) {
  const float d = load_half(b);
  for (int j = 0; j < 8; ++j) {
    const float dl = d * static_cast<float>(iq4xs_scale(b, j) - 32);
    const uint8_t* qs = b + 8 + 16 * j;
    for (int l = 0; l < 16; ++l) {
      y[32 * j + l] = dl * static_cast<float>(kIq4Values[qs[l] & 0xF]);
      y[32 * j + l + 16] = dl * static_cast<float>(kIq4Values[qs[l] >> 4]);
    }
  }
}

}  // namespace

void ggml_dequantize_row_generic(const WeightMatrix& w, int64_t r, float* out) {
  const uint8_t* row = w.blocks + r * w.row_bytes();
  const int64_t nb = w.cols / block_values(w.type);
  switch (w.type) {
    case WeightType::F16:
      for (int64_t c = 0; c < w.cols; ++c) out[c] = load_half(row + 2 * c);
      return;
    case WeightType::Q8_0:
      for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* b = row + i * 34;
        const float d = load_half(b);
        for (int j = 0; j < 32; ++j) out[i * 32 + j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
      }
      return;
    case WeightType::Q4_0:
      for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* b = row + i * 18;
        const float d = load_half(b);
        for (int j = 0; j < 16; ++j) {
          out[i * 32 + j] = static_cast<float>((b[2 + j] & 0xF) - 8) * d;
          out[i * 32 + j + 16] = static_cast<float>((b[2 + j] >> 4) - 8) * d;
        }
      }
      return;
    case WeightType::Q4_1:
    case WeightType::Q5_0:
    case WeightType::Q5_1: {  // as ggml: (q − 16) · d for Q5_0, q · d + m (multiply, then add) for the others
      for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* b = row + i * block_bytes(w.type);
        const float d = load_half(b), m = w.type != WeightType::Q5_0 ? load_half(b + 2) : 0.0f;
        for (int j = 0; j < 32; ++j) {
          const int q = legacy_value(w.type, b, j);
          out[i * 32 + j] = w.type == WeightType::Q5_0 ? static_cast<float>(q - 16) * d : static_cast<float>(q) * d + m;
        }
      }
      return;
    }
    case WeightType::IQ4_NL:
      for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* b = row + i * 18;
        const float d = load_half(b);
        for (int j = 0; j < 16; ++j) {
          out[i * 32 + j] = d * static_cast<float>(kIq4Values[b[2 + j] & 0xF]);
          out[i * 32 + j + 16] = d * static_cast<float>(kIq4Values[b[2 + j] >> 4]);
        }
      }
      return;
    case WeightType::IQ4_XS:
      for (int64_t i = 0; i < nb; ++i) dequantize_iq4xs_block(row + i * 136, out + i * 256);
      return;
    case WeightType::Q2_K:
      for (int64_t i = 0; i < nb; ++i) dequantize_q2k_block(row + i * 84, out + i * 256);
      return;
    case WeightType::Q3_K:
      for (int64_t i = 0; i < nb; ++i) dequantize_q3k_block(row + i * 110, out + i * 256);
      return;
    case WeightType::Q4_K:
      for (int64_t i = 0; i < nb; ++i) dequantize_q4k_block(row + i * 144, out + i * 256);
      return;
    case WeightType::Q5_K:
      for (int64_t i = 0; i < nb; ++i) dequantize_q4k_block(row + i * 176, out + i * 256, row + i * 176 + 16);
      return;
    case WeightType::Q6_K:
      for (int64_t i = 0; i < nb; ++i) dequantize_q6k_block(row + i * 210, out + i * 256);
      return;
    default:
      return;
  }
}

void mlx_dequantize_row_generic(const WeightMatrix& w, int64_t r, float* out) {
  const uint32_t* row = w.packed + r * w.packed_row_words();
  const float* scales = w.scales + r * w.groups_per_row();
  const float* biases = w.biases + r * w.groups_per_row();
  for (int64_t c = 0; c < w.cols; ++c) {
    const int64_t g = c / w.group_size;
    const float scaled = scales[g] * static_cast<float>(mlx_value(row, c, w.bits));
    out[c] = scaled + biases[g];
  }
}

void quantize_rows_generic(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                           int32_t* qsum, float* xsum) {
  const int64_t blocks = cols / kQBlock;
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t b = 0; b < blocks; ++b) {
      const float* src = x + t * cols + b * kQBlock;
      float amax = 0.0f;
      for (int64_t i = 0; i < kQBlock; ++i) amax = std::fmax(amax, std::fabs(src[i]));
      const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
      int32_t s = 0;
      float sx = 0.0f;
      for (int64_t i = 0; i < kQBlock; ++i) {
        const auto v = static_cast<int32_t>(std::nearbyint(src[i] * inv));
        q[t * cols + b * kQBlock + i] = static_cast<int8_t>(v);
        s += v;
        sx += src[i];
      }
      d[t * blocks + b] = int8_block_scale(amax);
      qsum[t * blocks + b] = s;
      xsum[t * blocks + b] = sx;
    }
  }
}

void quantize_rows_super_generic(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                                 int32_t* qsum, float* xsum, int32_t* qsum16) {
  const int64_t blocks = cols / kQBlock;
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t sb = 0; sb < cols / kSuperCols; ++sb) {
      const float* src = x + t * cols + sb * kSuperCols;
      float amax = 0.0f;
      for (int64_t i = 0; i < kSuperCols; ++i) amax = std::fmax(amax, std::fabs(src[i]));
      const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
      const float scale = amax != 0.0f ? 1.0f / inv : 0.0f;
      for (int64_t b = sb * kSuperBlocks; b < (sb + 1) * kSuperBlocks; ++b) {
        int32_t half[2] = {0, 0};
        for (int64_t i = 0; i < kQBlock; ++i) {
          const auto v = static_cast<int32_t>(std::nearbyint(x[t * cols + b * kQBlock + i] * inv));
          q[t * cols + b * kQBlock + i] = static_cast<int8_t>(v);
          half[i / (kQBlock / 2)] += v;
        }
        const int32_t s = half[0] + half[1];
        if (qsum16 != nullptr) {
          qsum16[2 * (t * blocks + b)] = half[0];
          qsum16[2 * (t * blocks + b) + 1] = half[1];
        }
        d[t * blocks + b] = scale;
        qsum[t * blocks + b] = s;
        xsum[t * blocks + b] = scale * static_cast<float>(s);
      }
    }
  }
}

void int8_tile_generic(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0,
                       int64_t p1, float* y, uint8_t* /*scratch: the portable tile reads the records as they are*/) {
  const int64_t weight_bytes = int8_weight_bytes(w.bits);
  const bool super = integer_super_sums(w);
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t rows = std::min<int64_t>(kPackRows, w.rows - p * kPackRows);
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t i = 0; i < rows; ++i) {
        float acc = 0.0f;
        int32_t isum = 0, msum = 0;  // sub16 (Q2_K, Q3_K, Q6_K): the super-block's integer sums I, M (kernel_table.h)
        for (int64_t b = 0; b < w.blocks; ++b) {
          const uint8_t* rec = w.data + (p * w.blocks + b) * w.block_stride;
          const int8_t* xq = a.q + t * a.cols + b * kQBlock;
          // sub16: dot sums columns 0–15 and dot2 columns 16–31, each with its own scale.
          int32_t dot = w.sub16 ? -w.offset * a.qsum16[2 * (t * a.blocks + b)] : -w.offset * a.qsum[t * a.blocks + b];
          int32_t dot2 = w.sub16 ? -w.offset * a.qsum16[2 * (t * a.blocks + b) + 1] : 0;
          for (int64_t c = 0; c < kQBlock; ++c) {
            const int64_t chunk = c / 4, lane = 4 * i + c % 4;
            int32_t qw;
            if (w.bits == 8) {
              qw = rec[64 * chunk + lane];
            } else if (w.bits == 2) {
              qw = (rec[64 * two_bit_vector(chunk) + lane] >> two_bit_shift(chunk)) & 3;
            } else {
              const uint8_t byte = rec[64 * (chunk % 4) + lane];
              qw = chunk < 4 ? (byte & 0xF) : (byte >> 4);
              if (w.bits == 6) qw |= ((rec[256 + 64 * high_bits_vector(chunk) + lane] >> high_bits_shift(chunk)) & 3) << 4;
              if (w.bits == 5) qw |= ((rec[kFifthBits + lane] >> chunk) & 1) << 4;
              if (w.iq4) qw = kIq4Values[qw] + 128;
            }
            (w.sub16 && c >= 16 ? dot2 : dot) += qw * xq[c];
          }
          if (super) {
            const int64_t at = t * a.blocks + b;
            const int8_t* f = w.factors + (p * w.blocks + b) * kFactorBytes;
            isum += f[i] * dot + f[kPackRows + i] * dot2;
            if (w.mins16 != nullptr) {
              const int8_t* m = w.mins16 + (p * w.blocks + b) * kMinBytes;
              msum += m[i] * a.qsum16[2 * at] + m[kPackRows + i] * a.qsum16[2 * at + 1];
            }
            if (b % kSuperBlocks == kSuperBlocks - 1) {
              const int64_t super_at = p * (w.blocks / kSuperBlocks) + b / kSuperBlocks;
              const float d = w.super_scales[super_at * kSuperFloats + i];
              acc = std::fma(static_cast<float>(isum), d * a.d[at], acc);
              if (w.mins16 != nullptr)
                acc = std::fma(static_cast<float>(msum), w.min_scales[super_at * kMinFloats + i] * a.d[at], acc);
              isum = msum = 0;
            }
            continue;
          }
          float scale, mn = 0.0f;  // mn: the min
          if (w.half_scales != nullptr) {  // fp16 scales beside the records (Q8_0, Q4_0, Q5_0, IQ4_NL)
            scale = f16_to_f32(w.half_scales[(p * w.blocks + b) * kPackRows + i]);
          } else if (w.factors != nullptr) {  // Q4_K, Q5_K, IQ4_XS: d · first, d2 · second (exact)
            const int8_t* f = w.factors + (p * w.blocks + b) * kFactorBytes;
            const float* s = w.super_scales + (p * (w.blocks / kSuperBlocks) + b / kSuperBlocks) * kSuperFloats;
            scale = s[i] * static_cast<float>(f[i]);
            mn = s[kPackRows + i] * static_cast<float>(f[kPackRows + i]);
          } else {  // MLX: fp32 scale and min in the record
            std::memcpy(&scale, rec + weight_bytes + 4 * i, sizeof scale);
            std::memcpy(&mn, rec + weight_bytes + 64 + 4 * i, sizeof mn);
          }
          const float part = static_cast<float>(dot) * a.d[t * a.blocks + b];
          acc += part * scale;
          if (w.has_mins) acc += mn * a.xsum[t * a.blocks + b];
        }
        y[t * w.rows + p * kPackRows + i] = acc;
      }
    }
  }
}

void bf16_rows_generic(const float* x, int64_t t0, int64_t t1, int64_t cols, int64_t cols_padded, uint16_t* out) {
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t c = 0; c < cols; ++c) out[t * cols_padded + c] = f32_to_bf16(x[t * cols + c]);
    for (int64_t c = cols; c < cols_padded; ++c) out[t * cols_padded + c] = 0;
  }
}

void bf16_tile_generic(const PackedView& w, const uint16_t* xb, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                       float* y) {
  const int64_t chunks = w.cols_padded / 2;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t rows = std::min<int64_t>(kPackRows, w.rows - p * kPackRows);
    const uint8_t* panel = w.data + p * chunks * 64;
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t i = 0; i < rows; ++i) {
        float acc = 0.0f;
        for (int64_t k = 0; k < chunks; ++k) {
          for (int64_t h = 0; h < 2; ++h) {
            uint16_t wv;
            std::memcpy(&wv, panel + 64 * k + 4 * i + 2 * h, sizeof wv);
            acc += bf16_to_f32(wv) * bf16_to_f32(xb[t * w.cols_padded + 2 * k + h]);
          }
        }
        y[t * w.rows + p * kPackRows + i] = acc;
      }
    }
  }
}

void fma16_tile_generic(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                        float* y) {
  for (int64_t p = p0; p < p1; ++p) {
    const bool bf16 = w.kind == PackKind::Bf16Fma;
    const int64_t rows = std::min<int64_t>(kFmaPanelRows, w.rows - p * kFmaPanelRows);
    const uint8_t* panel = w.data + p * w.cols * 2 * kFmaPanelRows;
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t i = 0; i < rows; ++i) {
        float acc = 0.0f;
        for (int64_t c = 0; c < w.cols; ++c) {
          uint16_t h;
          std::memcpy(&h, panel + (c * kFmaPanelRows + i) * 2, sizeof h);
          acc = std::fma(bf16 ? bf16_to_f32(h) : f16_to_f32(h), x[t * w.cols + c], acc);
        }
        y[t * w.rows + p * kFmaPanelRows + i] = acc;
      }
    }
  }
}

// The definition itself: the scalar scale and axpy in ops.h's sequence.
void delta_rule_token_generic(int64_t dk, int64_t dv, float decay, float beta, const float* q, const float* k,
                              const float* v, float* S, float* o) {
  thread_local std::vector<float> scratch;
  if (static_cast<int64_t>(scratch.size()) < dv) scratch.resize(static_cast<std::size_t>(dv));
  float* u = scratch.data();
  std::fill_n(u, dv, 0.0f);
  for (int64_t i = 0; i < dk; ++i) {
    scale_generic(dv, decay, S + i * dv);
    axpy_generic(dv, k[i], S + i * dv, u);
  }
  for (int64_t e = 0; e < dv; ++e) u[e] = beta * (v[e] - u[e]);
  std::fill_n(o, dv, 0.0f);
  for (int64_t i = 0; i < dk; ++i) {
    axpy_generic(dv, k[i], u, S + i * dv);
    axpy_generic(dv, q[i], S + i * dv, o);
  }
}

const KernelTable& generic_table() {
  static const KernelTable table{matmul_tile_generic, dequantize_row_generic, dot_generic,
                                 axpy_generic,        scale_generic,          exp_shifted_generic,
                                 scale_to_generic, transpose_scaled_generic,
                                 gemm_f32_generic,
                                 quantize_rows_generic, quantize_rows_super_generic,
                                 int8_tile_generic,   bf16_rows_generic,      bf16_tile_generic,
                                 fma16_tile_generic,  silu_mul_generic,       sum_squares_generic,
                                 softmax_generic,     conv_silu_generic,      delta_rule_token_generic};
  return table;
}

}  // namespace verdict::kernels::cpu
