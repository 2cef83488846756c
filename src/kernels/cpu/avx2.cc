// AVX2 + FMA kernels (compiled with -mavx2 -mfma -mf16c).
// Only ops.h, kernel_table.h and intrinsics here: see kernel_table.h.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/int8_avx2.h"
#include "kernels/cpu/kernel_table.h"

namespace verdict::kernels::cpu {
namespace {

constexpr int64_t kLanes = 8;

// Fixed-order horizontal sum.
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Horizontal sum of 8 int32 lanes (exact in any order).
inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

inline __m256 bf16x8(__m128i bits) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}

struct F32Panel {
  const float* row[kPanelRows];
  __m256 load(int r, int64_t c) const { return _mm256_loadu_ps(row[r] + c); }
  __m256 tail(int r, int64_t c, __m256i m, int64_t) const { return _mm256_maskload_ps(row[r] + c, m); }
};

struct Bf16Panel {
  const uint16_t* row[kPanelRows];
  __m256 load(int r, int64_t c) const {
    return bf16x8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row[r] + c)));
  }
  __m256 tail(int r, int64_t c, __m256i, int64_t remaining) const {
    uint16_t buf[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t i = 0; i < remaining; ++i) buf[i] = row[r][c + i];
    return bf16x8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(buf)));
  }
};

// One multiply-add step of RB weight rows × TB tokens over 8 columns at c into acc (masked: `remaining` of
// them, zeros past them).
template <int RB, int TB, bool MASKED, typename Panel>
inline void step8(const Panel& p, const float* x, int64_t cols, int64_t c, int64_t remaining,
                  __m256 (&acc)[RB][TB]) {
  const __m256i m = lane_mask(remaining);
  __m256 wv[RB];
#pragma GCC unroll 4
  for (int r = 0; r < RB; ++r) wv[r] = MASKED ? p.tail(r, c, m, remaining) : p.load(r, c);
#pragma GCC unroll 4
  for (int t = 0; t < TB; ++t) {
    const __m256 xv = MASKED ? _mm256_maskload_ps(x + t * cols + c, m) : _mm256_loadu_ps(x + t * cols + c);
#pragma GCC unroll 4
    for (int r = 0; r < RB; ++r) acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
  }
}

// RB weight rows × TB tokens; per (row, token) the same operation sequence for any blocking. Each
// (row, token) keeps two accumulators, for columns c .. c + 7 and c + 8 .. c + 15 of every 16, and adds
// them before the fixed-order hsum: the lanes, fused multiply-adds and final sum of the AVX-512 tile
// (one 16-lane accumulator, _mm512_reduce_add_ps), so both ISAs give the same bits.
template <int RB, int TB, typename Panel>
inline void tile(const Panel& p, const float* x, int64_t cols, float* y, int64_t y_stride) {
  __m256 lo[RB][TB], hi[RB][TB];
#pragma GCC unroll 4
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) lo[r][t] = hi[r][t] = _mm256_setzero_ps();
  int64_t c = 0;
  for (; c + 2 * kLanes <= cols; c += 2 * kLanes) {
    step8<RB, TB, false>(p, x, cols, c, kLanes, lo);
    step8<RB, TB, false>(p, x, cols, c + kLanes, kLanes, hi);
  }
  if (c < cols) {  // the AVX-512 tile's masked tail: zeros past the end still take their multiply-add
    const int64_t left = cols - c;
    step8<RB, TB, true>(p, x, cols, c, left < kLanes ? left : kLanes, lo);
    step8<RB, TB, true>(p, x, cols, c + kLanes, left > kLanes ? left - kLanes : 0, hi);
  }
#pragma GCC unroll 4
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) y[t * y_stride + r] = hsum(_mm256_add_ps(lo[r][t], hi[r][t]));
}

// Tokens one at a time for a 4-row panel (8 accumulators, 4 weight vectors), two at a time for one row: the
// tiles fit the 16 registers.
template <int RB, typename Panel>
inline void all_tokens(const Panel& p, const WeightMatrix& w, const float* x, int64_t t0,
                       int64_t t1, int64_t r, float* y) {
  constexpr int TB = RB == 1 ? 2 : 1;
  int64_t t = t0;
  for (; t + TB <= t1; t += TB) tile<RB, TB>(p, x + t * w.cols, w.cols, y + t * w.rows + r, w.rows);
  for (; t < t1; ++t) tile<RB, 1>(p, x + t * w.cols, w.cols, y + t * w.rows + r, w.rows);
}

