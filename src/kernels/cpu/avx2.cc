// AVX2 + FMA kernels (compiled with -mavx2 -mfma -mf16c).
// Only ops.h, kernel_table.h and intrinsics here: see kernel_table.h.
#include <immintrin.h>

#include "kernels/cpu/kernel_table.h"

namespace verdict::kernels::cpu {
namespace {

constexpr int64_t kLanes = 8;

inline __m256i lane_mask(int64_t remaining) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(remaining)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Fixed-order horizontal sum.
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
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

void scale_avx2(int64_t n, float a, float* x) {
  const __m256 av = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm256_storeu_ps(x + i, _mm256_mul_ps(av, _mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = lane_mask(n - i);
    _mm256_maskstore_ps(x + i, m, _mm256_mul_ps(av, _mm256_maskload_ps(x + i, m)));
  }
}


// ---------------------------------------------------------------------------------------------------
// Packed Int8 (layout in ops.h) without VNNI: RH half panels × TB tokens. A half panel is 8 rows, one
// int32/fp32 lane each (lane i = row i), and one 32-byte load of a chunk is its 8 rows × 4 columns;
// vpmaddubsw multiplies those with the token's 4 activations (broadcast) and sums column pairs to int16,
// never saturating, so every integer dot product is exact:
//  * 8-bit: stored u in 0..255 is read as w = u ^ 0x80 = u − 128 (Σ u·x = Σ w·x + 128 · Σx), and
//    Σ w·x = maddubs(|w|, sign(x, w)): |w| ≤ 128 (abs(−128) read unsigned is 128), |x| ≤ 127, so a pair
//    sum is at most 2 · 128 · 127 = 32512; vpmaddwd with ones folds each chunk's pairs to int32 at once.
//  * 4-bit: maddubs(u, x) with u ≤ 15: a pair sum is at most 2 · 15 · 127 = 3810, so the 8 maddubs results
//    of a 32-column block (4 chunks × low/high nibbles) add up in int16 (≤ 8 · 3810 = 30480) and vpmaddwd
//    folds them once per block (Q3_K, and Q2_K's 2-bit values: with the half's scale, super_block_sums).
//  * 6-bit: the nibbles with their 2 high bits moved in, u ≤ 63: a pair sum is at most 2 · 63 · 127 =
//    16002, so two maddubs results add up in int16 and vpmaddwd folds every two (sub16 records: each).
//    5-bit records (u ≤ 31, fifth bit moved in) take the same steps.
//  * IQ4 (4-bit records of IQ4_NL/IQ4_XS nibbles, LUT): vpshufb looks up each nibble's signed value w =
//    kIq4Values[n] (the stored kIq4Stored[n] − 128, |w| ≤ 127), multiplied as the 8-bit path's w.
// Per lane the fp32 steps after each block (Q2_K, Q3_K: super-block) are the AVX-512 kernel's, in its order, and
// quantize_rows_avx2 gives the same q, d, qsum and xsum as quantize_rows_avx512: the results are those of
// the VNNI kernel bit for bit, whatever RH, TB, n or the thread split.

// The 6-bit values of chunks j and j + 4 of a record's half (s = j % 2): the nibbles `v` with the 2 high
// bits from the record's high-bit vector `h` (kernel_table.h) moved to bits 4–5.
inline void six_bit_chunks(__m256i v, __m256i h, int s, __m256i& lo, __m256i& hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
  const __m256i hl = _mm256_sll_epi16(h, _mm_cvtsi32_si128(4 - 2 * s));
  const __m256i hh = _mm256_srl_epi16(h, _mm_cvtsi32_si128(2 * s));
  lo = _mm256_or_si256(_mm256_and_si256(v, low4), _mm256_and_si256(hl, bits45));
  hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4), _mm256_and_si256(hh, bits45));
}

// The 5-bit values of chunks j and j + 4 of a record's half: the nibbles `v` with bit 4 from bits j and j + 4
// of the record's fifth-bit vector `h` (as five_bit_chunks in gemm_avx512.cc).
inline void five_bit_chunks(__m256i v, __m256i h, int j, __m256i& lo, __m256i& hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), bit4 = _mm256_set1_epi8(0x10);
  const __m256i hl = _mm256_sll_epi16(h, _mm_cvtsi32_si128(4 - j));
  const __m256i hh = _mm256_srl_epi16(h, _mm_cvtsi32_si128(j));
  lo = _mm256_or_si256(_mm256_and_si256(v, low4), _mm256_and_si256(hl, bit4));
  hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4), _mm256_and_si256(hh, bit4));
}

