#include "models/qwen35/gated_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/norms.h"

namespace verdict::models::qwen35 {
namespace {

std::vector<float> buffer(int64_t n) { return std::vector<float>(static_cast<std::size_t>(n)); }

// Causal softmax attention of one query row over cached positions [0, pos] of one KV head, times
// the sigmoid output gate (spec §7.4).
void attend(const float* q, const float* keys, const float* values, int64_t pos, int64_t hd, float scale,
            const float* gate, std::vector<float>& scores, float* out) {
  if (static_cast<int64_t>(scores.size()) < pos + 1) scores.resize(static_cast<std::size_t>(pos + 1));
  float max_score = -INFINITY;
  for (int64_t s = 0; s <= pos; ++s) {
    scores[static_cast<std::size_t>(s)] = kernels::dot(q, keys + s * hd, hd) * scale;
    max_score = std::max(max_score, scores[static_cast<std::size_t>(s)]);
  }
  double sum = 0.0;
  for (int64_t s = 0; s <= pos; ++s) {
    const float e = std::exp(scores[static_cast<std::size_t>(s)] - max_score);
    scores[static_cast<std::size_t>(s)] = e;
    sum += e;
  }
  const float inv_sum = static_cast<float>(1.0 / sum);
  std::fill_n(out, hd, 0.0f);
  for (int64_t s = 0; s <= pos; ++s) kernels::axpy(hd, scores[static_cast<std::size_t>(s)] * inv_sum, values + s * hd, out);
  for (int64_t d = 0; d < hd; ++d) out[d] *= sigmoid(gate[d]);
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

  std::vector<float> qg = buffer(rows * QG), k = buffer(rows * KV), v = buffer(rows * KV);
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
  std::vector<float> attn = buffer(rows * c.attn_dim());
  const int64_t group = c.nq / c.nkv;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  const auto n_segments = static_cast<int64_t>(step.segments.size());
  double work = 0.0;  // ≈ multiply-adds of the scores and the weighted sum, over all heads
  for (const Segment& seg : step.segments) work += 2.0 * double(seg.n) * double(seg.start + seg.n) * double(hd * c.nq);
  kernels::parallel_for(n_segments * c.nq, work / double(std::max<int64_t>(1, n_segments * c.nq)), [&](int64_t task) {
    thread_local std::vector<float> scores;
    const Segment& seg = step.segments[static_cast<std::size_t>(task / c.nq)];
    const int64_t h = task % c.nq, kvh = h / group;
    const float* keys = step.pool.keys(seg.slot, index) + kvh * T * hd;
    const float* values = step.pool.values(seg.slot, index) + kvh * T * hd;
    for (int64_t t = 0; t < seg.n; ++t) {
      const int64_t r = seg.row0 + t;
      const float* q = qg.data() + r * QG + h * 2 * hd;
      attend(q, keys, values, seg.start + t, hd, scale, q + hd, scores, attn.data() + r * c.attn_dim() + h * hd);
    }
  });

  kernels::matmul(w.o_proj.view, attn.data(), rows, out);
}

}  // namespace verdict::models::qwen35
