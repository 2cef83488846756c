// From the generator's weights (Hugging Face names, shapes and values) to the tensors a file stores:
// either the Hugging Face layout itself (BF16 as released, or every tensor F32), or the mlx-lm layout of
// spec qwen35.md §9.2 (keys `language_model.model.*` / `language_model.lm_head.*`, every Linear and
// Embedding whose input size is a multiple of 64 quantized to X.weight/X.scales/X.biases, conv1d as
// [C, K, 1], bf16(1 + w) stored for the zero-centred norms, A_log kept F32, the rest BF16).
//
// fill_rows() produces any row range of any stored tensor independently of the others, so a file is
// written tensor by tensor and row block by row block, on as many threads as wanted.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/safetensors_writer.h"
#include "modelgen/weight_specs.h"

namespace verdict::modelgen {

enum class Quantization { None, Mlx4, Mlx6, Mlx8 };
int quantization_bits(Quantization q);  // 0, 4, 6 or 8

enum class StoredPart {
  Values,       // the values, in the stored dtype
  PlusOne,      // bf16(1 + w): a zero-centred norm in an MLX file
  QuantWeight,  // X.weight, U32 packed
  QuantScales,  // X.scales, BF16
  QuantBiases,  // X.biases, BF16
};

struct StoredTensor {
  formats::TensorEntry entry;  // name, dtype and shape as written
  std::size_t weight = 0;      // index of the WeightSpec it is made from
  StoredPart part = StoredPart::Values;
  int bits = 0;                // quantized parts only
};

struct StorageOptions {
  bool f32 = false;  // every tensor F32 (exact upcast of the BF16 values); else BF16 as released
  Quantization quantization = Quantization::None;  // MLX layout when not None (BF16 only)
};

// The stored tensors of `weights`, in weight order. The MLX layout applies only to backbone weights
// (names starting with `model.language_model.` or `lm_head.`).
std::vector<StoredTensor> stored_tensors(const std::vector<WeightSpec>& weights, const StorageOptions& options);

// Bytes of one row (WeightSpec::rows() rows per tensor).
std::size_t stored_row_bytes(const StoredTensor& t, const WeightSpec& w);

// The values of rows [row_begin, row_end) of `w` as the model holds them (rounded to bf16 unless the
// release keeps the tensor in F32), row-major into `out`.
void weight_values(const WeightSpec& w, uint64_t seed, int64_t row_begin, int64_t row_end, float* out);

// Writes rows [row_begin, row_end) of stored tensor `t` (made from `w`) to `out`
// ((row_end − row_begin) · stored_row_bytes() bytes).
void fill_rows(const StoredTensor& t, const WeightSpec& w, uint64_t seed, int64_t row_begin, int64_t row_end,
               uint8_t* out);

// Rows [row_begin, row_end) of both X.scales and X.biases of a quantized module from one quantization
// pass (what fill_rows() gives for each of them).
void fill_scales_and_biases(const WeightSpec& w, int bits, uint64_t seed, int64_t row_begin, int64_t row_end,
                            uint8_t* scales, uint8_t* biases);

}  // namespace verdict::modelgen