inline __m256i bcast4(const int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// Q2_K and Q3_K (kernel_table.h): adds block b's sums to the super-block's I (isum) and, for Q2_K, M (msum) of
// RH half panels from half g0 × TB tokens from t. acc and acc2 hold the int16 sums of columns 0–15 and 16–31
// (pairs per row lane); vpmaddwd with the half's scale in both int16 of the lane scales and adds each pair. The
// offset (Q3_K: −corr = 4) takes corr · Σ (scale · Σq) over the two halves, one vpmaddwd of the scales' pair with
// the activations' pairs16; Q2_K's M one vpmaddwd of the halves' (−m, −m') pair with them.
template <int RH, int TB, bool MINS>
inline void super_block_sums(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t g0, int64_t b,
                             int32_t corr, const __m256i (&acc)[RH][TB], const __m256i (&acc2)[RH][TB],
                             __m256i (&isum)[RH][TB], __m256i (&msum)[RH][TB]) {
  const auto pairs = [](const int8_t* first, const int8_t* second) {  // lane i: (first[i], second[i]) as int16
    return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(first)),
                                                  _mm_loadl_epi64(reinterpret_cast<const __m128i*>(second))));
  };
#pragma GCC unroll 8
  for (int h = 0; h < RH; ++h) {
    const int64_t panel = (g0 + h) / 2, half = 8 * ((g0 + h) % 2);
    const int8_t* f = w.factors + (panel * w.blocks + b) * kFactorBytes + half;
    const __m256i s_lo = pairs(f, f), s_hi = pairs(f + kPackRows, f + kPackRows);
    const __m256i s_corr = _mm256_mullo_epi16(pairs(f, f + kPackRows), _mm256_set1_epi16(static_cast<int16_t>(corr)));
    [[maybe_unused]] __m256i m_pair;
    if constexpr (MINS) {
      const int8_t* m = w.mins16 + (panel * w.blocks + b) * kMinBytes + half;
      m_pair = pairs(m, m + kPackRows);
    }
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      const __m256i x_pairs = _mm256_set1_epi32(a.pairs16[(t + tt) * a.blocks + b]);
      __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(acc[h][tt], s_lo), _mm256_madd_epi16(acc2[h][tt], s_hi));
      if (corr != 0) sum = _mm256_add_epi32(sum, _mm256_madd_epi16(s_corr, x_pairs));
      isum[h][tt] = _mm256_add_epi32(isum[h][tt], sum);
      if constexpr (MINS) msum[h][tt] = _mm256_add_epi32(msum[h][tt], _mm256_madd_epi16(m_pair, x_pairs));
    }
  }
}

