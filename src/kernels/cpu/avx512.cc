// AVX-512 kernels (compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma).
// Only ops.h, kernel_table.h and intrinsics here: see kernel_table.h.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/kernel_table.h"

namespace verdict::kernels::cpu {
namespace {

constexpr int64_t kLanes = 16;

inline __mmask16 tail_mask(int64_t remaining) {
  return static_cast<__mmask16>((1u << remaining) - 1u);
}

inline __m512 bf16x16(__m256i bits) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

struct F32Panel {
  const float* row[kPanelRows];
  __m512 load(int r, int64_t c) const { return _mm512_loadu_ps(row[r] + c); }
  void prefetch(int r, int64_t c) const { _mm_prefetch(reinterpret_cast<const char*>(row[r] + c) + 1024, _MM_HINT_T0); }
  __m512 tail(int r, int64_t c, __mmask16 m) const { return _mm512_maskz_loadu_ps(m, row[r] + c); }
};

struct Bf16Panel {
  const uint16_t* row[kPanelRows];
  __m512 load(int r, int64_t c) const {
    return bf16x16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[r] + c)));
  }
  void prefetch(int r, int64_t c) const { _mm_prefetch(reinterpret_cast<const char*>(row[r] + c) + 1024, _MM_HINT_T0); }
  __m512 tail(int r, int64_t c, __mmask16 m) const {
    return bf16x16(_mm256_maskz_loadu_epi16(m, row[r] + c));
  }
};

// RB weight rows × TB tokens. Each (row, token) dot product runs the same sequence of lane-wise
// FMAs and the same final reduction whatever RB and TB are: results never depend on the blocking.
template <int RB, int TB, typename Panel>
inline void tile(const Panel& p, const float* x, int64_t cols, float* y, int64_t y_stride) {
  __m512 acc[RB][TB];
#pragma GCC unroll 4
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) acc[r][t] = _mm512_setzero_ps();
  int64_t c = 0;
  for (; c + kLanes <= cols; c += kLanes) {
    __m512 wv[RB];
#pragma GCC unroll 4
    for (int r = 0; r < RB; ++r) wv[r] = p.load(r, c);
    // The weights 1 KiB ahead: a product of a few tokens streams them from memory (the decision head's
    // products of 1–12 rows: 64 → 46 ms per head on an AMX Xeon with the tails below, bench/head_bench.cc).
#pragma GCC unroll 4
    for (int r = 0; r < RB; ++r) p.prefetch(r, c);
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) {
      const __m512 xv = _mm512_loadu_ps(x + t * cols + c);
#pragma GCC unroll 4
      for (int r = 0; r < RB; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
  if (c < cols) {
    const __mmask16 m = tail_mask(cols - c);
    __m512 wv[RB];
#pragma GCC unroll 4
    for (int r = 0; r < RB; ++r) wv[r] = p.tail(r, c, m);
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + t * cols + c);
#pragma GCC unroll 4
      for (int r = 0; r < RB; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) y[t * y_stride + r] = _mm512_reduce_add_ps(acc[r][t]);
}

template <int RB, typename Panel>
inline void all_tokens(const Panel& p, const WeightMatrix& w, const float* x, int64_t t0,
                       int64_t t1, int64_t r, float* y) {
  int64_t t = t0;
  for (; t + 4 <= t1; t += 4) tile<RB, 4>(p, x + t * w.cols, w.cols, y + t * w.rows + r, w.rows);
  // The last 1–3 tokens in one tile, so that the weights are loaded once for them (a few queries' products,
  // as the decision head's, are mostly such tails).
  if (t1 - t == 3) tile<RB, 3>(p, x + t * w.cols, w.cols, y + t * w.rows + r, w.rows);
  if (t1 - t == 2) tile<RB, 2>(p, x + t * w.cols, w.cols, y + t * w.rows + r, w.rows);
  if (t1 - t == 1) tile<RB, 1>(p, x + t * w.cols, w.cols, y + t * w.rows + r, w.rows);
}

void dequantize_mlx_row(const WeightMatrix& w, int64_t r, float* out) {
  if ((w.bits != 4 && w.bits != 8) || w.group_size % kLanes != 0) {
    mlx_dequantize_row_generic(w, r, out);
    return;
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(w.packed + r * w.packed_row_words());
  const float* scales = w.scales + r * w.groups_per_row();
  const float* biases = w.biases + r * w.groups_per_row();
  const __m512i nibble_shift = _mm512_set_epi32(4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0);
  const __m512i low4 = _mm512_set1_epi32(0xF);
  for (int64_t g = 0; g < w.groups_per_row(); ++g) {
    const __m512 s = _mm512_set1_ps(scales[g]);
    const __m512 b = _mm512_set1_ps(biases[g]);
    for (int64_t c = g * w.group_size; c < (g + 1) * w.group_size; c += kLanes) {
      __m512i q;
      if (w.bits == 8) {
        q = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + c)));
      } else {
        const __m128i packed = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + c / 2));
        q = _mm512_cvtepu8_epi32(_mm_unpacklo_epi8(packed, packed));
        q = _mm512_and_si512(_mm512_srlv_epi32(q, nibble_shift), low4);
      }
      // One fp32 multiply, then one fp32 add (no FMA): bit-exact with the reference.
      const __m512 scaled = _mm512_mul_ps(s, _mm512_cvtepi32_ps(q));
      _mm512_storeu_ps(out + c, _mm512_add_ps(scaled, b));
    }
  }
}