void dequantize_mlx_row(const WeightMatrix& w, int64_t r, float* out) {
  if ((w.bits != 4 && w.bits != 8) || w.group_size % kLanes != 0) {
    mlx_dequantize_row_generic(w, r, out);
    return;
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(w.packed + r * w.packed_row_words());
  const float* scales = w.scales + r * w.groups_per_row();
  const float* biases = w.biases + r * w.groups_per_row();
  const __m256i nibble_shift = _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4);
  const __m256i low4 = _mm256_set1_epi32(0xF);
  for (int64_t g = 0; g < w.groups_per_row(); ++g) {
    const __m256 s = _mm256_set1_ps(scales[g]);
    const __m256 b = _mm256_set1_ps(biases[g]);
    for (int64_t c = g * w.group_size; c < (g + 1) * w.group_size; c += kLanes) {
      __m256i q;
      if (w.bits == 8) {
        q = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + c)));
      } else {
        int32_t four = 0;
        __builtin_memcpy(&four, bytes + c / 2, sizeof four);
        const __m128i packed = _mm_cvtsi32_si128(four);
        q = _mm256_cvtepu8_epi32(_mm_unpacklo_epi8(packed, packed));
        q = _mm256_and_si256(_mm256_srlv_epi32(q, nibble_shift), low4);
      }
      // One fp32 multiply, then one fp32 add (no FMA): bit-exact with the reference.
      const __m256 scaled = _mm256_mul_ps(s, _mm256_cvtepi32_ps(q));
      _mm256_storeu_ps(out + c, _mm256_add_ps(scaled, b));
    }
  }
}

// F16 rows with F16C (exact); the other ggml types use the portable code.
void dequantize_ggml_row(const WeightMatrix& w, int64_t r, float* out) {
  if (w.type != WeightType::F16) {
    ggml_dequantize_row_generic(w, r, out);
    return;
  }
  const uint8_t* row = w.blocks + r * w.row_bytes();
  int64_t c = 0;
  for (; c + kLanes <= w.cols; c += kLanes)
    _mm256_storeu_ps(out + c, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * c))));
  for (; c < w.cols; ++c) {
    uint16_t h;
    __builtin_memcpy(&h, row + 2 * c, sizeof h);
    out[c] = _cvtsh_ss(h);
  }
}

void matmul_tile_avx2(const WeightMatrix& w, const float* x, int64_t t0, int64_t t1, int64_t r0,
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

void dequantize_row_avx2(const WeightMatrix& w, int64_t r, float* out) {
  if (w.type == WeightType::MlxAffine) {
    dequantize_mlx_row(w, r, out);
    return;
  }
  if (is_ggml_type(w.type)) {
    dequantize_ggml_row(w, r, out);
    return;
  }
  int64_t c = 0;
  if (w.type == WeightType::F32) {
    for (; c + kLanes <= w.cols; c += kLanes) _mm256_storeu_ps(out + c, _mm256_loadu_ps(w.f32 + r * w.cols + c));
    for (; c < w.cols; ++c) out[c] = w.f32[r * w.cols + c];
    return;
  }
  const uint16_t* src = w.bf16 + r * w.cols;
  for (; c + kLanes <= w.cols; c += kLanes)
    _mm256_storeu_ps(out + c, bf16x8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + c))));
  for (; c < w.cols; ++c) {
    const uint32_t bits = static_cast<uint32_t>(src[c]) << 16;
    __builtin_memcpy(out + c, &bits, sizeof bits);
  }
}

float dot_avx2(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + kLanes), _mm256_loadu_ps(b + i + kLanes), acc1);
  }
  for (; i + kLanes <= n; i += kLanes)
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  if (i < n) {
    const __m256i m = lane_mask(n - i);
    acc1 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), acc1);
  }
  return hsum(_mm256_add_ps(acc0, acc1));
}

void axpy_avx2(int64_t n, float a, const float* x, float* y) {
  const __m256 av = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  if (i < n) {
    const __m256i m = lane_mask(n - i);
    const __m256 v = _mm256_fmadd_ps(av, _mm256_maskload_ps(x + i, m), _mm256_maskload_ps(y + i, m));
    _mm256_maskstore_ps(y + i, m, v);
  }
}

