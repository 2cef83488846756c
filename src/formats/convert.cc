#include "formats/convert.h"

#include <bit>
#include <cstring>
#include <string>

#include "core/dtype.h"
#include "core/error.h"

namespace verdict::formats {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swaps");

std::string describe(const TensorView& t) {
  return (t.file.empty() ? std::string() : t.file + ": ") + "tensor '" + t.name + "'";
}

// Element loads go through memcpy: tensor data sits at arbitrary byte offsets in the file, so it may be
// misaligned for its type.
template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

void to_f32(const TensorView& t, std::span<float> out) {
  const int64_t n = t.numel();
  if (n < 0 || static_cast<uint64_t>(n) != out.size())
    throw Error(describe(t) + ": to_f32 output holds " + std::to_string(out.size()) + " values, tensor has " +
                std::to_string(n));
  const std::size_t count = out.size();
  const std::size_t elem = dtype_size(t.dtype);
  if (t.nbytes / elem < count || t.nbytes != count * elem || (count > 0 && t.data == nullptr))
    throw Error(describe(t) + ": " + std::to_string(t.nbytes) + " bytes do not hold " + std::to_string(count) +
                " " + std::string(dtype_name(t.dtype)) + " values");
  const uint8_t* p = t.data;
  switch (t.dtype) {
    case DType::F32:
      if (count > 0) std::memcpy(out.data(), p, count * sizeof(float));
      return;
    case DType::BF16:
      for (std::size_t i = 0; i < count; ++i) out[i] = bf16_to_f32(load<uint16_t>(p + 2 * i));
      return;
    case DType::F16:
      for (std::size_t i = 0; i < count; ++i) out[i] = f16_to_f32(load<uint16_t>(p + 2 * i));
      return;
    case DType::F64:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<float>(load<double>(p + 8 * i));
      return;
    default:
      break;
  }
  throw Error(describe(t) + ": cannot convert dtype " + std::string(dtype_name(t.dtype)) +
              " to F32 (expected F32, F16, BF16 or F64)");
}

std::vector<float> to_f32(const TensorView& t) {
  switch (t.dtype) {
    case DType::F32:
    case DType::BF16:
    case DType::F16:
    case DType::F64:
      break;
    default:
      throw Error(describe(t) + ": cannot convert dtype " + std::string(dtype_name(t.dtype)) +
                  " to F32 (expected F32, F16, BF16 or F64)");
  }
  const int64_t n = t.numel();
  const std::size_t elem = dtype_size(t.dtype);
  if (n < 0 || static_cast<uint64_t>(n) > t.nbytes / elem)
    throw Error(describe(t) + ": " + std::to_string(t.nbytes) + " bytes do not hold " + std::to_string(n) +
                " " + std::string(dtype_name(t.dtype)) + " values");
  std::vector<float> out(static_cast<std::size_t>(n));
  to_f32(t, out);
  return out;
}

}  // namespace verdict::formats
