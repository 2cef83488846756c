#include "kernels/ref/ref.h"

#include <cstring>

#include "core/dtype.h"

namespace verdict::kernels::ref {

float weight_at(const WeightMatrix& w, int64_t r, int64_t c) {
  switch (w.type) {
    case WeightType::F32:
      return w.f32[r * w.cols + c];
    case WeightType::BF16:
      return bf16_to_f32(w.bf16[r * w.cols + c]);
    case WeightType::MlxAffine: {
      const uint32_t* row = w.packed + r * w.packed_row_words();
      const int64_t bit = c * w.bits;
      const int64_t word = bit / 32;
      const int shift = static_cast<int>(bit % 32);
      uint64_t v = row[word] >> shift;
      if (shift + w.bits > 32) v |= static_cast<uint64_t>(row[word + 1]) << (32 - shift);
      const uint32_t q = static_cast<uint32_t>(v) & ((1u << w.bits) - 1u);
      const int64_t g = r * w.groups_per_row() + c / w.group_size;
      const float scaled = w.scales[g] * static_cast<float>(q);
      return scaled + w.biases[g];
    }
  }
  return 0.0f;
}

void dequantize_row(const WeightMatrix& w, int64_t r, float* out) {
  for (int64_t c = 0; c < w.cols; ++c) out[c] = weight_at(w, r, c);
}

void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y) {
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < w.rows; ++r) {
      double acc = 0.0;
      for (int64_t c = 0; c < w.cols; ++c)
        acc += static_cast<double>(weight_at(w, r, c)) * static_cast<double>(x[t * w.cols + c]);
      y[t * w.rows + r] = static_cast<float>(acc);
    }
  }
}

float dot(const float* a, const float* b, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return static_cast<float>(acc);
}

void axpy(int64_t n, float a, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>(static_cast<double>(y[i]) + static_cast<double>(a) * x[i]);
}

void scale(int64_t n, float a, float* x) {
  for (int64_t i = 0; i < n; ++i) x[i] *= a;
}

}  // namespace verdict::kernels::ref