inline float half_scale(const uint8_t* p) {
  uint16_t h;
  __builtin_memcpy(&h, p, sizeof h);
  return _cvtsh_ss(h);
}

// F16, Q8_0 and Q4_0 rows with F16C / AVX-512 (bit-exact with ggml_dequantize_row_generic: exact
// conversions, then one fp32 multiply per value); the K-quants use the portable code.
void dequantize_ggml_row(const WeightMatrix& w, int64_t r, float* out) {
  const uint8_t* row = w.blocks + r * w.row_bytes();
  switch (w.type) {
    case WeightType::F16: {
      int64_t c = 0;
      for (; c + kLanes <= w.cols; c += kLanes)
        _mm512_storeu_ps(out + c, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * c))));
      if (c < w.cols) {
        const __mmask16 m = tail_mask(w.cols - c);
        _mm512_mask_storeu_ps(out + c, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * c)));
      }
      return;
    }
    case WeightType::Q8_0:
      for (int64_t b = 0; b < w.cols / 32; ++b) {
        const uint8_t* blk = row + b * 34;
        const __m512 d = _mm512_set1_ps(half_scale(blk));
        for (int h = 0; h < 2; ++h) {
          const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2 + 16 * h));
          _mm512_storeu_ps(out + 32 * b + 16 * h, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), d));
        }
      }
      return;
    case WeightType::Q4_0:
      for (int64_t b = 0; b < w.cols / 32; ++b) {
        const uint8_t* blk = row + b * 18;
        const __m512 d = _mm512_set1_ps(half_scale(blk));
        const __m512i q = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
        const __m512i eight = _mm512_set1_epi32(8);
        const __m512i lo = _mm512_sub_epi32(_mm512_and_si512(q, _mm512_set1_epi32(0xF)), eight);
        const __m512i hi = _mm512_sub_epi32(_mm512_srli_epi32(q, 4), eight);
        _mm512_storeu_ps(out + 32 * b, _mm512_mul_ps(_mm512_cvtepi32_ps(lo), d));
        _mm512_storeu_ps(out + 32 * b + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(hi), d));
      }
      return;
    default:
      ggml_dequantize_row_generic(w, r, out);
      return;
  }
}

