// A summary of a checkpoint for `verdict info`: per-tensor logical parameter counts (a quantized MLX
// matrix counts its unpacked rows × cols; its scales and biases are folded into it) and the dtypes in use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "formats/mlx_quant.h"
#include "formats/tensor_store.h"

namespace verdict::formats {

struct TensorSummary {
  std::string name;              // the stored name; "X.weight" for a quantized matrix
  std::string format;            // stored dtype ("BF16", "F32", ...) or quant_format_name() when quantized
  std::vector<int64_t> shape;    // logical shape (unpacked [rows, cols] when quantized)
  int64_t params = 0;            // logical element count
  std::size_t stored_bytes = 0;  // bytes as stored (weight + scales + biases when quantized)
  std::optional<QuantSpec> quant;
};

struct CheckpointSummary {
  std::vector<TensorSummary> tensors;            // sorted by name
  std::map<std::string, int64_t> dtype_tensors;  // stored dtype name -> number of stored tensors
  std::map<std::string, int64_t> format_params;  // TensorSummary::format -> logical parameters
  int64_t total_params = 0;
  int64_t quantized_params = 0;                  // parameters held by quantized matrices
  int64_t quantized_modules = 0;
  std::size_t stored_bytes = 0;
};

// "mlx-q4g64" for {bits 4, group size 64}.
std::string quant_format_name(QuantSpec spec);

// Summarizes the kept tensors of `store`. With `quantization` (the config's MLX block), every module X
// with X.weight (U32), X.scales and X.biases is validated with make_quantized() under
// quantization->spec_for(X) and counted once, unpacked; without it every tensor counts as stored.
// Throws verdict::Error (from make_quantized) when a quantized module is inconsistent.
CheckpointSummary summarize_checkpoint(const TensorStore& store,
                                       const std::optional<QuantizationConfig>& quantization = std::nullopt);

}  // namespace verdict::formats