// The fp32 step at the end of Q2_K and Q3_K super-blocks (b its last block): facc += (d·dx) · I, then, for Q2_K,
// += (dmin·dx) · M, each one fused multiply-add (ops.h; the AVX-512 tiles do the same).
template <int RH, int TB, bool MINS>
inline void super_block_step(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t g0, int64_t b,
                             const __m256i (&isum)[RH][TB], const __m256i (&msum)[RH][TB], __m256 (&facc)[RH][TB]) {
#pragma GCC unroll 8
  for (int h = 0; h < RH; ++h) {
    const int64_t panel = (g0 + h) / 2, half = 8 * ((g0 + h) % 2);
    const int64_t super_at = panel * (w.blocks / kSuperBlocks) + b / kSuperBlocks;
    const __m256 d = _mm256_loadu_ps(w.super_scales + super_at * kSuperFloats + half);
    [[maybe_unused]] __m256 dmin;
    if constexpr (MINS) dmin = _mm256_loadu_ps(w.min_scales + super_at * kMinFloats + half);
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      const __m256 dx = _mm256_set1_ps(a.d[(t + tt) * a.blocks + b]);
      facc[h][tt] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[h][tt]), _mm256_mul_ps(d, dx), facc[h][tt]);
      if constexpr (MINS)
        facc[h][tt] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum[h][tt]), _mm256_mul_ps(dmin, dx), facc[h][tt]);
    }
  }
}

// RH half panels from half g0 (rows 8 · g0 ..; half g is panel g / 2, rows 8 · (g % 2) .. + 7 of it) × TB
// tokens from t. SUB (sub16 records, 6-, 4- or 2-bit): columns 0–15 and 16–31 of a block sum separately (acc,
// acc2) and take their own scales; 4- and 2-bit ones (Q3_K; Q2_K, MINS: each half also has a min) sum whole
// super-blocks in integers (super_block_sums).
// STRIP (BITS = kStripTileBits, for 5- and 6-bit records): the values come from
// the records of panels g0 / 2 .. unpacked into `strip` (kernel_table.h).
template <int RH, int TB, int BITS, bool MINS, bool SUB = false, bool STRIP = false, bool LUT = false>
void int8_micro_avx2(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t g0, float* y,
                     const uint8_t* strip = nullptr) {
  static_assert(!LUT || (BITS == 4 && !MINS && !SUB && !STRIP), "IQ4 records: 4-bit, one scale per block");
  static_assert(!SUB || BITS == 6 || BITS == 4 || BITS == 2, "sub16 records are 6-, 4- or 2-bit");
  static_assert(!SUB || !MINS || (BITS == 2 && !STRIP), "sub16 records with mins (Q2_K) are 2-bit");
  static_assert(!STRIP || BITS == kStripTileBits, "one set of strip tiles for 5- and 6-bit records");
  const int64_t bs = STRIP ? kStripRecordBytes : w.block_stride;
  const uint8_t* rec[RH];  // the half's bytes in the record of block 0
#pragma GCC unroll 4
  for (int h = 0; h < RH; ++h)
    rec[h] = (STRIP ? strip + ((g0 + h) / 2 - g0 / 2) * w.blocks * bs : w.data + (g0 + h) / 2 * w.blocks * bs) +
             32 * ((g0 + h) % 2);
  // Σ u·x − offset · Σx = Σ (u − bias) · x + (bias − offset) · Σx, bias 128 for 8-bit weights (else 0).
  const int32_t corr = (BITS == 8 || LUT ? 128 : 0) - w.offset;
  const __m256i lut =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values)));
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i bias8 = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256 facc[RH][TB];
  constexpr bool SUPER = SUB && BITS <= 4;  // Q2_K, Q3_K: integer sums per super-block (kernel_table.h)
  [[maybe_unused]] __m256i isum[RH][TB], msum[RH][TB];
