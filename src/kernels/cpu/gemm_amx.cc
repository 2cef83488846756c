// The Int8 prefill GEMM on Intel AMX tiles (AMX-TILE + AMX-INT8, on top of AVX-512 VNNI): one tdpbssd (or
// tdpbsud) per 16 tokens × 16 weight rows × 32 columns, where the VNNI tile needs 128 vpdpbusd. Compiled with
// the AMX flags and only called when the CPU has AMX and the kernel granted this process the tile data
// (dispatch.cc). Only ops.h, kernel_table.h, amx_config.h and intrinsics here: see kernel_table.h.
//
// Same results as int8_tile_avx512vnni, bit for bit: a block's integer sum is exact in any order, and the
// fp32 steps that fold it (convert, × the activation scale, fused multiply-add with the weight scale, then
// the min's one) are the VNNI tile's, in its order, on the same 16-row vectors. So a token's result does not
// depend on whether it falls in a group of 16 (tiles) or in the remainder (the VNNI tiles).
//
// Tiles: C (tmm0–tmm3) 16 tokens × 16 rows of int32; A (tmm4, tmm5) 16 tokens × 32 int8 activations of one
// block, rows a.cols apart; B (tmm6, tmm7) one record in the 8-bit layout, 8 rows of 64 bytes: row j is chunk j,
// the 16 rows' 4 columns 4j .. 4j + 3 (ops.h), which is the layout tdpbssd / tdpbsud read their second operand
// in. The four C tiles rotate and a block is folded three blocks after its product was issued, so the tile unit
// (a tile store is 16 cycles, as is one product) runs ahead of the vector units, whose fold is 3 operations per
// 16 lanes (convert, multiply, fused add). Measured on a 2-vCPU Xeon with AMX: 2 C tiles folded one block later
// gave 520–640 GOPS per core, these 620–670 (docs/performance.md).
#include <immintrin.h>

#include "kernels/cpu/amx_config.h"
#include "kernels/cpu/kernel_table.h"

