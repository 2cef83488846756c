#include "models/qwen35/delta_rule.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.h"

namespace verdict::models::qwen35 {
namespace {

using kernels::axpy;

float* sized(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<std::size_t>(n));
  return v.data();
}

// Scratch of one chunk: per-thread, grown on demand.
struct ChunkScratch {
  std::vector<float> a, p, u, w, kt, qs, kc, qk, kk, f;
  std::vector<double> gamma, exp_gamma;
};

// One chunk of c tokens starting at token t0 (spec §6.6), with incoming state S [dk, dv].
void chunk_step(const DeltaRuleHead& h, int64_t t0, int64_t c, float* S, ChunkScratch& s) {
  const int64_t dk = h.dk, dv = h.dv;
  auto q = [&](int64_t t) { return h.q + (t0 + t) * h.q_stride; };
  auto k = [&](int64_t t) { return h.k + (t0 + t) * h.k_stride; };
  auto v = [&](int64_t t) { return h.v + (t0 + t) * h.v_stride; };
  auto beta = [&](int64_t t) { return h.beta[(t0 + t) * h.gate_stride]; };

  // γ_t = Σ_{s≤t} g_s, in double so that γ_t − γ_s keeps its precision deep into the chunk.
  if (static_cast<int64_t>(s.gamma.size()) < c) s.gamma.resize(static_cast<std::size_t>(c));
  double acc = 0.0;
  for (int64_t t = 0; t < c; ++t) s.gamma[static_cast<std::size_t>(t)] = acc += h.g[(t0 + t) * h.gate_stride];
  auto gamma = [&](int64_t t) { return s.gamma[static_cast<std::size_t>(t)]; };

  // A[t,s] = β_t (k_t·k_s) D[t,s] (s < t) and P[t,s] = (q_t·k_s) D[t,s] (s ≤ t), D = e^{γ_t − γ_s}, zero
  // elsewhere (P multiplies V' through gemm_f32). Only s ≤ t is ever exponentiated, so every factor is ≤ 1.
  // The products q_t·k_s and k_t·k_s come from GEMMs against Kᵀ, in blocks of kTriangleRows rows t that
  // stop at the block's last column s ≤ t (gemm_f32 computes each element alike whatever its shape; the
  // few products above the diagonal inside a block are computed and dropped).
  constexpr int64_t kTriangleRows = 16;
  float* Kc = sized(s.kc, dk * c);  // Kᵀ: Kc[i, j] = k_j[i]
  kernels::transpose_scaled(c, dk, k(0), h.k_stride, nullptr, Kc, c);
  float* QK = sized(s.qk, c * c);
  float* KK = sized(s.kk, c * c);
  std::fill_n(QK, c * c, 0.0f);
  std::fill_n(KK, c * c, 0.0f);
  for (int64_t r0 = 0; r0 < c; r0 += kTriangleRows) {
    const int64_t r1 = std::min(c, r0 + kTriangleRows);
    kernels::gemm_f32(r1 - r0, r1, dk, 1.0f, q(r0), h.q_stride, Kc, c, QK + r0 * c, c);
    kernels::gemm_f32(r1 - r0, r1, dk, 1.0f, k(r0), h.k_stride, Kc, c, KK + r0 * c, c);
  }
  float* A = sized(s.a, c * c);
  float* P = sized(s.p, c * c);
  for (int64_t t = 0; t < c; ++t) {
    for (int64_t j = 0; j <= t; ++j) {
      const float d = static_cast<float>(std::exp(gamma(t) - gamma(j)));
      P[t * c + j] = QK[t * c + j] * d;
      A[t * c + j] = j < t ? beta(t) * KK[t * c + j] * d : 0.0f;
    }
    for (int64_t j = t + 1; j < c; ++j) P[t * c + j] = 0.0f;
  }

  // U = T⁻¹(β ⊙ V) and Wk = T⁻¹(β ⊙ e^γ ⊙ K), T = I + A, by forward substitution: u_t = β_t v_t − Σ_{j<t}
  // A[t,j] u_j, one fused multiply-add per j in order. Rows go in blocks of kSubstitutionRows: the terms of
  // the rows before a block are one gemm_f32 product per block (the same operations in the same order as
  // a chain of axpy calls, ops.h), those inside it axpy calls.
  constexpr int64_t kSubstitutionRows = 6;
  float* U = sized(s.u, c * dv);
  float* W = sized(s.w, c * dk);
  if (static_cast<int64_t>(s.exp_gamma.size()) < c) s.exp_gamma.resize(static_cast<std::size_t>(c));
  for (int64_t t = 0; t < c; ++t) {
    const float bt = beta(t);
    const double eg = s.exp_gamma[static_cast<std::size_t>(t)] = std::exp(gamma(t));  // e^γ_t, used again for Q
    const float bet = static_cast<float>(bt * eg);
    kernels::scale_to(dv, bt, v(t), U + t * dv);
    kernels::scale_to(dk, bet, k(t), W + t * dk);
  }
  for (int64_t r0 = 0; r0 < c; r0 += kSubstitutionRows) {
    const int64_t nb = std::min(kSubstitutionRows, c - r0);
    kernels::gemm_f32(nb, dv, r0, -1.0f, A + r0 * c, c, U, dv, U + r0 * dv, dv);
    kernels::gemm_f32(nb, dk, r0, -1.0f, A + r0 * c, c, W, dk, W + r0 * dk, dk);
    for (int64_t t = r0 + 1; t < r0 + nb; ++t)
      for (int64_t j = r0; j < t; ++j) {
        axpy(dv, -A[t * c + j], U + j * dv, U + t * dv);
        axpy(dk, -A[t * c + j], W + j * dk, W + t * dk);
      }
  }

  // V' = U − Wk S (in place in U).
  kernels::gemm_f32(c, dv, dk, -1.0f, W, dk, S, dv, U, dv);

  // O = (e^γ ⊙ Q) S + P V', with the incoming S.
  float* Qs = sized(s.qs, c * dk);
  for (int64_t t = 0; t < c; ++t) {
    const float eg = static_cast<float>(s.exp_gamma[static_cast<std::size_t>(t)]);
    kernels::scale_to(dk, eg, q(t), Qs + t * dk);
    std::fill_n(h.out + (t0 + t) * h.out_stride, dv, 0.0f);
  }
  float* O = h.out + t0 * h.out_stride;
  kernels::gemm_f32(c, dv, dk, 1.0f, Qs, dk, S, dv, O, h.out_stride);
  // P V' in the same row blocks: row t's terms past the block's last column are P's zeros, which add
  // nothing (fma(0, u, o) = o for finite u, up to the sign of an o that is exactly zero), so they are left out.
  for (int64_t r0 = 0; r0 < c; r0 += kTriangleRows) {
    const int64_t r1 = std::min(c, r0 + kTriangleRows);
    kernels::gemm_f32(r1 - r0, dv, r1, 1.0f, P + r0 * c, c, U, dv, O + r0 * h.out_stride, h.out_stride);
  }

  // S ← e^{γ_last} S + Σ_s (e^{γ_last − γ_s} k_s) V'_sᵀ = e^{γ_last} S + (K ⊙ f)ᵀ V'.
  const double last = gamma(c - 1);
  kernels::scale(dk * dv, static_cast<float>(std::exp(last)), S);
  float* KT = sized(s.kt, dk * c);
  float* F = sized(s.f, c);
  for (int64_t j = 0; j < c; ++j) F[j] = static_cast<float>(std::exp(last - gamma(j)));
  kernels::transpose_scaled(c, dk, k(0), h.k_stride, F, KT, c);
  kernels::gemm_f32(dk, dv, c, 1.0f, KT, c, U, dv, S, dv);
}

}  // namespace

void delta_rule_recurrent(const DeltaRuleHead& h, float* S) {
  for (int64_t t = 0; t < h.n; ++t) {
    // S ← e^g S; u = β (v − Sᵀk); S += k uᵀ; o = Sᵀq, each row of S read twice per token (ops.h).
    kernels::delta_rule_token(h.dk, h.dv, std::exp(h.g[t * h.gate_stride]), h.beta[t * h.gate_stride],
                              h.q + t * h.q_stride, h.k + t * h.k_stride, h.v + t * h.v_stride, S,
                              h.out + t * h.out_stride);
  }
}

void delta_rule_chunked(const DeltaRuleHead& h, float* S, int64_t chunk) {
  thread_local ChunkScratch scratch;
  for (int64_t t0 = 0; t0 < h.n; t0 += chunk) chunk_step(h, t0, std::min(chunk, h.n - t0), S, scratch);
}

}  // namespace verdict::models::qwen35
