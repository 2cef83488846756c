// The AVX2 Int8 tiles (packed layout in ops.h), shared by avx2.cc (-mavx2 -mfma -mf16c) and avx2_vnni.cc (the
// same flags and -mavxvnni): int8_tile_avx2_impl<false> multiplies with vpmaddubsw and vpmaddwd, <true> with
// AVX-VNNI's vpdpbusd on ymm registers wherever a block's integer sums go straight to int32. Integer sums are
// exact in any order, and the fp32 steps are the same, so both give the AVX-512 VNNI kernel's results bit for
// bit. Only ops.h, kernel_table.h and intrinsics here: see kernel_table.h. Its functions have internal linkage:
// each of the two files compiles its own copy for its own flags.
#pragma once
#include <immintrin.h>

#include "kernels/cpu/kernel_table.h"

namespace verdict::kernels::cpu {
namespace {  // NOLINT(cert-dcl59-cpp,google-build-namespaces): one copy per instruction-set file, by design

inline __m256i lane_mask(int64_t remaining) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(remaining)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// ---------------------------------------------------------------------------------------------------
// Packed Int8 (layout in ops.h) on AVX2: RH half panels × TB tokens. A half panel is 8 rows, one
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
//    16002, so two maddubs results add up in int16 and vpmaddwd folds every two (sub16 records, Q6_K: each,
//    times its half's scale, at most 16002 · 128).
//    5-bit records (u ≤ 31, fifth bit moved in) take the same steps.
//  * IQ4 (4-bit records of IQ4_NL/IQ4_XS nibbles, LUT): vpshufb looks up each nibble's signed value w =
//    kIq4Values[n] (the stored kIq4Stored[n] − 128, |w| ≤ 127), multiplied as the 8-bit path's w.
// With AVX-VNNI (VNNI = true) vpdpbusd multiplies the unsigned values u with x and sums each row's 4 products
// straight into int32 (8-bit and IQ4 records as stored, offset included: bias 0), for every record kind but Q2_K
// and Q3_K, whose int16 half sums super_block_sums scales as above.
// Per lane the fp32 steps after each block (Q2_K, Q3_K, Q6_K: super-block) are the AVX-512 kernel's, in its order, and
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

// acc + the products of chunk j's values lo with activations xl and of chunk j + 4's hi with xh, summed per row
// lane in groups of 4 (AVX-VNNI's vpdpbusd: u8 × s8, into int32 without saturation).
template <bool VNNI>
inline __m256i dpbusd_pair(__m256i acc, __m256i lo, __m256i xl, __m256i hi, __m256i xh) {
  static_assert(VNNI, "vpdpbusd is AVX-VNNI's");
  return _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(acc, lo, xl), hi, xh);
}

inline __m256i bcast4(const int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// Lane i (of 8): (first[i], second[i]) as int16.
inline __m256i pairs(const int8_t* first, const int8_t* second) {
  return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(first)),
                                                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(second))));
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

// Q6_K (kernel_table.h): adds block b's sums to the super-block's I of RH half panels from half g0 × TB tokens
// from t. With AVX-VNNI acc and acc2 hold the int32 sums Σ (u + corr)·x of columns 0–15 and 16–31 (u the stored
// value, corr = −32; a half's sum does not fit int16: they started from corr · the half's Σq), each multiplied here
// by its half's scale. Without, the chunk loop has scaled and added both halves' Σ u·x into acc already (its
// vpmaddwd take the scales), and the offset adds corr · Σ (scale · Σq) over the two halves: one vpmaddwd of the
// scales' pair times corr (|32 · sc| ≤ 4096) with the activations' pairs16.
template <bool VNNI, int RH, int TB>
inline void six_bit_super_sums(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t g0, int64_t b,
                               int32_t corr, const __m256i (&acc)[RH][TB], const __m256i (&acc2)[RH][TB],
                               __m256i (&isum)[RH][TB]) {
  const auto int32s = [](const int8_t* f) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(f)));
  };