void scale_to_avx2(int64_t n, float a, const float* x, float* y) {
  const __m256 av = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm256_storeu_ps(y + i, _mm256_mul_ps(av, _mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = lane_mask(n - i);
    _mm256_maskstore_ps(y + i, m, _mm256_mul_ps(av, _mm256_maskload_ps(x + i, m)));
  }
}

void scale_avx2(int64_t n, float a, float* x) { scale_to_avx2(n, a, x, x); }

// r[i] ← column i of the 8 × 8 block whose rows are r[0 … 7]: pairs of rows interleaved (unpack ps), pairs of
// pairs (unpack pd; r[4g + k]'s 128-bit lane L then holds rows 4g … 4g + 3 of column 4L + k), then the two
// halves of each column joined.
inline void transpose8(__m256 (&r)[8]) {
  __m256 t[8];
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  const auto lo = [](__m256 a, __m256 b) {
    return _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(a), _mm256_castps_pd(b)));
  };
  const auto hi = [](__m256 a, __m256 b) {
    return _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(a), _mm256_castps_pd(b)));
  };
#pragma GCC unroll 2
  for (int i = 0; i < 8; i += 4) {
    r[i] = lo(t[i], t[i + 2]);
    r[i + 1] = hi(t[i], t[i + 2]);
    r[i + 2] = lo(t[i + 1], t[i + 3]);
    r[i + 3] = hi(t[i + 1], t[i + 3]);
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm256_permute2f128_ps(r[k], r[4 + k], 0x20);
    t[4 + k] = _mm256_permute2f128_ps(r[k], r[4 + k], 0x31);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = t[i];
}

// Blocks of 8 × 8, as transpose_scaled_avx512's of 16 × 16.
void transpose_scaled_avx2(int64_t rows, int64_t cols, const float* x, int64_t ldx, const float* f, float* y,
                           int64_t ldy) {
  for (int64_t r0 = 0; r0 < rows; r0 += kLanes) {
    const int64_t nr = std::min<int64_t>(kLanes, rows - r0);
    const __m256i row_mask = lane_mask(nr);
    for (int64_t c0 = 0; c0 < cols; c0 += kLanes) {
      const int64_t nc = std::min<int64_t>(kLanes, cols - c0);
      const __m256i col_mask = lane_mask(nc);
      __m256 r[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        const float* src = x + (r0 + i) * ldx + c0;
        r[i] = i >= nr ? _mm256_setzero_ps() : nc == kLanes ? _mm256_loadu_ps(src) : _mm256_maskload_ps(src, col_mask);
        if (f != nullptr && i < nr) r[i] = _mm256_mul_ps(_mm256_set1_ps(f[r0 + i]), r[i]);
      }
      transpose8(r);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j)
        if (j < nc) {  // (AMD's masked stores are slow: plain ones for whole columns)
          if (nr == kLanes) {
            _mm256_storeu_ps(y + (c0 + j) * ldy + r0, r[j]);
          } else {
            _mm256_maskstore_ps(y + (c0 + j) * ldy + r0, row_mask, r[j]);
          }
        }
    }
  }
}

// The Int8 tiles (int8_avx2.h) without AVX-VNNI.
void int8_tile_avx2(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                    float* y, uint8_t* scratch) {
  int8_tile_avx2_impl<false>(w, a, t0, t1, p0, p1, y, scratch);
}

// The reductions of quantize_rows_avx2, 8 blocks at a time (as reduce16 in gemm_avx512.cc): each block's 32
// values give one ymm (lane i: x_i + x_{i+16} + (x_{i+8} + x_{i+24}), see below), and reduce8 turns the 8 blocks'
// ymm into one ymm of their 8 results, block b in lane b, pairing the lanes as hsum does each ymm alone (lane i
// with i + 4, then i + 2, i + 1): the same operands in every addition, so the same sums bit for bit.
template <typename Op>
inline __m256 reduce8(__m256 (&v)[8], Op op) {
  __m256 t[4];  // t[k]: blocks 2k and 2k + 1 in its two 128-bit lanes (i + i + 4)
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k)
    t[k] = op(_mm256_permute2f128_ps(v[2 * k], v[2 * k + 1], 0x20),
              _mm256_permute2f128_ps(v[2 * k], v[2 * k + 1], 0x31));
  __m256 u[2];  // u[n], 128-bit lane j: blocks 4n + j and 4n + 2 + j, 2 values each (i + i + 2)
