// The packed prefill GEMMs on AVX-512: int8 × uint8 dot products with VNNI (vpdpbusd) and bf16 pairs
// with AVX512_BF16 (vdpbf16ps). Compiled with -mavx512vnni -mavx512bf16 on top of the AVX-512 flags and
// only called when the CPU has both (dispatch.cc). Only ops.h, kernel_table.h and intrinsics here: see
// kernel_table.h.
//
// Register tiling: RP panels of 16 weight rows (one zmm of 16 fp32/int32 lanes = 16 rows) × TB tokens.
// Each (row, token) lane runs the same instruction sequence whatever RP and TB are, so results never
// depend on the blocking, on n or on the thread split.
#include <immintrin.h>

#include "kernels/cpu/kernel_table.h"

namespace verdict::kernels::cpu {
namespace {

inline __m512i bcast32(const void* p) { return _mm512_broadcastd_epi32(_mm_loadu_si32(p)); }
// One record's 16 fp16 scales (w.half_scales, 32-byte aligned) as fp32, converted exactly.
inline __m512 fp32_of_halves(const uint16_t* h) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h)));
}

// acc[i][tt] += the 8-bit chunks [J0, J1) (4 columns × 16 rows, 64 bytes each) of the records at rec[i]
// times token tt's activations (xb: the block's first, xs apart): one vpdpbusd per (chunk, panel, token).
template <int RP, int TB, int J0, int J1>
inline void dpbusd_chunks(const uint8_t* const (&rec)[RP], const int8_t* xb, int64_t xs, __m512i (&acc)[RP][TB]) {
#pragma GCC unroll 8
  for (int j = J0; j < J1; ++j) {
    __m512i wv[RP];
#pragma GCC unroll 4
    for (int i = 0; i < RP; ++i) wv[i] = _mm512_load_si512(rec[i] + 64 * j);
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      const __m512i xv = bcast32(xb + tt * xs + 4 * j);
#pragma GCC unroll 4
      for (int i = 0; i < RP; ++i) acc[i][tt] = _mm512_dpbusd_epi32(acc[i][tt], wv[i], xv);
    }
  }
}

// The 6-bit values of chunks j and j + 4 (S = j % 2) of a record: the nibbles `v` with the 2 high bits
// from the record's high-bit vector `h` (kernel_table.h) moved to bits 4–5; vpternlogd 0xEC is (A & C) | B.
template <int S>
inline void six_bit_chunks(__m512i v, __m512i h, __m512i& lo, __m512i& hi) {
  const __m512i low4 = _mm512_set1_epi8(0x0F), bits45 = _mm512_set1_epi8(0x30);
  const __m512i hl = S == 0 ? _mm512_slli_epi16(h, 4) : _mm512_slli_epi16(h, 2);
  const __m512i hh = S == 0 ? h : _mm512_srli_epi16(h, 2);
  lo = _mm512_ternarylogic_epi32(v, _mm512_and_si512(hl, bits45), low4, 0xEC);
  hi = _mm512_ternarylogic_epi32(_mm512_srli_epi16(v, 4), _mm512_and_si512(hh, bits45), low4, 0xEC);
}

// The 5-bit values of chunks j and j + 4 of a record: the nibbles `v` with bit 4 from bits j and j + 4 of the
// record's fifth-bit vector `h` (kernel_table.h). The 16-bit shifts never carry a bit across bytes that
// survives the mask: byte bit 4 comes from bit j (left by 4 − j) or bit j + 4 (right by j) of the same byte.
inline void five_bit_chunks(__m512i v, __m512i h, int j, __m512i& lo, __m512i& hi) {
  const __m512i low4 = _mm512_set1_epi8(0x0F), bit4 = _mm512_set1_epi8(0x10);
  const __m512i hl = _mm512_sll_epi16(h, _mm_cvtsi32_si128(4 - j));
  const __m512i hh = _mm512_srl_epi16(h, _mm_cvtsi32_si128(j));
  lo = _mm512_ternarylogic_epi32(v, _mm512_and_si512(hl, bit4), low4, 0xEC);
  hi = _mm512_ternarylogic_epi32(_mm512_srli_epi16(v, 4), _mm512_and_si512(hh, bit4), low4, 0xEC);
}

// Stores the 16 lanes of one panel (rows r0 .. r0 + 15), only those below `rows`.
inline void store_rows(float* dst, __m512 v, int64_t r0, int64_t rows) {
  if (r0 + kPackRows <= rows) {
    _mm512_storeu_ps(dst, v);
  } else {
    _mm512_mask_storeu_ps(dst, static_cast<__mmask16>((1u << (rows - r0)) - 1u), v);
  }
}

// Stores a register tile: acc[i][tt] holds token t + tt's rows of panel p + i.
template <int RP, int TB>
inline void store_tile(const PackedView& w, const __m512 (&acc)[RP][TB], int64_t t, int64_t p, float* y) {
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i)
#pragma GCC unroll 12
    for (int tt = 0; tt < TB; ++tt)
      store_rows(y + (t + tt) * w.rows + (p + i) * kPackRows, acc[i][tt], (p + i) * kPackRows, w.rows);
}

// The 16 int8 at `p` as int32 lanes.
inline __m512i int32_of(const int8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
}

// A Q2_K record's mins (mins16: the 16 rows' −m of columns 0–15, then of 16–31) as int16 pairs, lane i holding
// row i's two: what vpdpwssd multiplies with the activations' pairs16.
inline __m512i min_pairs(const int8_t* m) {
  const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(m));
  const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(m + kPackRows));
  return _mm512_cvtepi8_epi16(_mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi)));
}

// The fp32 steps at the end of Q2_K and Q3_K super-blocks (b its last block; kernel_table.h): facc += (d·dx) · I,
// then, for Q2_K, facc += (dmin·dx) · M, each one fused multiply-add (ops.h; the AVX2 tiles do the same).
template <int RP, int TB, bool MIN>
inline void super_scale_step(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t p, int64_t b,
                             const __m512i (&sums)[RP][TB], __m512 (&facc)[RP][TB]) {
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i) {
    const int64_t super_at = (p + i) * (w.blocks / kSuperBlocks) + b / kSuperBlocks;
    const __m512 d =
        _mm512_loadu_ps(MIN ? w.min_scales + super_at * kMinFloats : w.super_scales + super_at * kSuperFloats);
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      const __m512 dx = _mm512_set1_ps(a.d[(t + tt) * a.blocks + b]);
      facc[i][tt] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums[i][tt]), _mm512_mul_ps(d, dx), facc[i][tt]);
    }
  }
}
// At the end of a super-block (b its last block) the steps above, then I and M start again from 0.
template <int RP, int TB, bool MINS>
inline void super_block_step(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t p, int64_t b,
                             __m512i (&isum)[RP][TB], __m512i (&msum)[RP][TB], __m512 (&facc)[RP][TB]) {
  if (b % kSuperBlocks != kSuperBlocks - 1) return;
  super_scale_step<RP, TB, false>(w, a, t, p, b, isum, facc);
  if constexpr (MINS) super_scale_step<RP, TB, true>(w, a, t, p, b, msum, facc);
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i)
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) isum[i][tt] = msum[i][tt] = _mm512_setzero_si512();
}