#pragma GCC unroll 8
  for (int h = 0; h < RH; ++h) {
    const int64_t panel = (g0 + h) / 2, half = 8 * ((g0 + h) % 2);
    const int8_t* f = w.factors + (panel * w.blocks + b) * kFactorBytes + half;
    if constexpr (VNNI) {
      const __m256i s_lo = int32s(f), s_hi = int32s(f + kPackRows);
#pragma GCC unroll 8
      for (int tt = 0; tt < TB; ++tt)
        isum[h][tt] = _mm256_add_epi32(
            isum[h][tt], _mm256_add_epi32(_mm256_mullo_epi32(acc[h][tt], s_lo), _mm256_mullo_epi32(acc2[h][tt], s_hi)));
    } else {
      const __m256i s_corr = _mm256_mullo_epi16(pairs(f, f + kPackRows), _mm256_set1_epi16(static_cast<int16_t>(corr)));
#pragma GCC unroll 8
      for (int tt = 0; tt < TB; ++tt) {
        const __m256i x_pairs = _mm256_set1_epi32(a.pairs16[(t + tt) * a.blocks + b]);
        isum[h][tt] = _mm256_add_epi32(isum[h][tt], _mm256_add_epi32(acc[h][tt], _mm256_madd_epi16(s_corr, x_pairs)));
      }
    }
  }
}

// The fp32 step at the end of Q2_K, Q3_K and Q6_K super-blocks (when b is its last block): facc += (d·dx) · I,
// then, for Q2_K, += (dmin·dx) · M, each one fused multiply-add (ops.h; the AVX-512 tiles do the same); then I and M
// start again from 0.
template <int RH, int TB, bool MINS>
inline void super_block_step(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t g0, int64_t b,
                             __m256i (&isum)[RH][TB], __m256i (&msum)[RH][TB], __m256 (&facc)[RH][TB]) {
  if (b % kSuperBlocks != kSuperBlocks - 1) return;
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
      isum[h][tt] = msum[h][tt] = _mm256_setzero_si256();
    }
  }
}

// RH half panels from half g0 (rows 8 · g0 ..; half g is panel g / 2, rows 8 · (g % 2) .. + 7 of it) × TB
// tokens from t. SUB (sub16 records, 6-, 4- or 2-bit): columns 0–15 and 16–31 of a block sum separately (acc,
// acc2), take their own integer scales and sum whole super-blocks in integers: 4- and 2-bit ones (Q3_K; Q2_K,
// MINS: each half also has a min) in super_block_sums, 6-bit ones (Q6_K) in six_bit_super_sums.
// STRIP (BITS = kStripTileBits, for 5- and 6-bit records): the values come from
// the records of panels g0 / 2 .. unpacked into `strip` (kernel_table.h).
// HALF: fp16 scales beside the records (w.half_scales: Q8_0, Q4_0, Q5_0, IQ4_NL), known when compiled so that
// the block loop carries no branch to the other scale sources (int8_micro_avx2 chooses; as int8_micro on
// AVX-512, docs/performance.md).
// BIAS (AVX-VNNI, records without factors): the biased fold (kernel_table.h), the sums starting from
// a.biased_starts and one fused multiply-add by dx and a.bias_d giving float(Σ) · dx, where the offset's add, a
// conversion and a multiply were: the same bits.
template <bool VNNI, int RH, int TB, int BITS, bool MINS, bool SUB, bool STRIP, bool LUT, bool HALF, bool BIAS = false>
void int8_micro_avx2_body(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t g0, float* y,
                          const uint8_t* strip) {
  static_assert(!LUT || (BITS == 4 && !MINS && !SUB && !STRIP), "IQ4 records: 4-bit, one scale per block");
  static_assert(!SUB || BITS == 6 || BITS == 4 || BITS == 2, "sub16 records are 6-, 4- or 2-bit");
  static_assert(!SUB || !MINS || (BITS == 2 && !STRIP), "sub16 records with mins (Q2_K) are 2-bit");
  static_assert(!STRIP || BITS == kStripTileBits, "one set of strip tiles for 5- and 6-bit records");
  static_assert(!BIAS || (VNNI && !SUB), "the biased fold: vpdpbusd's int32 sums, one per block");
  const int64_t bs = STRIP ? kStripRecordBytes : w.block_stride;
  const uint8_t* rec[RH];  // the half's bytes in the record of block 0
#pragma GCC unroll 8
  for (int h = 0; h < RH; ++h)
    rec[h] = (STRIP ? strip + ((g0 + h) / 2 - g0 / 2) * w.blocks * bs : w.data + (g0 + h) / 2 * w.blocks * bs) +
             32 * ((g0 + h) % 2);
  // Σ u·x − offset · Σx = Σ (u − bias) · x + (bias − offset) · Σx, bias 128 for 8-bit and IQ4 weights
  // multiplied as signed values (else 0: vpmaddubsw and vpdpbusd multiply unsigned u).
  const int32_t corr = ((BITS == 8 || LUT) && !VNNI ? 128 : 0) - w.offset;
  const __m256i lut = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(VNNI ? kIq4Stored : reinterpret_cast<const uint8_t*>(kIq4Values))));
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i bias8 = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256 facc[RH][TB];
  constexpr bool SUPER = SUB;  // Q2_K, Q3_K, Q6_K: integer sums per super-block (kernel_table.h)
  [[maybe_unused]] __m256i isum[RH][TB], msum[RH][TB];
