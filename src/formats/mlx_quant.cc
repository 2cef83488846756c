// Built with -ffp-contract=off (see CMakeLists.txt): `scale * q + bias` must stay a separate fp32
// multiply and add, as MLX evaluates it.
#include "formats/mlx_quant.h"

#include <cstring>
#include <string>

#include "core/dtype.h"
#include "core/error.h"

namespace verdict::formats {
namespace {

bool valid_bits(int bits) {
  return bits == 2 || bits == 3 || bits == 4 || bits == 5 || bits == 6 || bits == 8;
}
bool valid_group_size(int gs) { return gs == 32 || gs == 64 || gs == 128; }

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One scale or bias as fp32 (exact for all three dtypes).
float load_param(const uint8_t* base, int64_t index, DType dtype) {
  switch (dtype) {
    case DType::BF16: {
      uint16_t v;
      std::memcpy(&v, base + 2 * index, sizeof v);
      return bf16_to_f32(v);
    }
    case DType::F16: {
      uint16_t v;
      std::memcpy(&v, base + 2 * index, sizeof v);
      return f16_to_f32(v);
    }
    default: {
      float v;
      std::memcpy(&v, base + 4 * index, sizeof v);
      return v;
    }
  }
}

// The stored bytes must match the shape: views built by hand (not by parse_safetensors) are checked
// here so that the unpacking below cannot read past them.
void check_storage(const TensorView& t, const std::string& where, const char* role) {
  uint64_t n = 1;
  for (int64_t d : t.shape) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      throw Error(where + ": " + role + " shape " + shape_string(t.shape) + " is invalid");
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(n, dtype_size(t.dtype), &bytes) || bytes != t.nbytes || (bytes > 0 && t.data == nullptr))
    throw Error(where + ": " + role + " holds " + std::to_string(t.nbytes) + " bytes, shape " +
                shape_string(t.shape) + " needs " + std::to_string(bytes));
}

void check_row(const QuantizedTensor& q, int64_t row) {
  if (q.weight == nullptr || q.scales == nullptr || q.biases == nullptr)
    throw Error("mlx dequantize: empty QuantizedTensor");
  if (row < 0 || row >= q.rows)
    throw Error(q.weight->name + ": row " + std::to_string(row) + " out of range [0, " + std::to_string(q.rows) +
                ")");
}

}  // namespace

QuantSpec QuantizationConfig::spec_for(const std::string& module) const {
  const auto it = overrides.find(module);
  return it != overrides.end() ? it->second : global;
}

bool QuantizationConfig::is_unquantized(const std::string& module) const {
  for (const auto& m : unquantized)
    if (m == module) return true;
  return false;
}

std::string quantized_module_name(const std::string& tensor_name) {
  for (std::string_view suffix : {".weight", ".scales", ".biases"})
    if (ends_with(tensor_name, suffix)) return tensor_name.substr(0, tensor_name.size() - suffix.size());
  return tensor_name;
}

QuantizedTensor make_quantized(const TensorView& weight, const TensorView& scales, const TensorView& biases,
                               QuantSpec spec) {
  const std::string where = (weight.file.empty() ? std::string() : weight.file + ": ") + "quantized module '" +
                            quantized_module_name(weight.name) + "'";
  if (!valid_bits(spec.bits))
    throw Error(where + ": unsupported bits " + std::to_string(spec.bits) + " (expected 2, 3, 4, 5, 6 or 8)");
  if (!valid_group_size(spec.group_size))
    throw Error(where + ": unsupported group size " + std::to_string(spec.group_size) +
                " (expected 32, 64 or 128)");
  if (weight.dtype != DType::U32)
    throw Error(where + ": weight dtype " + std::string(dtype_name(weight.dtype)) + ", expected U32");
  if (weight.shape.size() != 2)
    throw Error(where + ": weight shape " + shape_string(weight.shape) + " is not 2-D");
  if (scales.dtype != DType::BF16 && scales.dtype != DType::F16 && scales.dtype != DType::F32)
    throw Error(where + ": scales dtype " + std::string(dtype_name(scales.dtype)) + ", expected BF16, F16 or F32");
  if (biases.dtype != scales.dtype)
    throw Error(where + ": biases dtype " + std::string(dtype_name(biases.dtype)) + " differs from scales dtype " +
                std::string(dtype_name(scales.dtype)));
  if (scales.shape.size() != 2)
    throw Error(where + ": scales shape " + shape_string(scales.shape) + " is not 2-D");
  if (biases.shape != scales.shape)
    throw Error(where + ": biases shape " + shape_string(biases.shape) + " differs from scales shape " +
                shape_string(scales.shape));
  check_storage(weight, where, "weight");
  check_storage(scales, where, "scales");
  check_storage(biases, where, "biases");

  const int64_t rows = weight.shape[0];
  const int64_t packed_cols = weight.shape[1];
  const int64_t groups = scales.shape[1];
  if (scales.shape[0] != rows)
    throw Error(where + ": scales shape " + shape_string(scales.shape) + " has " + std::to_string(scales.shape[0]) +
                " rows, weight " + shape_string(weight.shape) + " has " + std::to_string(rows));
  int64_t cols = 0, packed_bits = 0, logical_bits = 0;
  if (__builtin_mul_overflow(groups, static_cast<int64_t>(spec.group_size), &cols) ||
      __builtin_mul_overflow(cols, static_cast<int64_t>(spec.bits), &logical_bits) ||
      __builtin_mul_overflow(packed_cols, int64_t{32}, &packed_bits))
    throw Error(where + ": shape too large");
  if (packed_bits != logical_bits)
    throw Error(where + ": weight " + shape_string(weight.shape) + " packs " + std::to_string(packed_cols) +
                "·32/" + std::to_string(spec.bits) + " values per row, but scales " + shape_string(scales.shape) +
                " at group size " + std::to_string(spec.group_size) + " imply " + std::to_string(cols) +
                " columns (bits " + std::to_string(spec.bits) + ")");

  QuantizedTensor q;
  q.weight = &weight;
  q.scales = &scales;
  q.biases = &biases;
  q.spec = spec;
  q.rows = rows;
  q.cols = cols;
  return q;
}