// ---------------------------------------------------------------------------------------------------
// Int8: RP panels × TB tokens.
//
// Each (panel, token) lane sums a block's products in S partial int32 accumulators (S = 2 in the one-token
// GEMV tile: two short chains of dependent vpdpbusd per block instead of one); integer sums are exact in
// any order, so S never changes a result. The fp32 steps per block (convert, × d, fused multiply-add with
// the scale, then the mins' one) are the same for every lane and tile. OFF: the stored weights carry an
// offset (w.offset ≠ 0: Q8_0, Q4_0, Q5_0, Q6_K, Q3_K), which the sums start from (−offset · Σq, a.offset_sums:
// broadcast from memory, where computing it here took an integer multiply and a broadcast from a general register,
// on vpdpbusd's ports, per token and block); without one they start at 0.
// SUB (sub16, Q6_K: 6-bit, Q3_K: 4-bit, both with an offset; Q2_K: 2-bit, whose two vectors are the two halves,
// with MINS and no offset): columns 0–15 and 16–31 keep separate sums (chunks 0–3 and 4–7: in the 4-bit layout the
// low and the high nibbles), each starting from −offset · its half's Σq; then S is 2, one per half. The halves'
// sums take their integer scales into the super-block's I (kernel_table.h), Q2_K's mins into M, and the fp32 steps
// come once per super-block (super_block_step). Q2_K and Q3_K run only here in the GEMV tiles (their prefill tiles
// are super_micro's); Q6_K's prefill tiles read its strips here, one half at a time.
// 6-bit values are the 4-bit layout's nibbles with their 2 high bits moved in (3 instructions per chunk),
// 5-bit ones likewise with their fifth bit; or, with STRIP (the prefill tiles), the panels' 4- to 6-bit records
// unpacked into `strip` (kernel_table.h), read as 8-bit ones (BITS is then kStripTileBits).
// LUT (IQ4_NL, IQ4_XS: 4-bit, offset 128): each nibble n becomes the stored value kIq4Values[n] + 128 by one
// vpshufb per 64 bytes (with STRIP, as unpack_panels_avx512 wrote them).

// Where block_scales finds a block's scales, when known as the tile is compiled (int8_micro chooses): then the block
// loop carries no other source's pointers and branches, which had spilled its pointers (Q8_0 and Q4_0 at 2
// threads: 52–63 → 61–69 % of the vpdpbusd peak, docs/performance.md).
enum class Scales {
  Any,   // decided per block from w (factors, expanded, mins)
  Half,  // fp16 scales beside the records (w.half_scales): Q8_0, Q4_0, Q5_0, IQ4_NL
  Fp32,  // fp32 scale and second vectors from fp32[i]: expanded K-quant factors, or MLX and Q4_1/Q5_1 records'
  Converted,  // the half scales converted to fp32 once per tile call (the prefill tiles: int8_tokens)
};

// BIAS: the biased fold (kernel_table.h) from a.biased_starts and a.bias_d, the same bits in 2 fp32 operations
// per lane and block where the contract's order takes 3 (the prefill tiles, on block_q8_0 activations).
template <int RP, int TB, int BITS, bool MINS, bool OFF, int S, bool SUB, bool STRIP, bool LUT, Scales SC,
          bool BIAS = false>
void int8_micro_body(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t p, float* y,
                     const uint8_t* strip, const float* scales) {
  static_assert(!SUB || (S == 2 && (BITS == 6 || BITS == 4 || BITS == 2) && (OFF || MINS)), "sub16: two sums");
  static_assert(!STRIP || BITS == kStripTileBits, "one set of strip tiles for 4- to 6-bit records");
  static_assert(!LUT || ((BITS == 4 || STRIP) && OFF && !MINS && !SUB),
                "IQ4 records: 4-bit (or their strips), offset 128, one scale");
  static_assert(!BIAS || (!SUB && SC != Scales::Any), "the biased fold: one sum per block, block_q8_0 activations");
  const int64_t bs = STRIP ? kStripRecordBytes : w.block_stride;
  const __m512i lut = LUT && !STRIP
                           ? _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Stored)))
                           : _mm512_setzero_si512();
  const uint8_t* base[RP];  // the weights of the panel's block 0
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i) base[i] = STRIP ? strip + i * w.blocks * bs : w.data + (p + i) * w.blocks * bs;
  const int8_t* xq = a.q + t * a.cols;
  const int64_t xs = a.cols;
  const __m512i low4 = _mm512_set1_epi8(0x0F);

  __m512 facc[RP][TB];
  constexpr bool SUPER = SUB;  // Q2_K, Q3_K, Q6_K: integer sums per super-block (kernel_table.h)
  // Q6_K from the strip: each 16-column half's sums, then their scales into I, before the next half (two sets of
  // RP × TB half sums besides I would not fit the 32 registers; the integers are the same as the two sums' path's).
  constexpr bool kHalfByHalf = SUB && STRIP;
  [[maybe_unused]] __m512i isum[RP][TB], msum[RP][TB];
