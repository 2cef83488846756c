#include "formats/ggml_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/dtype.h"
#include "core/error.h"

namespace verdict::formats {
namespace {

constexpr int kQ8 = 32, kQ4 = 32, kQK = 256;

void store_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
float load_f16(const uint8_t* p) { return f16_to_f32(static_cast<uint16_t>(p[0] | (p[1] << 8))); }
void store_f16(uint8_t* p, float v) { store_u16(p, f32_to_f16(v)); }

// Round to nearest (ties to even, the float addition's rounding) through the float's bits, as ggml's
// nearest_int (valid for |x| < 2^22).
int nearest_int(float x) {
  const float shifted = x + 12582912.0f;  // 1.5 · 2^23: the integer lands in the low mantissa bits
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  return (bits & 0x007fffff) - 0x00400000;
}

// The value of largest magnitude among x[0 .. n), the first on a tie (0 when all are 0): the `max` of ggml's
// quantizers, whose magnitude is their `amax`.
float largest_magnitude(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  return max;
}

// Q8_0: d = max|x| / 127, q = round(x / d) (roundf: half away from zero).
void quantize_q8_0(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / kQ8; ++b, x += kQ8, out += 34) {
    float amax = 0.0f;
    for (int j = 0; j < kQ8; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(out, d);
    for (int j = 0; j < kQ8; ++j) {
      const float q = std::roundf(x[j] * id);  // within ±127 for finite input; NaN/inf weights give 0
      out[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::fabs(q) <= 127.0f ? static_cast<int>(q) : 0));
    }
  }
}

// min(top, trunc(f)), the MIN(top, (int)(…)) of ggml's legacy quantizers, for f ≥ 0; 0 for a negative f or NaN
// (which ggml's quantizers never meet on finite input).
int level(float f, int top) {
  if (!(f >= 0.0f)) return 0;
  return f >= static_cast<float>(top) ? top : static_cast<int>(f);
}

// Writes v (0–3) as value e (0–255) of a K-quant 2-bit field `qs` (Q3_K's low bits, Q2_K's values): bits
// 2 · ((e % 128) / 32) of qs[32 · (e / 128) + e % 32] (qs zeroed first).
void put_two_bits(uint8_t* qs, int e, int v) {
  qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>(v << (2 * ((e % 128) / 32)));
}

// Q4_0: d = (the value of largest magnitude) / −8, q = min(15, trunc(x / d + 8.5)).
void quantize_q4_0(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / kQ4; ++b, x += kQ4, out += 18) {
    const float d = largest_magnitude(x, kQ4) / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(out, d);
    for (int j = 0; j < kQ4 / 2; ++j) {
      const int lo = level(x[j] * id + 8.5f, 15), hi = level(x[j + kQ4 / 2] * id + 8.5f, 15);
      out[2 + j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

// Q4_1 and Q5_1 (levels 15 or 31): d = (max − min) / levels, m = min, q = min(levels, trunc((x − min) / d + 0.5))
// (ggml clamps Q4_1 only; Q5_1's q cannot exceed 31: (x − min) / d ≤ 31 within rounding); Q5_1 stores bit 4 of
// value j at bit j of the 32-bit qh before the nibbles.
void quantize_affine(const float* x, int64_t n, uint8_t* out, int levels) {
  const bool five = levels == 31;
  const int64_t bytes = five ? 24 : 20;
  for (int64_t b = 0; b < n / kQ4; ++b, x += kQ4, out += bytes) {
    float min = std::numeric_limits<float>::max(), max = -std::numeric_limits<float>::max();
    for (int j = 0; j < kQ4; ++j) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / static_cast<float>(levels);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(out, d);
    store_f16(out + 2, min);
    uint32_t qh = 0;
    uint8_t* qs = out + (five ? 8 : 4);
    for (int j = 0; j < kQ4 / 2; ++j) {
      const int lo = level((x[j] - min) * id + 0.5f, levels), hi = level((x[j + kQ4 / 2] - min) * id + 0.5f, levels);
      qs[j] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      qh |= static_cast<uint32_t>((lo >> 4) & 1) << j | static_cast<uint32_t>((hi >> 4) & 1) << (j + kQ4 / 2);
    }
    if (five) std::memcpy(out + 4, &qh, sizeof qh);
  }
}

// Q5_0: d = (the value of largest magnitude) / −16, q = min(31, trunc(x / d + 16.5)), bit 4 of value j at bit j
// of the 32-bit qh before the nibbles.
void quantize_q5_0(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / kQ4; ++b, x += kQ4, out += 22) {
    const float d = largest_magnitude(x, kQ4) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(out, d);
    uint32_t qh = 0;
    for (int j = 0; j < kQ4 / 2; ++j) {
      const int lo = level(x[j] * id + 16.5f, 31), hi = level(x[j + kQ4 / 2] * id + 16.5f, 31);
      out[6 + j] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      qh |= static_cast<uint32_t>(lo >> 4) << j | static_cast<uint32_t>(hi >> 4) << (j + kQ4 / 2);
    }
    std::memcpy(out + 2, &qh, sizeof qh);
  }
}

// The best (scale, min) for one sub-block of n ≤ 32 values at levels 0..nmax: start from the full range, then
// try steps + 1 slightly stretched ranges (nmax + rmin + 0.1 · step levels over it) and keep the weighted
// least-squares fit with the smallest weighted squared error, or with `mad` absolute error (ggml's
// make_qkx2_quants with rdelta 0.1; Q4_K: 32 values, rmin −1, 20 steps; Q5_K: 32, rmin −0.5, 15 steps; Q2_K: 16,
// rmin −0.5, 15 steps, mad). Returns the scale and stores −min (a non-negative offset) in `neg_min`.
float fit_scale_min(const float* x, const float* w, int n, int nmax, float rmin, int steps, bool mad, uint8_t* levels,
                    float* neg_min) {
  const auto error = [mad](float diff) { return mad ? std::fabs(diff) : diff * diff; };
  float lo = x[0], hi = x[0], sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::fill(levels, levels + n, uint8_t{0});
    *neg_min = -lo;
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / (hi - lo);
  float scale = 1.0f / iscale;
  float best = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale * (x[i] - lo)), 0, nmax);
    levels[i] = static_cast<uint8_t>(l);
    const float diff = scale * static_cast<float>(l) + lo - x[i];
    best += w[i] * error(diff);
  }
  uint8_t trial[32];
  for (int step = 0; step <= steps; ++step) {
    iscale = (rmin + 0.1f * static_cast<float>(step) + static_cast<float>(nmax)) / (hi - lo);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - lo)), 0, nmax);
      trial[i] = static_cast<uint8_t>(l);
      const auto fl = static_cast<float>(l);
      sum_l += w[i] * fl;
      sum_l2 += w[i] * fl * fl;
      sum_xl += w[i] * fl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0)) continue;
    float s = (sum_w * sum_xl - sum_x * sum_l) / det;
    float m = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (m > 0) {
      m = 0;
      s = sum_xl / sum_l2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = s * static_cast<float>(trial[i]) + m - x[i];
      err += w[i] * error(diff);
    }
    if (err < best) {
      std::copy(trial, trial + n, levels);
      best = err;
      scale = s;
      lo = m;
    }
  }
  *neg_min = -lo;
  return scale;
}

