// MLX affine quantization (mlx-lm / mlx-vlm `mode: "affine"`).
//
// A quantized Linear/Embedding X is three tensors: X.weight (U32, [out, in·bits/32], a little-endian
// bit stream per row, least significant bit first), X.scales and X.biases ([out, in/group_size], BF16
// or F16). Dequantization: W[r, j] = scales[r, j/gs] · q[r, j] + biases[r, j/gs], evaluated in fp32
// (one multiply, then one add, each rounded to fp32: bit-exact with MLX).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/safetensors.h"

namespace verdict::formats {

struct QuantSpec {
  int bits = 0;        // 2, 3, 4, 5, 6 or 8
  int group_size = 0;  // 32, 64 or 128
  bool operator==(const QuantSpec&) const = default;
};

// The `quantization` block of an MLX config.json (mirrored in `quantization_config`): the global
// spec plus per-module overrides keyed by module path ("language_model.model.layers.0.mlp.gate").
struct QuantizationConfig {
  QuantSpec global;
  std::string mode = "affine";
  std::map<std::string, QuantSpec> overrides;  // module path -> spec
  std::vector<std::string> unquantized;        // module paths set to false

  // The spec for `module` (the tensor name without ".weight"/".scales"/".biases"); per-path entry
  // first, then the global one.
  QuantSpec spec_for(const std::string& module) const;
  // True when the config lists `module` as unquantized (`"<module>": false`).
  bool is_unquantized(const std::string& module) const;
};

// The module path of a quantized tensor name: "X.weight" / "X.scales" / "X.biases" -> "X"
// (other names are returned unchanged).
std::string quantized_module_name(const std::string& tensor_name);

// A quantized matrix: views of the three tensors plus its logical shape.
struct QuantizedTensor {
  const TensorView* weight = nullptr;
  const TensorView* scales = nullptr;
  const TensorView* biases = nullptr;
  QuantSpec spec;
  int64_t rows = 0;  // out
  int64_t cols = 0;  // in (logical, unpacked)
};

// Validates shapes and dtypes of the three tensors against `spec` (in = scales_cols · group_size,
// packed_cols · 32 = in · bits) and returns the quantized view. Throws verdict::Error naming the module.
QuantizedTensor make_quantized(const TensorView& weight, const TensorView& scales,
                               const TensorView& biases, QuantSpec spec);

// Unpacked q value of element (row, col).
uint32_t mlx_unpack(const QuantizedTensor& q, int64_t row, int64_t col);
// Dequantizes one row into out[0, cols).
void mlx_dequantize_row(const QuantizedTensor& q, int64_t row, std::span<float> out);
// Dequantizes the whole matrix (rows × cols, row-major).
std::vector<float> mlx_dequantize(const QuantizedTensor& q);

}  // namespace verdict::formats