#pragma GCC unroll 8
  for (int i = 0; i < RP; ++i)
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      facc[i][tt] = _mm512_setzero_ps();
      if constexpr (SUPER) isum[i][tt] = msum[i][tt] = _mm512_setzero_si512();
    }

  // K-quants, IQ4_XS: the d and d2 of the current super-block, loaded once per super-block when the tile has
  // registers to spare (one panel: the decode GEMV), else per record.
  constexpr bool kHoistSuper = RP == 1;
  const bool factored = SC == Scales::Any && w.factors != nullptr && w.expanded == nullptr;  // K-quants and IQ4_XS
  const auto super_of = [&](int i, int64_t b) {
    return w.super_scales + ((p + i) * (w.blocks / kSuperBlocks) + b / kSuperBlocks) * kSuperFloats;
  };
  __m512 d_super = _mm512_setzero_ps(), d2_super = _mm512_setzero_ps();
  [[maybe_unused]] const bool prefetch = RP == 1 && !STRIP && prefetch_weight_streams();
  // fp32 scales and second vectors (16 + 16 floats) every `fp32_stride` bytes from fp32[i]: the products
  // matmul expanded (Q4_K, Q5_K, IQ4_XS), or the MLX records' own.
  const uint8_t* fp32[RP];
  const int64_t fp32_stride = w.expanded != nullptr ? 2 * kPackRows * 4 : w.block_stride;
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i)
    fp32[i] = w.expanded != nullptr
                  ? reinterpret_cast<const uint8_t*>(w.expanded + (p + i) * w.blocks * 2 * kPackRows)
                  : w.data + (p + i) * w.blocks * w.block_stride + int8_weight_bytes(w.bits);

  // Block b's fp32 scales per panel: sc and second (the mins). Not for SUB records, whose halves' integer scales
  // multiply their sums.
  const auto block_scales = [&](int64_t b, __m512 (&sc)[RP], __m512 (&second)[RP]) __attribute__((always_inline)) {
#pragma GCC unroll 4
    for (int i = 0; i < RP; ++i) {
      if (SC == Scales::Converted) {
        sc[i] = _mm512_load_ps(scales + (i * w.blocks + b) * kPackRows);
      } else if (SC == Scales::Half) {
        sc[i] = fp32_of_halves(w.half_scales + ((p + i) * w.blocks + b) * kPackRows);
      } else if (factored) {  // K-quants, IQ4_XS: d · first and d2 · second (exact)
        const int8_t* f = w.factors + ((p + i) * w.blocks + b) * kFactorBytes;
        const auto factor = [](const int8_t* at) {
          return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(at))));
        };
        const __m512 d = kHoistSuper ? d_super : _mm512_loadu_ps(super_of(i, b));
        const __m512 d2 = kHoistSuper ? d2_super : _mm512_loadu_ps(super_of(i, b) + kPackRows);
        sc[i] = _mm512_mul_ps(d, factor(f));
        second[i] = _mm512_mul_ps(d2, factor(f + kPackRows));
      } else if (SC == Scales::Fp32 || MINS || w.expanded != nullptr) {
        const auto* fs = reinterpret_cast<const float*>(fp32[i] + b * fp32_stride);
        sc[i] = _mm512_loadu_ps(fs);  // the expansion is a std::vector's: 16-byte aligned
        second[i] = _mm512_loadu_ps(fs + kPackRows);
      } else {  // fp16 scales beside the records (Q8_0, Q4_0, Q5_0): converted exactly
        sc[i] = fp32_of_halves(w.half_scales + ((p + i) * w.blocks + b) * kPackRows);
      }
    }
  };

  for (int64_t b = 0; b < w.blocks; ++b) {
    if constexpr (RP == 1 && !STRIP) {  // the GEMV tile: the lines kGemvPrefetchBytes ahead, into L2
      if (prefetch) prefetch_l2(base[0] + b * bs + kGemvPrefetchBytes, bs);
    }
    if (kHoistSuper && !SUB && factored && b % kSuperBlocks == 0) {
      d_super = _mm512_loadu_ps(super_of(0, b));
      d2_super = _mm512_loadu_ps(super_of(0, b) + kPackRows);
    }
    if constexpr (kHalfByHalf) {
      const int8_t* xb = xq + b * kQBlock;
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        __m512i iacc[RP][TB];
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m512i init = _mm512_set1_epi32(a.offset_sums[2 * ((t + tt) * a.blocks + b) + h]);
#pragma GCC unroll 4
          for (int i = 0; i < RP; ++i) iacc[i][tt] = init;
        }
        const uint8_t* rec[RP];
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i) rec[i] = base[i] + b * bs;
        if (h == 0) {
          dpbusd_chunks<RP, TB, 0, 4>(rec, xb, xs, iacc);
        } else {
          dpbusd_chunks<RP, TB, 4, 8>(rec, xb, xs, iacc);
        }
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i) {
          const __m512i s = int32_of(w.factors + ((p + i) * w.blocks + b) * kFactorBytes + h * kPackRows);
#pragma GCC unroll 8
          for (int tt = 0; tt < TB; ++tt)
            isum[i][tt] = _mm512_add_epi32(isum[i][tt], _mm512_mullo_epi32(iacc[i][tt], s));
        }
      }
      super_block_step<RP, TB, false>(w, a, t, p, b, isum, msum, facc);
      continue;
    }
    __m512i iacc[S][RP][TB];
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      const int64_t at = (t + tt) * a.blocks + b;
      const __m512i init = BIAS ? _mm512_set1_epi32(a.biased_starts[at])
                           : !OFF ? _mm512_setzero_si512()
                           : SUB  ? _mm512_set1_epi32(a.offset_sums[2 * at])
                                  : _mm512_set1_epi32(a.offset_sums[at]);
      const __m512i init2 = OFF && SUB ? _mm512_set1_epi32(a.offset_sums[2 * at + 1]) : _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int i = 0; i < RP; ++i) {
        iacc[0][i][tt] = init;
#pragma GCC unroll 4
        for (int s = 1; s < S; ++s) iacc[s][i][tt] = init2;
      }
    }
    const int8_t* xb = xq + b * kQBlock;
    if constexpr (BITS == 8 || STRIP) {  // 8 chunks of 8-bit values (STRIP: unpacked 6-bit ones)
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        __m512i wv[RP];
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i) wv[i] = _mm512_load_si512(base[i] + b * bs + 64 * j);
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m512i xv = bcast32(xb + tt * xs + 4 * j);
#pragma GCC unroll 4
          for (int i = 0; i < RP; ++i) {
            constexpr int kHalfChunks = 4;  // chunks of one 16-column half
            const int s = SUB ? j / kHalfChunks : j % S;
            iacc[s][i][tt] = _mm512_dpbusd_epi32(iacc[s][i][tt], wv[i], xv);
          }
        }
      }
    } else {
      [[maybe_unused]] __m512i two_bit[RP][2];  // 2-bit records: their two vectors (columns 0–15, 16–31)
      if constexpr (BITS == 2) {
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i) {
          two_bit[i][0] = _mm512_load_si512(base[i] + b * bs);
          two_bit[i][1] = _mm512_load_si512(base[i] + b * bs + 64);
        }
      }
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        __m512i lo[RP], hi[RP];
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i) {
          if constexpr (BITS == 2) {  // chunks j and j + 4: bits 2j .. 2j + 1 of vectors 0 and 1
            const __m512i three = _mm512_set1_epi8(3);
            const __m128i shift = _mm_cvtsi32_si128(2 * j);
            lo[i] = _mm512_and_si512(_mm512_srl_epi16(two_bit[i][0], shift), three);
            hi[i] = _mm512_and_si512(_mm512_srl_epi16(two_bit[i][1], shift), three);
            continue;
          }
          const __m512i v = _mm512_load_si512(base[i] + b * bs + 64 * j);
          if constexpr (BITS == 6) {
            const __m512i h = _mm512_load_si512(base[i] + b * bs + 256 + 64 * high_bits_vector(j));
            if (j % 2 == 0) {
              six_bit_chunks<0>(v, h, lo[i], hi[i]);
            } else {
              six_bit_chunks<1>(v, h, lo[i], hi[i]);
            }
          } else if constexpr (BITS == 5) {
            five_bit_chunks(v, _mm512_load_si512(base[i] + b * bs + kFifthBits), j, lo[i], hi[i]);
          } else {
            lo[i] = _mm512_and_si512(v, low4);
            hi[i] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
            if constexpr (LUT) {
              lo[i] = _mm512_shuffle_epi8(lut, lo[i]);
              hi[i] = _mm512_shuffle_epi8(lut, hi[i]);
            }
          }
        }
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m512i xl = bcast32(xb + tt * xs + 4 * j);
          const __m512i xh = bcast32(xb + tt * xs + 4 * j + 16);