#pragma GCC unroll 8
  for (int h = 0; h < RH; ++h)
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      facc[h][tt] = _mm256_setzero_ps();
      if constexpr (SUPER) isum[h][tt] = msum[h][tt] = _mm256_setzero_si256();
    }
  for (int64_t b = 0; b < w.blocks; ++b) {
    if constexpr (TB == 1 && !STRIP) {  // the GEMV tile: the lines kGemvPrefetchBytes ahead, into L2
      prefetch_l2(w.data + g0 / 2 * w.blocks * bs + b * bs + kGemvPrefetchBytes, bs);
    }
    const int8_t* xb = a.q + t * a.cols + b * kQBlock;
    __m256i acc[RH][TB], acc2[SUB ? RH : 1][SUB ? TB : 1];
#pragma GCC unroll 8
    for (int h = 0; h < RH; ++h)
#pragma GCC unroll 8
      for (int tt = 0; tt < TB; ++tt) {
        acc[h][tt] = _mm256_setzero_si256();
        if constexpr (SUB) acc2[h][tt] = _mm256_setzero_si256();
      }
    // The chunk loops stay rolled: unrolled, GCC reassociates the integer sums across chunks and spills.
    if constexpr (BITS == 8) {
#pragma GCC unroll 1
      for (int j = 0; j < 8; ++j) {
        __m256i wa[RH], ws[RH];
#pragma GCC unroll 8
        for (int h = 0; h < RH; ++h) {
          ws[h] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec[h] + b * bs + 64 * j)),
                                   bias8);
          wa[h] = _mm256_abs_epi8(ws[h]);
        }
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m256i xv = bcast4(xb + tt * a.cols + 4 * j);
#pragma GCC unroll 8
          for (int h = 0; h < RH; ++h) {
            const __m256i pairs = _mm256_maddubs_epi16(wa[h], _mm256_sign_epi8(xv, ws[h]));
            acc[h][tt] = _mm256_add_epi32(acc[h][tt], _mm256_madd_epi16(pairs, ones));
          }
        }
      }
    } else if constexpr (BITS == 6 || BITS == 5) {
      // 5-bit records read their fifth-bit line (the last) first: without help the hardware prefetcher then
      // fell behind and the GEMV ran at 40 % of the 6-bit one's speed. The 5 lines of the record after next:
      if constexpr (BITS == 5 && !STRIP) {
        for (int k = 0; k < 5; ++k)
          _mm_prefetch(reinterpret_cast<const char*>(rec[0] + (b + 2) * bs + 64 * k), _MM_HINT_T0);
      }
#pragma GCC unroll 1
      for (int j = 0; j < 4; ++j) {
        __m256i lo[RH], hi[RH];
#pragma GCC unroll 8
        for (int h = 0; h < RH; ++h) {
          const uint8_t* at = rec[h] + b * bs;
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 64 * j));
          if constexpr (STRIP) {
            lo[h] = v;
            hi[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 64 * (j + 4)));
            continue;
          }
          if constexpr (BITS == 5) {
            five_bit_chunks(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + kFifthBits)), j, lo[h], hi[h]);
            continue;
          }
          const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 256 + 64 * high_bits_vector(j)));
          six_bit_chunks(v, hb, j % 2, lo[h], hi[h]);
        }
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m256i xl = bcast4(xb + tt * a.cols + 4 * j);
          const __m256i xh = bcast4(xb + tt * a.cols + 4 * j + 16);
#pragma GCC unroll 8
          for (int h = 0; h < RH; ++h) {
            const __m256i pl = _mm256_maddubs_epi16(lo[h], xl), ph = _mm256_maddubs_epi16(hi[h], xh);
            if constexpr (SUB) {
              acc[h][tt] = _mm256_add_epi32(acc[h][tt], _mm256_madd_epi16(pl, ones));
              acc2[h][tt] = _mm256_add_epi32(acc2[h][tt], _mm256_madd_epi16(ph, ones));
            } else {
              acc[h][tt] = _mm256_add_epi32(acc[h][tt], _mm256_madd_epi16(_mm256_add_epi16(pl, ph), ones));
            }
          }
        }
      }
    } else if constexpr (LUT) {
#pragma GCC unroll 1
      for (int j = 0; j < 4; ++j) {
        __m256i lo[RH], hi[RH], alo[RH], ahi[RH];  // signed values of chunks j and j + 4, and their |w|
#pragma GCC unroll 8
        for (int h = 0; h < RH; ++h) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec[h] + b * bs + 64 * j));
          lo[h] = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, low4));
          hi[h] = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
          alo[h] = _mm256_abs_epi8(lo[h]);
          ahi[h] = _mm256_abs_epi8(hi[h]);
        }
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m256i xl = bcast4(xb + tt * a.cols + 4 * j);
          const __m256i xh = bcast4(xb + tt * a.cols + 4 * j + 16);