#pragma GCC unroll 2
  for (int n = 0; n < 2; ++n)
    u[n] = op(_mm256_shuffle_ps(t[2 * n], t[2 * n + 1], _MM_SHUFFLE(1, 0, 1, 0)),
              _mm256_shuffle_ps(t[2 * n], t[2 * n + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  // 128-bit lane j, element e: block j + 2e (i + i + 1); then into block order.
  const __m256 z = op(_mm256_shuffle_ps(u[0], u[1], _MM_SHUFFLE(2, 0, 2, 0)),
                      _mm256_shuffle_ps(u[0], u[1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm256_permutevar8x32_ps(z, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline __m256 add_i32(__m256 a, __m256 b) {
  return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
}

// 32 int32 values within ±127 → 32 int8 in order: two packs, then undo their lane interleave.
inline void store_int8x32(const __m256i (&qi)[4], int8_t* dst) {
  const __m256i p16a = _mm256_packs_epi32(qi[0], qi[1]);
  const __m256i p16b = _mm256_packs_epi32(qi[2], qi[3]);
  const __m256i p8 = _mm256_packs_epi16(p16a, p16b);
  const __m256i ordered = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), ordered);
}

// 8 blocks (256 columns) of one token: the q, d, qsum and xsum of the one-block loop below.
inline void quantize_8_blocks(const float* src, int8_t* dst, float* d, int32_t* qsum, float* xsum) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m[8], s[8];
#pragma GCC unroll 8
  for (int b = 0; b < 8; ++b) {
    __m256 v[4];
    for (int i = 0; i < 4; ++i) v[i] = _mm256_loadu_ps(src + 32 * b + 8 * i);
    m[b] = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v[0]), _mm256_andnot_ps(sign, v[1])),
                         _mm256_max_ps(_mm256_andnot_ps(sign, v[2]), _mm256_andnot_ps(sign, v[3])));
    s[b] = _mm256_add_ps(_mm256_add_ps(v[0], v[2]), _mm256_add_ps(v[1], v[3]));
  }
  const __m256 amax = reduce8(m, [](__m256 a, __m256 b) { return _mm256_max_ps(a, b); });
  _mm256_storeu_ps(xsum, reduce8(s, [](__m256 a, __m256 b) { return _mm256_add_ps(a, b); }));
  // int8_block_scale: the division, then the rounding to 11 significant bits of round_to_half_precision.
  const __m256i bits = _mm256_castps_si256(_mm256_div_ps(amax, _mm256_set1_ps(127.0f)));
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 13), _mm256_set1_epi32(1));
  const __m256i up = _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0xFFF)), odd);
  _mm256_storeu_ps(d, _mm256_castsi256_ps(_mm256_and_si256(up, _mm256_set1_epi32(~0x1FFF))));
  // 127 / amax, 0 where amax is 0.
  const __m256 nonzero = _mm256_cmp_ps(amax, _mm256_setzero_ps(), _CMP_NEQ_UQ);
  alignas(32) float inv[8];
  _mm256_store_ps(inv, _mm256_and_ps(nonzero, _mm256_div_ps(_mm256_set1_ps(127.0f), amax)));
#pragma GCC unroll 8
  for (int b = 0; b < 8; ++b) {
    const __m256 iv = _mm256_set1_ps(inv[b]);
    __m256i qi[4], sum = _mm256_setzero_si256();
    for (int i = 0; i < 4; ++i) {
      qi[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(src + 32 * b + 8 * i), iv));
      sum = _mm256_add_epi32(sum, qi[i]);
    }
    store_int8x32(qi, dst + 32 * b);
    s[b] = _mm256_castsi256_ps(sum);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qsum), _mm256_castps_si256(reduce8(s, add_i32)));
}

// Same q, d and qsum as quantize_rows_generic (max is exact, one fp32 multiply, round to nearest even), and the
// same xsum as quantize_rows_avx512.
void quantize_rows_avx2(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d, int32_t* qsum,
                        float* xsum) {
  const int64_t blocks = cols / kQBlock;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t t = t0; t < t1; ++t) {
    int64_t b = 0;
    for (; b + 8 <= blocks; b += 8)
      quantize_8_blocks(x + t * cols + b * kQBlock, q + t * cols + b * kQBlock, d + t * blocks + b,
                        qsum + t * blocks + b, xsum + t * blocks + b);
    for (; b < blocks; ++b) {
      const float* src = x + t * cols + b * kQBlock;
      __m256 v[4], m = _mm256_setzero_ps();
      for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_loadu_ps(src + 8 * i);
        m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[i]));
      }
      // Σx in the order of quantize_rows_avx512 (x[0..15] + x[16..31], then _mm512_reduce_add_ps's halvings,
      // which hsum repeats), so both ISAs hand the Int8 kernels the same xsum.
      const __m256 s = _mm256_add_ps(_mm256_add_ps(v[0], v[2]), _mm256_add_ps(v[1], v[3]));
      __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
      m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
      m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
      const float amax = _mm_cvtss_f32(m4);
      const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
      const __m256 iv = _mm256_set1_ps(inv);
      __m256i qi[4], sum = _mm256_setzero_si256();
      for (int i = 0; i < 4; ++i) {
        qi[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], iv));
        sum = _mm256_add_epi32(sum, qi[i]);
      }
      store_int8x32(qi, q + t * cols + b * kQBlock);
      __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
      s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
      s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
      d[t * blocks + b] = int8_block_scale(amax);
      qsum[t * blocks + b] = _mm_cvtsi128_si32(s4);
      xsum[t * blocks + b] = hsum(s);
    }
  }
}