#pragma GCC unroll 4
          for (int i = 0; i < RP; ++i) {
            iacc[(2 * j) % S][i][tt] = _mm512_dpbusd_epi32(iacc[(2 * j) % S][i][tt], lo[i], xl);
            iacc[(2 * j + 1) % S][i][tt] = _mm512_dpbusd_epi32(iacc[(2 * j + 1) % S][i][tt], hi[i], xh);
          }
        }
      }
    }
    if constexpr (SUPER) {  // the halves' sums times their scales into I, Q2_K's mins into M
      // Q2_K, Q3_K: a half's sum fits int16 (kernel_table.h), so its int32 lane is the pair (sum, sign) and
      // vpdpwssd with the pair (scale, 0) multiplies and adds it in one instruction; Q6_K's take vpmulld.
      const __m512i low16 = _mm512_set1_epi32(0xFFFF);
#pragma GCC unroll 4
      for (int i = 0; i < RP; ++i) {
        const int8_t* f = w.factors + ((p + i) * w.blocks + b) * kFactorBytes;
        __m512i s_lo = int32_of(f), s_hi = int32_of(f + kPackRows);
        if constexpr (int16_half_sums(BITS)) {
          s_lo = _mm512_and_si512(s_lo, low16);
          s_hi = _mm512_and_si512(s_hi, low16);
        }
        [[maybe_unused]] __m512i m_pair;
        if constexpr (MINS) m_pair = min_pairs(w.mins16 + ((p + i) * w.blocks + b) * kMinBytes);
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          if constexpr (int16_half_sums(BITS)) {
            isum[i][tt] = _mm512_dpwssd_epi32(isum[i][tt], iacc[0][i][tt], s_lo);
            isum[i][tt] = _mm512_dpwssd_epi32(isum[i][tt], iacc[1][i][tt], s_hi);
          } else {
            isum[i][tt] = _mm512_add_epi32(isum[i][tt], _mm512_add_epi32(_mm512_mullo_epi32(iacc[0][i][tt], s_lo),
                                                                         _mm512_mullo_epi32(iacc[1][i][tt], s_hi)));
          }
          if constexpr (MINS) {
            const __m512i x_pairs = _mm512_set1_epi32(a.pairs16[(t + tt) * a.blocks + b]);
            msum[i][tt] = _mm512_dpwssd_epi32(msum[i][tt], m_pair, x_pairs);
          }
        }
      }
      super_block_step<RP, TB, MINS>(w, a, t, p, b, isum, msum, facc);
      continue;
    } else {
#pragma GCC unroll 4
      for (int s = 1; s < S; ++s)
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i)
#pragma GCC unroll 8
          for (int tt = 0; tt < TB; ++tt) iacc[0][i][tt] = _mm512_add_epi32(iacc[0][i][tt], iacc[s][i][tt]);
    }
    __m512 sc[RP], second[RP];  // second: the mins (× Σx)
    block_scales(b, sc, second);
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      const __m512 dx = _mm512_set1_ps(a.d[(t + tt) * a.blocks + b]);
      [[maybe_unused]] __m512 bias_dx;
      if constexpr (BIAS) bias_dx = _mm512_set1_ps(a.bias_d[(t + tt) * a.blocks + b]);
#pragma GCC unroll 4
      for (int i = 0; i < RP; ++i) {
        // float(Σ) · dx, rounded once (BIAS: from the sum's bits, kSumBias + Σ, kernel_table.h)
        const __m512 sdx = BIAS ? _mm512_fmadd_ps(_mm512_castsi512_ps(iacc[0][i][tt]), dx, bias_dx)
                                : _mm512_mul_ps(_mm512_cvtepi32_ps(iacc[0][i][tt]), dx);
        facc[i][tt] = _mm512_fmadd_ps(sdx, sc[i], facc[i][tt]);
      }
    }
    if constexpr (MINS) {
#pragma GCC unroll 8
      for (int tt = 0; tt < TB; ++tt) {
        const __m512 by = _mm512_set1_ps(a.xsum[(t + tt) * a.blocks + b]);
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i) {
          facc[i][tt] = _mm512_fmadd_ps(by, second[i], facc[i][tt]);
        }
      }
    }
  }
  store_tile<RP, TB>(w, facc, t, p, y);
}

// CONV: the half scales (w.half_scales) are at `scales` as fp32 (convert_half_scales), as the prefill tiles take them.
// BIAS: the biased fold, for the records without factors (a.bias_d set: biased_fold_applies).
template <int RP, int TB, int BITS, bool MINS, bool OFF, int S = 1, bool SUB = false, bool STRIP = false,
          bool LUT = false, bool CONV = false, bool BIAS = false>
void int8_micro(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t p, float* y,
                const uint8_t* strip = nullptr, const float* scales = nullptr) {
  constexpr Scales kHalfScales = CONV ? Scales::Converted : Scales::Half;
  static_assert(!BIAS || !SUB, "the biased fold: one sum per block");
  if constexpr (SUB) {  // the sub16 records' scales are integers: no block_scales
    int8_micro_body<RP, TB, BITS, MINS, OFF, S, SUB, STRIP, LUT, Scales::Any>(w, a, t, p, y, strip, scales);
  } else if constexpr (always_half_scales(MINS, SUB, LUT)) {
    int8_micro_body<RP, TB, BITS, MINS, OFF, S, SUB, STRIP, LUT, kHalfScales, BIAS>(w, a, t, p, y, strip, scales);
  } else {
    if constexpr (!MINS) {
      if (w.factors == nullptr) {  // IQ4_NL
        int8_micro_body<RP, TB, BITS, MINS, OFF, S, SUB, STRIP, LUT, kHalfScales, BIAS>(w, a, t, p, y, strip,
                                                                                        scales);
        return;
      }
    }
    if (MINS && w.factors == nullptr) {  // MLX, Q4_1, Q5_1
      int8_micro_body<RP, TB, BITS, MINS, OFF, S, SUB, STRIP, LUT, Scales::Fp32, BIAS>(w, a, t, p, y, strip, scales);
    } else if (w.expanded != nullptr) {  // the K-quants' and IQ4_XS's factors, expanded (block_q8_K activations)
      int8_micro_body<RP, TB, BITS, MINS, OFF, S, SUB, STRIP, LUT, Scales::Fp32>(w, a, t, p, y, strip, scales);
    } else {  // the K-quants' and IQ4_XS's factors, not expanded (decode)
      int8_micro_body<RP, TB, BITS, MINS, OFF, S, SUB, STRIP, LUT, Scales::Any>(w, a, t, p, y, strip, scales);
    }
  }
}

// The fp16 block scales of panels [p, p + panels) as fp32, 16 per record, record after record (the layout of
// w.half_scales): the prefill tiles read them thus, where converting them in the tile took a vcvtph2ps, on
// vpdpbusd's ports, per panel, block and group of tokens.
inline void convert_half_scales(const PackedView& w, int64_t p, int64_t panels, float* out) {
  const uint16_t* in = w.half_scales + p * w.blocks * kPackRows;
  for (int64_t r = 0; r < panels * w.blocks; ++r)
    _mm512_store_ps(out + r * kPackRows, fp32_of_halves(in + r * kPackRows));
}

// The prefill tile: 3 panels × 4 tokens (12 lanes; 2 × 6 was 5-10 % slower: more activation broadcasts
// per vpdpbusd, and the per-token pointers of 6 tokens spill).
constexpr int kInt8Panels = 3;
constexpr int kInt8Tokens = 4;

// The prefill tiles unpack 5- and 6-bit records into `scratch` first, and 4-bit ones when they take
// kFourBitStripTokens or more (kernel_table.h, int8_tokens below); unpacking 5- and 6-bit records in registers
// serves the GEMV tiles only (fewer template instances, and a tile of more than kInt8GemvTokens tokens
// reads its records at least twice).

}  // namespace

// The 4- to 6-bit records of panels [p, p + panels) unpacked into `out` (kernel_table.h), as int8_micro
// unpacks them (IQ4's nibbles as their stored values).
void unpack_panels_avx512(const PackedView& w, int64_t p, int64_t panels, uint8_t* out) {
  for (int64_t r = 0; r < panels * w.blocks; ++r) {
    const uint8_t* rec = w.data + (p * w.blocks + r) * w.block_stride;
    uint8_t* dst = out + r * kStripRecordBytes;
    __m512i chunk[8];
    if (w.bits == 4) {  // chunk j: vector j's low nibbles, chunk j + 4: its high ones (IQ4: their stored values)
      const __m512i low4 = _mm512_set1_epi8(0x0F);
      const __m512i lut = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Stored)));
      for (int j = 0; j < 4; ++j) {
        const __m512i v = _mm512_load_si512(rec + 64 * j);
        chunk[j] = _mm512_and_si512(v, low4);
        chunk[j + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
        if (w.iq4) {
          chunk[j] = _mm512_shuffle_epi8(lut, chunk[j]);
          chunk[j + 4] = _mm512_shuffle_epi8(lut, chunk[j + 4]);
        }
      }
    } else if (w.bits == 5) {
      const __m512i h = _mm512_load_si512(rec + kFifthBits);
      for (int j = 0; j < 4; ++j) five_bit_chunks(_mm512_load_si512(rec + 64 * j), h, j, chunk[j], chunk[j + 4]);
    } else {
      for (int k = 0; k < 2; ++k) {  // chunks 2k, 2k + 1 and 2k + 4, 2k + 5
        const __m512i h = _mm512_load_si512(rec + 256 + 64 * k);
        six_bit_chunks<0>(_mm512_load_si512(rec + 128 * k), h, chunk[2 * k], chunk[2 * k + 4]);
        six_bit_chunks<1>(_mm512_load_si512(rec + 128 * k + 64), h, chunk[2 * k + 1], chunk[2 * k + 5]);
      }
    }
    for (int j = 0; j < 8; ++j) _mm512_store_si512(dst + 64 * j, chunk[j]);
  }
}