#pragma GCC unroll 8
  for (int h = 0; h < RH; ++h)
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      facc[h][tt] = _mm256_setzero_ps();
      if constexpr (SUPER) isum[h][tt] = msum[h][tt] = _mm256_setzero_si256();
    }
  [[maybe_unused]] const bool prefetch = TB == 1 && !STRIP && prefetch_weight_streams();
  for (int64_t b = 0; b < w.blocks; ++b) {
    if constexpr (TB == 1 && !STRIP) {  // the GEMV tile: the lines kGemvPrefetchBytes ahead, into L2
      if (prefetch) prefetch_l2(w.data + g0 / 2 * w.blocks * bs + b * bs + kGemvPrefetchBytes, bs);
    }
    const int8_t* xb = a.q + t * a.cols + b * kQBlock;
    __m256i acc[RH][TB], acc2[SUB ? RH : 1][SUB ? TB : 1];
#pragma GCC unroll 8
    for (int h = 0; h < RH; ++h)
#pragma GCC unroll 8
      for (int tt = 0; tt < TB; ++tt) {
        acc[h][tt] = BIAS ? _mm256_set1_epi32(a.biased_starts[(t + tt) * a.blocks + b]) : _mm256_setzero_si256();
        if constexpr (SUB) acc2[h][tt] = _mm256_setzero_si256();
        if constexpr (SUB && BITS == 6 && VNNI) {  // Q6_K: from corr · each half's Σq (six_bit_super_sums)
          const int32_t* qs = a.qsum16 + 2 * ((t + tt) * a.blocks + b);
          acc[h][tt] = _mm256_set1_epi32(corr * qs[0]);
          acc2[h][tt] = _mm256_set1_epi32(corr * qs[1]);
        }
      }
    // The chunk loops stay rolled: unrolled, GCC reassociates the integer sums across chunks and spills.
    if constexpr (BITS == 8 && VNNI) {
#pragma GCC unroll 1
      for (int j = 0; j < 8; ++j) {
        __m256i wv[RH];
#pragma GCC unroll 8
        for (int h = 0; h < RH; ++h)
          wv[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rec[h] + b * bs + 64 * j));
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m256i xv = bcast4(xb + tt * a.cols + 4 * j);
#pragma GCC unroll 8
          for (int h = 0; h < RH; ++h) acc[h][tt] = _mm256_dpbusd_avx_epi32(acc[h][tt], wv[h], xv);
        }
      }
    } else if constexpr (BITS == 8) {
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
      // Q6_K without AVX-VNNI: each row's two scales as int16 pairs (sc, sc), which the chunks' vpmaddwd multiply
      // with (a pair sum times the scale is at most 16002 · 128).
      [[maybe_unused]] __m256i scales16[SUB && !VNNI ? RH : 1][2];
      if constexpr (SUB && !VNNI) {
#pragma GCC unroll 8
        for (int h = 0; h < RH; ++h) {
          const int8_t* f = w.factors + ((g0 + h) / 2 * w.blocks + b) * kFactorBytes + 8 * ((g0 + h) % 2);
          scales16[h][0] = pairs(f, f);
          scales16[h][1] = pairs(f + kPackRows, f + kPackRows);
        }
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
            if constexpr (VNNI && SUB) {
              acc[h][tt] = _mm256_dpbusd_avx_epi32(acc[h][tt], lo[h], xl);
              acc2[h][tt] = _mm256_dpbusd_avx_epi32(acc2[h][tt], hi[h], xh);
              continue;
            } else if constexpr (VNNI) {
              acc[h][tt] = dpbusd_pair<VNNI>(acc[h][tt], lo[h], xl, hi[h], xh);
              continue;
            }
            const __m256i pl = _mm256_maddubs_epi16(lo[h], xl), ph = _mm256_maddubs_epi16(hi[h], xh);
            if constexpr (SUB) {  // both halves times their scales into acc (six_bit_super_sums)
              const __m256i scaled =
                  _mm256_add_epi32(_mm256_madd_epi16(pl, scales16[h][0]), _mm256_madd_epi16(ph, scales16[h][1]));
              acc[h][tt] = _mm256_add_epi32(acc[h][tt], scaled);
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
          lo[h] = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, low4));  // VNNI: the stored (unsigned) values
          hi[h] = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
          if constexpr (!VNNI) {
            alo[h] = _mm256_abs_epi8(lo[h]);
            ahi[h] = _mm256_abs_epi8(hi[h]);
          }
        }
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m256i xl = bcast4(xb + tt * a.cols + 4 * j);
          const __m256i xh = bcast4(xb + tt * a.cols + 4 * j + 16);