// Same q, d, qsum, xsum and qsum16 as quantize_rows_super_generic (block_q8_K: one scale per 256 columns).
void quantize_rows_super_avx2(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                              int32_t* qsum, float* xsum, int32_t* qsum16) {
  const int64_t blocks = cols / kQBlock;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t s = 0; s < cols / kSuperCols; ++s) {
      const float* src = x + t * cols + s * kSuperCols;
      __m256 m = _mm256_setzero_ps();
      for (int64_t i = 0; i < kSuperCols; i += 8)
        m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(src + i)));
      __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
      m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
      m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
      const float amax = _mm_cvtss_f32(m4);
      const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
      const float scale = amax != 0.0f ? 1.0f / inv : 0.0f;
      const __m256 iv = _mm256_set1_ps(inv);
      for (int64_t b = s * kSuperBlocks; b < (s + 1) * kSuperBlocks; ++b) {
        __m256i qi[4];
        for (int i = 0; i < 4; ++i)
          qi[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + t * cols + b * kQBlock + 8 * i), iv));
        const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(qi[0], qi[1]), _mm256_add_epi32(qi[2], qi[3]));
        const __m256i p8 = _mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]), _mm256_packs_epi32(qi[2], qi[3]));
        const __m256i ordered = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + t * cols + b * kQBlock), ordered);
        const int32_t total = hsum_i32(sum);
        if (qsum16 != nullptr) {
          const int32_t first = hsum_i32(_mm256_add_epi32(qi[0], qi[1]));
          qsum16[2 * (t * blocks + b)] = first;
          qsum16[2 * (t * blocks + b) + 1] = total - first;
        }
        d[t * blocks + b] = scale;
        qsum[t * blocks + b] = total;
        xsum[t * blocks + b] = scale * static_cast<float>(total);
      }
    }
  }
}

// e^x as in the AVX-512 version; 2^n is built in the exponent field, so results below the smallest normal float, e^−87.34 (where
// that field would underflow) are flushed to 0.
inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(x, _mm256_set1_ps(88.7f));
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-87.336544f), _CMP_LT_OQ);
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.336544f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x));
  __m256 p = _mm256_set1_ps(kExpPoly[0]);
#pragma GCC unroll 5
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[i]));
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  // 2^n for n in [−126, 128): (n + 127) << 23; n = 128 (x near 88.7) as 2 · 2^127.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i big = _mm256_cmpgt_epi32(ni, _mm256_set1_epi32(127));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, _mm256_and_si256(big, _mm256_set1_epi32(1))),
                                                       _mm256_set1_epi32(127)), 23);
  __m256 out = _mm256_mul_ps(y, _mm256_castsi256_ps(e));
  out = _mm256_blendv_ps(out, _mm256_mul_ps(out, _mm256_set1_ps(2.0f)), _mm256_castsi256_ps(big));
  return _mm256_andnot_ps(tiny, out);
}

void exp_shifted_avx2(int64_t n, float shift, float* x) {
  const __m256 s = _mm256_set1_ps(shift);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm256_storeu_ps(x + i, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s)));
  if (i < n) {
    const __m256i m = lane_mask(n - i);
    _mm256_maskstore_ps(x + i, m, exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), s)));
  }
}

inline __m256 silu8(__m256 x) {
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

void silu_mul_avx2(int64_t n, const float* x, const float* m, float* y) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 s = silu8(_mm256_loadu_ps(x + i));
    _mm256_storeu_ps(y + i, m == nullptr ? s : _mm256_mul_ps(s, _mm256_loadu_ps(m + i)));
  }
  if (i < n) {
    const __m256i k = lane_mask(n - i);
    const __m256 s = silu8(_mm256_maskload_ps(x + i, k));
    _mm256_maskstore_ps(y + i, k, m == nullptr ? s : _mm256_mul_ps(s, _mm256_maskload_ps(m + i, k)));
  }
}