#pragma GCC unroll 8
          for (int h = 0; h < RH; ++h) {
            const __m256i pl = _mm256_madd_epi16(_mm256_maddubs_epi16(alo[h], _mm256_sign_epi8(xl, lo[h])), ones);
            const __m256i ph = _mm256_madd_epi16(_mm256_maddubs_epi16(ahi[h], _mm256_sign_epi8(xh, hi[h])), ones);
            acc[h][tt] = _mm256_add_epi32(acc[h][tt], _mm256_add_epi32(pl, ph));
          }
        }
      }
    } else {  // 4-bit records, or 2-bit ones (chunks j and j + 4 at bits 2j of their two vectors)
#pragma GCC unroll 1
      for (int j = 0; j < 4; ++j) {
        __m256i lo[RH], hi[RH];
#pragma GCC unroll 8
        for (int h = 0; h < RH; ++h) {
          if constexpr (BITS == 2) {
            const __m256i three = _mm256_set1_epi8(3);
            const __m128i shift = _mm_cvtsi32_si128(2 * j);
            const uint8_t* at = rec[h] + b * bs;
            lo[h] = _mm256_and_si256(_mm256_srl_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)), shift),
                                     three);
            hi[h] = _mm256_and_si256(
                _mm256_srl_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 64)), shift), three);
            continue;
          }
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec[h] + b * bs + 64 * j));
          lo[h] = _mm256_and_si256(v, low4);
          hi[h] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
        }
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m256i xl = bcast4(xb + tt * a.cols + 4 * j);
          const __m256i xh = bcast4(xb + tt * a.cols + 4 * j + 16);
#pragma GCC unroll 8
          for (int h = 0; h < RH; ++h) {
            acc[h][tt] = _mm256_add_epi16(acc[h][tt], _mm256_maddubs_epi16(lo[h], xl));
            if constexpr (SUB) {  // the high nibbles are columns 16–31
              acc2[h][tt] = _mm256_add_epi16(acc2[h][tt], _mm256_maddubs_epi16(hi[h], xh));
            } else {
              acc[h][tt] = _mm256_add_epi16(acc[h][tt], _mm256_maddubs_epi16(hi[h], xh));
            }
          }
        }
      }
      if constexpr (SUPER) {  // Q2_K, Q3_K: each half's int16 sums times its scale, into the super-block's I
        super_block_sums<RH, TB, MINS>(w, a, t, g0, b, corr, acc, acc2, isum, msum);
        if (b % kSuperBlocks == kSuperBlocks - 1) {
          super_block_step<RH, TB, MINS>(w, a, t, g0, b, isum, msum, facc);
#pragma GCC unroll 8
          for (int h = 0; h < RH; ++h)
#pragma GCC unroll 8
            for (int tt = 0; tt < TB; ++tt) isum[h][tt] = msum[h][tt] = _mm256_setzero_si256();
        }
        continue;
      }
#pragma GCC unroll 8
      for (int h = 0; h < RH; ++h)
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          acc[h][tt] = _mm256_madd_epi16(acc[h][tt], ones);
          if constexpr (SUB) acc2[h][tt] = _mm256_madd_epi16(acc2[h][tt], ones);
        }
    }
    // The half's 8 scales at sc[h] and its second vector (mins, or the scales of columns 16–31) at
    // sc[h] + 16: in the record (MLX), or products of the file's factors (K-quants, IQ4_XS; exact), expanded
    // by matmul for a product of many tokens, else computed here.
    const float* sc[RH] = {};
    alignas(32) float factored[RH][24];
    const bool fp32_scales = MINS || SUB || w.factors != nullptr;  // else fp16 ones (Q8_0, Q4_0, Q5_0, IQ4_NL)