namespace verdict::kernels::cpu {
namespace {

constexpr int kTileTokens = 16;
// A block's sums are folded kLag blocks after its product was issued: the tile store lands in memory before the
// vector loads read it, and the tile unit runs ahead of the vector units. kSumBuffers ≥ kLag + 2.
constexpr int kLag = 3;
constexpr int kSumBuffers = 8;
constexpr int kCTiles = 4;

void configure_tiles() {
  TileConfig c;
  for (int t = 0; t < kCTiles; ++t) {
    c.rows[t] = kTileTokens;  // C: 16 tokens × 16 int32
    c.colsb[t] = 64;
  }
  for (int t = 0; t < 2; ++t) {
    c.rows[4 + t] = kTileTokens;  // A: 16 tokens × 32 int8
    c.colsb[4 + t] = kQBlock;
    c.rows[6 + t] = 8;  // B: 8 chunks × 64 bytes
    c.colsb[6 + t] = 64;
  }
  load_tile_config(c);
}

// Whether the tiles take this product: records whose block sums need one scale per 32 columns (every Int8
// kind but the sub16 ones: Q6_K, Q3_K, Q2_K), with the K-quants' and IQ4_XS's scales expanded to fp32 (matmul
// does so for more than a few tokens).
bool tiles_take(const PackedView& w) { return !w.sub16 && (w.factors == nullptr || w.expanded != nullptr); }

// The records of panel p as the tiles read them, in the 8-bit layout: with an offset (Q8_0, Q4_0, Q5_0, IQ4)
// the signed values stored − offset (int8: the offsets center the stored range), which tdpbssd multiplies
// without the VNNI tiles' −offset · Σq correction (the same integer sums); without one the stored unsigned
// values, for tdpbsud. 8-bit records without an offset are read in place (stride = block_stride), the others
// unpacked into `out` (kStripRecordBytes apart).
const uint8_t* panel_records(const PackedView& w, int64_t p, uint8_t* out, int64_t& stride) {
  const uint8_t* first = w.data + p * w.blocks * w.block_stride;
  if (w.bits == 8 && w.offset == 0) {
    stride = w.block_stride;
    return first;
  }
  stride = kStripRecordBytes;
  const __m512i off = _mm512_set1_epi8(static_cast<char>(w.offset));
  if (w.bits != 8) {  // 4- to 6-bit records: the VNNI tiles' strip, less the offset
    unpack_panels_avx512(w, p, 1, out);
    if (w.offset != 0)
      for (int64_t i = 0; i < w.blocks * kStripRecordBytes; i += 64)
        _mm512_store_si512(out + i, _mm512_sub_epi8(_mm512_load_si512(out + i), off));
    return out;
  }
  for (int64_t b = 0; b < w.blocks; ++b) {
    const uint8_t* rec = first + b * w.block_stride;
    uint8_t* dst = out + b * kStripRecordBytes;
    for (int j = 0; j < 8; ++j)
      _mm512_store_si512(dst + 64 * j, _mm512_sub_epi8(_mm512_load_si512(rec + 64 * j), off));
  }
  return out;
}

// One block's tile product into C tile tmm`set` (0–3; A tmm4 or tmm5, B tmm6 or tmm7 by the set's parity), stored
// to `sums`. GCC's tile intrinsics are macros that paste the tile number into the instruction: literal numbers.
#define VERDICT_AMX_BLOCK(C, A, B)     \
  _tile_zero(C);                       \
  _tile_loadd(A, xb, xs);              \
  _tile_loadd(B, rec, 64);             \
  if constexpr (SIGNED) {              \
    _tile_dpbssd(C, A, B);             \
  } else {                             \
    _tile_dpbsud(C, A, B);             \
  }                                    \
  _tile_stored(C, sums, 64)
template <bool SIGNED>
inline void block_sums(int set, const int8_t* xb, int64_t xs, const uint8_t* rec, int32_t* sums) {
  switch (set) {
    case 0:
      VERDICT_AMX_BLOCK(0, 4, 6);
      break;
    case 1:
      VERDICT_AMX_BLOCK(1, 5, 7);
      break;
    case 2:
      VERDICT_AMX_BLOCK(2, 4, 6);
      break;
    default:
      VERDICT_AMX_BLOCK(3, 5, 7);
      break;
  }
}
#undef VERDICT_AMX_BLOCK

// y[t .. t + 15, rows of panel p]: the group's activations at xq (xs apart), its activation scales d and sums
// xsum (MINS) regrouped by block (block b's 16 tokens at 16 · b: what one block's fold reads), the records at
// recs (panel_records).
template <bool MINS, bool SIGNED>
void panel_tokens(const PackedView& w, const int8_t* xq, int64_t xs, const float* d, const float* xsum, int64_t t,
                  int64_t p, const uint8_t* recs, int64_t stride, float* y) {
  alignas(64) int32_t sums[kSumBuffers][kTileTokens * kPackRows];
  __m512 facc[kTileTokens];
#pragma GCC unroll 16
  for (int tt = 0; tt < kTileTokens; ++tt) facc[tt] = _mm512_setzero_ps();
  const float* fp32 = w.expanded != nullptr ? w.expanded + p * w.blocks * 2 * kPackRows : nullptr;
  const int64_t fp32_stride = w.expanded != nullptr ? 2 * kPackRows : w.block_stride / 4;
  if (fp32 == nullptr && MINS)
    fp32 = reinterpret_cast<const float*>(w.data + p * w.blocks * w.block_stride + int8_weight_bytes(w.bits));

  for (int64_t i = 0; i < w.blocks + kLag; ++i) {
    if (i < w.blocks)
      block_sums<SIGNED>(static_cast<int>(i % kCTiles), xq + i * kQBlock, xs, recs + i * stride, sums[i % kSumBuffers]);
    const int64_t b = i - kLag;
    if (b < 0) continue;
    // The weight scales of block b (int8_micro's block_scales for these kinds).
    __m512 sc, second = _mm512_setzero_ps();
    if (fp32 != nullptr) {
      sc = _mm512_loadu_ps(fp32 + b * fp32_stride);
      if constexpr (MINS) second = _mm512_loadu_ps(fp32 + b * fp32_stride + kPackRows);
    } else {
      sc = _mm512_cvtph_ps(
          _mm256_load_si256(reinterpret_cast<const __m256i*>(w.half_scales + (p * w.blocks + b) * kPackRows)));
    }
    const int32_t* s = sums[b % kSumBuffers];
    const float* db = d + b * kTileTokens;
    [[maybe_unused]] const float* xb = MINS ? xsum + b * kTileTokens : nullptr;
#pragma GCC unroll 16
    for (int tt = 0; tt < kTileTokens; ++tt) {
      const __m512 isum = _mm512_cvtepi32_ps(_mm512_load_si512(s + tt * kPackRows));
      facc[tt] = _mm512_fmadd_ps(_mm512_mul_ps(isum, _mm512_set1_ps(db[tt])), sc, facc[tt]);
      if constexpr (MINS) facc[tt] = _mm512_fmadd_ps(_mm512_set1_ps(xb[tt]), second, facc[tt]);
    }
  }
  const int64_t r0 = p * kPackRows;
#pragma GCC unroll 16
  for (int tt = 0; tt < kTileTokens; ++tt) {
    float* dst = y + (t + tt) * w.rows + r0;
    if (r0 + kPackRows <= w.rows) {
      _mm512_storeu_ps(dst, facc[tt]);
    } else {
      _mm512_mask_storeu_ps(dst, static_cast<__mmask16>((1u << (w.rows - r0)) - 1u), facc[tt]);
    }
  }
}

// Tokens [t0, t1) (whole groups of 16) × panels [p0, p1), in chunks of kAmxChunkTokens tokens: the chunk's
// scalars regrouped, then per panel its records (panel_records) and every group of the chunk.
template <bool MINS, bool SIGNED>
void chunks(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1, float* y,
            uint8_t* scratch) {
  uint8_t* strip = scratch;
  float* d = reinterpret_cast<float*>(scratch + w.blocks * kStripRecordBytes);
  float* xsum = d + kAmxChunkTokens * w.blocks;
  for (int64_t tc = t0; tc < t1; tc += kAmxChunkTokens) {
    const int64_t groups = ((t1 - tc < kAmxChunkTokens ? t1 - tc : kAmxChunkTokens)) / kTileTokens;
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t b = 0; b < w.blocks; ++b)
        for (int64_t tt = 0; tt < kTileTokens; ++tt) {
          const int64_t at = (tc + g * kTileTokens + tt) * a.blocks + b;
          d[(g * w.blocks + b) * kTileTokens + tt] = a.d[at];
          if constexpr (MINS) xsum[(g * w.blocks + b) * kTileTokens + tt] = a.xsum[at];
        }
    const int64_t panel_bytes = w.blocks * w.block_stride;
    for (int64_t p = p0; p < p1; ++p) {
      int64_t stride = 0;
      const uint8_t* recs = panel_records(w, p, strip, stride);
      // The next panel's records come from DRAM: prefetched into L2 a share per group while this panel's
      // groups run, so that its panel_records does not wait for them.
      const uint8_t* next = p + 1 < p1 ? w.data + (p + 1) * panel_bytes : nullptr;
      const int64_t parts = groups > 0 ? groups : 1;
      const int64_t share = (panel_bytes / 64 + parts - 1) / parts * 64;
      for (int64_t g = 0; g < groups; ++g) {
        if (next != nullptr && g * share < panel_bytes)
          prefetch_l2(next + g * share, share < panel_bytes - g * share ? share : panel_bytes - g * share);
        const int64_t t = tc + g * kTileTokens;
        const int64_t at = g * w.blocks * kTileTokens;
        panel_tokens<MINS, SIGNED>(w, a.q + t * a.cols, a.cols, d + at, xsum + at, t, p, recs, stride, y);
      }
    }
  }
}

}  // namespace

