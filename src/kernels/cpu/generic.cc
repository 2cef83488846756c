// The portable scalar kernels: the fallback when neither AVX2 nor AVX-512 is available.
#include <cstring>

#include "core/dtype.h"
#include "kernels/cpu/kernel_table.h"

namespace verdict::kernels::cpu {
namespace {

// Row r of W as fp32: a pointer into the weights (F32) or into `scratch`.
const float* row_f32(const WeightMatrix& w, int64_t r, float* scratch) {
  switch (w.type) {
    case WeightType::F32:
      return w.f32 + r * w.cols;
    case WeightType::BF16: {
      const uint16_t* src = w.bf16 + r * w.cols;
      for (int64_t c = 0; c < w.cols; ++c) scratch[c] = bf16_to_f32(src[c]);
      return scratch;
    }
    case WeightType::MlxAffine:
      mlx_dequantize_row_generic(w, r, scratch);
      return scratch;
  }
  return scratch;
}

float dot_generic(const float* a, const float* b, int64_t n) {
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

void matmul_tile_generic(const WeightMatrix& w, const float* x, int64_t t0, int64_t t1, int64_t r0,
                         int64_t r1, float* y, float* scratch) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* wr = row_f32(w, r, scratch);
    for (int64_t t = t0; t < t1; ++t) y[t * w.rows + r] = dot_generic(wr, x + t * w.cols, w.cols);
  }
}

void dequantize_row_generic(const WeightMatrix& w, int64_t r, float* out) {
  switch (w.type) {
    case WeightType::F32:
      std::memcpy(out, w.f32 + r * w.cols, static_cast<std::size_t>(w.cols) * sizeof(float));
      return;
    case WeightType::BF16:
      for (int64_t c = 0; c < w.cols; ++c) out[c] = bf16_to_f32(w.bf16[r * w.cols + c]);
      return;
    case WeightType::MlxAffine:
      mlx_dequantize_row_generic(w, r, out);
      return;
  }
}

void axpy_generic(int64_t n, float a, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void scale_generic(int64_t n, float a, float* x) {
  for (int64_t i = 0; i < n; ++i) x[i] *= a;
}

}  // namespace

void mlx_dequantize_row_generic(const WeightMatrix& w, int64_t r, float* out) {
  const uint32_t* row = w.packed + r * w.packed_row_words();
  const float* scales = w.scales + r * w.groups_per_row();
  const float* biases = w.biases + r * w.groups_per_row();
  const uint32_t mask = (1u << w.bits) - 1u;
  for (int64_t c = 0; c < w.cols; ++c) {
    const int64_t bit = c * w.bits;
    const int shift = static_cast<int>(bit & 31);
    uint64_t v = row[bit >> 5] >> shift;
    if (shift + w.bits > 32) v |= static_cast<uint64_t>(row[(bit >> 5) + 1]) << (32 - shift);
    const int64_t g = c / w.group_size;
    const float scaled = scales[g] * static_cast<float>(static_cast<uint32_t>(v) & mask);
    out[c] = scaled + biases[g];
  }
}

const KernelTable& generic_table() {
  static const KernelTable table{matmul_tile_generic, dequantize_row_generic, dot_generic,
                                 axpy_generic, scale_generic};
  return table;
}

}  // namespace verdict::kernels::cpu