// Sub-block j's 6-bit scale and min from the 12 packed bytes of a Q4_K block (to requantize with the
// rounded values actually stored).
void unpack_scale_min(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q4_K (nmax 15) and Q5_K (nmax 31): eight 32-value sub-blocks, each x ≈ d·sc_j·q − dmin·m_j with 6-bit
// sc_j, m_j and 4- or 5-bit q. Both write d, dmin and the 12 scale bytes first; Q4_K then its 128 bytes of
// nibbles, Q5_K 32 bytes of fifth bits (sub-block j's in bit j of byte l) before them.
void quantize_qk_k(const float* x, int64_t n, uint8_t* out, int nmax) {
  const bool q5 = nmax == 31;
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, out += q5 ? 176 : 144) {
    uint8_t levels[kQK];
    float scales[8], mins[8], weights[32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
      const float* xs = x + 32 * j;
      float sum_x2 = 0;
      for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
      const float av_x = std::sqrt(sum_x2 / 32);
      for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
      scales[j] = q5 ? fit_scale_min(xs, weights, 32, 31, -0.5f, 15, false, levels + 32 * j, &mins[j])
                     : fit_scale_min(xs, weights, 32, 15, -1.0f, 20, false, levels + 32 * j, &mins[j]);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    uint8_t* packed = out + 4;
    std::memset(packed, 0, 12);
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < 8; ++j) {
      const auto ls = static_cast<uint8_t>(std::min<int>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j]))));
      const auto lm = static_cast<uint8_t>(std::min<int>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j]))));
      if (j < 4) {
        packed[j] = ls;
        packed[j + 4] = lm;
      } else {
        packed[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
        packed[j - 4] = static_cast<uint8_t>(packed[j - 4] | ((ls >> 4) << 6));
        packed[j] = static_cast<uint8_t>(packed[j] | ((lm >> 4) << 6));
      }
    }
    store_f16(out, max_scale / 63.0f);
    store_f16(out + 2, max_min / 63.0f);
    // Requantize every value with the rounded 6-bit scales and mins actually stored.
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      unpack_scale_min(j, packed, &sc, &m);
      const float d = load_f16(out) * static_cast<float>(sc);
      if (d == 0.0f) continue;
      const float dm = load_f16(out + 2) * static_cast<float>(m);
      for (int l = 0; l < 32; ++l)
        levels[32 * j + l] = static_cast<uint8_t>(std::clamp(nearest_int((x[32 * j + l] + dm) / d), 0, nmax));
    }
    uint8_t* fifth = out + 16;
    if (q5) std::memset(fifth, 0, 32);
    uint8_t* q = out + (q5 ? 48 : 16);
    for (int j = 0; j < kQK; j += 64, q += 32)
      for (int l = 0; l < 32; ++l) {
        const int lo = levels[j + l], hi = levels[j + l + 32];
        if (q5) fifth[l] = static_cast<uint8_t>(fifth[l] | ((lo >> 4) << (j / 32)) | ((hi >> 4) << (j / 32 + 1)));
        q[l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      }
  }
}