void conv_silu_avx2(int64_t n, int64_t taps, const float* w, const float* const* x, float* y) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    __m256 sum = _mm256_setzero_ps();
    for (int64_t j = 0; j < taps; ++j)
      sum = _mm256_add_ps(sum, _mm256_mul_ps(_mm256_loadu_ps(w + j * n + i), _mm256_loadu_ps(x[j] + i)));
    _mm256_storeu_ps(y + i, silu8(sum));
  }
  if (i < n) {
    const __m256i m = lane_mask(n - i);
    __m256 sum = _mm256_setzero_ps();
    for (int64_t j = 0; j < taps; ++j)
      sum = _mm256_add_ps(sum, _mm256_mul_ps(_mm256_maskload_ps(w + j * n + i, m), _mm256_maskload_ps(x[j] + i, m)));
    _mm256_maskstore_ps(y + i, m, silu8(sum));
  }
}

void softmax_avx2(int64_t n, float scale, float* x) {
  const __m256 sv = _mm256_set1_ps(scale);
  __m256 mv = _mm256_set1_ps(-__builtin_inff());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), sv);
    _mm256_storeu_ps(x + i, v);
    mv = _mm256_max_ps(mv, v);
  }
  float lanes[kLanes];
  _mm256_storeu_ps(lanes, mv);
  float max = lanes[0];
  for (int l = 1; l < kLanes; ++l) max = lanes[l] > max ? lanes[l] : max;
  for (; i < n; ++i) {
    x[i] *= scale;
    max = x[i] > max ? x[i] : max;
  }
  exp_shifted_avx2(n, max, x);
  __m256d sum0 = _mm256_setzero_pd(), sum1 = _mm256_setzero_pd();
  for (i = 0; i + kLanes <= n; i += kLanes) {
    sum0 = _mm256_add_pd(sum0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
    sum1 = _mm256_add_pd(sum1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
  }
  double d[4];
  _mm256_storeu_pd(d, _mm256_add_pd(sum0, sum1));
  double sum = (d[0] + d[1]) + (d[2] + d[3]);
  for (; i < n; ++i) sum += x[i];
  scale_avx2(n, static_cast<float>(1.0 / sum), x);
}

double sum_squares_avx2(const float* x, int64_t n) {
  __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256d lo = _mm256_cvtps_pd(_mm_loadu_ps(x + i));
    const __m256d hi = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4));
    acc0 = _mm256_fmadd_pd(lo, lo, acc0);
    acc1 = _mm256_fmadd_pd(hi, hi, acc1);
  }
  acc0 = _mm256_add_pd(acc0, acc1);
  double lanes[4];
  _mm256_storeu_pd(lanes, acc0);
  double acc = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i) acc += static_cast<double>(x[i]) * x[i];
  return acc;
}

// gemm_f32: MR rows × 2 vectors of 8 columns (16 columns), masked past n unless FULL. NEG: alpha is −1
// (fnmadd: the rounding of fma(−a, b, c)), else 1, A's elements broadcast straight from memory (the
// table's gemm_f32 takes alpha = ±1, kernel_table.h).
template <int MR, bool NEG, bool FULL>
void gemm_tile_avx2(int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc,
                    int64_t cols) {
  const __m256i m0 = lane_mask(cols), m1 = lane_mask(cols - 8);
  __m256 acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    acc[i][0] = FULL ? _mm256_loadu_ps(C + i * ldc) : _mm256_maskload_ps(C + i * ldc, m0);
    acc[i][1] = FULL ? _mm256_loadu_ps(C + i * ldc + 8) : _mm256_maskload_ps(C + i * ldc + 8, m1);
  }
  for (int64_t p = 0; p < k; ++p) {
    const __m256 b0 = FULL ? _mm256_loadu_ps(B + p * ldb) : _mm256_maskload_ps(B + p * ldb, m0);
    const __m256 b1 = FULL ? _mm256_loadu_ps(B + p * ldb + 8) : _mm256_maskload_ps(B + p * ldb + 8, m1);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 a = _mm256_broadcast_ss(A + i * lda + p);
      acc[i][0] = NEG ? _mm256_fnmadd_ps(a, b0, acc[i][0]) : _mm256_fmadd_ps(a, b0, acc[i][0]);
      acc[i][1] = NEG ? _mm256_fnmadd_ps(a, b1, acc[i][1]) : _mm256_fmadd_ps(a, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    if (FULL) {
      _mm256_storeu_ps(C + i * ldc, acc[i][0]);
      _mm256_storeu_ps(C + i * ldc + 8, acc[i][1]);
    } else {
      _mm256_maskstore_ps(C + i * ldc, m0, acc[i][0]);
      _mm256_maskstore_ps(C + i * ldc + 8, m1, acc[i][1]);
    }
  }
}