void int8_tile_amx(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                   float* y, uint8_t* scratch) {
  const int64_t tiled = tiles_take(w) ? (t1 - t0) / kTileTokens * kTileTokens : 0;
  if (tiled > 0) {
    configure_tiles();
    const bool off = w.offset != 0;
    if (w.has_mins) {
      if (off) {
        chunks<true, true>(w, a, t0, t0 + tiled, p0, p1, y, scratch);
      } else {
        chunks<true, false>(w, a, t0, t0 + tiled, p0, p1, y, scratch);
      }
    } else if (off) {
      chunks<false, true>(w, a, t0, t0 + tiled, p0, p1, y, scratch);
    } else {
      chunks<false, false>(w, a, t0, t0 + tiled, p0, p1, y, scratch);
    }
    _tile_release();
  }
  if (t0 + tiled < t1) int8_tile_avx512vnni(w, a, t0 + tiled, t1, p0, p1, y, scratch);
}

namespace {

// ---------------------------------------------------------------------------------------------------
// Bf16 on AMX-BF16 tiles: C (tmm0–tmm3) 16 tokens × 16 rows of fp32 sums, for 2 groups of 16 tokens × 2 panels;
// A (tmm4, tmm5) one group's 32 bf16 activations per token (64 bytes, rows cols_padded apart); B (tmm6, tmm7)
// 16 chunks of one panel, 1 KiB: chunk k holds the 16 rows' column pair (2k, 2k + 1), which is the layout
// tdpbf16ps reads its second operand in. Each C element sums its 32-column steps in column order, whatever
// the tile, the group or the panel pairing, so a result depends on nothing but its row and token (the
// activation rows a group pads with reach no other row's sums).

void configure_bf16_tiles() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) {
    c.rows[t] = kTileTokens;
    c.colsb[t] = 64;
  }
  load_tile_config(c);
}

constexpr int64_t kBf16Step = 32;  // columns per tdpbf16ps
constexpr int64_t kBf16PrefetchBytes = 2048;  // how far ahead decode calls (kGemvPrefetchTokens) prefetch each panel