namespace {

// Q2_K and Q3_K (kernel_table.h): the records of panels [p, p + panels) unpacked into `out`, each value times its
// half's scale (plus kFoldedOffset for Q3_K) in the 8-bit layout, and Q2_K's mins as int16 pairs after
// kStripPanels panels of records. The products use 16-bit lanes: the even bytes, then the odd ones.
void unpack_super_panels(const PackedView& w, int64_t p, int64_t panels, uint8_t* out) {
  const __m512i low16 = _mm512_set1_epi32(0xFFFF), low8 = _mm512_set1_epi16(0xFF);
  const __m512i offset = _mm512_set1_epi16(static_cast<int16_t>(w.offset));  // Q3_K 4, Q2_K 0
  const __m512i fold = _mm512_set1_epi16(w.offset != 0 ? kFoldedOffset : 0);
  uint8_t* pairs = out + kStripPanels * w.blocks * kStripRecordBytes;
  for (int64_t r = 0; r < panels * w.blocks; ++r) {
    const uint8_t* rec = w.data + (p * w.blocks + r) * w.block_stride;
    const int8_t* f = w.factors + (p * w.blocks + r) * kFactorBytes;
    for (int h = 0; h < 2; ++h) {  // columns 0–15 (chunks 0–3), then 16–31 (chunks 4–7)
      const __m512i s32 = int32_of(f + h * kPackRows);
      const __m512i s16 = _mm512_or_si512(_mm512_and_si512(s32, low16), _mm512_slli_epi32(s32, 16));
      for (int k = 0; k < 4; ++k) {
        __m512i v;
        if (w.bits == 2) {  // vector h, bits 2k .. 2k + 1
          v = _mm512_and_si512(_mm512_srl_epi16(_mm512_load_si512(rec + 64 * h), _mm_cvtsi32_si128(2 * k)),
                               _mm512_set1_epi8(3));
        } else {  // nibble vector k, the low nibbles for columns 0–15
          const __m512i nibbles = _mm512_load_si512(rec + 64 * k);
          v = _mm512_and_si512(h == 0 ? nibbles : _mm512_srli_epi16(nibbles, 4), _mm512_set1_epi8(0x0F));
        }
        const __m512i even = _mm512_sub_epi16(_mm512_and_si512(v, low8), offset);
        const __m512i odd = _mm512_sub_epi16(_mm512_srli_epi16(v, 8), offset);
        const __m512i pe = _mm512_add_epi16(_mm512_mullo_epi16(even, s16), fold);
        const __m512i po = _mm512_add_epi16(_mm512_mullo_epi16(odd, s16), fold);
        _mm512_store_si512(out + r * kStripRecordBytes + 64 * (4 * h + k),
                           _mm512_or_si512(_mm512_and_si512(pe, low8), _mm512_slli_epi16(po, 8)));
      }
    }
    if (w.mins16 != nullptr)
      _mm512_store_si512(pairs + r * kMinPairBytes, min_pairs(w.mins16 + (p * w.blocks + r) * kMinBytes));
  }
}

// Q2_K and Q3_K prefill: RP panels × TB tokens over the strips of unpack_super_panels. A super-block is 64
// vpdpbusd per lane into I (Q3_K's start at −kFoldedOffset · Σq) and its fp32 step, then for Q2_K 8 vpdpwssd
// into M (in I's registers: 3 × 4 lanes of I, M and the fp32 sums at once would not fit 32) and M's step.
template <int RP, int TB, bool MINS, bool OFF>
void super_micro(const PackedView& w, const QuantizedRows& a, int64_t t, int64_t p, float* y, const uint8_t* strip) {
  const uint8_t* base[RP];
  const uint8_t* pairs[RP];
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i) {
    base[i] = strip + i * w.blocks * kStripRecordBytes;
    pairs[i] = strip + kStripPanels * w.blocks * kStripRecordBytes + i * w.blocks * kMinPairBytes;
  }
  const int8_t* xq = a.q + t * a.cols;
  const int64_t xs = a.cols;
  __m512 facc[RP][TB];
  __m512i isum[RP][TB], msum[RP][TB];
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i)
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) facc[i][tt] = _mm512_setzero_ps();
  for (int64_t b0 = 0; b0 < w.blocks; b0 += kSuperBlocks) {
#pragma GCC unroll 8
    for (int tt = 0; tt < TB; ++tt) {
      int32_t qsum = 0;
      if constexpr (OFF)
        for (int64_t b = b0; b < b0 + kSuperBlocks; ++b) qsum += a.qsum[(t + tt) * a.blocks + b];
#pragma GCC unroll 4
      for (int i = 0; i < RP; ++i) isum[i][tt] = _mm512_set1_epi32(-kFoldedOffset * qsum);
    }
    for (int64_t b = b0; b < b0 + kSuperBlocks; ++b) {
      const uint8_t* rec[RP];
#pragma GCC unroll 4
      for (int i = 0; i < RP; ++i) rec[i] = base[i] + b * kStripRecordBytes;
      dpbusd_chunks<RP, TB, 0, 8>(rec, xq + b * kQBlock, xs, isum);
    }
    super_scale_step<RP, TB, false>(w, a, t, p, b0 + kSuperBlocks - 1, isum, facc);
    if constexpr (MINS) {
#pragma GCC unroll 4
      for (int i = 0; i < RP; ++i)
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) msum[i][tt] = _mm512_setzero_si512();
      for (int64_t b = b0; b < b0 + kSuperBlocks; ++b) {
        __m512i mp[RP];
#pragma GCC unroll 4
        for (int i = 0; i < RP; ++i) mp[i] = _mm512_load_si512(pairs[i] + b * kMinPairBytes);
#pragma GCC unroll 8
        for (int tt = 0; tt < TB; ++tt) {
          const __m512i xp = _mm512_set1_epi32(a.pairs16[(t + tt) * a.blocks + b]);
#pragma GCC unroll 4
          for (int i = 0; i < RP; ++i) msum[i][tt] = _mm512_dpwssd_epi32(msum[i][tt], mp[i], xp);
        }
      }
      super_scale_step<RP, TB, true>(w, a, t, p, b0 + kSuperBlocks - 1, msum, facc);
    }
  }
  store_tile<RP, TB>(w, facc, t, p, y);
}

