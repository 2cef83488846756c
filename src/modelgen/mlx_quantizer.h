// MLX affine quantization (mlx `quantize`, mode "affine"), as mlx-lm's converter applies it to a BF16
// checkpoint. Per group of `group_size` consecutive values of a row, in fp32:
//
//   scale = max((max − min) / (2^bits − 1), 1e-7), negated unless |min| > |max|
//   edge  = min if |min| > |max| else max        (the extreme of larger magnitude)
//   q0    = rint(edge / scale); if q0 ≠ 0: scale = edge / q0, bias = edge; else bias = 0
//   q     = clamp(rint((w − bias) / scale), 0, 2^bits − 1)
//
// so that 0 is exactly representable and about half of all scales are negative. q is packed least
// significant bits first into uint32 words (4-bit: 8 per word, 8-bit: 4 per word); scale and bias are
// stored rounded to bf16. Dequantization is scale·q + bias (formats/mlx_quant.h).
#pragma once
#include <cstdint>
#include <span>

namespace verdict::modelgen {

inline constexpr int kMlxGroupSize = 64;

// Quantizes one row. row.size() must be a multiple of group_size; packed holds row.size()·bits/32
// words (a multiple of 32 bits), scales and biases row.size()/group_size bf16 values. bits ∈ {2, 3, 4, 5,
// 6, 8}.
void mlx_quantize_row(std::span<const float> row, int bits, int group_size, std::span<uint32_t> packed,
                      std::span<uint16_t> scales, std::span<uint16_t> biases);

}  // namespace verdict::modelgen