void matmul_tile_avx512(const WeightMatrix& w, const float* x, int64_t t0, int64_t t1, int64_t r0,
                        int64_t r1, float* y, float* scratch) {
  int64_t r = r0;
  if (w.type == WeightType::BF16) {
    for (; r + kPanelRows <= r1; r += kPanelRows) {
      const Bf16Panel p{{w.bf16 + r * w.cols, w.bf16 + (r + 1) * w.cols, w.bf16 + (r + 2) * w.cols,
                         w.bf16 + (r + 3) * w.cols}};
      all_tokens<4>(p, w, x, t0, t1, r, y);
    }
    for (; r < r1; ++r) all_tokens<1>(Bf16Panel{{w.bf16 + r * w.cols}}, w, x, t0, t1, r, y);
    return;
  }
  // F32 rows are read in place; MLX rows are dequantized into the scratch panel first.
  auto row_ptr = [&](int64_t row, int slot) -> const float* {
    if (w.type == WeightType::F32) return w.f32 + row * w.cols;
    float* dst = scratch + slot * w.cols;
    if (w.type == WeightType::MlxAffine) {
      dequantize_mlx_row(w, row, dst);
    } else {
      dequantize_ggml_row(w, row, dst);
    }
    return dst;
  };
  for (; r + kPanelRows <= r1; r += kPanelRows) {
    const F32Panel p{{row_ptr(r, 0), row_ptr(r + 1, 1), row_ptr(r + 2, 2), row_ptr(r + 3, 3)}};
    all_tokens<4>(p, w, x, t0, t1, r, y);
  }
  for (; r < r1; ++r) all_tokens<1>(F32Panel{{row_ptr(r, 0)}}, w, x, t0, t1, r, y);
}

void dequantize_row_avx512(const WeightMatrix& w, int64_t r, float* out) {
  if (w.type == WeightType::MlxAffine) {
    dequantize_mlx_row(w, r, out);
    return;
  }
  if (is_ggml_type(w.type)) {
    dequantize_ggml_row(w, r, out);
    return;
  }
  int64_t c = 0;
  for (; c + kLanes <= w.cols; c += kLanes) {
    const __m512 v = w.type == WeightType::F32
                         ? _mm512_loadu_ps(w.f32 + r * w.cols + c)
                         : bf16x16(_mm256_loadu_si256(
                               reinterpret_cast<const __m256i*>(w.bf16 + r * w.cols + c)));
    _mm512_storeu_ps(out + c, v);
  }
  if (c < w.cols) {
    const __mmask16 m = tail_mask(w.cols - c);
    const __m512 v = w.type == WeightType::F32
                         ? _mm512_maskz_loadu_ps(m, w.f32 + r * w.cols + c)
                         : bf16x16(_mm256_maskz_loadu_epi16(m, w.bf16 + r * w.cols + c));
    _mm512_mask_storeu_ps(out + c, m, v);
  }
}

float dot_avx512(const float* a, const float* b, int64_t n) {
  __m512 acc0 = _mm512_setzero_ps();
  __m512 acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + kLanes), _mm512_loadu_ps(b + i + kLanes), acc1);
  }
  for (; i + kLanes <= n; i += kLanes)
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

void axpy_avx512(int64_t n, float a, const float* x, float* y) {
  const __m512 av = _mm512_set1_ps(a);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(av, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 v =
        _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i));
    _mm512_mask_storeu_ps(y + i, m, v);
  }
}

void scale_to_avx512(int64_t n, float a, const float* x, float* y) {
  const __m512 av = _mm512_set1_ps(a);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm512_storeu_ps(y + i, _mm512_mul_ps(av, _mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(av, _mm512_maskz_loadu_ps(m, x + i)));
  }
}

void scale_avx512(int64_t n, float a, float* x) { scale_to_avx512(n, a, x, x); }

// r[i] ← column i of the 16 × 16 block whose rows are r[0 … 15]: pairs of rows interleaved (unpack ps),
// then pairs of pairs (unpack pd): r[4g + k]'s 128-bit lane L then holds rows 4g … 4g + 3 of column 4L + k;
// two rounds of 128-bit lane shuffles gather each column's four lanes.
inline void transpose16(__m512 (&r)[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  const auto lo = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  const auto hi = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    r[i] = lo(t[i], t[i + 2]);
    r[i + 1] = hi(t[i], t[i + 2]);
    r[i + 2] = lo(t[i + 1], t[i + 3]);
    r[i + 3] = hi(t[i + 1], t[i + 3]);
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512 e = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88), f = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xDD);
    const __m512 g = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
    const __m512 h = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xDD);
    t[k] = _mm512_shuffle_f32x4(e, g, 0x88);
    t[8 + k] = _mm512_shuffle_f32x4(e, g, 0xDD);
    t[4 + k] = _mm512_shuffle_f32x4(f, h, 0x88);
    t[12 + k] = _mm512_shuffle_f32x4(f, h, 0xDD);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// Blocks of 16 × 16: the rows loaded (masked past cols, zero past rows) and scaled, transposed in registers,