// 4-bit records go through strips (kernel_table.h's avx512_strips) when a tile call takes kFourBitStripTokens or
// more; with fewer, unpacking the strip costs more than rebuilding the nibbles for each group of 4 tokens saves
// (Emerald Rapids Xeon, 2 threads, `BM_Gemv/(4|5|6)/…/N/2`: with strips 8 tokens read 15–35 % slower, 16 and 32 up
// to 15 % slower, 48 the same, 64 and 96 tokens 5–15 % faster). 5- and 6-bit records always do.
constexpr int64_t kFourBitStripTokens = 64;

template <int RP, int BITS, bool MINS, bool OFF, bool SUB, bool LUT>
void int8_tokens(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p, float* y,
                 uint8_t* scratch) {
  constexpr int S = SUB ? 2 : 1;
  int64_t t = t0;
  static_assert(RP <= kStripPanels);
  if constexpr (SUB && BITS <= 4) {  // Q2_K, Q3_K
    unpack_super_panels(w, p, RP, scratch);
    for (; t + kInt8Tokens <= t1; t += kInt8Tokens) super_micro<RP, kInt8Tokens, MINS, OFF>(w, a, t, p, y, scratch);
    with_count(t1 - t, [&]<int TB>() { super_micro<RP, TB, MINS, OFF>(w, a, t, p, y, scratch); });
  } else {
    float* scales = nullptr;  // the half scales as fp32, after the strips (int8_scratch_bytes)
    if (w.half_scales != nullptr) {
      scales = reinterpret_cast<float*>(scratch + int8_strip_bytes(w, true));
      convert_half_scales(w, p, RP, scales);
    }
    const auto tiles_as = [&]<bool STRIP, bool BIAS>() {
      constexpr int kTileBits = STRIP ? kStripTileBits : BITS;
      if constexpr (STRIP) unpack_panels_avx512(w, p, RP, scratch);
      for (; t + kInt8Tokens <= t1; t += kInt8Tokens)
        int8_micro<RP, kInt8Tokens, kTileBits, MINS, OFF, S, SUB, STRIP, LUT, true, BIAS>(w, a, t, p, y, scratch,
                                                                                         scales);
      with_count(t1 - t, [&]<int TB>() {
        int8_micro<RP, TB, kTileBits, MINS, OFF, S, SUB, STRIP, LUT, true, BIAS>(w, a, t, p, y, scratch, scales);
      });
    };
    const auto tiles = [&]<bool STRIP>() {  // biased where int8_product gave the tiles a.bias_d
      if constexpr (!SUB) {
        if (a.bias_d != nullptr) {
          tiles_as.template operator()<STRIP, true>();
          return;
        }
      }
      tiles_as.template operator()<STRIP, false>();
    };
    if constexpr (unpacked_in_strips(BITS)) {
      tiles.template operator()<true>();
    } else if constexpr (avx512_strips(BITS, SUB)) {
      if (t1 - t0 >= kFourBitStripTokens) {
        tiles.template operator()<true>();
      } else {
        tiles.template operator()<false>();
      }
    } else {
      tiles.template operator()<false>();
    }
  }
}

// GEMV tiles (t1 − t0 ≤ kInt8GemvTokens tokens, as when decoding): every weight byte is read once per call, so the
// bound is memory bandwidth, and what reaches it is one sequential stream: one panel at a time (a panel's
// records are contiguous, and so are consecutive panels). Several panels per tile interleave as many
// streams of one panel each (10 KiB for 1024 Q4_0 columns), each restarting the hardware prefetcher:
// 2 panels reached ≈ 75 % of the read bandwidth, 1 panel ≈ 90 % (Zen 4, one thread). The chains of
// dependent vpdpbusd stay within a block, so out-of-order execution overlaps consecutive blocks.
// Only while the tokens' activations are small (n · cols ≤ kInt8GemvActivationBytes): a one-panel tile
// reads them once per panel, and with 4 tokens of 3584 or 6144 columns (14–24 KiB, re-read beside the
// weight stream) it fell to 35–60 % of the bandwidth, below the 3-panel prefill tile.
constexpr int64_t kInt8GemvTokens = 4;
constexpr int64_t kInt8GemvActivationBytes = 8192;

// One token goes 4 panels at a time where the tiles do not prefetch in software (WeightStreams::Wide: AMD CPUs),
// whatever its columns (the 4 panels read its activations once), for every record but Q2_K's and Q3_K's (their
// integer super-block sums keep one panel). On a Zen 5 EPYC (`BM_Gemv`, n = 1, 2 threads, mean GB/s of two runs)
// 4 panels read 8-bit records at 87–97 % of the read bandwidth against 68–80 % for one, and the 4- to 6-bit
// records of 2048 columns up to a quarter faster, of 4096 or more up to 1.7×: Q4_0 12288 × 4096 40 → 51 GB/s,
// Q6_K 29 → 40. A token of more than kInt8GemvActivationBytes columns had run the prefill tile, Q6_K 4096 × 12288
// at 20 GB/s against 44 now. On 1024 columns neither way gained. Decode: qwen35-9b Q4_0 +30 %, qwen35-2b Q4_0
// +17 %, Q4_K +10 %, Q6_K +15 % (docs/performance.md, "Four panels for every record on AMD").
constexpr int kInt8GemvWidePanels = kGemvWidePanels;

// 2 to 4 tokens (continuous batching decoding several sequences) go 4 panels at a time there too, whatever their
// activations' size, where the records are 8-bit or the panels long: 8-bit records at any width, the others from
// kWideTokensCols columns on, 4-bit records only with 2 tokens. Zen 5 EPYC, `BM_Gemv/KIND/ROWS/COLS/N/2`, best
// GB/s, the old and new tiles alternating three times: 2 tokens of Q4_0 12288 × 4096 38–40 → 57–59, of Q8_0
// 1024 × 3584 30 → 38–40; 3 tokens of Q6_K 4096 × 12288 14–23 → 40–47 (the prefill tile had unpacked every record
// into its strip for them). On 1024 columns the 4- to 6-bit records read the same or up to a fifth slower in
// 4 panels (Q4_K 248,320 × 1024, 2 tokens: 36–48 → 34–43), and 3 or 4 tokens of 4-bit records gained on some long
// matrices and lost on others (Q4_K 4096 × 12288, 4 tokens: 39–44 → 35–39); those keep the previous tiles
// (docs/performance.md, "Decoding several sequences on AMD").
template <int BITS, bool SUB>
bool wide_tokens(const PackedView& w, int64_t n) {
  if (prefetch_weight_streams() || (SUB && BITS <= 4)) return false;  // Q2_K, Q3_K: one panel
  if (n == 1 || BITS == 8) return true;
  return w.cols >= kWideTokensCols && (BITS != 4 || n == 2);
}

template <int BITS, bool MINS, bool OFF, bool SUB, bool LUT>
void int8_gemv(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
               float* y) {
  with_count(t1 - t0, [&]<int TB>() {
    constexpr int S = SUB || TB == 1 ? 2 : 1;
    int64_t p = p0;
    if constexpr (!(SUB && BITS <= 4)) {
      if (wide_tokens<BITS, SUB>(w, TB))
        for (; p + kInt8GemvWidePanels <= p1; p += kInt8GemvWidePanels)
          int8_micro<kInt8GemvWidePanels, TB, BITS, MINS, OFF, S, SUB, false, LUT>(w, a, t0, p, y);
    }
    for (; p < p1; ++p) int8_micro<1, TB, BITS, MINS, OFF, S, SUB, false, LUT>(w, a, t0, p, y);
  });
}