#pragma GCC unroll 8
          for (int h = 0; h < RH; ++h) {
            if constexpr (VNNI) {
              acc[h][tt] = dpbusd_pair<VNNI>(acc[h][tt], lo[h], xl, hi[h], xh);
              continue;
            }
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
            if constexpr (VNNI && !SUPER) {  // int32 sums at once (4-bit without sub16: Q4_0, Q4_1, Q4_K, MLX 4-bit)
              acc[h][tt] = dpbusd_pair<VNNI>(acc[h][tt], lo[h], xl, hi[h], xh);
              continue;
            }
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
        super_block_step<RH, TB, MINS>(w, a, t, g0, b, isum, msum, facc);
        continue;
      }
      if constexpr (!VNNI) {
#pragma GCC unroll 8
        for (int h = 0; h < RH; ++h)
#pragma GCC unroll 8
          for (int tt = 0; tt < TB; ++tt) acc[h][tt] = _mm256_madd_epi16(acc[h][tt], ones);
      }
    }
    if constexpr (SUPER && BITS == 6) {  // Q6_K: the halves' int32 sums times their scales, into I
      six_bit_super_sums<VNNI, RH, TB>(w, a, t, g0, b, corr, acc, acc2, isum);
      super_block_step<RH, TB, false>(w, a, t, g0, b, isum, msum, facc);
      continue;
    }
    // The half's 8 scales at sc[h] and its mins at sc[h] + 16: in the record (MLX), or products of the file's
    // factors (Q4_K, Q5_K, IQ4_XS; exact), expanded by matmul for a product of many tokens, else computed here.
    const float* sc[RH] = {};
    alignas(32) float factored[RH][24];
    const bool fp32_scales = !HALF && (MINS || w.factors != nullptr);  // else fp16 ones (Q8_0, Q4_0, Q5_0, IQ4_NL)
#pragma GCC unroll 8
    for (int h = 0; h < RH; ++h) {
      if (!fp32_scales) continue;
      const int64_t panel = (g0 + h) / 2, half = 8 * ((g0 + h) % 2);
      if (w.expanded != nullptr) {  // the products, expanded by matmul (K-quants, IQ4_XS)
        sc[h] = w.expanded + (panel * w.blocks + b) * 2 * kPackRows + half;
      } else if (w.factors != nullptr) {
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
      [[maybe_unused]] __m256i cq;
      [[maybe_unused]] __m256 bias_dx;
      if constexpr (BIAS) {
        bias_dx = _mm256_set1_ps(a.bias_d[at]);
      } else {
        cq = _mm256_set1_epi32(corr * a.qsum[at]);
      }
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
        const __m256 part = BIAS ? _mm256_fmadd_ps(_mm256_castsi256_ps(acc[h][tt]), dx, bias_dx)
                                 : _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc[h][tt], cq)), dx);
        facc[h][tt] = _mm256_fmadd_ps(part, scale, facc[h][tt]);
        if constexpr (MINS)
          facc[h][tt] = _mm256_fmadd_ps(_mm256_loadu_ps(sc[h] + 16), _mm256_set1_ps(a.xsum[at]), facc[h][tt]);
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

// BIAS: the biased fold, for the records without factors (a.bias_d set: biased_fold_applies).
template <bool VNNI, int RH, int TB, int BITS, bool MINS, bool SUB = false, bool STRIP = false, bool LUT = false,
          bool BIAS = false>
