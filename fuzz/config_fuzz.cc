// libFuzzer target: raw bytes as config.json and as generation_config.json. Both parsers may only fail
// with verdict::Error (never a JSON library exception, a crash or a sanitizer report).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "formats/hf_config.h"

namespace {
volatile int64_t g_sink;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const verdict::formats::ModelConfig cfg = verdict::formats::parse_model_config(text, "config.json");
    const verdict::formats::TextConfig& t = cfg.text;
    g_sink = t.rotary_dim() + t.linear_conv_dim() + t.count(verdict::formats::LayerType::FullAttention);
    if (cfg.quantization) {
      for (const auto& [module, spec] : cfg.quantization->overrides)
        g_sink = cfg.quantization->spec_for(module).bits + spec.group_size;
    }
  } catch (const verdict::Error&) {
  }
  try {
    const verdict::formats::GenerationConfig g =
        verdict::formats::parse_generation_config(text, "generation_config.json");
    g_sink = static_cast<int64_t>(g.eos_token_ids.size());
  } catch (const verdict::Error&) {
  }
  return 0;
}
