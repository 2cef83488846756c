#include "formats/checkpoint_summary.h"

#include <string_view>

#include "core/dtype.h"

namespace verdict::formats {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The module X when `name` is X.weight / X.scales / X.biases of a quantized triple in `store`.
std::optional<std::string> quantized_module(const TensorStore& store, const std::string& name) {
  if (!ends_with(name, ".weight") && !ends_with(name, ".scales") && !ends_with(name, ".biases"))
    return std::nullopt;
  std::string module = quantized_module_name(name);
  const TensorView* weight = store.find(module + ".weight");
  if (weight == nullptr || weight->dtype != DType::U32) return std::nullopt;
  if (!store.contains(module + ".scales") || !store.contains(module + ".biases")) return std::nullopt;
  return module;
}

}  // namespace

std::string quant_format_name(QuantSpec spec) {
  return "mlx-q" + std::to_string(spec.bits) + "g" + std::to_string(spec.group_size);
}

CheckpointSummary summarize_checkpoint(const TensorStore& store,
                                       const std::optional<QuantizationConfig>& quantization) {
  CheckpointSummary out;
  for (const auto& [name, view] : store.tensors()) {
    ++out.dtype_tensors[std::string(dtype_name(view.dtype))];
    out.stored_bytes += view.nbytes;

    const auto module = quantization ? quantized_module(store, name) : std::nullopt;
    if (module && !ends_with(name, ".weight")) continue;  // folded into X.weight
    TensorSummary s;
    s.name = name;
    if (module) {
      const TensorView& scales = store.get(*module + ".scales");
      const TensorView& biases = store.get(*module + ".biases");
      const QuantizedTensor q = make_quantized(view, scales, biases, quantization->spec_for(*module));
      s.format = quant_format_name(q.spec);
      s.shape = {q.rows, q.cols};
      s.params = q.rows * q.cols;
      s.stored_bytes = view.nbytes + scales.nbytes + biases.nbytes;
      s.quant = q.spec;
      out.quantized_params += s.params;
      ++out.quantized_modules;
    } else {
      s.format = std::string(dtype_name(view.dtype));
      s.shape = view.shape;
      s.params = view.numel();
      s.stored_bytes = view.nbytes;
    }
    out.total_params += s.params;
    out.format_params[s.format] += s.params;
    out.tensors.push_back(std::move(s));
  }
  return out;
}

}  // namespace verdict::formats