#pragma GCC unroll 8
    for (int h = 0; h < RH; ++h) {
      if (!fp32_scales) continue;
      const int64_t panel = (g0 + h) / 2, half = 8 * ((g0 + h) % 2);
      if (w.expanded != nullptr) {  // the products, expanded by matmul (K-quants, IQ4_XS)
        sc[h] = w.expanded + (panel * w.blocks + b) * 2 * kPackRows + half;
      } else if (SUB || w.factors != nullptr) {
        const int8_t* f = w.factors + (panel * w.blocks + b) * kFactorBytes + half;
        const float* s = w.super_scales + (panel * (w.blocks / kSuperBlocks) + b / kSuperBlocks) * kSuperFloats + half;
        const auto product = [](const float* d, const int8_t* factor) {
          const __m256 integer =
              _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(factor))));
          return _mm256_mul_ps(_mm256_loadu_ps(d), integer);
        };
        _mm256_store_ps(factored[h], product(s, f));
        _mm256_store_ps(factored[h] + 16, product(s + kPackRows, f + kPackRows));
        sc[h] = factored[h];
      } else {
        sc[h] = reinterpret_cast<const float*>(w.data + (panel * w.blocks + b) * w.block_stride +
                                               int8_weight_bytes(w.bits)) +
                half;
      }
    }
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      const int64_t at = (t + tt) * a.blocks + b;
      const __m256i cq = _mm256_set1_epi32(corr * (SUB ? a.qsum16[2 * at] : a.qsum[at]));
      const __m256 dx = _mm256_set1_ps(a.d[at]);
#pragma GCC unroll 8
      for (int h = 0; h < RH; ++h) {
        __m256 scale;
        if (fp32_scales) {
          scale = _mm256_loadu_ps(sc[h]);
        } else {  // fp16 scales beside the records (Q8_0, Q4_0, Q5_0, IQ4_NL): converted
          scale = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
              w.half_scales + ((g0 + h) / 2 * w.blocks + b) * kPackRows + 8 * ((g0 + h) % 2))));
        }
        const __m256 part = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc[h][tt], cq)), dx);
        facc[h][tt] = _mm256_fmadd_ps(part, scale, facc[h][tt]);
        if constexpr (MINS && !SUB)
          facc[h][tt] = _mm256_fmadd_ps(_mm256_loadu_ps(sc[h] + 16), _mm256_set1_ps(a.xsum[at]), facc[h][tt]);
        if constexpr (SUB) {  // the second half, with the second scale (where the mins would be)
          const __m256i cq2 = _mm256_set1_epi32(corr * a.qsum16[2 * at + 1]);
          const __m256 part2 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc2[h][tt], cq2)), dx);
          facc[h][tt] = _mm256_fmadd_ps(part2, _mm256_loadu_ps(sc[h] + 16), facc[h][tt]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int h = 0; h < RH; ++h) {
    const int64_t r0 = 8 * (g0 + h);
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      float* dst = y + (t + tt) * w.rows + r0;
      if (r0 + 8 <= w.rows) {
        _mm256_storeu_ps(dst, facc[h][tt]);
      } else {
        _mm256_maskstore_ps(dst, lane_mask(w.rows - r0), facc[h][tt]);
      }
    }
  }
}

// Tile shapes, half panels × tokens, for 16 ymm registers: 8-bit 2 × 3 (6 int32 accumulators plus |w| and w
// of 2 halves), 4-bit 2 × 4 (8 int16 accumulators plus 2 × 2 nibble vectors); the best of 1 × 6, 2 × 2..4 and
// 4 × 2 measured on the AMD EPYC build machine (docs/performance.md). Wider tiles spill.
// sub16 records (SUB) sum each block's halves apart: twice the accumulators, so 2 × 2; 6-bit records need
// two more registers for the high bits than 4-bit ones, so 2 × 3.
// IQ4 records (LUT, 4-bit) keep 4 more vectors per half (the looked-up values and their magnitudes) and spill
// at 2 × 4, but 2 × 4 still beat 2 × 2 and 2 × 3 (best 77, 65 and 75 GOPS, 3584 × 1024, 1 thread, Xeon).
template <int BITS, bool SUB = false>
struct Int8Tile {
  static constexpr int kHalves = 2;
  static constexpr int kTokens = SUB ? 2 : BITS == 4 ? 4 : 3;
};