// The scale of one 16-value sub-block of a Q6_K block at signed levels −32..31 (ggml's make_qx_quants
// with nmax 32 and x² weights): start at −32 / (the value of largest magnitude), then try 18 nearby
// scales and keep the one whose weighted least-squares fit explains the most (largest Σ(w·x·l)² / Σ(w·l²)).
// Writes the levels + 32 into `levels`; returns the fitted scale (0 for an all-zero sub-block).
float fit_q6_scale(const float* x, uint8_t* levels) {
  constexpr int n = 16, nmax = 32;
  const float max = largest_magnitude(x, n);
  if (std::fabs(max) < 1e-15f) {
    std::fill(levels, levels + n, uint8_t{0});
    return 0.0f;
  }
  const auto level = [](float v) { return std::clamp(nearest_int(v), -nmax, nmax - 1); };
  // Σ w·x·l and Σ w·l² at inverse scale `iscale`, w = x².
  const auto sums = [&](float iscale, float& sum_lx, float& sum_l2) {
    sum_lx = sum_l2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = level(iscale * x[i]);
      const float w = x[i] * x[i];
      sum_lx += w * x[i] * static_cast<float>(l);
      sum_l2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
  };
  float iscale = -static_cast<float>(nmax) / max;
  float sum_lx, sum_l2;
  sums(iscale, sum_lx, sum_l2);
  float best_iscale = iscale;
  float scale = sum_l2 != 0 ? sum_lx / sum_l2 : 0.0f;
  float best = scale * sum_lx;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
    sums(iscale, sum_lx, sum_l2);
    if (sum_l2 > 0 && sum_lx * sum_lx > best * sum_l2) {
      best_iscale = iscale;
      scale = sum_lx / sum_l2;
      best = scale * sum_lx;
    }
  }
  for (int i = 0; i < n; ++i) levels[i] = static_cast<uint8_t>(level(best_iscale * x[i]) + nmax);
  return scale;
}