// stored masked past rows.
void transpose_scaled_avx512(int64_t rows, int64_t cols, const float* x, int64_t ldx, const float* f, float* y,
                             int64_t ldy) {
  for (int64_t r0 = 0; r0 < rows; r0 += kLanes) {
    const int64_t nr = std::min<int64_t>(kLanes, rows - r0);
    const __mmask16 row_mask = tail_mask(nr);
    for (int64_t c0 = 0; c0 < cols; c0 += kLanes) {
      const int64_t nc = std::min<int64_t>(kLanes, cols - c0);
      const __mmask16 col_mask = tail_mask(nc);
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        r[i] = i < nr ? _mm512_maskz_loadu_ps(col_mask, x + (r0 + i) * ldx + c0) : _mm512_setzero_ps();
        if (f != nullptr && i < nr) r[i] = _mm512_mul_ps(_mm512_set1_ps(f[r0 + i]), r[i]);
      }
      transpose16(r);
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j)
        if (j < nc) _mm512_mask_storeu_ps(y + (c0 + j) * ldy + r0, row_mask, r[j]);
    }
  }
}

// e^x: n = round(x · log2 e), r = x − n · ln 2 (in two parts), e^r by Cephes' degree-6 polynomial,
// then · 2^n with vscalefps (which flushes to 0 / denormals below e^−87).
inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.7f)), _mm512_set1_ps(-104.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x));
  __m512 p = _mm512_set1_ps(kExpPoly[0]);
#pragma GCC unroll 5
  for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpPoly[i]));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(y, n);
}

void exp_shifted_avx512(int64_t n, float shift, float* x) {
  const __m512 s = _mm512_set1_ps(shift);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm512_storeu_ps(x + i, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), s)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s)));
  }
}

inline __m512 silu16(__m512 x) {
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

void silu_mul_avx512(int64_t n, const float* x, const float* m, float* y) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m512 s = silu16(_mm512_loadu_ps(x + i));
    _mm512_storeu_ps(y + i, m == nullptr ? s : _mm512_mul_ps(s, _mm512_loadu_ps(m + i)));
  }
  if (i < n) {
    const __mmask16 k = tail_mask(n - i);
    const __m512 s = silu16(_mm512_maskz_loadu_ps(k, x + i));
    _mm512_mask_storeu_ps(y + i, k, m == nullptr ? s : _mm512_mul_ps(s, _mm512_maskz_loadu_ps(k, m + i)));
  }
}

// The sums of conv_silu for the lanes of mask m from element i (tail lanes read as 0).
inline __m512 conv_sum16(int64_t n, int64_t taps, const float* w, const float* const* x, int64_t i, __mmask16 m) {
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < taps; ++j)
    sum = _mm512_add_ps(sum,
                        _mm512_mul_ps(_mm512_maskz_loadu_ps(m, w + j * n + i), _mm512_maskz_loadu_ps(m, x[j] + i)));
  return sum;
}

void conv_silu_avx512(int64_t n, int64_t taps, const float* w, const float* const* x, float* y) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm512_storeu_ps(y + i, silu16(conv_sum16(n, taps, w, x, i, 0xFFFF)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, m, silu16(conv_sum16(n, taps, w, x, i, m)));
  }
}