// The 5- or 6-bit records of panels [p, p + panels) unpacked into `out` (kernel_table.h), as int8_micro_avx2
// unpacks them.
void unpack_panels(const PackedView& w, int64_t p, int64_t panels, uint8_t* out) {
  const auto at = [](const uint8_t* q) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(q)); };
  for (int64_t r = 0; r < panels * w.blocks; ++r) {
    const uint8_t* rec = w.data + (p * w.blocks + r) * w.block_stride;
    uint8_t* dst = out + r * kStripRecordBytes;
    for (int half = 0; half < 64; half += 32)
      for (int j = 0; j < 4; ++j) {  // chunks j (low nibbles) and j + 4 (high nibbles)
        __m256i lo, hi;
        if (w.bits == 5) {
          five_bit_chunks(at(rec + 64 * j + half), at(rec + kFifthBits + half), j, lo, hi);
        } else {
          six_bit_chunks(at(rec + 64 * j + half), at(rec + 256 + 64 * high_bits_vector(j) + half), j % 2, lo, hi);
        }
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst + 64 * j + half), lo);
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst + 64 * (j + 4) + half), hi);
      }
  }
}

// Tokens [t0, t1) of RH halves from g0: TB at a time, then the remainder. 5- and 6-bit records are unpacked
// into `scratch` first when at least two groups of tokens read them, and then read by the 6-bit strip tiles.
template <int RH, int BITS, bool MINS, bool SUB, bool LUT>
void int8_tokens_avx2(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t g0, float* y,
                      uint8_t* scratch) {
  constexpr int TB = Int8Tile<BITS, SUB>::kTokens;
  int64_t t = t0;
  if constexpr (unpacked_in_strips(BITS)) {
    if (t1 - t0 >= 2 * TB) {
      unpack_panels(w, g0 / 2, (g0 + RH - 1) / 2 - g0 / 2 + 1, scratch);
      for (; t + TB <= t1; t += TB)
        int8_micro_avx2<RH, TB, kStripTileBits, MINS, SUB, true>(w, a, t, g0, y, scratch);
      with_count(t1 - t, [&]<int N>() {
        if constexpr (N < TB) int8_micro_avx2<RH, N, kStripTileBits, MINS, SUB, true>(w, a, t, g0, y, scratch);
      });
      return;
    }
  }
  for (; t + TB <= t1; t += TB) int8_micro_avx2<RH, TB, BITS, MINS, SUB, false, LUT>(w, a, t, g0, y);
  with_count(t1 - t, [&]<int N>() {
    if constexpr (N < TB) int8_micro_avx2<RH, N, BITS, MINS, SUB, false, LUT>(w, a, t, g0, y);
  });
}

template <int BITS, bool MINS, bool SUB = false, bool LUT = false>
void int8_panels_avx2(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                      float* y, uint8_t* scratch) {
  constexpr int RH = Int8Tile<BITS, SUB>::kHalves;
  // Halves with rows: those of panels [p0, p1) below w.rows.
  const int64_t g1 = 2 * p1 < (w.rows + 7) / 8 ? 2 * p1 : (w.rows + 7) / 8;
  int64_t g = 2 * p0;
  for (; g + RH <= g1; g += RH) int8_tokens_avx2<RH, BITS, MINS, SUB, LUT>(w, a, t0, t1, g, y, scratch);
  for (; g < g1; ++g) int8_tokens_avx2<1, BITS, MINS, SUB, LUT>(w, a, t0, t1, g, y, scratch);
}