// Row tiles of 6 (12 accumulators of the 16 ymm registers; for_row_tiles).
template <bool NEG, bool FULL>
void gemm_rows_avx2(int64_t m, int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                    int64_t ldc, int64_t cols) {
  for_row_tiles(m, [&]<int MR>(int64_t i) {
    gemm_tile_avx2<MR, NEG, FULL>(k, A + i * lda, lda, B, ldb, C + i * ldc, ldc, cols);
  });
}

template <bool NEG>
void gemm_panels_avx2(int64_t m, int64_t n, int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb,
                      float* C, int64_t ldc) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) gemm_rows_avx2<NEG, true>(m, k, A, lda, B + j, ldb, C + j, ldc, 16);
  if (j < n) gemm_rows_avx2<NEG, false>(m, k, A, lda, B + j, ldb, C + j, ldc, n - j);
}

void gemm_f32_avx2(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda, const float* B,
                   int64_t ldb, float* C, int64_t ldc) {
  constexpr int64_t kBlock = 256;  // as in the AVX-512 version: exact, C carries the chain
  for_p_blocks(k, kBlock, alpha, [&]<bool NEG>(int64_t p, int64_t kb) {
    gemm_panels_avx2<NEG>(m, n, kb, A + p, lda, B + p * ldb, ldb, C, ldc);
  });
}

// FMA panels (F16 or Bf16Fma: 64 rows, 8 ymm of 8 rows), G ymm of them from ymm g0 on × TB tokens: per
// column the G upcast weight vectors, then one FMA per (row, token) lane — acc = fma(w, x, acc) over the
// columns in order from 0, as every such tile (fma16_tile_generic), so results never depend on the blocking.
template <bool BF16>
inline __m256 upcast16(const uint8_t* p) {
  const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(p));
  return BF16 ? bf16x8(v) : _mm256_cvtph_ps(v);
}

template <bool BF16, int G, int TB, bool PF = false>
void fma16_micro(const PackedView& w, const float* x, int64_t t, int64_t p, int g0, float* y) {
  const uint8_t* panel = w.data + p * w.cols * 2 * kFmaPanelRows + 16 * g0;
  const float* xt = x + t * w.cols;
  __m256 acc[G][TB];
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i)
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) acc[i][tt] = _mm256_setzero_ps();
  for (int64_t c = 0; c < w.cols; ++c) {
    const uint8_t* chunk = panel + c * 2 * kFmaPanelRows;
    if constexpr (PF) {  // decoding: the panel's stream kGemvPrefetchBytes ahead, into L2
      prefetch_l2(chunk + kGemvPrefetchBytes, 2 * kFmaPanelRows);
    }
    __m256 wv[G];
#pragma GCC unroll 8
    for (int i = 0; i < G; ++i) wv[i] = upcast16<BF16>(chunk + 16 * i);
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      const __m256 xv = _mm256_set1_ps(xt[tt * w.cols + c]);
#pragma GCC unroll 8
      for (int i = 0; i < G; ++i) acc[i][tt] = _mm256_fmadd_ps(wv[i], xv, acc[i][tt]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < G; ++i) {
    const int64_t r0 = p * kFmaPanelRows + 8 * (g0 + i);
    if (r0 >= w.rows) break;
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      float* dst = y + (t + tt) * w.rows + r0;
      if (w.rows - r0 >= 8) {
        _mm256_storeu_ps(dst, acc[i][tt]);
      } else {
        alignas(32) float lanes[8];
        _mm256_store_ps(lanes, acc[i][tt]);
        for (int64_t l = 0; l < w.rows - r0; ++l) dst[l] = lanes[l];
      }
    }
  }
}

template <bool BF16>
void fma16_panels(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p0, int64_t p1, float* y) {
  const bool prefetch = prefetch_weight_streams();
  for (int64_t p = p0; p < p1; ++p) {
    // Decode: whole panels (8 ymm), one token after another (with 4 tokens, half or quarter panels striding
    // over the 128-byte chunks read 20-25 % less of the bandwidth on Zen 4).
    if (t1 - t0 <= kGemvPrefetchTokens) {
      for (int64_t t = t0; t < t1; ++t) {
        if (prefetch) {
          fma16_micro<BF16, 8, 1, true>(w, x, t, p, 0, y);
        } else {
          fma16_micro<BF16, 8, 1, false>(w, x, t, p, 0, y);
        }
      }
      continue;
    }
    // Prefill: quarter panels (2 ymm) × 5 tokens: 10 accumulators, 2 weight vectors and the broadcast in 16
    // registers, 0.2 conversions per FMA (about 94 % of the ymm FMA peak on Zen 4).
    for (int g0 = 0; g0 < 8; g0 += 2) {
      int64_t t = t0;
      for (; t + 5 <= t1; t += 5) fma16_micro<BF16, 2, 5>(w, x, t, p, g0, y);
      with_count(t1 - t, [&]<int TB>() { fma16_micro<BF16, 2, TB>(w, x, t, p, g0, y); });
    }
  }
}