// Stores C tile `tile` (a group of tokens [t, t + 16) × panel p) into y, only the tokens below t1 and rows below
// w.rows.
#define VERDICT_AMX_STORE(TILE)                                                                        \
  do {                                                                                                 \
    if (full) {                                                                                        \
      _tile_stored(TILE, y + t * w.rows + p * kPackRows, w.rows * 4);                                  \
    } else {                                                                                           \
      _tile_stored(TILE, part, 64);                                                                    \
      for (int64_t tt = 0; tt < valid_tokens; ++tt)                                                    \
        _mm512_mask_storeu_ps(y + (t + tt) * w.rows + p * kPackRows, row_mask,                         \
                              _mm512_load_ps(part + tt * kPackRows));                                  \
    }                                                                                                  \
  } while (0)

inline void store_bf16_tile(int tile, const PackedView& w, int64_t t, int64_t t1, int64_t p, float* y) {
  alignas(64) float part[kTileTokens * kPackRows];
  const int64_t valid_tokens = t1 - t < kTileTokens ? t1 - t : kTileTokens;
  const int64_t valid_rows = w.rows - p * kPackRows < kPackRows ? w.rows - p * kPackRows : kPackRows;
  const bool full = valid_tokens == kTileTokens && valid_rows == kPackRows;
  const auto row_mask = static_cast<__mmask16>((1u << valid_rows) - 1u);
  switch (tile) {
    case 0:
      VERDICT_AMX_STORE(0);
      break;
    case 1:
      VERDICT_AMX_STORE(1);
      break;
    case 2:
      VERDICT_AMX_STORE(2);
      break;
    default:
      VERDICT_AMX_STORE(3);
      break;
  }
}
#undef VERDICT_AMX_STORE

// Groups [t, t + 16 · G) × panels [p, p + P) (G, P ≤ 2): C tile 2g + i for group g and panel i.
template <int G, int P>
void bf16_tiles(const PackedView& w, const uint16_t* xb, int64_t t, int64_t t1, int64_t p, float* y) {
  const int64_t chunks = w.cols_padded / 2;
  const int64_t xs = w.cols_padded * 2;  // bytes between tokens
  const uint8_t* b0 = w.data + p * chunks * 64;
  const uint8_t* b1 = b0 + chunks * 64;
  const uint16_t* a0 = xb + t * w.cols_padded;
  const uint16_t* a1 = a0 + kTileTokens * w.cols_padded;
  _tile_zero(0);
  if constexpr (P == 2) _tile_zero(1);
  if constexpr (G == 2) _tile_zero(2);
  if constexpr (G == 2 && P == 2) _tile_zero(3);
  // Decoding (a few tokens): the tile unit idles on the weight stream, so each panel's next-but-one KiB is
  // prefetched into L2 (qwen35-0.8b BF16 decode +8 %; 4 KiB ahead gained nothing; docs/performance.md,
  // "Decode: prefetches and huge pages").
  const bool stream = G == 1 && t1 - t <= kGemvPrefetchTokens;
  for (int64_t c = 0; c < w.cols_padded; c += kBf16Step) {
    if (stream) {
      prefetch_l2(b0 + c * 32 + kBf16PrefetchBytes, kBf16Step * 32);
      if constexpr (P == 2) prefetch_l2(b1 + c * 32 + kBf16PrefetchBytes, kBf16Step * 32);
    }
    _tile_loadd(4, a0 + c, xs);
    _tile_loadd(6, b0 + c * 32, 64);  // 16 chunks of 64 bytes per 32 columns
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (P == 2) {
      _tile_loadd(7, b1 + c * 32, 64);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (G == 2) {
      _tile_loadd(5, a1 + c, xs);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (P == 2) _tile_dpbf16ps(3, 5, 7);
    }
  }
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < P; ++i) store_bf16_tile(2 * g + i, w, t + g * kTileTokens, t1, p + i, y);
}

}  // namespace

bool bf16_tiles_take(const PackedView& w) { return w.cols_padded % kBf16Step == 0; }

void bf16_tile_amx(const PackedView& w, const uint16_t* xb, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                   float* y) {
  if (!bf16_tiles_take(w)) {
    bf16_tile_avx512bf16(w, xb, t0, t1, p0, p1, y);
    return;
  }
  configure_bf16_tiles();
  for (int64_t p = p0; p < p1; p += 2) {
    const bool two = p + 1 < p1;
    int64_t t = t0;
    for (; t + kTileTokens < t1; t += 2 * kTileTokens) {  // two groups (the second may be partial)
      if (two) {
        bf16_tiles<2, 2>(w, xb, t, t1, p, y);
      } else {
        bf16_tiles<2, 1>(w, xb, t, t1, p, y);
      }
    }
    if (t < t1) {
      if (two) {
        bf16_tiles<1, 2>(w, xb, t, t1, p, y);
      } else {
        bf16_tiles<1, 1>(w, xb, t, t1, p, y);
      }
    }
  }
  _tile_release();
}

}  // namespace verdict::kernels::cpu
