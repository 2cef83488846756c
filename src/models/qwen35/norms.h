// Element-wise pieces of the Qwen3.5 layers (spec §4, §5, §6.3): the three norms and the scalar
// activations (SiLU itself is kernels::silu_mul). All fp32 in and out; sums of squares accumulate in
// double (kernels::sum_squares).
#pragma once
#include <cmath>
#include <cstdint>

namespace verdict::models::qwen35 {

inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
// log(1 + e^u), returning u itself for u > 20 as PyTorch does.
inline double softplus(double u) { return u > 20.0 ? u : std::log1p(std::exp(u)); }

// Zero-centred RMSNorm with its full scale s = 1 + w (spec §4.1): y = x / sqrt(mean(x²) + eps) · s.
// y may alias x.
void rms_norm(const float* x, const float* scale, int64_t n, double eps, float* y);

// Gated RMSNorm (spec §4.2): y = w ⊙ o / sqrt(mean(o²) + eps) ⊙ SiLU(z). y may alias o.
void gated_rms_norm(const float* o, const float* z, const float* w, int64_t n, double eps, float* y);

// L2 norm (spec §4.3) times `extra`: x ← x · (Σ x_i² + 1e-6)^(−1/2) · extra.
void l2_normalize(float* x, int64_t n, double extra);

// rms_norm of every row of an [n, width] matrix x into y (may alias x), spread over the kernel pool.
void rms_norm_rows(const float* x, int64_t n, int64_t width, const float* scale, double eps, float* y);

}  // namespace verdict::models::qwen35