void int8_tile_avx2(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                    float* y, uint8_t* scratch) {
  if (w.iq4) {  // IQ4_NL (fp16 scales), IQ4_XS (factored ones)
    int8_panels_avx2<4, false, false, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.mins16 != nullptr) {  // Q2_K
    int8_panels_avx2<2, true, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.sub16 && w.bits == 4) {  // Q3_K
    int8_panels_avx2<4, false, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.sub16) {  // Q6_K
    int8_panels_avx2<6, false, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.bits == 8) {
    if (w.has_mins) {
      int8_panels_avx2<8, true>(w, a, t0, t1, p0, p1, y, scratch);
    } else {
      int8_panels_avx2<8, false>(w, a, t0, t1, p0, p1, y, scratch);
    }
  } else if (w.bits == 6) {  // MLX 6-bit
    int8_panels_avx2<6, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.bits == 5 && w.has_mins) {  // Q5_K, Q5_1
    int8_panels_avx2<5, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.bits == 5) {  // Q5_0
    int8_panels_avx2<5, false>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.has_mins) {
    int8_panels_avx2<4, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else {
    int8_panels_avx2<4, false>(w, a, t0, t1, p0, p1, y, scratch);
  }
}

// Same q, d and qsum as quantize_rows_generic (max is exact, one fp32 multiply, round to nearest even), and the
// same xsum as quantize_rows_avx512.
void quantize_rows_avx2(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d, int32_t* qsum,
                        float* xsum) {
  const int64_t blocks = cols / kQBlock;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t b = 0; b < blocks; ++b) {
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
      // int32 → int8 (values within ±127): two packs, then undo their lane interleave.
      const __m256i p16a = _mm256_packs_epi32(qi[0], qi[1]);
      const __m256i p16b = _mm256_packs_epi32(qi[2], qi[3]);
      const __m256i p8 = _mm256_packs_epi16(p16a, p16b);
      const __m256i ordered = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + t * cols + b * kQBlock), ordered);
      __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
      s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
      s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
      d[t * blocks + b] = int8_block_scale(amax);
      qsum[t * blocks + b] = _mm_cvtsi128_si32(s4);
      xsum[t * blocks + b] = hsum(s);
    }
  }
}

// Same q, d, qsum and xsum as quantize_rows_super_generic (block_q8_K: one scale per 256 columns).
void quantize_rows_super_avx2(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                              int32_t* qsum, float* xsum) {
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
        __m256i qi[4], sum = _mm256_setzero_si256();
        for (int i = 0; i < 4; ++i) {
          qi[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + t * cols + b * kQBlock + 8 * i), iv));
          sum = _mm256_add_epi32(sum, qi[i]);
        }
        const __m256i p8 = _mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]), _mm256_packs_epi32(qi[2], qi[3]));
        const __m256i ordered = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + t * cols + b * kQBlock), ordered);
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
        const int32_t total = _mm_cvtsi128_si32(s4);
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

void mul_acc_avx2(int64_t n, const float* a, const float* b, float* y) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 p = _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), p));
  }
  if (i < n) {
    const __m256i m = lane_mask(n - i);
    const __m256 p = _mm256_mul_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m));
    _mm256_maskstore_ps(y + i, m, _mm256_add_ps(_mm256_maskload_ps(y + i, m), p));
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
  const bool prefetch = prefetch_16bit_streams();
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
                                 gemm_f32_avx2,
                                 quantize_rows_avx2,    quantize_rows_super_avx2,
                                 int8_tile_avx2,     bf16_rows_generic,   bf16_tile_generic,
                                 fma16_tile_avx2,    silu_mul_avx2,       sum_squares_avx2,
                                 softmax_avx2,       mul_acc_avx2,        delta_rule_token_avx2};
  return table;
}

}  // namespace verdict::kernels::cpu
