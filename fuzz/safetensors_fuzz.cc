// libFuzzer target: raw bytes as a safetensors file. Parsing may only fail with verdict::Error; on
// success every float tensor is converted to fp32 and every MLX-looking triple is dequantized (bounded).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/convert.h"
#include "formats/mlx_quant.h"
#include "formats/safetensors.h"

namespace {

constexpr int64_t kMaxConvertedValues = int64_t{1} << 22;

bool is_float(verdict::DType t) {
  return t == verdict::DType::F32 || t == verdict::DType::F16 || t == verdict::DType::BF16 ||
         t == verdict::DType::F64;
}

volatile float g_sink;

void exercise(const verdict::formats::SafetensorsHeader& header) {
  using namespace verdict::formats;
  int64_t budget = kMaxConvertedValues;
  std::map<std::string, const TensorView*> by_name;
  for (const TensorView& t : header.tensors) {
    by_name[t.name] = &t;
    if (!is_float(t.dtype) || t.numel() > budget) continue;
    budget -= t.numel();
    const std::vector<float> v = to_f32(t);
    if (!v.empty()) g_sink = v.front() + v.back();
  }
  for (const auto& [name, weight] : by_name) {
    const std::string module = quantized_module_name(name);
    if (module == name || name != module + ".weight") continue;
    const auto scales = by_name.find(module + ".scales");
    const auto biases = by_name.find(module + ".biases");
    if (scales == by_name.end() || biases == by_name.end()) continue;
    for (const QuantSpec spec : {QuantSpec{4, 64}, QuantSpec{8, 64}, QuantSpec{3, 32}, QuantSpec{6, 128}}) {
      try {
        const QuantizedTensor q = make_quantized(*weight, *scales->second, *biases->second, spec);
        if (q.rows == 0 || q.cols == 0 || q.cols > budget) continue;
        std::vector<float> row(static_cast<std::size_t>(q.cols));
        mlx_dequantize_row(q, q.rows - 1, row);
        g_sink = row.front() + static_cast<float>(mlx_unpack(q, 0, q.cols - 1));
        budget -= q.cols;
      } catch (const verdict::Error&) {
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    exercise(verdict::formats::parse_safetensors(data, size, "fuzz.safetensors"));
  } catch (const verdict::Error&) {
  }
  return 0;
}