void softmax_avx512(int64_t n, float scale, float* x) {
  const __m512 sv = _mm512_set1_ps(scale);
  __m512 mv = _mm512_set1_ps(-__builtin_inff());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + i), sv);
    _mm512_storeu_ps(x + i, v);
    mv = _mm512_max_ps(mv, v);
  }
  const __mmask16 tail = tail_mask(n - i);
  if (i < n) {
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + i), sv);
    _mm512_mask_storeu_ps(x + i, tail, v);
    mv = _mm512_mask_max_ps(mv, tail, mv, v);
  }
  const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(mv));
  __m512d sum0 = _mm512_setzero_pd(), sum1 = _mm512_setzero_pd();
  for (i = 0; i + kLanes <= n; i += kLanes) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), max));
    _mm512_storeu_ps(x + i, e);
    sum0 = _mm512_add_pd(sum0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    sum1 = _mm512_add_pd(sum1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
  }
  if (i < n) {
    const __m512 e = _mm512_maskz_mov_ps(tail, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), max)));
    _mm512_mask_storeu_ps(x + i, tail, e);
    sum0 = _mm512_add_pd(sum0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    sum1 = _mm512_add_pd(sum1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
  }
  scale_avx512(n, static_cast<float>(1.0 / _mm512_reduce_add_pd(_mm512_add_pd(sum0, sum1))), x);
}

double sum_squares_avx512(const float* x, int64_t n) {
  __m512d acc0 = _mm512_setzero_pd(), acc1 = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m512d lo = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
    const __m512d hi = _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8));
    acc0 = _mm512_fmadd_pd(lo, lo, acc0);
    acc1 = _mm512_fmadd_pd(hi, hi, acc1);
  }
  if (i < n) {
    const __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
    const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    acc0 = _mm512_fmadd_pd(lo, lo, acc0);
    acc1 = _mm512_fmadd_pd(hi, hi, acc1);
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(acc0, acc1));
}

