// pack(): weights repacked into the panels the Int8, Bf16, F16 and Bf16Fma GEMMs stream (layout in ops.h).
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "core/dtype.h"
#include "core/error.h"
#include "core/heap.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/isa.h"
#include "kernels/ops.h"
#include "kernels/thread_pool.h"

namespace verdict::kernels {
namespace {

using cpu::kFactorBytes;
using cpu::kMinBytes;
using cpu::kMinFloats;
using cpu::kPackRows;
using cpu::kQBlock;
using cpu::kSuperBlocks;
using cpu::kSuperFloats;

uint16_t half_bits_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return h;
}
float half_at(const uint8_t* p) { return f16_to_f32(half_bits_at(p)); }

// One 32-column block of row r as W = scale · q + min with unsigned q (stored value = q + offset; Q8_0,
// Q4_0, Q5_0: min = 0; IQ4_NL, IQ4_XS: q holds the nibble, whose value kIq4Values[q] the kernels look up). Q3_K–Q6_K
// and IQ4_XS give the file's factors instead: Q4_K, Q5_K W = (d · first) · q + d2 · second (first = sc,
// second = −m, d2 = dmin); Q6_K, Q3_K W = (d · first) · q on columns 0–15 and (d · second) · q on 16–31
// (d2 = d); IQ4_XS W = (d · first) · value (second = 0); Q2_K as Q3_K, plus the halves' mins W −= dmin · m0 on
// columns 0–15 and dmin · m1 on 16–31 (neg_m0 = −m0, neg_m1 = −m1).
struct BlockParts {
  uint8_t q[kQBlock];
  uint16_t half_scale = 0;  // Q8_0, Q4_0, Q5_0, IQ4_NL: the file's fp16 scale, as stored
  float scale = 0.0f;
  float min = 0.0f;
  int8_t first = 0, second = 0;
  float d = 0.0f, d2 = 0.0f;  // the file's fp16 values, exactly
  int8_t neg_m0 = 0, neg_m1 = 0;
  float dmin = 0.0f;
};

bool factored_scales(WeightType t) {
  return t == WeightType::Q2_K || t == WeightType::Q3_K || t == WeightType::Q4_K || t == WeightType::Q5_K ||
         t == WeightType::Q6_K || t == WeightType::IQ4_XS;
}

int pack_offset(const WeightMatrix& w) {
  if (w.type == WeightType::Q8_0 || w.type == WeightType::IQ4_NL || w.type == WeightType::IQ4_XS) return 128;
  if (w.type == WeightType::Q6_K) return 32;
  if (w.type == WeightType::Q5_0) return 16;
  if (w.type == WeightType::Q4_0) return 8;
  if (w.type == WeightType::Q3_K) return 4;
  return 0;
}

// Bits of the stored values of `w`'s Int8 records: 8 (Q8_0, MLX 8-bit), 6 (Q6_K, MLX 6-bit), 5 (Q5_0, Q5_1, Q5_K),
// 4 (Q4_0, Q4_1, Q3_K, Q4_K, IQ4_NL, IQ4_XS: their values in nibbles, MLX 4-bit) or 2 (Q2_K).
int pack_bits(const WeightMatrix& w) {
  if (w.type == WeightType::Q8_0) return 8;
  if (w.type == WeightType::Q2_K) return 2;
  if (w.type == WeightType::Q6_K) return 6;
  if (w.type == WeightType::Q5_K || w.type == WeightType::Q5_0 || w.type == WeightType::Q5_1) return 5;
  if (w.type == WeightType::MlxAffine) return w.bits;
  return 4;
}

template <WeightType T, int Bits>
void block_parts(const WeightMatrix& w, int64_t r, int64_t b, BlockParts& out) {
  const int64_t c0 = b * kQBlock;
  switch (T) {
    case WeightType::Q8_0: {
      const uint8_t* blk = w.blocks + r * w.row_bytes() + b * 34;
      out.half_scale = half_bits_at(blk);
      for (int i = 0; i < kQBlock; ++i) out.q[i] = static_cast<uint8_t>(static_cast<int8_t>(blk[2 + i]) + 128);
      return;
    }
    case WeightType::Q4_0:
    case WeightType::IQ4_NL: {  // IQ4_NL: the nibbles as they are (the kernels look their values up)
      const uint8_t* blk = w.blocks + r * w.row_bytes() + b * 18;
      out.half_scale = half_bits_at(blk);
      for (int i = 0; i < 16; ++i) {
        out.q[i] = blk[2 + i] & 0xF;
        out.q[16 + i] = blk[2 + i] >> 4;
      }
      return;
    }
    case WeightType::Q4_1:
    case WeightType::Q5_0:
    case WeightType::Q5_1: {  // Q4_1, Q5_1: a min m after d
      const uint8_t* blk = w.blocks + r * w.row_bytes() + b * block_bytes(T);
      out.half_scale = half_bits_at(blk);
      out.scale = half_at(blk);
      out.min = T != WeightType::Q5_0 ? half_at(blk + 2) : 0.0f;
      // cpu::legacy_value for every i at once: the nibbles of qs, for Q5_0 and Q5_1 bit i of qh as bit 4
      constexpr int head = T == WeightType::Q5_0 ? 2 : 4;
      constexpr bool five = T != WeightType::Q4_1;
      const uint8_t* qs = blk + head + (five ? 4 : 0);
      uint32_t qh = 0;
      if constexpr (five) std::memcpy(&qh, blk + head, sizeof qh);
      for (int i = 0; i < 16; ++i) {
        out.q[i] = static_cast<uint8_t>((qs[i] & 0xF) | ((qh >> i) & 1) << 4);
        out.q[16 + i] = static_cast<uint8_t>((qs[i] >> 4) | ((qh >> (16 + i)) & 1) << 4);
      }
      return;
    }
    case WeightType::Q4_K:
    case WeightType::Q5_K: {  // Q5_K: Q4_K's scales, its 32 bytes of fifth bits (bit j: sub-block j), nibbles
      constexpr bool q5 = T == WeightType::Q5_K;
      const uint8_t* sb = w.blocks + r * w.row_bytes() + (b / 8) * (q5 ? 176 : 144);
      const int j = static_cast<int>(b % 8);
      int sc = 0, m = 0;
      cpu::k_quant_scale_min(j, sb + 4, sc, m);
      out.first = static_cast<int8_t>(sc);
      out.second = static_cast<int8_t>(-m);
      out.d = half_at(sb);
      out.d2 = half_at(sb + 2);
      const uint8_t* qs = sb + (q5 ? 48 : 16) + (j / 2) * 32;
      for (int l = 0; l < kQBlock; ++l) {
        const int fifth = q5 ? ((sb[16 + l] >> j) & 1) << 4 : 0;
        out.q[l] = static_cast<uint8_t>(((qs[l] >> (4 * (j % 2))) & 0xF) | fifth);
      }
      return;
    }
    case WeightType::Q3_K: {  // sub16 like Q6_K, the values in 4 bits (ops.h)
      const uint8_t* sb = w.blocks + r * w.row_bytes() + (b / 8) * 110;
      const int e0 = static_cast<int>(b % 8) * kQBlock;
      out.first = static_cast<int8_t>(cpu::q3k_scale(sb, e0 / 16));
      out.second = static_cast<int8_t>(cpu::q3k_scale(sb, e0 / 16 + 1));
      out.d = out.d2 = half_at(sb + 108);
      // cpu::q3k_value(sb, e0 + i): bits 2j of the low-bit field's byte 32 · (j / 4) + i (j = e0 / 32), bit j of
      // hmask byte i as bit 2
      const int j = e0 / kQBlock;
      const uint8_t* low = sb + 32 + 32 * (j / 4);
      for (int i = 0; i < kQBlock; ++i)
        out.q[i] = static_cast<uint8_t>(((low[i] >> (2 * (j % 4))) & 3) | ((sb[i] >> j) & 1) << 2);
      return;
    }
    case WeightType::Q2_K: {  // sub16 like Q3_K, and a min per half (ops.h)
      const uint8_t* sb = w.blocks + r * w.row_bytes() + (b / 8) * 84;
      const int e0 = static_cast<int>(b % 8) * kQBlock;
      out.first = static_cast<int8_t>(cpu::q2k_scale(sb, e0 / 16));
      out.second = static_cast<int8_t>(cpu::q2k_scale(sb, e0 / 16 + 1));
      out.neg_m0 = static_cast<int8_t>(-cpu::q2k_min(sb, e0 / 16));
      out.neg_m1 = static_cast<int8_t>(-cpu::q2k_min(sb, e0 / 16 + 1));
      out.d = out.d2 = half_at(sb + 80);
      out.dmin = half_at(sb + 82);
      const int j = e0 / kQBlock;  // cpu::q2k_value(sb, e0 + i): bits 2j of qs byte 32 · (j / 4) + i
      const uint8_t* qs = sb + 16 + 32 * (j / 4);
      for (int i = 0; i < kQBlock; ++i) out.q[i] = static_cast<uint8_t>((qs[i] >> (2 * (j % 4))) & 3);
      return;
    }
    case WeightType::IQ4_XS: {  // one factored scale d · (ls − 32) per block (no second vector), the nibbles
      const uint8_t* sb = w.blocks + r * w.row_bytes() + (b / 8) * 136;
      const int j = static_cast<int>(b % 8);
      out.first = static_cast<int8_t>(cpu::iq4xs_scale(sb, j) - 32);
      out.second = 0;
      out.d = out.d2 = half_at(sb);
      const uint8_t* qs = sb + 8 + 16 * j;
      for (int i = 0; i < 16; ++i) {
        out.q[i] = qs[i] & 0xF;
        out.q[16 + i] = qs[i] >> 4;
      }
      return;
    }
    case WeightType::Q6_K: {
      // ggml's block_q6_K {ql[128], qh[64], int8 scales[16], f16 d}: value e of the 256 is
      // q6 = (low 4 bits from ql) | (2 high bits from qh) ∈ [0, 63], W = d · scales[e / 16] · (q6 − 32).
      const uint8_t* sb = w.blocks + r * w.row_bytes() + (b / 8) * 210;
      const auto* scales = reinterpret_cast<const int8_t*>(sb + 192);
      const int e0 = static_cast<int>(b % 8) * kQBlock;
      out.first = scales[e0 / 16];
      out.second = scales[e0 / 16 + 1];
      out.d = out.d2 = half_at(sb + 208);
      // Value e = e0 + i: half = e / 128 and quarter = (e % 128) / 32 are the block's, l = e % 32 = i.
      const int half = e0 / 128, quarter = (e0 % 128) / 32;
      const uint8_t* ql = sb + half * 64 + (quarter % 2) * 32;
      const uint8_t* qh = sb + 128 + half * 32;
      for (int i = 0; i < kQBlock; ++i) {
        const int low = (ql[i] >> (4 * (quarter / 2))) & 0xF;
        const int high = (qh[i] >> (2 * quarter)) & 3;
        out.q[i] = static_cast<uint8_t>(low | (high << 4));
      }
      return;
    }
    case WeightType::MlxAffine: {
      if constexpr (T == WeightType::MlxAffine) {
        const int64_t g = r * w.groups_per_row() + c0 / w.group_size;
        out.scale = w.scales[g];
        out.min = w.biases[g];
        // cpu::mlx_value for the block's 32 values, which fill Bits whole words from word c0 · Bits / 32: as
        // little-endian bytes, every 8 values of 4 or 8 bits and every 4 values of 6 bits start on a byte
        static_assert(std::endian::native == std::endian::little && (Bits == 4 || Bits == 6 || Bits == 8));
        uint8_t bytes[4 * Bits];
        std::memcpy(bytes, w.packed + r * w.packed_row_words() + c0 * Bits / 32, sizeof bytes);
        if constexpr (Bits == 8) {
          std::memcpy(out.q, bytes, kQBlock);
        } else if constexpr (Bits == 4) {
          for (int i = 0; i < 16; ++i) {
            out.q[2 * i] = bytes[i] & 0xF;
            out.q[2 * i + 1] = bytes[i] >> 4;
          }
        } else {
          for (int m = 0; m < 8; ++m) {
            const uint32_t t = bytes[3 * m] | uint32_t{bytes[3 * m + 1]} << 8 | uint32_t{bytes[3 * m + 2]} << 16;
            for (int n = 0; n < 4; ++n) out.q[4 * m + n] = static_cast<uint8_t>((t >> (6 * n)) & 63);
          }
        }
      }
      return;
    }
    default:
      throw Error("pack: no Int8 form for this weight type");
  }
}

// Where the parts of one Int8 matrix go (layout in ops.h); the pointers that do not apply to its type are null.
struct Int8Targets {
  uint8_t* records;
  int64_t blocks, block_stride, weight_bytes;
  uint16_t* half_scales;
  int8_t* factors;
  float* super_scales;
  int8_t* mins16;
  float* min_scales;
};

uint32_t word_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void put_word(uint8_t* p, uint32_t v) { std::memcpy(p, &v, sizeof v); }

// Writes one row's 32 values q (each < 2^Bits) into its lanes 4i .. 4i + 3 of an Int8 record (layout in ops.h and
// kernel_table.h): column c belongs to chunk c / 4, lane 4i + c % 4. A 32-bit word holds the 4 lanes of a chunk,
// byte k the value of column 4 · chunk + k, so each vector's lanes take one store.
template <int Bits>
void write_values(const uint8_t* q, uint8_t* rec, int64_t i) {
  static_assert(std::endian::native == std::endian::little);
  const auto chunk = [q](int j) { return word_at(q + 4 * j); };
  uint8_t* const lanes = rec + 4 * i;
  if constexpr (Bits == 8) {
    for (int j = 0; j < 8; ++j) put_word(lanes + 64 * j, chunk(j));
  } else if constexpr (Bits == 2) {  // vector v: chunks 4v .. 4v + 3 at bits 0, 2, 4, 6 (two_bit_vector, _shift)
    for (int v = 0; v < 2; ++v) {
      uint32_t word = 0;
      for (int j = 4 * v; j < 4 * v + 4; ++j) word |= (chunk(j) & 0x03030303u) << cpu::two_bit_shift(j);
      put_word(lanes + 64 * v, word);
    }
  } else {
    // 4, 5 and 6 bits: nibble vector j holds chunk j's low 4 bits in its low nibbles and chunk j + 4's in its high
    for (int j = 0; j < 4; ++j) put_word(lanes + 64 * j, (chunk(j) & 0x0F0F0F0Fu) | (chunk(j + 4) & 0x0F0F0F0Fu) << 4);
    if constexpr (Bits == 6) {  // the 2 high bits: vector high_bits_vector(j) at bits high_bits_shift(j)
      uint32_t words[2] = {0, 0};
      for (int j = 0; j < 8; ++j)
        words[cpu::high_bits_vector(j)] |= (chunk(j) >> 4 & 0x03030303u) << cpu::high_bits_shift(j);
      put_word(lanes + 256, words[0]);
      put_word(lanes + 256 + 64, words[1]);
    }
    if constexpr (Bits == 5) {  // bit 4 of chunk j at bit j of the one vector after the nibbles
      uint32_t word = 0;
      for (int j = 0; j < 8; ++j) word |= (chunk(j) >> 4 & 0x01010101u) << j;
      put_word(lanes + cpu::kFifthBits, word);
    }
  }
}

// Packs panel p of `w` (rows 16p .. 16p + 15) into `t`. One instance per type and bits, so that each block's
// decoding and stores compile to fixed shifts (docs/performance.md, "Load time").
template <WeightType T, int Bits>
void pack_panel(const WeightMatrix& w, const Int8Targets& t, int64_t p) {
  BlockParts parts;
  for (int64_t i = 0; i < kPackRows && p * kPackRows + i < w.rows; ++i) {
    const int64_t r = p * kPackRows + i;
    for (int64_t b = 0; b < t.blocks; ++b) {
      block_parts<T, Bits>(w, r, b, parts);
      uint8_t* rec = t.records + (p * t.blocks + b) * t.block_stride;
      write_values<Bits>(parts.q, rec, i);
      if (t.half_scales != nullptr) {
        t.half_scales[(p * t.blocks + b) * kPackRows + i] = parts.half_scale;
      } else if (t.factors != nullptr) {
        int8_t* f = t.factors + (p * t.blocks + b) * kFactorBytes;
        f[i] = parts.first;
        f[kPackRows + i] = parts.second;
        const int64_t super = p * (t.blocks / kSuperBlocks) + b / kSuperBlocks;
        const bool first_of_super = b % kSuperBlocks == 0;  // d, d2 and dmin are the super-block's: stored once
        if (first_of_super) {
          t.super_scales[super * kSuperFloats + i] = parts.d;
          t.super_scales[super * kSuperFloats + kPackRows + i] = parts.d2;
        }
        if (t.mins16 != nullptr) {
          int8_t* m = t.mins16 + (p * t.blocks + b) * kMinBytes;
          m[i] = parts.neg_m0;
          m[kPackRows + i] = parts.neg_m1;
          if (first_of_super) t.min_scales[super * kMinFloats + i] = parts.dmin;
        }
      } else {  // MLX, Q4_1, Q5_1
        std::memcpy(rec + t.weight_bytes + 4 * i, &parts.scale, sizeof(float));
        std::memcpy(rec + t.weight_bytes + 64 + 4 * i, &parts.min, sizeof(float));
      }
    }
  }
}

using PanelPacker = void (*)(const WeightMatrix&, const Int8Targets&, int64_t);

// The pack_panel instance for `w`'s type and its records' `bits` (pack_bits).
PanelPacker panel_packer(const WeightMatrix& w, int bits) {
  switch (w.type) {
    case WeightType::Q8_0: return pack_panel<WeightType::Q8_0, 8>;
    case WeightType::Q4_0: return pack_panel<WeightType::Q4_0, 4>;
    case WeightType::IQ4_NL: return pack_panel<WeightType::IQ4_NL, 4>;
    case WeightType::Q4_1: return pack_panel<WeightType::Q4_1, 4>;
    case WeightType::Q5_0: return pack_panel<WeightType::Q5_0, 5>;
    case WeightType::Q5_1: return pack_panel<WeightType::Q5_1, 5>;
    case WeightType::Q4_K: return pack_panel<WeightType::Q4_K, 4>;
    case WeightType::Q5_K: return pack_panel<WeightType::Q5_K, 5>;
    case WeightType::Q3_K: return pack_panel<WeightType::Q3_K, 4>;
    case WeightType::Q2_K: return pack_panel<WeightType::Q2_K, 2>;
    case WeightType::IQ4_XS: return pack_panel<WeightType::IQ4_XS, 4>;
    case WeightType::Q6_K: return pack_panel<WeightType::Q6_K, 6>;
    case WeightType::MlxAffine:
      if (bits == 4) return pack_panel<WeightType::MlxAffine, 4>;
      if (bits == 6) return pack_panel<WeightType::MlxAffine, 6>;
      if (bits == 8) return pack_panel<WeightType::MlxAffine, 8>;
      break;
    default:
      break;
  }
  throw Error("pack: no Int8 form for this weight type");
}

}  // namespace