template <int BITS, bool MINS, bool OFF, bool SUB = false, bool LUT = false>
void int8_panels(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                 float* y, uint8_t* scratch) {
  const int64_t n = t1 - t0;
  if (n <= kInt8GemvTokens && (n * w.cols <= kInt8GemvActivationBytes || (n == 1 && !prefetch_weight_streams()) ||
                               wide_tokens<BITS, SUB>(w, n))) {
    int8_gemv<BITS, MINS, OFF, SUB, LUT>(w, a, t0, t1, p0, p1, y);
    return;
  }
  int64_t p = p0;
  for (; p + kInt8Panels <= p1; p += kInt8Panels)
    int8_tokens<kInt8Panels, BITS, MINS, OFF, SUB, LUT>(w, a, t0, t1, p, y, scratch);
  for (; p + 2 <= p1; p += 2) int8_tokens<2, BITS, MINS, OFF, SUB, LUT>(w, a, t0, t1, p, y, scratch);
  if (p < p1) int8_tokens<1, BITS, MINS, OFF, SUB, LUT>(w, a, t0, t1, p, y, scratch);
}

template <int BITS, bool MINS>
void int8_offset(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                 float* y, uint8_t* scratch) {
  if (w.offset != 0) {
    int8_panels<BITS, MINS, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else {
    int8_panels<BITS, MINS, false>(w, a, t0, t1, p0, p1, y, scratch);
  }
}

// ---------------------------------------------------------------------------------------------------
// Bf16: RP panels × TB tokens, one vdpbf16ps per (panel, token) and column pair.

template <int RP, int TB, bool PF>
void bf16_micro(const PackedView& w, const uint16_t* xb, int64_t t, int64_t p, float* y) {
  const int64_t chunks = w.cols_padded / 2;
  const uint8_t* base[RP];
#pragma GCC unroll 4
  for (int i = 0; i < RP; ++i) base[i] = w.data + (p + i) * chunks * 64;
  const uint16_t* x0 = xb + t * w.cols_padded;
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
    __m512bh wv[RP];
#pragma GCC unroll 4
    for (int i = 0; i < RP; ++i) wv[i] = (__m512bh)_mm512_load_si512(base[i] + 64 * k);
#pragma GCC unroll 12
    for (int tt = 0; tt < TB; ++tt) {
      const __m512bh xv = (__m512bh)bcast32(x0 + tt * w.cols_padded + 2 * k);
#pragma GCC unroll 4
      for (int i = 0; i < RP; ++i) acc[i][tt] = _mm512_dpbf16_ps(acc[i][tt], wv[i], xv);
    }
  }
  store_tile<RP, TB>(w, acc, t, p, y);
}

constexpr int kBf16Rows = 4;
constexpr int kBf16Tokens = 6;

template <int RP>
void bf16_tokens(const PackedView& w, const uint16_t* xb, int64_t t0, int64_t t1, int64_t p, float* y) {
  if (t1 - t0 <= kGemvPrefetchTokens && prefetch_weight_streams()) {
    with_count(t1 - t0, [&]<int TB>() { bf16_micro<RP, TB, true>(w, xb, t0, p, y); });
    return;
  }
  int64_t t = t0;
  for (; t + kBf16Tokens <= t1; t += kBf16Tokens) bf16_micro<RP, kBf16Tokens, false>(w, xb, t, p, y);
  with_count(t1 - t, [&]<int TB>() { bf16_micro<RP, TB, false>(w, xb, t, p, y); });
}

// The reductions of quantize_rows, 16 blocks at a time. Each block's 32 values give one zmm (its v0 ⊕ v1: the
// lanes i and i + 16 of the block combined); reduce16 turns the 16 blocks' zmm into one zmm of their 16
// results, block b in lane b. It pairs the lanes as _mm512_reduce_add_ps does each zmm alone (lane i with
// i + 8, then i + 4, i + 2, i + 1: the same operands in every addition, and a + b = b + a exactly), so the
// sums are bit for bit those of the one-block loop below; the maxima and the integer sums are exact anyway.
template <typename Op>
inline __m512 reduce16(__m512 (&v)[16], Op op) {
  __m512 t[8];  // t[k]: blocks 2k and 2k + 1, 8 lanes each (i + i + 8)
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k)
    t[k] = op(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
              _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  __m512 u[4];  // u[m]: blocks 4m .. 4m + 3 in its four 128-bit lanes, 4 values each (i + i + 4)
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m)
    u[m] = op(_mm512_shuffle_f32x4(t[2 * m], t[2 * m + 1], _MM_SHUFFLE(2, 0, 2, 0)),
              _mm512_shuffle_f32x4(t[2 * m], t[2 * m + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  __m512 w[2];  // w[n], 128-bit lane j: blocks 8n + j and 8n + 4 + j, 2 values each (i + i + 2)
#pragma GCC unroll 2
  for (int n = 0; n < 2; ++n)
    w[n] = op(_mm512_shuffle_ps(u[2 * n], u[2 * n + 1], _MM_SHUFFLE(1, 0, 1, 0)),
              _mm512_shuffle_ps(u[2 * n], u[2 * n + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  // 128-bit lane j, element e: block j + 4e (i + i + 1); then into block order.
  const __m512 z = op(_mm512_shuffle_ps(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)),
                      _mm512_shuffle_ps(w[0], w[1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), z);
}

inline __m512 add_i32(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

// int8_block_scale of 16 maxima: the division and the rounding to 11 significant bits in the same integer
// steps as round_to_half_precision.
inline __m512 block_scales(__m512 amax) {
  const __m512i bits = _mm512_castps_si512(_mm512_div_ps(amax, _mm512_set1_ps(127.0f)));
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 13), _mm512_set1_epi32(1));
  const __m512i up = _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0xFFF)), odd);
  return _mm512_castsi512_ps(_mm512_and_si512(up, _mm512_set1_epi32(~0x1FFF)));
}

// 64 int32 values in [-128, 127] (v[0] columns 0-15, ..., v[3] 48-63) as int8, in order: the saturating packs
// interleave the four vectors by 128-bit lane (lane l of the result: v[0..3]'s lane l, 4 bytes each), and vpermd
// puts them back. Four shuffles and one store where vpmovdb takes two shuffle µops and one store per 16 values.
inline void store_64_int8(int8_t* dst, const __m512i (&v)[4]) {
  const __m512i bytes = _mm512_packs_epi16(_mm512_packs_epi32(v[0], v[1]), _mm512_packs_epi32(v[2], v[3]));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi32(order, bytes));
}

// 16 blocks (512 columns) of one token.
inline void quantize_16_blocks(const float* src, int8_t* dst, float* d, int32_t* qsum, float* xsum) {
  const __m512 sign = _mm512_set1_ps(-0.0f);
  __m512 m[16], s[16];
#pragma GCC unroll 16
  for (int b = 0; b < 16; ++b) {  // (and the next 16 blocks' lines into L1: 5-10 % faster on a Zen 5 EPYC)
    _mm_prefetch(reinterpret_cast<const char*>(src + 512 + 32 * b), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(src + 512 + 32 * b + 16), _MM_HINT_T0);
    const __m512 v0 = _mm512_loadu_ps(src + 32 * b), v1 = _mm512_loadu_ps(src + 32 * b + 16);
    m[b] = _mm512_max_ps(_mm512_andnot_ps(sign, v0), _mm512_andnot_ps(sign, v1));
    s[b] = _mm512_add_ps(v0, v1);
  }
  const __m512 amax = reduce16(m, [](__m512 a, __m512 b) { return _mm512_max_ps(a, b); });
  _mm512_storeu_ps(xsum, reduce16(s, [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); }));
  _mm512_storeu_ps(d, block_scales(amax));
  // 127 / amax, 0 where amax is 0 (the division is correctly rounded in a vector as in a scalar).
  const __mmask16 nonzero = _mm512_cmp_ps_mask(amax, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  alignas(64) float inv[16];
  _mm512_store_ps(inv, _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(127.0f), amax));