void fma16_tile_avx2(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p0, int64_t p1, float* y) {
  if (w.kind == PackKind::Bf16Fma) {
    fma16_panels<true>(w, x, t0, t1, p0, p1, y);
  } else {
    fma16_panels<false>(w, x, t0, t1, p0, p1, y);
  }
}

// ops.h's delta_rule_token over columns [e0, e0 + 8·(NV − 1) + the lanes of `last`), as the AVX-512 version:
// m, u and o of 32 columns in 12 of the 16 ymm registers. Per element the operations of scale_avx2 and
// axpy_avx2 (masked lanes load 0 and are never stored).
template <int NV>
void delta_block_avx2(int64_t dk, int64_t dv, int64_t e0, __m256i last, float decay, float beta, const float* q,
                      const float* k, const float* v, float* S, float* o) {
  const __m256 dec = _mm256_set1_ps(decay);
  const __m256i all = _mm256_set1_epi32(-1);
  __m256 m[NV], u[NV], acc[NV];
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) m[j] = acc[j] = _mm256_setzero_ps();
  const auto mask = [&](int j) { return j == NV - 1 ? last : all; };
  for (int64_t i = 0; i < dk; ++i) {
    float* row = S + i * dv + e0;
    const __m256 ki = _mm256_set1_ps(k[i]);
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const __m256 s = _mm256_mul_ps(dec, _mm256_maskload_ps(row + kLanes * j, mask(j)));
      _mm256_maskstore_ps(row + kLanes * j, mask(j), s);
      m[j] = _mm256_fmadd_ps(ki, s, m[j]);
    }
  }
  const __m256 bv = _mm256_set1_ps(beta);
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j)
    u[j] = _mm256_mul_ps(bv, _mm256_sub_ps(_mm256_maskload_ps(v + e0 + kLanes * j, mask(j)), m[j]));
  for (int64_t i = 0; i < dk; ++i) {
    float* row = S + i * dv + e0;
    const __m256 ki = _mm256_set1_ps(k[i]), qi = _mm256_set1_ps(q[i]);
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const __m256 s = _mm256_fmadd_ps(ki, u[j], _mm256_maskload_ps(row + kLanes * j, mask(j)));
      _mm256_maskstore_ps(row + kLanes * j, mask(j), s);
      acc[j] = _mm256_fmadd_ps(qi, s, acc[j]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) _mm256_maskstore_ps(o + e0 + kLanes * j, mask(j), acc[j]);
}

void delta_rule_token_avx2(int64_t dk, int64_t dv, float decay, float beta, const float* q, const float* k,
                           const float* v, float* S, float* o) {
  constexpr int64_t kBlock = 4 * kLanes;
  for (int64_t e0 = 0; e0 < dv; e0 += kBlock) {
    const int64_t cols = dv - e0 < kBlock ? dv - e0 : kBlock;
    const int64_t vectors = (cols + kLanes - 1) / kLanes;
    const __m256i last = lane_mask(cols - kLanes * (vectors - 1));
    with_count(vectors, [&]<int NV>() { delta_block_avx2<NV>(dk, dv, e0, last, decay, beta, q, k, v, S, o); });
  }
}

}  // namespace

const KernelTable& avx2_table() {
  static const KernelTable table{matmul_tile_avx2,      dequantize_row_avx2, dot_avx2,
                                 axpy_avx2,             scale_avx2,          exp_shifted_avx2,
                                 scale_to_avx2, transpose_scaled_avx2,
                                 gemm_f32_avx2,
                                 quantize_rows_avx2,    quantize_rows_super_avx2,
                                 int8_tile_avx2,     bf16_rows_generic,   bf16_tile_generic,
                                 fma16_tile_avx2,    silu_mul_avx2,       sum_squares_avx2,
                                 softmax_avx2,       conv_silu_avx2,      delta_rule_token_avx2};
  return table;
}

}  // namespace verdict::kernels::cpu