// gemm_f32: MR rows of C × NV vectors of 16 columns; B rows are read once per p for all MR rows. NEG: alpha
// is −1 (fnmadd, the same rounding as fma(−a, b, c)), else 1: A's elements are broadcast straight from
// memory, no multiply or shuffle on the vector ports (kernel_table.h: the table's gemm_f32 takes alpha = ±1).
template <int MR, int NV, bool NEG>
inline void gemm_tile(int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc,
                      __mmask16 last) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = _mm512_maskz_loadu_ps(v == NV - 1 ? last : static_cast<__mmask16>(0xFFFF), C + i * ldc + 16 * v);
  for (int64_t p = 0; p < k; ++p) {
    __m512 b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      b[v] = v == NV - 1 ? _mm512_maskz_loadu_ps(last, B + p * ldb + 16 * v) : _mm512_loadu_ps(B + p * ldb + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512 a = _mm512_set1_ps(A[i * lda + p]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[i][v] = NEG ? _mm512_fnmadd_ps(a, b[v], acc[i][v]) : _mm512_fmadd_ps(a, b[v], acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      _mm512_mask_storeu_ps(C + i * ldc + 16 * v, v == NV - 1 ? last : static_cast<__mmask16>(0xFFFF), acc[i][v]);
}

template <int NV, bool NEG>
void gemm_rows(int64_t m, int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc,
               __mmask16 last) {
  for_row_tiles(m, [&]<int MR>(int64_t i) {
    gemm_tile<MR, NV, NEG>(k, A + i * lda, lda, B, ldb, C + i * ldc, ldc, last);
  });
}

template <bool NEG>
void gemm_f32_panels(int64_t m, int64_t n, int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb,
                     float* C, int64_t ldc);

constexpr int64_t kF32Block = 256;

// Blocks of 256 values of p keep a 64-column panel of B in L2 while every row tile passes; C carries the
// fp32 chain from one block to the next, so each element's operations are the same as unblocked.
void gemm_f32_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda, const float* B,
                     int64_t ldb, float* C, int64_t ldc) {
  for_p_blocks(k, kF32Block, alpha, [&]<bool NEG>(int64_t p, int64_t kb) {
    gemm_f32_panels<NEG>(m, n, kb, A + p, lda, B + p * ldb, ldb, C, ldc);
  });
}

template <bool NEG>
void gemm_f32_panels(int64_t m, int64_t n, int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb,
                     float* C, int64_t ldc) {
  // Column panels of 64 (4 vectors), then one of 1–3 vectors; the last vector of a panel may be partial.
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) gemm_rows<4, NEG>(m, k, A, lda, B + j, ldb, C + j, ldc, 0xFFFF);
  const int64_t rest = n - j;
  if (rest == 0) return;
  const auto last = tail_mask(rest % 16 == 0 ? 16 : rest % 16);
  const int64_t vectors = (rest + 15) / 16;
  if (vectors == 1) {
    gemm_rows<1, NEG>(m, k, A, lda, B + j, ldb, C + j, ldc, last);
  } else if (vectors == 2) {
    gemm_rows<2, NEG>(m, k, A, lda, B + j, ldb, C + j, ldc, last);
  } else if (vectors == 3) {
    gemm_rows<3, NEG>(m, k, A, lda, B + j, ldb, C + j, ldc, last);
  } else {
    gemm_rows<4, NEG>(m, k, A, lda, B + j, ldb, C + j, ldc, last);
  }
}

// FMA panels (F16 or Bf16Fma: 64 rows, 4 zmm of 16 rows) × TB tokens: per column the 4 upcast weight
// vectors, then one FMA per (row, token) lane. Every lane runs acc = fma(w, x, acc) over the columns in
// order from 0 — whatever TB is, so results never depend on the blocking (fma16_tile_generic computes the
// same).
template <bool BF16>
inline __m512 upcast16(const uint8_t* p) {
  const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
  return BF16 ? bf16x16(v) : _mm512_cvtph_ps(v);
}

template <bool BF16, int TB, bool PF>
void fma16_micro(const PackedView& w, const float* x, int64_t t, int64_t p, float* y) {
  const uint8_t* panel = w.data + p * w.cols * 2 * kFmaPanelRows;
  const float* xt = x + t * w.cols;
  __m512 acc[4][TB];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i)
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) acc[i][tt] = _mm512_setzero_ps();
  for (int64_t c = 0; c < w.cols; ++c) {
    const uint8_t* chunk = panel + c * 2 * kFmaPanelRows;
    if constexpr (PF) {  // decoding: the panel's stream kGemvPrefetchBytes ahead, into L2
      prefetch_l2(chunk + kGemvPrefetchBytes, 2 * kFmaPanelRows);
    }
    __m512 wv[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) wv[i] = upcast16<BF16>(chunk + 32 * i);
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      const __m512 xv = _mm512_set1_ps(xt[tt * w.cols + c]);
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) acc[i][tt] = _mm512_fmadd_ps(wv[i], xv, acc[i][tt]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const int64_t r0 = p * kFmaPanelRows + 16 * i;
    if (r0 >= w.rows) break;
    const __mmask16 m = w.rows - r0 >= 16 ? static_cast<__mmask16>(0xFFFF) : tail_mask(w.rows - r0);
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) _mm512_mask_storeu_ps(y + (t + tt) * w.rows + r0, m, acc[i][tt]);
  }
}

// 6 tokens: 24 accumulators, 4 weight vectors and the broadcast fill 29 of the 32 zmm registers.
constexpr int kFma16Tokens = 6;

template <bool BF16>
void fma16_panels(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p0, int64_t p1, float* y) {
  const bool stream = t1 - t0 <= kGemvPrefetchTokens && prefetch_weight_streams();
  for (int64_t p = p0; p < p1; ++p) {
    if (stream) {
      with_count(t1 - t0, [&]<int TB>() { fma16_micro<BF16, TB, true>(w, x, t0, p, y); });
      continue;
    }
    int64_t t = t0;
    for (; t + kFma16Tokens <= t1; t += kFma16Tokens) fma16_micro<BF16, kFma16Tokens, false>(w, x, t, p, y);
    with_count(t1 - t, [&]<int TB>() { fma16_micro<BF16, TB, false>(w, x, t, p, y); });
  }
}

void fma16_tile_avx512(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p0, int64_t p1, float* y) {
  if (w.kind == PackKind::Bf16Fma) {
    fma16_panels<true>(w, x, t0, t1, p0, p1, y);
  } else {
    fma16_panels<false>(w, x, t0, t1, p0, p1, y);
  }
}