PackedWeight::~PackedWeight() {
  free_model_weights(storage_, bytes_);
  delete view_;
}

PackedWeight::PackedWeight(PackedWeight&& other) noexcept
    : view_(std::exchange(other.view_, nullptr)),
      storage_(std::exchange(other.storage_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

PackedWeight& PackedWeight::operator=(PackedWeight&& other) noexcept {
  std::swap(view_, other.view_);
  std::swap(storage_, other.storage_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

PackKind preferred_pack(const WeightMatrix& w) {
  switch (w.type) {
    case WeightType::Q8_0:
    case WeightType::Q4_0:
    case WeightType::Q4_1:
    case WeightType::Q5_0:
    case WeightType::Q5_1:
    case WeightType::IQ4_NL:
    case WeightType::IQ4_XS:
    case WeightType::Q2_K:
    case WeightType::Q3_K:
    case WeightType::Q4_K:
    case WeightType::Q5_K:
    case WeightType::Q6_K:
      return w.cols % kQBlock == 0 ? PackKind::Int8 : PackKind::None;
    case WeightType::MlxAffine:
      return (w.bits == 4 || w.bits == 6 || w.bits == 8) && w.group_size % kQBlock == 0 ? PackKind::Int8
                                                                                      : PackKind::None;
    case WeightType::BF16:
      if (active_isa() == Isa::Avx512) return PackKind::Bf16;  // without AVX-512 BF16: the Fma products (isa.h)
      return active_isa() != Isa::Scalar ? PackKind::Bf16Fma : PackKind::None;
    case WeightType::F16:
      return active_isa() != Isa::Scalar ? PackKind::F16 : PackKind::None;
    default:
      return PackKind::None;
  }
}

bool pack_enabled(bool by_default) {
  const char* env = std::getenv("VERDICT_PACK");
  if (env == nullptr || *env == '\0') return by_default;
  const std::string v = env;
  if (v == "1" || v == "on") return true;
  if (v == "0" || v == "off") return false;
  throw Error("VERDICT_PACK must be 1, on, 0 or off, got '" + v + "'");
}

namespace {

// The geometry of `w` packed as `kind` (every field of v but data) and its size in bytes; false when `w`
// cannot take `kind`. Reads only the type and shape of `w`.
bool plan_layout(const WeightMatrix& w, PackKind kind, PackedView* v, int64_t& bytes) {
  if (kind == PackKind::None || w.rows <= 0 || w.cols <= 0) return false;
  v->kind = kind;
  v->rows = w.rows;
  v->cols = w.cols;
  v->panels = (w.rows + kPackRows - 1) / kPackRows;
  if (kind == PackKind::F16 || kind == PackKind::Bf16Fma) {
    if (w.type != (kind == PackKind::F16 ? WeightType::F16 : WeightType::BF16)) return false;
    v->panels = (w.rows + kFmaPanelRows - 1) / kFmaPanelRows;
    bytes = v->panels * w.cols * 2 * kFmaPanelRows;
    return true;
  }
  if (kind == PackKind::Int8) {
    const bool ok = w.cols % kQBlock == 0 &&
                    ((is_ggml_type(w.type) && w.type != WeightType::F16) ||
                     (w.type == WeightType::MlxAffine && (w.bits == 4 || w.bits == 6 || w.bits == 8) &&
                      w.group_size % kQBlock == 0));
    if (!ok) return false;
    v->bits = pack_bits(w);
    v->offset = pack_offset(w);
    v->q8_1_sums = w.type == WeightType::Q4_1 || w.type == WeightType::Q5_1;
    v->has_mins = w.type == WeightType::Q4_K || w.type == WeightType::Q5_K || w.type == WeightType::MlxAffine ||
                  v->q8_1_sums;
    v->sub16 = w.type == WeightType::Q6_K || w.type == WeightType::Q3_K || w.type == WeightType::Q2_K;
    v->iq4 = w.type == WeightType::IQ4_NL || w.type == WeightType::IQ4_XS;
    v->blocks = w.cols / kQBlock;
    const int64_t weight_bytes = cpu::int8_weight_bytes(v->bits);
    const int64_t records = v->panels * v->blocks;
    if (factored_scales(w.type)) {  // factors and d/d2 beside the records (ops.h)
      if (v->blocks % kSuperBlocks != 0) return false;
      v->block_stride = weight_bytes;
      bytes = records * (weight_bytes + kFactorBytes) + records / kSuperBlocks * kSuperFloats * 4;
      if (w.type == WeightType::Q2_K) bytes += records * kMinBytes + records / kSuperBlocks * kMinFloats * 4;
    } else if (v->has_mins) {  // MLX, Q4_1, Q5_1: fp32 scales and mins in the record
      v->block_stride = weight_bytes + 128;
      bytes = records * v->block_stride;
    } else {  // Q8_0, Q4_0, Q5_0, IQ4_NL: fp16 scales beside the records
      v->block_stride = weight_bytes;
      bytes = records * (weight_bytes + 2 * kPackRows);
    }
    return true;
  }
  if (w.type != WeightType::BF16) return false;  // Bf16
  v->cols_padded = (w.cols + 1) / 2 * 2;
  bytes = v->panels * (v->cols_padded / 2) * 64;
  return true;
}

}  // namespace

int64_t packed_bytes(const WeightMatrix& w, PackKind kind) {
  PackedView v;
  int64_t bytes = 0;
  return plan_layout(w, kind, &v, bytes) ? bytes : 0;
}

PackedWeight pack(const WeightMatrix& w, PackKind kind) {
  PackedWeight out;
  auto v = std::make_unique<PackedView>();
  int64_t bytes = 0;
  if (!plan_layout(w, kind, v.get(), bytes)) return out;
  check_weight(w, "pack");
  uint8_t* const storage = allocate_model_weights(bytes);  // zeroed
  if (storage == nullptr) throw Error("pack: out of memory");
  out.storage_ = storage;  // freed by `out` should packing throw
  out.bytes_ = bytes;
  const PackedView& pv = *v;
  if (kind == PackKind::Int8) {
    const int64_t weight_bytes = cpu::int8_weight_bytes(pv.bits);
    uint8_t* const beside = storage + pv.panels * pv.blocks * pv.block_stride;  // after the records
    uint16_t* half_scales = nullptr;
    int8_t* factors = nullptr;
    float* super_scales = nullptr;
    int8_t* mins16 = nullptr;
    float* min_scales = nullptr;
    if (factored_scales(w.type)) {
      const int64_t records = pv.panels * pv.blocks;
      factors = reinterpret_cast<int8_t*>(beside);
      super_scales = reinterpret_cast<float*>(beside + records * kFactorBytes);
      v->factors = factors;
      v->super_scales = super_scales;
      if (w.type == WeightType::Q2_K) {  // after the super scales (32-byte aligned: a multiple of 128 bytes)
        mins16 = reinterpret_cast<int8_t*>(super_scales + records / kSuperBlocks * kSuperFloats);
        min_scales = reinterpret_cast<float*>(mins16 + records * kMinBytes);
        v->mins16 = mins16;
        v->min_scales = min_scales;
      }
    } else if (!pv.has_mins) {
      half_scales = reinterpret_cast<uint16_t*>(beside);
      v->half_scales = half_scales;
    }
    const Int8Targets t{storage, pv.blocks, pv.block_stride, weight_bytes, half_scales, factors, super_scales, mins16,
                        min_scales};
    const PanelPacker packer = panel_packer(w, pv.bits);
    parallel_for(pv.panels, static_cast<double>(kPackRows * w.cols), [&](int64_t p) { packer(w, t, p); });
  } else if (kind == PackKind::F16 || kind == PackKind::Bf16Fma) {
    const auto* values = kind == PackKind::F16 ? w.blocks : reinterpret_cast<const uint8_t*>(w.bf16);
    parallel_for(pv.panels, static_cast<double>(kFmaPanelRows * w.cols), [&](int64_t p) {
      uint8_t* panel = storage + p * w.cols * 2 * kFmaPanelRows;
      const int64_t rows = std::min(kFmaPanelRows, w.rows - p * kFmaPanelRows);
      const auto row = [&](int64_t i) { return values + (p * kFmaPanelRows + i) * w.cols * 2; };
      int64_t i = 0;
      for (; i + 4 <= rows; i += 4) {  // rows i .. i + 3 of a column side by side: one 8-byte store
        const uint8_t *r0 = row(i), *r1 = row(i + 1), *r2 = row(i + 2), *r3 = row(i + 3);
        for (int64_t c = 0; c < w.cols; ++c) {
          const uint64_t four = uint64_t{half_bits_at(r0 + 2 * c)} | uint64_t{half_bits_at(r1 + 2 * c)} << 16 |
                             uint64_t{half_bits_at(r2 + 2 * c)} << 32 | uint64_t{half_bits_at(r3 + 2 * c)} << 48;
          std::memcpy(panel + (c * kFmaPanelRows + i) * 2, &four, sizeof four);
        }
      }
      for (; i < rows; ++i)
        for (int64_t c = 0; c < w.cols; ++c) std::memcpy(panel + (c * kFmaPanelRows + i) * 2, row(i) + 2 * c, 2);
    });
  } else {
    const int64_t chunks = pv.cols_padded / 2;
    parallel_for(pv.panels, static_cast<double>(kPackRows * w.cols), [&](int64_t p) {
      for (int64_t i = 0; i < kPackRows && p * kPackRows + i < w.rows; ++i) {
        const uint16_t* src = w.bf16 + (p * kPackRows + i) * w.cols;
        uint8_t* panel = storage + p * chunks * 64;
        // columns 2k and 2k + 1 side by side: one 4-byte copy per pair (the last column of an odd row alone)
        for (int64_t k = 0; k < w.cols / 2; ++k) std::memcpy(panel + 64 * k + 4 * i, src + 2 * k, 4);
        if (w.cols % 2 != 0) std::memcpy(panel + 64 * (w.cols / 2) + 4 * i, src + w.cols - 1, 2);
      }
    });
  }
  v->data = storage;
  out.view_ = v.release();
  return out;
}

}  // namespace verdict::kernels
