#include "models/qwen35/gated_deltanet.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/activations.h"
#include "models/qwen35/delta_rule.h"
#include "models/qwen35/norms.h"

namespace verdict::models::qwen35 {
namespace {

// Causal depthwise conv + SiLU of one segment (spec §6.2, §6.8): the window is the K−1 stored
// pre-conv vectors followed by the segment's new ones; the state keeps the window's last K−1.
void conv_segment(const Config& c, const DeltaNetWeights& w, const Segment& seg, int64_t index, const float* p,
                  float* state, float* y) {
  const int64_t C = c.conv_dim(), K = c.conv_kernel, hist = K - 1;
  auto window_row = [&](int64_t i) { return i < hist ? state + i * C : p + (seg.row0 + i - hist) * C; };
  const int64_t per_task = 8;
  kernels::parallel_for((seg.n + per_task - 1) / per_task, static_cast<double>(per_task * C * K), [&](int64_t task) {
    std::vector<const float*> window(static_cast<std::size_t>(K));
    for (int64_t t = task * per_task; t < std::min(seg.n, (task + 1) * per_task); ++t) {
      for (int64_t j = 0; j < K; ++j)  // token t − (K−1) + j
        window[static_cast<std::size_t>(j)] = window_row(t + j);
      kernels::conv_silu(C, K, w.conv.data(), window.data(), y + (seg.row0 + t) * C);
    }
  });
  // The windows after the saved positions (Segment::saves), before the state moves on.
  for (std::size_t k = 0; k < seg.saves.size(); ++k)
    for (int64_t i = 0; i < hist; ++i)
      std::copy_n(window_row(seg.saves[k] + i), C, seg.snapshots[k].conv.data() + (index * hist + i) * C);
  std::vector<float> next(static_cast<std::size_t>(hist * C));
  for (int64_t i = 0; i < hist; ++i) std::copy_n(window_row(seg.n + i), C, next.data() + i * C);
  std::copy(next.begin(), next.end(), state);
}

}  // namespace

void deltanet_forward(const StepContext& step, const DeltaNetWeights& w, int64_t index, const float* xn,
                      float* out) {
  const Config& c = step.config;
  const int64_t rows = step.rows, C = c.conv_dim(), VD = c.value_dim();
  const int64_t nv = c.nv, dk = c.dk, dv = c.dv, key_dim = c.key_dim();

  // Projections (spec §6.1), of the same input: quantized once where their types allow.
  Activations p(rows * C), z(rows * VD), b(rows * nv), a(rows * nv);
  const kernels::MatmulOutput projections[] = {
      {&w.in_proj_qkv.view, p.data()}, {&w.in_proj_z.view, z.data()}, {&w.in_proj_b.view, b.data()},
      {&w.in_proj_a.view, a.data()}};
  kernels::matmul_shared_input(projections, xn, rows);

  // Conv + SiLU per sequence, then q̂/k̂ → L2 (q also × 1/sqrt(dk)), β and g (spec §6.2, §6.3).
  Activations y(rows * C);
  for (const Segment& seg : step.segments)
    conv_segment(c, w, seg, index, p.data(), step.pool.conv_state(seg.slot, index), y.data());
  const double q_scale = 1.0 / std::sqrt(static_cast<double>(dk));
  float* beta = b.data();  // β and g overwrite b and a
  float* g = a.data();
  kernels::parallel_for(rows, static_cast<double>(3 * C), [&](int64_t r) {
    float* yr = y.data() + r * C;
    for (int64_t h = 0; h < c.nk; ++h) {
      l2_normalize(yr + h * dk, dk, q_scale);
      l2_normalize(yr + key_dim + h * dk, dk, 1.0);
    }
    for (int64_t j = 0; j < nv; ++j) {
      const int64_t i = r * nv + j;
      beta[i] = sigmoid(beta[i]);
      const double u = static_cast<double>(g[i]) + w.dt_bias[j];
      g[i] = static_cast<float>(-std::exp(static_cast<double>(w.a_log[j])) * softplus(u));
    }
  });

  // Delta rule per (sequence, value head), then the gated norm (spec §6.4–§6.7).
  Activations o(rows * VD);
  const int64_t r_heads = c.value_heads_per_key_head();
  const auto n_segments = static_cast<int64_t>(step.segments.size());
  // ≈ multiply-adds per head and token: the state products, plus the in-chunk matrices when chunked.
  const double per_token = 3.0 * double(dk * dv) + (rows > n_segments ? double(kDeltaRuleChunk * (dk + dv)) : 0.0);
  kernels::parallel_for(n_segments * nv, per_token * double(rows) / double(std::max<int64_t>(1, n_segments)), [&](int64_t task) {
    const Segment& seg = step.segments[static_cast<std::size_t>(task / nv)];
    const int64_t j = task % nv;
    if (seg.n == 0) return;
    const int64_t h = step.head_mapping == HeadMapping::Grouped ? j / r_heads : j % c.nk;
    float* S = step.pool.recurrent_state(seg.slot, index) + j * dk * dv;
    // Each stretch between the segment's restarts (its sequence's seams) on its own chunk grid.
    for (std::size_t part = 0; part <= seg.restarts.size(); ++part) {
      const int64_t t0 = part == 0 ? 0 : seg.restarts[part - 1];
      const int64_t t1 = part == seg.restarts.size() ? seg.n : seg.restarts[part];
      const int64_t r0 = seg.row0 + t0;
      DeltaRuleHead head;
      head.n = t1 - t0;
      head.dk = dk;
      head.dv = dv;
      head.q = y.data() + r0 * C + h * dk;
      head.k = y.data() + r0 * C + key_dim + h * dk;
      head.v = y.data() + r0 * C + 2 * key_dim + j * dv;
      head.q_stride = head.k_stride = head.v_stride = C;
      head.beta = beta + r0 * nv + j;
      head.g = g + r0 * nv + j;
      head.gate_stride = nv;
      head.out = o.data() + r0 * VD + j * dv;
      head.out_stride = VD;
      if (seg.chunked) {
        delta_rule_chunked(head, S);
      } else {
        delta_rule_recurrent(head, S);
      }
      for (std::size_t k = 0; k < seg.saves.size(); ++k)  // a saved state after this stretch
        if (seg.saves[k] == t1) std::copy_n(S, dk * dv, seg.snapshots[k].recurrent.data() + (index * nv + j) * dk * dv);
    }
    for (int64_t t = 0; t < seg.n; ++t) {
      float* ot = o.data() + (seg.row0 + t) * VD + j * dv;
      gated_rms_norm(ot, z.data() + (seg.row0 + t) * VD + j * dv, w.norm.data(), dv, c.eps, ot);
    }
  });

  kernels::matmul(w.out_proj.view, o.data(), rows, out);
}

}  // namespace verdict::models::qwen35