#pragma GCC unroll 8
  for (int b = 0; b < 16; b += 2) {
    __m512i v[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k)
      v[k] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(src + 32 * b + 16 * k), _mm512_set1_ps(inv[b + k / 2])));
    store_64_int8(dst + 32 * b, v);
    s[b] = _mm512_castsi512_ps(_mm512_add_epi32(v[0], v[1]));
    s[b + 1] = _mm512_castsi512_ps(_mm512_add_epi32(v[2], v[3]));
  }
  _mm512_storeu_si512(qsum, _mm512_castps_si512(reduce16(s, add_i32)));
}

}  // namespace

void quantize_rows_avx512(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                          int32_t* qsum, float* xsum) {
  const int64_t blocks = cols / kQBlock;
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int64_t t = t0; t < t1; ++t) {
    int64_t b = 0;
    for (; b + 16 <= blocks; b += 16)
      quantize_16_blocks(x + t * cols + b * kQBlock, q + t * cols + b * kQBlock, d + t * blocks + b,
                         qsum + t * blocks + b, xsum + t * blocks + b);
    for (; b < blocks; ++b) {
      const float* src = x + t * cols + b * kQBlock;
      const __m512 v0 = _mm512_loadu_ps(src);
      const __m512 v1 = _mm512_loadu_ps(src + 16);
      const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_andnot_ps(sign, v0), _mm512_andnot_ps(sign, v1)));
      const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
      const __m512 iv = _mm512_set1_ps(inv);
      const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, iv));
      const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, iv));
      int8_t* dst = q + t * cols + b * kQBlock;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm512_cvtepi32_epi8(q0));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16), _mm512_cvtepi32_epi8(q1));
      d[t * blocks + b] = int8_block_scale(amax);
      qsum[t * blocks + b] = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
      xsum[t * blocks + b] = _mm512_reduce_add_ps(_mm512_add_ps(v0, v1));
    }
  }
}

// Per super-block, the 16 halves' Σq come out of one reduce16 (half h of the super-block in lane h), the blocks'
// Σq from adjacent lanes; integer sums are exact in any order, so these are quantize_rows_super_generic's.
void quantize_rows_super_avx512(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                                int32_t* qsum, float* xsum, int32_t* qsum16) {
  const int64_t blocks = cols / kQBlock;
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t s = 0; s < cols / kSuperCols; ++s) {
      const float* src = x + t * cols + s * kSuperCols;
      __m512 m = _mm512_setzero_ps();
      for (int64_t i = 0; i < kSuperCols; i += 16)
        m = _mm512_max_ps(m, _mm512_andnot_ps(sign, _mm512_loadu_ps(src + i)));
      const float amax = _mm512_reduce_max_ps(m);
      const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
      const float scale = amax != 0.0f ? 1.0f / inv : 0.0f;
      const __m512 iv = _mm512_set1_ps(inv);
      __m512 halves[16];  // the int32 values of half h (columns 16h .. 16h + 15 of the super-block)
      int8_t* dst = q + t * cols + s * kSuperCols;
#pragma GCC unroll 4
      for (int h = 0; h < 16; h += 4) {
        __m512i v[4];
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
          v[k] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(src + 16 * (h + k)), iv));
          halves[h + k] = _mm512_castsi512_ps(v[k]);
        }
        store_64_int8(dst + 16 * h, v);
      }
      const __m512i half_sums = _mm512_castps_si512(reduce16(halves, add_i32));
      // Block b's Σq: lanes 2b and 2b + 1, added in the low 32 bits of 64-bit lane b.
      const __m256i block_sums = _mm512_cvtepi64_epi32(_mm512_add_epi32(half_sums, _mm512_srli_epi64(half_sums, 32)));
      const int64_t at = t * blocks + s * kSuperBlocks;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(qsum + at), block_sums);
      _mm256_storeu_ps(xsum + at, _mm256_mul_ps(_mm256_set1_ps(scale), _mm256_cvtepi32_ps(block_sums)));
      _mm256_storeu_ps(d + at, _mm256_set1_ps(scale));
      if (qsum16 != nullptr) _mm512_storeu_si512(qsum16 + 2 * at, half_sums);
    }
  }
}

void int8_tile_avx512vnni(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0,
                          int64_t p1, float* y, uint8_t* scratch) {
  if (w.iq4) {  // IQ4_NL (fp16 scales), IQ4_XS (factored ones)
    int8_panels<4, false, true, false, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.mins16 != nullptr) {  // Q2_K
    int8_panels<2, true, false, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.sub16 && w.bits == 4) {  // Q3_K
    int8_panels<4, false, true, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.sub16) {  // Q6_K
    int8_panels<6, false, true, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.bits == 8) {
    if (w.has_mins) {
      int8_offset<8, true>(w, a, t0, t1, p0, p1, y, scratch);
    } else {
      int8_offset<8, false>(w, a, t0, t1, p0, p1, y, scratch);
    }
  } else if (w.bits == 6) {  // MLX 6-bit
    int8_panels<6, true, false>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.bits == 5 && w.has_mins) {  // Q5_K, Q5_1
    int8_panels<5, true, false>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.bits == 5) {  // Q5_0
    int8_panels<5, false, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else if (w.has_mins) {
    int8_offset<4, true>(w, a, t0, t1, p0, p1, y, scratch);
  } else {
    int8_offset<4, false>(w, a, t0, t1, p0, p1, y, scratch);
  }
}

void bf16_rows_avx512(const float* x, int64_t t0, int64_t t1, int64_t cols, int64_t cols_padded, uint16_t* out) {
  const __m512i round = _mm512_set1_epi32(0x7fff);
  const __m512i one = _mm512_set1_epi32(1);
  for (int64_t t = t0; t < t1; ++t) {
    const float* src = x + t * cols;
    uint16_t* dst = out + t * cols_padded;
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 m = cols - c >= 16 ? static_cast<__mmask16>(0xFFFF)
                                         : static_cast<__mmask16>((1u << (cols - c)) - 1u);
      const __m512 v = _mm512_maskz_loadu_ps(m, src + c);
      const __m512i bits = _mm512_castps_si512(v);
      // Round to nearest even; NaN keeps its payload's top bits and becomes quiet (as f32_to_bf16).
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), one);
      __m512i r = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(round, lsb)), 16);
      const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
      _mm256_mask_storeu_epi16(dst + c, m, _mm512_cvtepi32_epi16(r));
    }
    for (int64_t c = cols; c < cols_padded; ++c) dst[c] = 0;
  }
}

void bf16_tile_avx512bf16(const PackedView& w, const uint16_t* xb, int64_t t0, int64_t t1, int64_t p0,
                          int64_t p1, float* y) {
  int64_t p = p0;
  for (; p + kBf16Rows <= p1; p += kBf16Rows) bf16_tokens<kBf16Rows>(w, xb, t0, t1, p, y);
  for (; p + 2 <= p1; p += 2) bf16_tokens<2>(w, xb, t0, t1, p, y);
  if (p < p1) bf16_tokens<1>(w, xb, t0, t1, p, y);
}

}  // namespace verdict::kernels::cpu
