#include "modelgen/stored_tensors.h"

#include <cstring>
#include <span>
#include <string_view>

#include "core/dtype.h"
#include "core/error.h"
#include "modelgen/mlx_quantizer.h"

namespace verdict::modelgen {
namespace {

constexpr std::string_view kHfPrefix = "model.language_model.";
constexpr std::string_view kMlxPrefix = "language_model.model.";

bool is_backbone(const std::string& name) {
  return name.starts_with(kHfPrefix) || name.starts_with("lm_head.");
}

std::string mlx_name(const std::string& name) {
  if (name.starts_with(kHfPrefix)) return std::string(kMlxPrefix) + name.substr(kHfPrefix.size());
  return "language_model." + name;  // lm_head.weight
}

bool quantizable(const WeightSpec& w) {
  return (w.role == WeightRole::Linear || w.role == WeightRole::Embedding) && w.shape.size() == 2 &&
         w.shape[1] % kMlxGroupSize == 0;
}

void store_values(const float* values, std::size_t n, DType dtype, uint8_t* out) {
  if (dtype == DType::F32) {
    std::memcpy(out, values, n * sizeof(float));
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const uint16_t b = f32_to_bf16(values[i]);
    std::memcpy(out + 2 * i, &b, 2);
  }
}

}  // namespace

int quantization_bits(Quantization q) {
  switch (q) {
    case Quantization::None:
      return 0;
    case Quantization::Mlx4:
      return 4;
    case Quantization::Mlx6:
      return 6;
    case Quantization::Mlx8:
      return 8;
  }
  return 0;
}

std::vector<StoredTensor> stored_tensors(const std::vector<WeightSpec>& weights, const StorageOptions& options) {
  const int bits = quantization_bits(options.quantization);
  if (bits != 0 && options.f32) throw Error("MLX quantization needs BF16 weights, not F32");
  std::vector<StoredTensor> out;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const WeightSpec& w = weights[i];
    if (bits == 0 || !is_backbone(w.name)) {
      const DType dtype = options.f32 || w.f32_in_release ? DType::F32 : DType::BF16;
      out.push_back({{w.name, dtype, w.shape}, i, StoredPart::Values, 0});
      continue;
    }
    const std::string name = mlx_name(w.name);
    if (quantizable(w)) {
      const std::string module = name.substr(0, name.size() - std::string_view(".weight").size());
      const int64_t rows = w.shape[0], cols = w.shape[1];
      out.push_back({{module + ".weight", DType::U32, {rows, cols * bits / 32}}, i, StoredPart::QuantWeight, bits});
      out.push_back({{module + ".scales", DType::BF16, {rows, cols / kMlxGroupSize}}, i, StoredPart::QuantScales, bits});
      out.push_back({{module + ".biases", DType::BF16, {rows, cols / kMlxGroupSize}}, i, StoredPart::QuantBiases, bits});
    } else if (w.role == WeightRole::ZeroCentredNorm) {
      out.push_back({{name, DType::BF16, w.shape}, i, StoredPart::PlusOne, 0});
    } else if (w.role == WeightRole::Conv) {
      // [C, 1, K] -> [C, K, 1]: the same elements in the same order.
      out.push_back({{name, DType::BF16, {w.shape[0], w.shape[2], 1}}, i, StoredPart::Values, 0});
    } else {
      out.push_back({{name, w.f32_in_release && w.name.ends_with("A_log") ? DType::F32 : DType::BF16, w.shape},
                     i, StoredPart::Values, 0});
    }
  }
  return out;
}

std::size_t stored_row_bytes(const StoredTensor& t, const WeightSpec& w) {
  return t.entry.nbytes() / static_cast<std::size_t>(w.rows());
}

void weight_values(const WeightSpec& w, uint64_t seed, int64_t row_begin, int64_t row_end, float* out) {
  const TensorRng rng(seed, w.name);
  const int64_t cols = w.cols();
  const uint64_t first = static_cast<uint64_t>(row_begin * cols);
  const std::size_t n = static_cast<std::size_t>((row_end - row_begin) * cols);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = w.init.value(rng, first + i);
    out[i] = w.f32_in_release ? v : bf16_to_f32(f32_to_bf16(v));
  }
}

namespace {

// Quantizes rows [row_begin, row_end) of `w`; each output may be null.
void quantize_rows(const WeightSpec& w, int bits, uint64_t seed, int64_t row_begin, int64_t row_end, uint8_t* packed_out,
                   uint8_t* scales_out, uint8_t* biases_out) {
  const std::size_t cols = static_cast<std::size_t>(w.cols());
  const std::size_t groups = cols / kMlxGroupSize;
  std::vector<float> values(static_cast<std::size_t>(row_end - row_begin) * cols);
  weight_values(w, seed, row_begin, row_end, values.data());
  std::vector<uint32_t> packed(cols * static_cast<std::size_t>(bits) / 32);
  std::vector<uint16_t> scales(groups), biases(groups);
  for (std::size_t r = 0; r < static_cast<std::size_t>(row_end - row_begin); ++r) {
    mlx_quantize_row(std::span<const float>(values.data() + r * cols, cols), bits, kMlxGroupSize, packed, scales,
                     biases);
    if (packed_out != nullptr) std::memcpy(packed_out + r * packed.size() * 4, packed.data(), packed.size() * 4);
    if (scales_out != nullptr) std::memcpy(scales_out + r * groups * 2, scales.data(), groups * 2);
    if (biases_out != nullptr) std::memcpy(biases_out + r * groups * 2, biases.data(), groups * 2);
  }
}

}  // namespace

void fill_rows(const StoredTensor& t, const WeightSpec& w, uint64_t seed, int64_t row_begin, int64_t row_end,
               uint8_t* out) {
  switch (t.part) {
    case StoredPart::Values:
    case StoredPart::PlusOne: {
      const std::size_t n = static_cast<std::size_t>((row_end - row_begin) * w.cols());
      std::vector<float> values(n);
      weight_values(w, seed, row_begin, row_end, values.data());
      if (t.part == StoredPart::PlusOne)
        for (float& v : values) v = 1.0f + v;  // one fp32 add of two bf16 values, rounded to bf16 once
      store_values(values.data(), n, t.part == StoredPart::PlusOne ? DType::BF16 : t.entry.dtype, out);
      return;
    }
    case StoredPart::QuantWeight:
      quantize_rows(w, t.bits, seed, row_begin, row_end, out, nullptr, nullptr);
      return;
    case StoredPart::QuantScales:
      quantize_rows(w, t.bits, seed, row_begin, row_end, nullptr, out, nullptr);
      return;
    case StoredPart::QuantBiases:
      quantize_rows(w, t.bits, seed, row_begin, row_end, nullptr, nullptr, out);
      return;
  }
}

void fill_scales_and_biases(const WeightSpec& w, int bits, uint64_t seed, int64_t row_begin, int64_t row_end,
                            uint8_t* scales, uint8_t* biases) {
  quantize_rows(w, bits, seed, row_begin, row_end, nullptr, scales, biases);
}

}  // namespace verdict::modelgen
