#include "models/qwen35/norms.h"

#include <algorithm>

#include "kernels/ops.h"
#include "kernels/thread_pool.h"

namespace verdict::models::qwen35 {

using kernels::sum_squares;

void rms_norm(const float* x, const float* scale, int64_t n, double eps, float* y) {
  const float inv = static_cast<float>(1.0 / std::sqrt(sum_squares(x, n) / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * inv * scale[i];
}

void gated_rms_norm(const float* o, const float* z, const float* w, int64_t n, double eps, float* y) {
  const float inv = static_cast<float>(1.0 / std::sqrt(sum_squares(o, n) / static_cast<double>(n) + eps));
  constexpr int64_t kPiece = 256;
  float gate[kPiece];
  for (int64_t i0 = 0; i0 < n; i0 += kPiece) {
    const int64_t len = std::min(kPiece, n - i0);
    kernels::silu_mul(len, z + i0, nullptr, gate);
    for (int64_t i = 0; i < len; ++i) y[i0 + i] = w[i0 + i] * (o[i0 + i] * inv) * gate[i];
  }
}

void l2_normalize(float* x, int64_t n, double extra) {
  const float f = static_cast<float>(extra / std::sqrt(sum_squares(x, n) + 1e-6));
  for (int64_t i = 0; i < n; ++i) x[i] *= f;
}

void rms_norm_rows(const float* x, int64_t n, int64_t width, const float* scale, double eps, float* y) {
  const int64_t per_task = 16;
  kernels::parallel_for((n + per_task - 1) / per_task, static_cast<double>(3 * per_task * width), [&](int64_t task) {
    for (int64_t t = task * per_task; t < n && t < (task + 1) * per_task; ++t)
      rms_norm(x + t * width, scale, width, eps, y + t * width);
  });
}

}  // namespace verdict::models::qwen35
