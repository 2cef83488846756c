#include "modelgen/mlx_quantizer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/dtype.h"
#include "core/error.h"

namespace verdict::modelgen {

void mlx_quantize_row(std::span<const float> row, int bits, int group_size, std::span<uint32_t> packed,
                      std::span<uint16_t> scales, std::span<uint16_t> biases) {
  if ((bits < 2 || bits > 8 || bits == 7) || group_size <= 0 || row.size() % static_cast<std::size_t>(group_size) != 0 ||
      row.size() * static_cast<std::size_t>(bits) % 32 != 0)
    throw Error("mlx_quantize_row: unsupported bits/group size for a row of " + std::to_string(row.size()));
  const std::size_t groups = row.size() / static_cast<std::size_t>(group_size);
  if (packed.size() != row.size() * static_cast<std::size_t>(bits) / 32 || scales.size() != groups ||
      biases.size() != groups)
    throw Error("mlx_quantize_row: output sizes do not match the row");
  const float n_bins = static_cast<float>((1 << bits) - 1);
  const float eps = 1e-7f;
  std::fill(packed.begin(), packed.end(), 0u);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::span<const float> w = row.subspan(g * static_cast<std::size_t>(group_size),
                                                 static_cast<std::size_t>(group_size));
    float w_min = std::numeric_limits<float>::infinity();
    float w_max = -w_min;
    for (float v : w) {
      w_max = std::max(w_max, v);
      w_min = std::min(w_min, v);
    }
    const bool min_is_edge = std::abs(w_min) > std::abs(w_max);
    float scale = std::max((w_max - w_min) / n_bins, eps);
    if (!min_is_edge) scale = -scale;
    const float edge = min_is_edge ? w_min : w_max;
    const float q0 = std::rint(edge / scale);
    float bias = 0.0f;
    if (q0 != 0.0f) {
      scale = edge / q0;
      bias = edge;
    }
    for (std::size_t j = 0; j < w.size(); ++j) {
      const float q = std::min(std::max(std::rint((w[j] - bias) / scale), 0.0f), n_bins);
      // Element k at bits k · bits .. of the row's stream, least significant first; 3, 5 and 6 bits
      // cross word boundaries.
      const std::size_t bit = (g * static_cast<std::size_t>(group_size) + j) * static_cast<std::size_t>(bits);
      const auto value = static_cast<uint64_t>(q) << (bit % 32);
      packed[bit / 32] |= static_cast<uint32_t>(value);
      if (bit % 32 + static_cast<std::size_t>(bits) > 32) packed[bit / 32 + 1] |= static_cast<uint32_t>(value >> 32);
    }
    scales[g] = f32_to_bf16(scale);
    biases[g] = f32_to_bf16(bias);
  }
}

}  // namespace verdict::modelgen