// Bf16 records with fp32 activations (Bf16Products::Fma): per chunk each panel's 16 rows of columns 2k and
// 2k + 1 become two fp32 vectors (a bf16 is the top half of its fp32: a shift and a mask), then one fused
// multiply-add per (row, token) lane and column, column 2k first. Every lane runs ref::matmul_fma's chain over
// the columns in order from 0, whatever RP and TB are; an odd last column (its pair's second half is padding)
// takes its one step alone. RP = 2, TB = 12: 24 accumulators, 4 weight vectors and 2 broadcasts, so 48
// multiply-adds per 2 loads and 4 conversions.
template <int RP, int TB, bool PF>
void bf16_fma_micro(const PackedView& w, const float* x, int64_t t, int64_t p, float* y) {
  const int64_t chunks = w.cols_padded / 2, pairs = w.cols / 2;
  const uint8_t* base[RP];
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i) base[i] = w.data + (p + i) * chunks * 64;
  const float* xt = x + t * w.cols;
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  __m512 acc[RP][TB];
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i)
#pragma GCC unroll 12
    for (int tt = 0; tt < TB; ++tt) acc[i][tt] = _mm512_setzero_ps();
  for (int64_t k = 0; k < chunks; ++k) {
    if constexpr (PF) {  // decoding: each panel's stream kGemvPrefetchBytes ahead, into L2
#pragma GCC unroll 4
      for (int i = 0; i < RP; ++i) prefetch_l2(base[i] + 64 * k + kGemvPrefetchBytes, 64);
    }
    __m512 even[RP], odd[RP];
#pragma GCC unroll 4
    for (int i = 0; i < RP; ++i) {
      const __m512i v = _mm512_load_si512(base[i] + 64 * k);
      even[i] = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
      odd[i] = _mm512_castsi512_ps(_mm512_and_si512(v, high));
    }
    if (k < pairs) {
#pragma GCC unroll 12
      for (int tt = 0; tt < TB; ++tt) {
        const __m512 x0 = _mm512_set1_ps(xt[tt * w.cols + 2 * k]), x1 = _mm512_set1_ps(xt[tt * w.cols + 2 * k + 1]);
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i) acc[i][tt] = _mm512_fmadd_ps(odd[i], x1, _mm512_fmadd_ps(even[i], x0, acc[i][tt]));
      }
    } else {
#pragma GCC unroll 12
      for (int tt = 0; tt < TB; ++tt) {
        const __m512 x0 = _mm512_set1_ps(xt[tt * w.cols + 2 * k]);
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i) acc[i][tt] = _mm512_fmadd_ps(even[i], x0, acc[i][tt]);
      }
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i) {
    const int64_t r0 = (p + i) * kPackRows;
    if (r0 >= w.rows) break;
    const __mmask16 m = w.rows - r0 >= kLanes ? static_cast<__mmask16>(0xFFFF) : tail_mask(w.rows - r0);
#pragma GCC unroll 12
    for (int tt = 0; tt < TB; ++tt) _mm512_mask_storeu_ps(y + (t + tt) * w.rows + r0, m, acc[i][tt]);
  }
}

constexpr int kBf16FmaTokens = 12;

template <int RP>
void bf16_fma_tokens(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p, float* y) {
  if (t1 - t0 <= kGemvPrefetchTokens && prefetch_weight_streams()) {
    with_count(t1 - t0, [&]<int TB>() { bf16_fma_micro<RP, TB, true>(w, x, t0, p, y); });
    return;
  }
  int64_t t = t0;
  for (; t + kBf16FmaTokens <= t1; t += kBf16FmaTokens) bf16_fma_micro<RP, kBf16FmaTokens, false>(w, x, t, p, y);
  if (t + kBf16FmaTokens / 2 <= t1) {
    bf16_fma_micro<RP, kBf16FmaTokens / 2, false>(w, x, t, p, y);
    t += kBf16FmaTokens / 2;
  }
  with_count(t1 - t, [&]<int TB>() { bf16_fma_micro<RP, TB, false>(w, x, t, p, y); });
}

