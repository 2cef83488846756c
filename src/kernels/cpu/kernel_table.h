// Private to kernels/: the per-ISA kernel entry points behind ops.h.
//
// The AVX2 and AVX-512 tables live in translation units compiled with their target flags. Those
// units include only this header, ops.h and <immintrin.h>: no standard-library templates, whose
// AVX-compiled instantiations the linker could otherwise pick for the whole program.
#pragma once
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/ops.h"

namespace verdict::kernels::cpu {

// Rows of a weight panel a matmul tile processes together; scratch holds kPanelRows · cols floats.
inline constexpr int64_t kPanelRows = 4;

// Rows of a packed panel (PackedView) and columns of an Int8 block.
inline constexpr int64_t kPackRows = 16;
inline constexpr int64_t kQBlock = 32;
// Value c of an MLX row of `bits`-bit values: bits c · bits .. of the row's little-endian stream, least
// significant first (3, 5 and 6 bits may straddle two words).
inline uint32_t mlx_value(const uint32_t* row, int64_t c, int bits) {
  const int64_t bit = c * bits;
  const int shift = static_cast<int>(bit & 31);
  uint64_t v = row[bit >> 5] >> shift;
  if (shift + bits > 32) v |= static_cast<uint64_t>(row[(bit >> 5) + 1]) << (32 - shift);
  return static_cast<uint32_t>(v) & ((1u << bits) - 1u);
}

// The stored values of IQ4_NL and IQ4_XS nibbles in Int8 records: kIq4Values[n] + 128 (offset 128, ops.h).
alignas(16) inline constexpr uint8_t kIq4Stored[16] = {1,   24,  45,  63,  79,  93,  106, 118,
                                                      129, 141, 153, 166, 181, 197, 217, 241};
static_assert([] {
  for (int n = 0; n < 16; ++n)
    if (kIq4Stored[n] != kIq4Values[n] + 128) return false;
  return true;
}());

// Bytes of the weights of one Int8 record (16 rows × 32 columns) of `bits`-bit values (layout in ops.h).
constexpr int64_t int8_weight_bytes(int bits) {
  return bits == 8 ? 512 : bits == 6 ? 384 : bits == 5 ? 320 : bits == 4 ? 256 : 128;
}
// 2-bit records: chunk j (0–7) lies at bits 2 · (j % 4) .. + 1 of each byte of the 64-byte vector j / 4 (so
// vector 0 holds columns 0–15, vector 1 columns 16–31).
constexpr int two_bit_vector(int64_t j) { return static_cast<int>(j / 4); }
constexpr int two_bit_shift(int64_t j) { return 2 * static_cast<int>(j % 4); }
// 6-bit records: the 2 high bits of chunk j (0–7) lie in the 64-byte vector high_bits_vector(j) after the
// nibbles, at bits high_bits_shift(j) .. + 1 of each byte: a vector holds the chunks of nibble vectors
// 2k and 2k + 1, low nibbles at bits 0–3, high nibbles at bits 4–7.
constexpr int high_bits_vector(int64_t j) { return static_cast<int>(j % 4) / 2; }
constexpr int high_bits_shift(int64_t j) { return 2 * static_cast<int>(j % 2) + (j >= 4 ? 4 : 0); }
// 5-bit records: bit 4 of chunk j (0–7) lies at bit j of each byte of the one 64-byte vector after the nibbles.
inline constexpr int64_t kFifthBits = 256;

// The one-panel GEMV tiles (decoding: every weight byte read once, from DRAM) prefetch each record's lines this
// far ahead in the panel stream, into L2 (past a panel's end lie the next panel's records), on Intel CPUs
// (prefetch_weight_streams: WeightStreams::Prefetch, isa.h). With the hardware prefetcher alone a 2-thread Q8_0
// or Q4_0 GEMV ran at 64–85 % of the read bandwidth on an AMX Xeon (Sapphire Rapids class); 4 KiB ahead gave
// qwen35-0.8b decode +6 % (Q8_0) and +25 % (Q4_0) on AVX-512, +17 % and +31 % on the AVX2 tiles there
// (docs/performance.md, "Decode: prefetches and huge pages"); 1–2 KiB, or into L1, gained less. On a Zen 5 EPYC
// the Q8_0 and Q4_0 GEMVs with and without it were within that host's noise. On a Zen 4 EPYC, in alternating pairs
// of qwen35-0.8b decode runs without and with it, AVX-512 Q8_0 and Q4_0 were faster without it in 8 and 9 of 10
// pairs (+2 % and +3 % on the means), the AVX2 tiles' Q8_0 in 5 of 5 (+30 %) and their Q4_0 in 1 of 5 (−4 %)
// (docs/performance.md, "Int8 decode without the software prefetch on AMD"). So it runs on Intel CPUs only, as
// the 16-bit tiles' does.
inline constexpr int64_t kGemvPrefetchBytes = 4096;
// Calls of at most this many tokens are decoding: they stream their panels from DRAM once, and the 16-bit tiles
// prefetch then. The AMX BF16 tiles prefetch 2 KiB ahead. Bf16 on vdpbf16ps or on FMAs, F16 and Bf16Fma prefetch
// kGemvPrefetchBytes ahead, as the Int8 GEMV tiles do, on Intel CPUs only too: on the AMX Xeon that gained
// 5–20 % (docs/performance.md, "The 16-bit tiles prefetch too"), while on a Zen EPYC a BF16 prefetch 1 KiB ahead
// had cost 10–20 %, and a Zen 5 EPYC's BF16 and F16 GEMVs read at 93–100 % of its read loop without one.
inline constexpr int64_t kGemvPrefetchTokens = 4;
// Whether the streaming tiles prefetch their weights in software (weight_streams(), isa.h: by default on Intel
// CPUs, from the CPUID vendor check in dispatch.cc); otherwise one token of AVX-512 Int8 records (but Q2_K and
// Q3_K) goes 4 panels at a time (2 to 4 tokens too, for 8-bit records or long panels: gemm_avx512.cc), and so does
// one token of the AVX2 tiles' 8- and 4-bit records of long panels (2 to 4 tokens of 8-bit ones 4 or 2 panels:
// int8_avx2.h).
bool cpu_is_intel();
inline bool prefetch_weight_streams() { return weight_streams() == WeightStreams::Prefetch; }
// The wide GEMV tiles (WeightStreams::Wide) run this many panels at a time (AVX2: twice as many 8-row
// halves); there the decode products split their panels into chunks of a multiple of it (dispatch.cc).
inline constexpr int64_t kGemvWidePanels = 4;
// From this many columns the wide tiles also take 2 to 4 tokens of records they would not take them for on shorter
// panels (AVX-512: 5- and 6-bit records, 4-bit ones with 2 tokens; AVX2 without AVX-VNNI: 3 or 4 tokens of 8-bit
// records): gemm_avx512.cc's wide_tokens, int8_avx2.h's wide_token_halves.
inline constexpr int64_t kWideTokensCols = 3072;

// The streaming tiles' software prefetch: every 64-byte line of [from, from + bytes) into L2 (prefetcht1).
// Callers pass the address kGemvPrefetchBytes (or their own distance) ahead of what they load.
inline void prefetch_l2(const uint8_t* from, int64_t bytes) {
#pragma GCC unroll 8
  for (int64_t k = 0; k < bytes; k += 64) __builtin_prefetch(from + k, 0, 2);
}

// The prefill tiles over 5- and 6-bit records first unpack the records of the panels they work on (up to
// kStripPanels) into the caller's scratch, kStripRecordBytes per record: the 8 chunks of the 8-bit layout
// holding the stored values (their scales stay where they are). Every later group of tokens then loads
// values instead of rebuilding them; the integer sums, and so the results, are the same. One set of strip
// tiles (instantiated with BITS = kStripTileBits) serves every width.
inline constexpr int64_t kStripPanels = 3;
inline constexpr int64_t kStripRecordBytes = 512;
inline constexpr int kStripTileBits = 6;
inline constexpr bool unpacked_in_strips(int bits) { return bits == 5 || bits == 6; }
// The AVX-512 prefill tiles unpack 4-bit records (one scale per 32 columns: Q4_0, Q4_1, Q4_K, IQ4, MLX 4-bit) too,
// IQ4's as their stored values, when they take enough tokens at once (gemm_avx512.cc's int8_tokens): on Intel CPUs
// every 512-bit operation takes port 0 or 5, the ports of vpdpbusd, and rebuilding the nibbles for every group of
// 4 tokens cost 3 of them per 8 vpdpbusd (an Emerald Rapids Xeon: 4-bit products 39–51 → 44–57 % of the vpdpbusd
// peak, docs/performance.md). The AVX2 tiles keep their nibbles.
inline constexpr bool avx512_strips(int bits, bool sub16) { return unpacked_in_strips(bits) || (bits == 4 && !sub16); }
// Q2_K, Q3_K and Q6_K records (sub16: 2-, 4- or 6-bit) sum whole super-blocks in integers, as llama.cpp's vec_dot
// does: I = Σ over the super-block's 16 halves of sc · Σ q·x (exact), M = Σ of the halves' −m · Σ x_q (Q2_K), then
// y += (d·dx) · I + (dmin·dx) · M in fp32 once per 256 columns (ops.h). |I| < 2^31: a Q6_K half's sum is at most
// 16 · 32 · 127 (q − 32 ∈ [−32, 31], |x_q| ≤ 127; one that does not fit int16), times |sc| ≤ 128, 16 halves.
inline bool integer_super_sums(const PackedView& w) { return w.sub16; }
// Whether a kind of Int8 record always keeps its block scales as fp16 numbers beside the records (w.half_scales:
// Q8_0, Q4_0, Q5_0; pack.cc): no mins, not sub16, not IQ4 (IQ4_NL has fp16 scales, IQ4_XS factors). The tiles are
// compiled for that source alone there, and choose per matrix for the other kinds.
inline constexpr bool always_half_scales(bool mins, bool sub16, bool iq4) { return !mins && !sub16 && !iq4; }
// Whether a half's integer sum fits int16 (Q2_K, Q3_K: |Σ (q − 4) · x| ≤ 16 · 4 · 127), so that one vpdpwssd /
// vpmaddwd with the pair (scale, 0) scales it; Q6_K's halves take an int32 multiply.
inline constexpr bool int16_half_sums(int bits) { return bits <= 4; }
// The AVX-512 prefill tiles over Q2_K and Q3_K records unpack them into strips too: value times its half's
// scale, sc · q + kFoldedOffset (Q3_K: q ∈ [−4, 3], sc ∈ [−32, 31], so 3 .. 255) or sc · q (Q2_K: q ∈ [0, 3],
// sc ∈ [0, 15]), one byte each, in the 8-bit layout; a super-block then needs no step but vpdpbusd. (Q6_K's 8-bit
// scales times its 6-bit values do not fit a byte: its strips hold the values, as for 5-bit records.) Q2_K's
// strips also hold, after every panel's records, 64 bytes per record: the 16 rows' (−m of columns 0–15,
// −m of 16–31) as int16 pairs, for vpdpwssd with the activations' pairs16.
inline constexpr int kFoldedOffset = 127;
inline constexpr int64_t kMinPairBytes = 64;
// The AMX tiles (gemm_amx.cc) take tokens in chunks of kAmxChunkTokens (groups of 16); their scratch holds one
// panel's records in the 8-bit layout and the chunk's activation scales and sums, block by block.
inline constexpr int64_t kAmxChunkTokens = 96;
inline int64_t amx_scratch_bytes(const PackedView& w) {
  return w.sub16 ? 0 : w.blocks * (kStripRecordBytes + 2 * kAmxChunkTokens * 4);
}
// Scratch bytes of the strips an int8_tile call unpacks for `w`: 0 unless it has 5- or 6-bit records, 4-bit ones on
// the AVX-512 tiles (`avx512`), or folded Q2_K / Q3_K strips.
inline int64_t int8_strip_bytes(const PackedView& w, bool avx512) {
  if (integer_super_sums(w) && w.bits <= 4)
    return kStripPanels * w.blocks * (kStripRecordBytes + (w.mins16 != nullptr ? kMinPairBytes : 0));
  const bool strips = avx512 ? avx512_strips(w.bits, w.sub16) : unpacked_in_strips(w.bits);
  return strips ? kStripPanels * w.blocks * kStripRecordBytes : 0;
}
// Scratch bytes an int8_tile call needs for `w` (64-byte aligned): the strips, then on the AVX-512 tiles the fp16
// block scales of the tile call's panels as fp32 (w.half_scales: Q8_0, Q4_0, Q5_0, IQ4_NL), which their prefill
// tiles read instead of converting them for every group of tokens (the AMX tiles, which run the VNNI tiles for
// their remainder, need the larger of this and amx_scratch_bytes).
inline int64_t int8_scratch_bytes(const PackedView& w, bool avx512) {
  const int64_t scales = avx512 && w.half_scales != nullptr ? kStripPanels * w.blocks * kPackRows * 4 : 0;
  return int8_strip_bytes(w, avx512) + scales;
}

// Sub-block j's (0–7) 6-bit scale and min from the 12 scale bytes `s` of a Q4_K or Q5_K block (ggml's
// get_scale_min_k4).
inline void k_quant_scale_min(int j, const uint8_t* s, int& sc, int& m) {
  sc = j < 4 ? (s[j] & 63) : ((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
  m = j < 4 ? (s[j + 4] & 63) : ((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
}

// Sub-block j's (0–7) 6-bit scale field ls of an IQ4_XS super-block `b` (its scale is d · (ls − 32)): the
// low 4 bits in nibble j % 2 of scales_l[j / 2] (byte 4 + j / 2), the high 2 at bits 2j of the 16-bit
// scales_h (bytes 2–3).
inline int iq4xs_scale(const uint8_t* b, int j) {
  return ((b[4 + j / 2] >> (4 * (j % 2))) & 0xF) | (((b[2 + j / 4] >> (2 * (j % 4))) & 3) << 4);
}

// Value i (0–31) of a Q4_1, Q5_0 or Q5_1 block `b` as stored, q ∈ [0, 15] or [0, 31] (ops.h): the nibble of
// qs[i % 16] (the low one for i < 16), for Q5_0 and Q5_1 plus bit i of the little-endian 32-bit qh as bit 4; qs
// and qh follow d (and Q4_1's and Q5_1's m).
inline int legacy_value(WeightType t, const uint8_t* b, int i) {
  const int head = t == WeightType::Q5_0 ? 2 : 4;
  const bool five = t != WeightType::Q4_1;
  const uint8_t byte = b[head + (five ? 4 : 0) + i % 16];
  const int low = i < 16 ? (byte & 0xF) : (byte >> 4);
  return five ? low | (((b[head + i / 8] >> (i % 8)) & 1) << 4) : low;
}

// Value e (0–255) of ggml's K-quant 2-bit field `qs` (Q3_K's low bits, Q2_K's values): bits 2 · ((e % 128) / 32)
// of qs[32 · (e / 128) + e % 32].
inline int two_bits_at(const uint8_t* qs, int e) {
  return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

// Value e (0–255) of a Q3_K super-block `b` as stored, q ∈ [0, 7] (ggml's value is q − 4; ops.h), and
// sub-block i's (0–15) scale, its 6-bit field minus 32 (the 4 low bits in scales[i % 8], upper nibble for
// i ≥ 8; the 2 high bits at bit 2 · (i / 4) of scales[8 + i % 4]).
inline int q3k_value(const uint8_t* b, int e) {
  return two_bits_at(b + 32, e) | (((b[e % 32] >> (e / 32)) & 1) << 2);
}
inline int q3k_scale(const uint8_t* b, int i) {
  const uint8_t* s = b + 96;
  const int low = i < 8 ? (s[i] & 0xF) : (s[i - 8] >> 4);
  return (low | (((s[8 + i % 4] >> (2 * (i / 4))) & 3) << 4)) - 32;
}

// Value e (0–255) of a Q2_K super-block `b`, q ∈ [0, 3] (Q3_K's low bits, in qs at byte 16), and sub-block i's
// (0–15) 4-bit scale sc and min m: the low and the high nibble of scales[i] (ops.h).
inline int q2k_value(const uint8_t* b, int e) { return two_bits_at(b + 16, e); }
inline int q2k_scale(const uint8_t* b, int i) { return b[i] & 0xF; }
inline int q2k_min(const uint8_t* b, int i) { return b[i] >> 4; }

// Int8 Q4_K/Q6_K records (PackedView::factors, super_scales): bytes of one record's factors, blocks of
// one 256-column super-block, and floats of one (panel, super-block) entry of d and d2.
inline constexpr int64_t kFactorBytes = 32;
inline constexpr int64_t kSuperBlocks = 8;
inline constexpr int64_t kSuperCols = kSuperBlocks * kQBlock;
inline constexpr int64_t kSuperFloats = 2 * kPackRows;
// Int8 Q2_K records (PackedView::mins16, min_scales): bytes of one record's mins, floats of one (panel,
// super-block) entry of dmin.
inline constexpr int64_t kMinBytes = 2 * kPackRows;
inline constexpr int64_t kMinFloats = kPackRows;

// Activations quantized for the Int8 kernels: n tokens × cols, per token and 32-column block b:
// q = int8 values, d = scale (x ≈ d · q, int8_block_scale; for K-quant weights one per 256 columns,
// quantize_rows_super), qsum = Σ q, xsum = Σ x (fp32; K-quants: d · qsum); for sub16
// weights also qsum16 = Σ q of each 16-column half (from quantize_rows_super) and pairs16 = the block's two qsum16
// as int16 (|Σq| ≤ 16 · 128), the first in the low half: what vpdpwssd / vpmaddwd multiply with the records'
// pairs of 16-bit values (mins, scales).
struct QuantizedRows {
  const int8_t* q = nullptr;        // n × cols
  const float* d = nullptr;         // n × blocks
  const int32_t* qsum = nullptr;    // n × blocks
  const float* xsum = nullptr;      // n × blocks
  const int32_t* qsum16 = nullptr;  // n × 2 · blocks (sub16 weights only)
  const int32_t* pairs16 = nullptr;  // n × blocks (sub16 weights only)
  // −offset · qsum (sub16 weights: · qsum16) for the product's weights, whose records carry that offset: where the
  // AVX-512 tiles' integer sums start (int8_product sets it for the AVX-512 and AMX tiles; the others compute it).
  const int32_t* offset_sums = nullptr;
  // The biased fold of the AVX-512 and AVX-VNNI prefill tiles (int8_product sets it where biased_fold_applies, for
  // more tokens than the decode sizes): per token and block, where the integer sums start, kSumBiasBits − offset ·
  // Σq, and −kSumBias · d (exact, below).
  const int32_t* biased_starts = nullptr;
  const float* bias_d = nullptr;
  int64_t cols = 0;
  int64_t blocks = 0;
};

// The biased fold. A block's integer sum s (|s| < 2^22 for every record kind: 32 · 255 · 127 plus an offset of
// 128 · 32 · 127 at most) started from kSumBiasBits, the bits of kSumBias = 1.5 · 2^23, ends as the bits of the
// float kSumBias + s exactly (the same exponent, s added to the significand). If d has at most 12 significant bits
// (int8_block_scale's 11), kSumBias · d = 3 · 2^22 · d is a float, and fma(kSumBias + s, d, −kSumBias · d)
// rounds (kSumBias + s) · d − kSumBias · d = s · d once: the bits of float(s) · d, in one fused multiply-add where
// the contract's order took a conversion and a multiply. Not for block_q8_K activations (quantize_rows_super),
// whose d = 1 / (127 / max|x|) has 24 significant bits, nor where kSumBias · d is not finite.
inline constexpr int32_t kSumBiasBits = 0x4B400000;
inline constexpr float kSumBias = 12582912.0f;
// Whether int8_product gives the AVX-512 and AVX-VNNI prefill tiles biased_starts and bias_d for w: block_q8_0
// activations (no factors) and one sum per block (not sub16).
inline bool biased_fold_applies(const PackedView& w) { return w.factors == nullptr && !w.sub16; }

// v rounded to 11 significant bits (to nearest, ties to even): IEEE half precision with float's exponent range.
inline float round_to_half_precision(float v) {
  uint32_t bits = 0;
  __builtin_memcpy(&bits, &v, sizeof bits);
  bits = (bits + 0xFFFu + ((bits >> 13) & 1u)) & ~0x1FFFu;
  __builtin_memcpy(&v, &bits, sizeof v);
  return v;
}
// The scale d of one quantized activation block: max|x| / 127 rounded to 11 significant bits (to nearest,
// ties to even), i.e. to IEEE half precision but with float's exponent range. Within half's normal range
// (max|x| from 2^−14 · 127 to 65504 · 127) this is the fp16 d of ggml's block_q8_0, the activation block
// llama.cpp multiplies Q8_0 and Q4_0 weights with; outside it verdict keeps float's range.
inline float int8_block_scale(float amax) { return round_to_half_precision(amax / 127.0f); }

// The sum s of ggml's block_q8_1 (the activations llama.cpp multiplies Q4_1 and Q5_1 weights with), which their
// mins multiply: (max|x| / 127) · Σq in fp32 (the scale before its rounding), rounded to 11 significant bits as
// int8_block_scale (ggml's fp16 s within half's range).
inline float q8_1_sum(float amax, int32_t qsum) {
  return round_to_half_precision(amax / 127.0f * static_cast<float>(qsum));
}

// e^r on |r| ≤ ln 2 / 2 (Cephes expf): e^r ≈ 1 + r + r² · P(r), P's coefficients highest degree first;
// ln 2 in two parts for the range reduction r = x − n · ln 2.
inline constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                      4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
inline constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f, kLog2e = 1.44269504f;

// Calls f.template operator()<N>() with N = rem, for the remainders 1 .. 5 of a blocked loop (the
// register tiles' edge cases).
template <typename F>
inline void with_count(int64_t rem, const F& f) {
  switch (rem) {
    case 5:
      f.template operator()<5>();
      break;
    case 4:
      f.template operator()<4>();
      break;
    case 3:
      f.template operator()<3>();
      break;
    case 2:
      f.template operator()<2>();
      break;
    case 1:
      f.template operator()<1>();
      break;
    default:
      break;
  }
}

// gemm_f32's row tiles: f.template operator()<MR>(i) for tiles of MR ≤ 6 rows starting at row i, covering
// [0, m): tiles of 6, the last two balanced (m = 32: 6, 6, 6, 6, 4, 4, not a last tile of 2 rows, whose
// few accumulators cannot hide the FMA latency).
template <typename F>
inline void for_row_tiles(int64_t m, const F& f) {
  int64_t i = 0;
  const auto tile = [&]<int MR>() { f.template operator()<MR>(i); };
  for (; m - i >= 12 || m - i == 6; i += 6) tile.template operator()<6>();
  if (m - i > 6) {  // 7..11 rows: 4 + 3 .. 6 + 5
    const int64_t first = m - i - (m - i) / 2;
    if (first == 6) {
      tile.template operator()<6>();
    } else {
      with_count(first, tile);
    }
    i += first;
  }
  with_count(m - i, tile);
}

// gemm_f32 over blocks of `block` values of p (C carries each element's chain from block to block, so
// results do not depend on the blocking): f.template operator()<NEG>(p, kb) with NEG for alpha = −1.
template <typename F>
inline void for_p_blocks(int64_t k, int64_t block, float alpha, const F& f) {
  for (int64_t p = 0; p < k; p += block) {
    const int64_t kb = k - p < block ? k - p : block;
    if (alpha < 0.0f) {
      f.template operator()<true>(p, kb);
    } else {
      f.template operator()<false>(p, kb);
    }
  }
}

struct KernelTable {
  // y[t, r] for t in [t0, t1), r in [r0, r1); x has `cols` columns, y has `rows` columns.
  void (*matmul_tile)(const WeightMatrix& w, const float* x, int64_t t0, int64_t t1, int64_t r0,
                      int64_t r1, float* y, float* scratch);
  void (*dequantize_row)(const WeightMatrix& w, int64_t r, float* out);
  float (*dot)(const float* a, const float* b, int64_t n);
  void (*axpy)(int64_t n, float a, const float* x, float* y);
  void (*scale)(int64_t n, float a, float* x);
  void (*exp_shifted)(int64_t n, float shift, float* x);
  void (*scale_to)(int64_t n, float a, const float* x, float* y);
  void (*transpose_scaled)(int64_t rows, int64_t cols, const float* x, int64_t ldx, const float* f, float* y,
                           int64_t ldy);
  // ops.h's gemm_f32 with alpha = 1 or −1 only (kernels::gemm_f32 rounds alpha · A into a copy first for
  // any other alpha: the same products).
  void (*gemm_f32)(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda, const float* B,
                   int64_t ldb, float* C, int64_t ldc);
  // Quantizes tokens [t0, t1) of x (cols a multiple of 32) into the arrays of QuantizedRows (see there;
  // every table computes the same q, d and qsum bit for bit: d = int8_block_scale(amax),
  // q = rne(x · (127 / amax)), as ggml's quantize_row_q8_0).
  void (*quantize_rows)(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                        int32_t* qsum, float* xsum);
  // The same for the activations of Q2_K–Q6_K and IQ4_XS weights, as ggml's block_q8_K (cols a multiple of
  // 256; see quantize_rows_super_generic), and, where qsum16 is not null (sub16 weights), the Σq of each
  // 16-column half: every table computes the same q, d, qsum, xsum and qsum16 bit for bit.
  void (*quantize_rows_super)(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                              int32_t* qsum, float* xsum, int32_t* qsum16);
  // y[t, r] for t in [t0, t1) and the rows of panels [p0, p1) (y has w.rows columns); scratch holds
  // int8_scratch_bytes(w) bytes.
  void (*int8_tile)(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0,
                    int64_t p1, float* y, uint8_t* scratch);
  // Rounds tokens [t0, t1) of x to bf16, cols_padded values each (zero past cols).
  void (*bf16_rows)(const float* x, int64_t t0, int64_t t1, int64_t cols, int64_t cols_padded, uint16_t* out);
  // y[t, r] for t in [t0, t1), panels [p0, p1); xb holds bf16 activations, cols_padded per token.
  void (*bf16_tile)(const PackedView& w, const uint16_t* xb, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                    float* y);
  // y[t, r] for t in [t0, t1) and the rows of FMA panels [p0, p1) (F16 or Bf16Fma; fp32 activations x, cols each).
  void (*fma16_tile)(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p0, int64_t p1, float* y);
  void (*silu_mul)(int64_t n, const float* x, const float* m, float* y);
  double (*sum_squares)(const float* x, int64_t n);
  void (*softmax)(int64_t n, float scale, float* x);
  void (*conv_silu)(int64_t n, int64_t taps, const float* w, const float* const* x, float* y);
  // ops.h's delta_rule_token: each table's result is the sequence of its own scale and axpy calls there.
  void (*delta_rule_token)(int64_t dk, int64_t dv, float decay, float beta, const float* q, const float* k,
                           const float* v, float* S, float* o);
};

const KernelTable& generic_table();
const KernelTable& avx2_table();
const KernelTable& avx512_table();
// Bf16 records with fp32 activations x (Bf16Products::Fma, isa.h; avx512.cc, AVX-512 F/BW/VL/DQ only, so it
// runs on CPUs without AVX-512 BF16 too): ref::matmul_fma bit for bit.
void bf16_fma_tile_avx512(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                          float* y);

// The portable packed kernels (generic.cc), used by tables without SIMD versions of them.
void quantize_rows_generic(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                           int32_t* qsum, float* xsum);
void int8_tile_generic(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0,
                       int64_t p1, float* y, uint8_t* scratch);
void bf16_rows_generic(const float* x, int64_t t0, int64_t t1, int64_t cols, int64_t cols_padded, uint16_t* out);
void bf16_tile_generic(const PackedView& w, const uint16_t* xb, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                       float* y);
void fma16_tile_generic(const PackedView& w, const float* x, int64_t t0, int64_t t1, int64_t p0, int64_t p1, float* y);

// Whether the CPU has AVX-VNNI (vpdpbusd on ymm registers, VEX-encoded; on top of the AVX2 table's requirements).
bool cpu_has_avx_vnni();
// The AVX2 table's Int8 tiles on AVX-VNNI (avx2_vnni.cc): int8_tile_avx2's results bit for bit.
void int8_tile_avx2_vnni(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                         float* y, uint8_t* scratch);

// Whether the CPU has AVX-512 VNNI and AVX512_BF16 (on top of the AVX-512 table's requirements).
bool cpu_has_avx512_vnni();
bool cpu_has_avx512_bf16();

// AVX-512 VNNI / BF16 kernels (gemm_avx512.cc), for CPUs with those extensions.
void quantize_rows_avx512(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                          int32_t* qsum, float* xsum);
void int8_tile_avx512vnni(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0,
                          int64_t p1, float* y, uint8_t* scratch);
void bf16_rows_avx512(const float* x, int64_t t0, int64_t t1, int64_t cols, int64_t cols_padded, uint16_t* out);
void bf16_tile_avx512bf16(const PackedView& w, const uint16_t* xb, int64_t t0, int64_t t1, int64_t p0,
                          int64_t p1, float* y);

// The 4- to 6-bit records of panels [p, p + panels) unpacked into `out` in the 8-bit layout (kernel_table.h's
// strips; IQ4's as their stored values), as the VNNI prefill tiles read them.
void unpack_panels_avx512(const PackedView& w, int64_t p, int64_t panels, uint8_t* out);

// Whether the CPU has AMX-TILE and AMX-INT8 (AMX-BF16), the OS enables their state and granted this process the
// tile data (arch_prctl ARCH_REQ_XCOMP_PERM, asked once).
bool cpu_has_amx_int8();
bool cpu_has_amx_bf16();
// AMX Int8 prefill tiles (gemm_amx.cc): int8_tile_avx512vnni's results bit for bit, groups of 16 tokens on the
// tiles (the records with one scale per 32 columns), the rest on the VNNI tiles.
void int8_tile_amx(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                   float* y, uint8_t* scratch);
// AMX-BF16 tiles (gemm_amx.cc) for Bf16 products whose cols_padded is a multiple of 32 (bf16_tiles_take; others
// run bf16_tile_avx512bf16): every token of every call on the tiles, so a result does not depend on n. Reads
// activation rows up to the next multiple of 16 tokens past t1 (matmul pads xb with zero rows).
bool bf16_tiles_take(const PackedView& w);
void bf16_tile_amx(const PackedView& w, const uint16_t* xb, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                   float* y);

// Quantizes tokens [t0, t1) of x (cols a multiple of 256) as ggml's block_q8_K, the activations llama.cpp
// multiplies Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS weights with: per 256-column super-block,
// q = rne(x · (127 / max|x|)) and d = 1 / (127 / max|x|) in fp32, written to each of its 8 blocks of
// QuantizedRows; there xsum holds
// d · qsum, the block's dequantized sum (from ggml's bsums), which the mins of Q4_K and Q5_K multiply; qsum16
// (2 per block, when not null) the Σq of its two 16-column halves.
void quantize_rows_super_generic(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                                 int32_t* qsum, float* xsum, int32_t* qsum16);
void quantize_rows_super_avx512(const float* x, int64_t t0, int64_t t1, int64_t cols, int8_t* q, float* d,
                                int32_t* qsum, float* xsum, int32_t* qsum16);

// Portable MLX dequantization of any bit width (used by every table for widths without SIMD code).
void mlx_dequantize_row_generic(const WeightMatrix& w, int64_t r, float* out);
// Portable dequantization of the ggml types (F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K–Q6_K, IQ4_NL, IQ4_XS),
// bit-exact with ggml.
void ggml_dequantize_row_generic(const WeightMatrix& w, int64_t r, float* out);

}  // namespace verdict::kernels::cpu