// Fits the 16 sub-blocks of a super-block with `fit` (their levels into `levels`, their scales into
// `scales`) and returns the scale of largest magnitude, with its sign (the first of equal magnitudes).
template <typename Level, typename Fit>
float fit_sub_blocks(const float* x, Level* levels, float* scales, Fit fit) {
  float max_scale = 0, max_abs = 0;
  for (int j = 0; j < 16; ++j) {
    scales[j] = fit(x + 16 * j, levels + 16 * j);
    if (std::fabs(scales[j]) > max_abs) {
      max_abs = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  return max_scale;
}

// Q6_K: sixteen 16-value sub-blocks, each x ≈ d·sc_j·(q − 32) with an int8 sc_j and 6-bit q; d = −(the
// sub-block scale of largest magnitude) / 128.
void quantize_q6_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, out += 210) {
    uint8_t levels[kQK];
    float scales[16];
    const float max_scale = fit_sub_blocks(x, levels, scales, fit_q6_scale);
    std::memset(out, 0, 210);
    if (std::fabs(max_scale) < 1e-15f) continue;  // an all-zero block: d = 0
    const float iscale = -128.0f / max_scale;
    store_f16(out + 208, 1 / iscale);
    auto* sc = reinterpret_cast<int8_t*>(out + 192);
    for (int j = 0; j < 16; ++j) sc[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[j])));
    // Requantize every value with the rounded scales actually stored.
    for (int j = 0; j < 16; ++j) {
      const float d = load_f16(out + 208) * static_cast<float>(sc[j]);
      if (d == 0.0f) continue;
      for (int l = 0; l < 16; ++l)
        levels[16 * j + l] = static_cast<uint8_t>(std::clamp(nearest_int(x[16 * j + l] / d), -32, 31) + 32);
    }
    // Value e of each 128-value half h: low 4 bits in ql[64h + 32·((e / 32) % 2) + e % 32] (the high nibble
    // for e ≥ 64), high 2 bits in qh[32h + e % 32] at bits 2·(e / 32).
    uint8_t* ql = out;
    uint8_t* qh = out + 128;
    for (int h = 0; h < 2; ++h, ql += 64, qh += 32) {
      const uint8_t* L = levels + 128 * h;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<uint8_t>((L[l] & 0xF) | ((L[l + 64] & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((L[l + 32] & 0xF) | ((L[l + 96] & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((L[l] >> 4) | ((L[l + 32] >> 4) << 2) | ((L[l + 64] >> 4) << 4) |
                                     ((L[l + 96] >> 4) << 6));
      }
    }
  }
}

// The scale of one 16-value sub-block of a Q3_K block at signed levels −4..3 (ggml's make_q3_quants with
// nmax 4 and its rmse refinement): levels at −4 / (the value of largest magnitude), then up to 5 passes that
// move single levels to where the x²-weighted least-squares fit explains more (Σ(w·x·l)² / Σ(w·l²)).
// Writes the levels + 4 into `levels`; returns the fitted scale (0 for an all-zero sub-block).
float fit_q3_scale(const float* x, int8_t* levels) {
  constexpr int n = 16, nmax = 4;
  const float max = largest_magnitude(x, n);
  if (std::fabs(max) < 1e-15f) {  // GROUP_MAX_EPS: all zero
    std::memset(levels, 0, n);
    return 0.0f;
  }
  const float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    levels[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * static_cast<float>(levels[i]);
      if (slx <= 0) continue;
      float sl2 = suml2 - w * static_cast<float>(levels[i]) * static_cast<float>(levels[i]);
      const int l = std::clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (l == levels[i]) continue;
      slx += w * x[i] * static_cast<float>(l);
      sl2 += w * static_cast<float>(l) * static_cast<float>(l);
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        levels[i] = static_cast<int8_t>(l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) levels[i] = static_cast<int8_t>(levels[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Q3_K: sixteen 16-value sub-blocks, each x ≈ d·(s_j − 32)·(q − 4) with a 6-bit field s_j and 3-bit q;
// d = −(the sub-block scale of largest magnitude) / 32. Layout as kernels::WeightType::Q3_K reads it: hmask
// (bit e / 32 of byte e % 32), qs (2 bits per value), the 12 scale bytes, d.
void quantize_q3_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, out += 110) {
    int8_t levels[kQK];
    float scales[16];
    const float max_scale = fit_sub_blocks(x, levels, scales, fit_q3_scale);
    std::memset(out, 0, 110);
    uint8_t* sc = out + 96;
    if (max_scale != 0.0f) {
      const float iscale = -32.0f / max_scale;
      for (int j = 0; j < 16; ++j) {
        const auto rounded = static_cast<int8_t>(nearest_int(iscale * scales[j]));  // as ggml's int8_t l
        const int l = std::clamp(static_cast<int>(rounded), -32, 31) + 32;
        sc[j % 8] |= static_cast<uint8_t>((l & 0xF) << (j < 8 ? 0 : 4));
        sc[8 + j % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
      }
      store_f16(out + 108, 1 / iscale);
    }
    // Requantize every value with the rounded scales actually stored.
    for (int j = 0; j < 16; ++j) {
      const int low = j < 8 ? (sc[j] & 0xF) : (sc[j - 8] >> 4);
      const int s = (low | (((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
      const float d = load_f16(out + 108) * static_cast<float>(s);
      if (d == 0.0f) continue;
      for (int l = 0; l < 16; ++l)
        levels[16 * j + l] = static_cast<int8_t>(std::clamp(nearest_int(x[16 * j + l] / d), -4, 3) + 4);
    }
    // Bit 2 of value e at bit e / 32 of hmask[e % 32]; its low 2 bits at bits 2·((e % 128) / 32) of
    // qs[32·(e / 128) + e % 32].
    uint8_t* hmask = out;
    uint8_t* qs = out + 32;
    for (int e = 0; e < kQK; ++e) {
      if (levels[e] > 3) {
        hmask[e % 32] |= static_cast<uint8_t>(1 << (e / 32));
        levels[e] = static_cast<int8_t>(levels[e] - 4);
      }
      put_two_bits(qs, e, levels[e]);
    }
  }
}

// Q2_K: sixteen 16-value sub-blocks, each x ≈ d·sc_j·q − dmin·m_j with 4-bit sc_j, m_j and 2-bit q, fitted with
// |x| weights and absolute error; d = (largest sub-block scale) / 15, dmin = (largest −min) / 15. Layout as
// kernels::WeightType::Q2_K reads it: the 16 scale bytes (sc low, m high), qs (Q3_K's 2-bit layout), d, dmin.
void quantize_q2_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, out += 84) {
    uint8_t levels[kQK];
    float scales[16], mins[16], weights[16];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = fit_scale_min(x + 16 * j, weights, 16, 3, -0.5f, 15, true, levels + 16 * j, &mins[j]);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    std::memset(out, 0, 84);
    if (max_scale > 0) {  // ggml stores the rounded int as a byte, as here
      const float iscale = 15.0f / max_scale;
      for (int j = 0; j < 16; ++j) out[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
      store_f16(out + 80, max_scale / 15.0f);
    }
    if (max_min > 0) {
      const float iscale = 15.0f / max_min;
      for (int j = 0; j < 16; ++j) out[j] = static_cast<uint8_t>(out[j] | (nearest_int(iscale * mins[j]) << 4));
    }
    store_f16(out + 82, max_min > 0 ? max_min / 15.0f : 0.0f);
    // Requantize every value with the rounded scales and mins actually stored (a zero scale keeps the fit's).
    for (int j = 0; j < 16; ++j) {
      const float d = load_f16(out + 80) * static_cast<float>(out[j] & 0xF);
      if (d == 0.0f) continue;
      const float dm = load_f16(out + 82) * static_cast<float>(out[j] >> 4);
      for (int l = 0; l < 16; ++l)
        levels[16 * j + l] = static_cast<uint8_t>(std::clamp(nearest_int((x[16 * j + l] + dm) / d), 0, 3));
    }
    for (int e = 0; e < kQK; ++e) put_two_bits(out + 16, e, levels[e]);
  }
}

// ggml's kvalues_iq4nl: the 16 values an IQ4_NL / IQ4_XS nibble stands for.
constexpr int8_t kIq4[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// The index of the kIq4 value nearest to v (the lower one on a tie), as ggml's best_index_int8.
int iq4_index(float v) {
  if (v <= kIq4[0]) return 0;
  if (v >= kIq4[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (v < kIq4[mid] ? hi : lo) = mid;
  }
  return v - kIq4[hi - 1] < kIq4[hi] - v ? hi - 1 : hi;
}

// IQ4_NL (super = 32) and IQ4_XS (super = 256) super-blocks, as ggml's quantize_row_iq4_nl_impl with no
// importance weights and ntry 7 (what llama-quantize runs): per 32 values a scale d = the weighted
// least-squares fit of x ≈ d · kIq4[l] (weights x²), the best of the start −max/−127 and the 15 trial
// scales (itry − 127) / max for itry in −7..7; IQ4_XS then stores d = −(largest scale)/32 and a 6-bit ls per
// sub-block (its scale ≈ d · (ls − 32)), and maps each value again with that scale. `x` has super values;
// `out` receives the block ({f16 d; qs[16]} or {f16 d; u16 scales_h; u8 scales_l[4]; qs[128]}).
void quantize_iq4_super(const float* x, int super, uint8_t* out) {
  const int blocks = super / 32;
  uint8_t levels[kQK] = {};
  float scales[kQK / 32] = {};
  float max_scale = 0.0f, amax_scale = 0.0f;
  for (int ib = 0; ib < blocks; ++ib) {
    const float* xb = x + 32 * ib;
    const float max = largest_magnitude(xb, 32);
    if (std::fabs(max) < 1e-15f) {  // ggml's GROUP_MAX_EPS: scale 0
      scales[ib] = 0.0f;
      continue;
    }
    // Σ w·q·x and Σ w·q² (w = x²) of the values nearest to x at inverse scale `id` (the indices themselves
    // are picked again below, with the final scale).
    float sumqx = 0.0f, sumq2 = 0.0f;
    const auto sums = [&](float id) {
      sumqx = sumq2 = 0.0f;
      for (int j = 0; j < 32; ++j) {
        const float q = kIq4[iq4_index(id * xb[j])], w = xb[j] * xb[j];
        sumqx += w * q * xb[j];
        sumq2 += w * q * q;
      }
    };
    sums(1 / (-max / kIq4[0]));
    float d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
    float best = d * sumqx;
    for (int itry = -7; itry <= 7; ++itry) {
      sums(static_cast<float>(itry + kIq4[0]) / max);
      if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
        d = sumqx / sumq2;
        best = d * sumqx;
      }
    }
    scales[ib] = d;
    if (std::fabs(d) > amax_scale) {
      amax_scale = std::fabs(d);
      max_scale = d;
    }
  }
  uint8_t* qs = out + (blocks > 1 ? 8 : 2);
  if (blocks > 1) {
    const float d = -max_scale / 32;
    store_f16(out, d);
    const float id = d != 0.0f ? 1 / d : 0.0f;
    uint16_t scales_h = 0;
    for (int ib = 0; ib < blocks; ++ib) {
      const int l = std::clamp(nearest_int(id * scales[ib]), -32, 31);
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0.0f ? 1 / dl : 0.0f;
      for (int j = 0; j < 32; ++j) levels[32 * ib + j] = static_cast<uint8_t>(iq4_index(idl * x[32 * ib + j]));
      const int ls = l + 32;
      out[4 + ib / 2] = static_cast<uint8_t>(ib % 2 == 0 ? (ls & 0xF) : out[4 + ib / 2] | ((ls & 0xF) << 4));
      scales_h = static_cast<uint16_t>(scales_h | ((ls >> 4) << (2 * ib)));
    }
    store_u16(out + 2, scales_h);
  } else {
    store_f16(out, scales[0]);
    const float id = scales[0] != 0.0f ? 1 / scales[0] : 0.0f;
    for (int j = 0; j < 32; ++j) levels[j] = static_cast<uint8_t>(iq4_index(id * x[j]));
  }
  for (int ib = 0; ib < blocks; ++ib)
    for (int j = 0; j < 16; ++j)
      qs[16 * ib + j] = static_cast<uint8_t>(levels[32 * ib + j] | (levels[32 * ib + 16 + j] << 4));
}

void quantize_iq4(const float* x, int64_t n, uint8_t* out, int super) {
  const int64_t bytes = super == 32 ? 18 : 136;
  for (int64_t b = 0; b < n / super; ++b) quantize_iq4_super(x + b * super, super, out + b * bytes);
}

void check_blocks(GgmlType type, std::size_t n) {
  if (!ggml_row_bytes(type, n))
    throw Error("a row of " + std::to_string(n) + " values is not a whole number of " +
                std::string(ggml_type_name(type)) + " blocks");
}

}  // namespace

bool ggml_can_quantize(GgmlType t) {
  return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16 || t == GgmlType::Q8_0 ||
         t == GgmlType::Q4_0 || t == GgmlType::Q4_1 || t == GgmlType::Q5_0 || t == GgmlType::Q5_1 ||
         t == GgmlType::Q2_K || t == GgmlType::Q3_K || t == GgmlType::Q4_K || t == GgmlType::Q5_K ||
         t == GgmlType::Q6_K || t == GgmlType::IQ4_NL || t == GgmlType::IQ4_XS;
}

void ggml_quantize_row(GgmlType type, std::span<const float> x, uint8_t* out) {
  check_blocks(type, x.size());
  const auto n = static_cast<int64_t>(x.size());
  switch (type) {
    case GgmlType::F32: if (n > 0) std::memcpy(out, x.data(), x.size() * 4); return;
    case GgmlType::F16: for (int64_t i = 0; i < n; ++i) store_f16(out + 2 * i, x[i]); return;
    case GgmlType::BF16: for (int64_t i = 0; i < n; ++i) store_u16(out + 2 * i, f32_to_bf16(x[i])); return;
    case GgmlType::Q8_0: quantize_q8_0(x.data(), n, out); return;
    case GgmlType::Q4_0: quantize_q4_0(x.data(), n, out); return;
    case GgmlType::Q4_1: quantize_affine(x.data(), n, out, 15); return;
    case GgmlType::Q5_0: quantize_q5_0(x.data(), n, out); return;
    case GgmlType::Q5_1: quantize_affine(x.data(), n, out, 31); return;
    case GgmlType::Q2_K: quantize_q2_k(x.data(), n, out); return;
    case GgmlType::Q3_K: quantize_q3_k(x.data(), n, out); return;
    case GgmlType::Q4_K: quantize_qk_k(x.data(), n, out, 15); return;
    case GgmlType::Q5_K: quantize_qk_k(x.data(), n, out, 31); return;
    case GgmlType::Q6_K: quantize_q6_k(x.data(), n, out); return;
    case GgmlType::IQ4_NL: quantize_iq4(x.data(), n, out, kQ4); return;
    case GgmlType::IQ4_XS: quantize_iq4(x.data(), n, out, kQK); return;
    default: throw Error("cannot write " + std::string(ggml_type_name(type)) + " tensors");
  }
}

}  // namespace verdict::formats
