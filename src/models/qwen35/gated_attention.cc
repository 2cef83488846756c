#include "models/qwen35/gated_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/activations.h"
#include "models/qwen35/norms.h"

namespace verdict::models::qwen35 {
namespace {

// Causal softmax attention of a block of nb consecutive query rows (positions pos0 .. pos0 + nb − 1) of one
// head over the cached positions [0, pos] of its KV head, times the sigmoid output gate (spec §7.4).
// kt holds the keys transposed, [hd, ldk]. The scores and the weighted sum are gemm_f32 products, whose
// elements do not depend on the block: a row's result is the same alone or in any block (positions past
// a row's own get probability exactly 0).
struct AttendScratch {
  std::vector<float> kt, scores;
};

void attend_block(const float* q, int64_t q_stride, const float* kt, int64_t ldk, const float* values,
                  int64_t pos0, int64_t nb, int64_t hd, float scale, float* out, int64_t out_stride,
                  AttendScratch& s) {
  const int64_t nk = pos0 + nb;  // keys [0, nk) cover every row of the block
  if (static_cast<int64_t>(s.scores.size()) < nb * nk) s.scores.resize(static_cast<std::size_t>(nb * nk));
  float* S = s.scores.data();
  std::fill_n(S, nb * nk, 0.0f);
  kernels::gemm_f32(nb, nk, hd, 1.0f, q, q_stride, kt, ldk, S, nk);
  for (int64_t i = 0; i < nb; ++i) {
    float* row = S + i * nk;
    const int64_t pos = pos0 + i;
    kernels::softmax(pos + 1, scale, row);
    std::fill(row + pos + 1, row + nk, 0.0f);
    std::fill_n(out + i * out_stride, hd, 0.0f);
  }
  kernels::gemm_f32(nb, hd, nk, 1.0f, S, nk, values, hd, out, out_stride);
  for (int64_t i = 0; i < nb; ++i) {
    const float* gate = q + i * q_stride + hd;
    for (int64_t d = 0; d < hd; ++d) out[i * out_stride + d] *= sigmoid(gate[d]);
  }
}

}  // namespace

void apply_rotary(float* x, int64_t rotary_dim, const double* inv_freq, int64_t pos) {
  const int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double phi = static_cast<double>(pos) * inv_freq[i];
    const double c = std::cos(phi), s = std::sin(phi);
    const double a = x[i], b = x[i + half];
    x[i] = static_cast<float>(a * c - b * s);
    x[i + half] = static_cast<float>(b * c + a * s);
  }
}

void attention_forward(const StepContext& step, const AttentionWeights& w, int64_t index, const float* xn,
                       float* out) {
  const Config& c = step.config;
  const int64_t rows = step.rows, hd = c.head_dim, QG = c.q_proj_rows(), KV = c.kv_dim();
  const int64_t T = step.pool.max_tokens();

  Activations qg(rows * QG), k(rows * KV), v(rows * KV);
  kernels::matmul(w.q_proj.view, xn, rows, qg.data());
  kernels::matmul(w.k_proj.view, xn, rows, k.data());
  kernels::matmul(w.v_proj.view, xn, rows, v.data());

  // inv_freq[i] = θ^(−2i/R). For text, the interleaved M-RoPE sections all carry the token position,
  // which makes it exactly this 1-D rotary embedding (spec §7.3).
  std::vector<double> inv_freq(static_cast<std::size_t>(c.rotary_dim / 2));
  for (std::size_t i = 0; i < inv_freq.size(); ++i)
    inv_freq[i] = std::pow(c.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(c.rotary_dim));

  // q/k norms and rotary per row; the new keys and values go to the cache (spec §7.2, §7.3, §7.5).
  for (const Segment& seg : step.segments) {
    float* keys = step.pool.keys(seg.slot, index);
    float* values = step.pool.values(seg.slot, index);
    kernels::parallel_for(seg.n, static_cast<double>(4 * (c.nq + c.nkv) * hd), [&](int64_t t) {
      const int64_t r = seg.row0 + t, pos = seg.start + t;
      for (int64_t h = 0; h < c.nq; ++h) {
        float* q = qg.data() + r * QG + h * 2 * hd;
        rms_norm(q, w.q_norm.data(), hd, c.eps, q);
        apply_rotary(q, c.rotary_dim, inv_freq.data(), pos);
      }
      for (int64_t h = 0; h < c.nkv; ++h) {
        float* kh = k.data() + r * KV + h * hd;
        rms_norm(kh, w.k_norm.data(), hd, c.eps, kh);
        apply_rotary(kh, c.rotary_dim, inv_freq.data(), pos);
        std::copy_n(kh, hd, keys + (h * T + pos) * hd);
        std::copy_n(v.data() + r * KV + h * hd, hd, values + (h * T + pos) * hd);
      }
    });
  }

  // Attention per (sequence, query head); contiguous GQA groups h' = ⌊h / (nq/nkv)⌋.
  Activations attn(rows * c.attn_dim());
  const int64_t group = c.nq / c.nkv;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  const auto n_segments = static_cast<int64_t>(step.segments.size());
  double work = 0.0;  // ≈ multiply-adds of the scores and the weighted sum, over all heads
  for (const Segment& seg : step.segments) work += 2.0 * double(seg.n) * double(seg.start + seg.n) * double(hd * c.nq);
  kernels::parallel_for(n_segments * c.nq, work / double(std::max<int64_t>(1, n_segments * c.nq)), [&](int64_t task) {
    thread_local AttendScratch scratch;
    constexpr int64_t kQueryBlock = 32;
    const Segment& seg = step.segments[static_cast<std::size_t>(task / c.nq)];
    const int64_t h = task % c.nq, kvh = h / group;
    const float* keys = step.pool.keys(seg.slot, index) + kvh * T * hd;
    const float* values = step.pool.values(seg.slot, index) + kvh * T * hd;
    // Keys [0, end) transposed once per (sequence, head): kt[p, j] = key j, component p.
    const int64_t end = seg.start + seg.n;
    if (static_cast<int64_t>(scratch.kt.size()) < hd * end) scratch.kt.resize(static_cast<std::size_t>(hd * end));
    float* kt = scratch.kt.data();
    for (int64_t j = 0; j < end; ++j)
      for (int64_t p = 0; p < hd; ++p) kt[p * end + j] = keys[j * hd + p];
    for (int64_t t0 = 0; t0 < seg.n; t0 += kQueryBlock) {
      const int64_t nb = std::min(kQueryBlock, seg.n - t0), r = seg.row0 + t0;
      attend_block(qg.data() + r * QG + h * 2 * hd, QG, kt, end, values, seg.start + t0, nb, hd, scale,
                   attn.data() + r * c.attn_dim() + h * hd, c.attn_dim(), scratch);
    }
  });

  kernels::matmul(w.o_proj.view, attn.data(), rows, out);
}

}  // namespace verdict::models::qwen35