void int8_micro_avx2(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t g0, float* y,
                     const uint8_t* strip = nullptr) {
  if constexpr (always_half_scales(MINS, SUB, LUT)) {
    int8_micro_avx2_body<VNNI, RH, TB, BITS, MINS, SUB, STRIP, LUT, true, BIAS>(w, a, t, g0, y, strip);
  } else {
    if constexpr (!MINS && !SUB) {
      if (w.factors == nullptr) {  // IQ4_NL
        int8_micro_avx2_body<VNNI, RH, TB, BITS, MINS, SUB, STRIP, LUT, true, BIAS>(w, a, t, g0, y, strip);
        return;
      }
    }
    if constexpr (MINS && !SUB) {
      if (w.factors == nullptr) {  // MLX, Q4_1, Q5_1
        int8_micro_avx2_body<VNNI, RH, TB, BITS, MINS, SUB, STRIP, LUT, false, BIAS>(w, a, t, g0, y, strip);
        return;
      }
    }
    int8_micro_avx2_body<VNNI, RH, TB, BITS, MINS, SUB, STRIP, LUT, false>(w, a, t, g0, y, strip);
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
// With AVX-VNNI, records without factors take the biased fold where int8_product gave the tiles a.bias_d.
template <bool VNNI, int RH, int BITS, bool MINS, bool SUB, bool LUT, bool BIAS>
void int8_tokens_avx2_as(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t g0, float* y,
                         uint8_t* scratch) {
  constexpr int TB = Int8Tile<BITS, SUB>::kTokens;
  int64_t t = t0;
  if constexpr (unpacked_in_strips(BITS)) {
    if (t1 - t0 >= 2 * TB) {
      unpack_panels(w, g0 / 2, (g0 + RH - 1) / 2 - g0 / 2 + 1, scratch);
      for (; t + TB <= t1; t += TB)
        int8_micro_avx2<VNNI, RH, TB, kStripTileBits, MINS, SUB, true, false, BIAS>(w, a, t, g0, y, scratch);
      with_count(t1 - t, [&]<int N>() {
        if constexpr (N < TB)
          int8_micro_avx2<VNNI, RH, N, kStripTileBits, MINS, SUB, true, false, BIAS>(w, a, t, g0, y, scratch);
      });
      return;
    }
  }
  for (; t + TB <= t1; t += TB) int8_micro_avx2<VNNI, RH, TB, BITS, MINS, SUB, false, LUT, BIAS>(w, a, t, g0, y);
  with_count(t1 - t, [&]<int N>() {
    if constexpr (N < TB) int8_micro_avx2<VNNI, RH, N, BITS, MINS, SUB, false, LUT, BIAS>(w, a, t, g0, y);
  });
}

template <bool VNNI, int RH, int BITS, bool MINS, bool SUB, bool LUT>
void int8_tokens_avx2(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t g0, float* y,
                      uint8_t* scratch) {
  if constexpr (VNNI && !SUB) {
    if (a.bias_d != nullptr) {
      int8_tokens_avx2_as<VNNI, RH, BITS, MINS, SUB, LUT, true>(w, a, t0, t1, g0, y, scratch);
      return;
    }
  }
  int8_tokens_avx2_as<VNNI, RH, BITS, MINS, SUB, LUT, false>(w, a, t0, t1, g0, y, scratch);
}

// One token goes 4 panels (8 halves) at a time where the tiles do not prefetch in software (WeightStreams::Wide:
// AMD CPUs) and each panel's records fill at least kGemvWidePanelBytes (Q8_0 from 2,048 columns, Q4_0, Q4_K and
// IQ4 from 4,096; Q4_1 and MLX records, which hold their scales, from fewer), for 8-bit and plain 4-bit records
// (IQ4 ones only with AVX-VNNI). On a Zen 5 EPYC under VERDICT_ISA=avx2 (`BM_Gemv`, n = 1, 2 threads, the two
// tiles alternating) Q8_0 matrices of 2,048 to 12,288 columns rose from 39–60 to 54–71 GB/s and Q4_0 ones of 4,096
// to 12,288 from 35–43 to 48–67, with AVX-VNNI or without. Shorter panels (4-bit records of 2,048 columns, any of
// 1,024) ran up to a fifth slower, and so did 4 halves there; 5- and 6-bit records and IQ4 ones without AVX-VNNI
// (more registers per half) gained little or lost (docs/performance.md, "Four panels on the AVX2 tiles").
constexpr int kGemvWideHalves = 2 * kGemvWidePanels;
constexpr int64_t kGemvWidePanelBytes = 32 * 1024;

// 2 to 4 tokens of 8-bit records (continuous batching decoding several sequences) go several panels at a time there
// too, from the same panel size: 2 tokens 4 panels (8 × 2 sums), 3 or 4 tokens 2 panels (4 halves; without AVX-VNNI
// only from kWideTokensCols columns). They had run one panel at a time, at 40–70 % of one token's read rate. On a Zen 5
// EPYC under VERDICT_ISA=avx2 (`BM_Gemv/3/ROWS/COLS/N/2`, best GB/s, the old and new tiles alternating two or three
// times): 2 tokens 36–40 → 49–65 with AVX-VNNI, 34–37 → 40–52 without; 3 tokens 33–35 → 42–52 on panels of 6144 or
// 12288 columns (level on 2048), 4 tokens 26–27 → 30–41. On panels under 32 KiB (1024 columns) 4 panels read less (the
// 248,320 × 1024 output matrix, 2 tokens: 44–47 → 39–40), and 4-bit records gained on some shapes and lost on others;
// those keep one panel (docs/performance.md, "Several sequences on the AVX2 tiles").
template <bool VNNI>
int wide_token_halves(const PackedView& w, int64_t n) {
  if (n < 2 || n > 4 || prefetch_weight_streams() || w.blocks * w.block_stride < kGemvWidePanelBytes) return 0;
  if (n == 2) return kGemvWideHalves;
  return VNNI || w.cols >= kWideTokensCols ? kGemvWideHalves / 2 : 0;
}

template <bool VNNI, int BITS, bool MINS, bool SUB = false, bool LUT = false>
void int8_panels_avx2(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                      float* y, uint8_t* scratch) {
  constexpr int RH = Int8Tile<BITS, SUB>::kHalves;
  // Halves with rows: those of panels [p0, p1) below w.rows.
  const int64_t g1 = 2 * p1 < (w.rows + 7) / 8 ? 2 * p1 : (w.rows + 7) / 8;
  int64_t g = 2 * p0;
  if constexpr (BITS == 8 || (BITS == 4 && !SUB && (VNNI || !LUT))) {
    if (t1 - t0 == 1 && !prefetch_weight_streams() && w.blocks * w.block_stride >= kGemvWidePanelBytes)
      for (; g + kGemvWideHalves <= g1; g += kGemvWideHalves)
        int8_micro_avx2<VNNI, kGemvWideHalves, 1, BITS, MINS, SUB, false, LUT>(w, a, t0, g, y);
  }
  if constexpr (BITS == 8) {
    const int halves = wide_token_halves<VNNI>(w, t1 - t0);
    with_count(halves != 0 ? t1 - t0 : 0, [&]<int TB>() {
      constexpr int kHalves = TB == 2 ? kGemvWideHalves : kGemvWideHalves / 2;
      if constexpr (TB >= 2 && TB <= 4)
        for (; g + kHalves <= g1; g += kHalves) int8_micro_avx2<VNNI, kHalves, TB, BITS, MINS>(w, a, t0, g, y);
    });
  }
  for (; g + RH <= g1; g += RH) int8_tokens_avx2<VNNI, RH, BITS, MINS, SUB, LUT>(w, a, t0, t1, g, y, scratch);
  for (; g < g1; ++g) int8_tokens_avx2<VNNI, 1, BITS, MINS, SUB, LUT>(w, a, t0, t1, g, y, scratch);
}

template <bool VNNI>
void int8_tile_avx2_impl(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0,
                         int64_t p1, float* y, uint8_t* scratch) {
  if (w.iq4) {  // IQ4_NL (fp16 scales), IQ4_XS (factored ones)
    int8_panels_avx2<VNNI, 4, false, false, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.mins16 != nullptr) {  // Q2_K
    int8_panels_avx2<VNNI, 2, true, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.sub16 && w.bits == 4) {  // Q3_K
    int8_panels_avx2<VNNI, 4, false, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.sub16) {  // Q6_K
    int8_panels_avx2<VNNI, 6, false, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.bits == 8) {
    if (w.has_mins) {
      int8_panels_avx2<VNNI, 8, true>(w, a, t0, t1, p0, p1, y, scratch);
    } else {
      int8_panels_avx2<VNNI, 8, false>(w, a, t0, t1, p0, p1, y, scratch);
    }
  } else if (w.bits == 6) {  // MLX 6-bit
    int8_panels_avx2<VNNI, 6, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.bits == 5 && w.has_mins) {  // Q5_K, Q5_1
    int8_panels_avx2<VNNI, 5, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.bits == 5) {  // Q5_0
    int8_panels_avx2<VNNI, 5, false>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.has_mins) {
    int8_panels_avx2<VNNI, 4, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else {
    int8_panels_avx2<VNNI, 4, false>(w, a, t0, t1, p0, p1, y, scratch);
  }
}

}  // namespace
}  // namespace verdict::kernels::cpu