// ops.h's delta_rule_token over columns [e0, e0 + 16·(NV − 1) + popcount(last)): the column block's m, u and o
// stay in registers, so each pass reads and writes its part of every row of S once (128 rows × 64 columns
// are 32 KiB: the second pass finds them in L1). Per element the operations of scale_avx512 and axpy_avx512.
template <int NV>
void delta_block_avx512(int64_t dk, int64_t dv, int64_t e0, __mmask16 last, float decay, float beta,
                        const float* q, const float* k, const float* v, float* S, float* o) {
  const __m512 dec = _mm512_set1_ps(decay);
  __m512 m[NV], u[NV], acc[NV];
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) m[j] = acc[j] = _mm512_setzero_ps();
  const auto mask = [&](int j) { return j == NV - 1 ? last : static_cast<__mmask16>(0xFFFF); };
  for (int64_t i = 0; i < dk; ++i) {
    float* row = S + i * dv + e0;
    const __m512 ki = _mm512_set1_ps(k[i]);
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const __m512 s = _mm512_mul_ps(dec, _mm512_maskz_loadu_ps(mask(j), row + kLanes * j));
      _mm512_mask_storeu_ps(row + kLanes * j, mask(j), s);
      m[j] = _mm512_fmadd_ps(ki, s, m[j]);
    }
  }
  const __m512 bv = _mm512_set1_ps(beta);
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j)
    u[j] = _mm512_mul_ps(bv, _mm512_sub_ps(_mm512_maskz_loadu_ps(mask(j), v + e0 + kLanes * j), m[j]));
  for (int64_t i = 0; i < dk; ++i) {
    float* row = S + i * dv + e0;
    const __m512 ki = _mm512_set1_ps(k[i]), qi = _mm512_set1_ps(q[i]);
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const __m512 s = _mm512_fmadd_ps(ki, u[j], _mm512_maskz_loadu_ps(mask(j), row + kLanes * j));
      _mm512_mask_storeu_ps(row + kLanes * j, mask(j), s);
      acc[j] = _mm512_fmadd_ps(qi, s, acc[j]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) _mm512_mask_storeu_ps(o + e0 + kLanes * j, mask(j), acc[j]);
}

void delta_rule_token_avx512(int64_t dk, int64_t dv, float decay, float beta, const float* q, const float* k,
                             const float* v, float* S, float* o) {
  constexpr int64_t kBlock = 4 * kLanes;
  for (int64_t e0 = 0; e0 < dv; e0 += kBlock) {
    const int64_t cols = dv - e0 < kBlock ? dv - e0 : kBlock;
    const int64_t vectors = (cols + kLanes - 1) / kLanes;
    const __mmask16 last = tail_mask(cols - kLanes * (vectors - 1));
    with_count(vectors, [&]<int NV>() { delta_block_avx512<NV>(dk, dv, e0, last, decay, beta, q, k, v, S, o); });
  }
}

}  // namespace

void bf16_fma_tile_avx512(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                          float* y) {
  int64_t p = p0;
  for (; p + 2 <= p1; p += 2) bf16_fma_tokens<2>(w, x, t0, t1, p, y);
  if (p < p1) bf16_fma_tokens<1>(w, x, t0, t1, p, y);
}

const KernelTable& avx512_table() {
  static const KernelTable table{matmul_tile_avx512,   dequantize_row_avx512, dot_avx512,
                                 axpy_avx512,          scale_avx512,          exp_shifted_avx512,
                                 scale_to_avx512, transpose_scaled_avx512,
                                 gemm_f32_avx512,
                                 quantize_rows_avx512,  quantize_rows_super_avx512,
                                 int8_tile_generic,    bf16_rows_avx512,      bf16_tile_generic,
                                 fma16_tile_avx512,    silu_mul_avx512,       sum_squares_avx512,
                                 softmax_avx512,       conv_silu_avx512,      delta_rule_token_avx512};
  return table;
}

}  // namespace verdict::kernels::cpu