uint32_t mlx_unpack(const QuantizedTensor& q, int64_t row, int64_t col) {
  check_row(q, row);
  if (col < 0 || col >= q.cols)
    throw Error(q.weight->name + ": column " + std::to_string(col) + " out of range [0, " +
                std::to_string(q.cols) + ")");
  const int bits = q.spec.bits;
  const int64_t packed_cols = q.weight->shape[1];
  const uint8_t* words = q.weight->data + static_cast<std::size_t>(row * packed_cols) * 4;
  const uint64_t bit = static_cast<uint64_t>(col) * static_cast<uint64_t>(bits);
  const uint64_t w = bit / 32;
  const unsigned shift = static_cast<unsigned>(bit % 32);
  uint64_t v = load_u32(words + 4 * w) >> shift;
  // 3-, 5- and 6-bit values may continue in the next word (the row is one bit stream).
  if (shift + static_cast<unsigned>(bits) > 32) v |= static_cast<uint64_t>(load_u32(words + 4 * (w + 1))) << (32 - shift);
  return static_cast<uint32_t>(v & ((uint64_t{1} << bits) - 1));
}

void mlx_dequantize_row(const QuantizedTensor& q, int64_t row, std::span<float> out) {
  check_row(q, row);
  if (out.size() < static_cast<uint64_t>(q.cols))
    throw Error(q.weight->name + ": output row holds " + std::to_string(out.size()) + " values, need " +
                std::to_string(q.cols));
  const int bits = q.spec.bits;
  const int64_t gs = q.spec.group_size;
  const int64_t groups = q.scales->shape[1];
  const int64_t packed_cols = q.weight->shape[1];
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  const uint8_t* words = q.weight->data + static_cast<std::size_t>(row * packed_cols) * 4;
  const std::size_t param_size = dtype_size(q.scales->dtype);
  const uint8_t* scales = q.scales->data + static_cast<std::size_t>(row * groups) * param_size;
  const uint8_t* biases = q.biases->data + static_cast<std::size_t>(row * groups) * param_size;

  // Little-endian bit stream, least significant bit first: refill a 64-bit buffer one word at a time.
  uint64_t buffer = 0;
  int available = 0;
  const uint8_t* next_word = words;
  float* dst = out.data();
  for (int64_t g = 0; g < groups; ++g) {
    const float s = load_param(scales, g, q.scales->dtype);
    const float b = load_param(biases, g, q.biases->dtype);
    for (int64_t j = 0; j < gs; ++j) {
      if (available < bits) {
        buffer |= static_cast<uint64_t>(load_u32(next_word)) << available;
        next_word += 4;
        available += 32;
      }
      const uint32_t v = static_cast<uint32_t>(buffer & mask);
      buffer >>= bits;
      available -= bits;
      // A product rounded to fp32, then a sum rounded to fp32 (no FMA): MLX's arithmetic.
      const float scaled = s * static_cast<float>(v);
      *dst++ = scaled + b;
    }
  }
}

std::vector<float> mlx_dequantize(const QuantizedTensor& q) {
  if (q.weight == nullptr || q.scales == nullptr || q.biases == nullptr)
    throw Error("mlx dequantize: empty QuantizedTensor");
  int64_t total = 0;
  if (__builtin_mul_overflow(q.rows, q.cols, &total) || total < 0)
    throw Error(q.weight->name + ": dequantized size overflows");
  std::vector<float> out(static_cast<std::size_t>(total));
  for (int64_t r = 0; r < q.rows; ++r)
    mlx_dequantize_row(q, r, std::span<float>(out).subspan(static_cast<std::size_t>(r * q.cols),
                                                           static_cast<std::size_t>(q.cols)));
  return out;
}

}  // namespace verdict::formats
