// MLX copies of generated checkpoints: the mlx-lm layout of the fixture copies, dequantization close to
// the BF16 original, the fixture invariants (bits, group size, negative scales, +1 folded, conv
// [C, K, 1]), and the backbone running on them.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backbone_check.h"
#include "core/dtype.h"
#include "core/mapped_file.h"
#include "formats/convert.h"
#include "formats/hf_config.h"
#include "formats/mlx_quant.h"
#include "formats/tensor_store.h"
#include "scratch.h"
#include "support/fixtures.h"

namespace verdict::modelgen {
namespace {

using testing::generated;
using testing::options;

std::map<std::string, std::pair<DType, std::vector<int64_t>>> layout_of(const std::string& file) {
  std::map<std::string, std::pair<DType, std::vector<int64_t>>> out;
  const auto store = formats::TensorStore::open_files({file});
  for (const auto& [name, t] : store.tensors()) out[name] = {t.dtype, t.shape};
  return out;
}

std::string hf_name(const std::string& mlx) {
  const std::string prefix = "language_model.model.";
  if (mlx.starts_with(prefix)) return "model.language_model." + mlx.substr(prefix.size());
  return mlx.substr(std::string("language_model.").size());
}

Quantization quantization(int bits) {
  return bits == 4 ? Quantization::Mlx4 : bits == 6 ? Quantization::Mlx6 : Quantization::Mlx8;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

class GeneratedMlx : public ::testing::TestWithParam<int> {};

// The fixtures have 4- and 8-bit copies; a 6-bit copy has the 4-bit one's layout with 1.5 times the words.
TEST_P(GeneratedMlx, HasTheLayoutOfTheFixtureCopy) {
  const int bits = GetParam();
  const Quantization q = quantization(bits);
  const std::string& dir = generated(options("qwen35-tiny", 7, false, q));
  const std::string fixture = ::verdict::testing::fixture(bits == 8 ? "qwen35-tiny-mlx8" : "qwen35-tiny-mlx4");
  auto expected_layout = layout_of(fixture + "/model.safetensors");
  for (auto& [name, entry] : expected_layout)
    if (entry.first == DType::U32) entry.second[1] = entry.second[1] * bits / (bits == 8 ? 8 : 4);
  EXPECT_EQ(layout_of(dir + "/model.safetensors"), expected_layout);
  const std::string config = read_text_file(dir + "/config.json");
  std::string expected = read_text_file(fixture + "/config.json");
  const std::string mtp1 = "\"mtp_num_hidden_layers\": 1";
  expected.replace(expected.find(mtp1), mtp1.size(), "\"mtp_num_hidden_layers\": 0");
  if (bits == 6) replace_all(expected, "\"bits\": 4", "\"bits\": 6");
  EXPECT_EQ(config, expected);
  const formats::ModelConfig parsed = formats::load_model_config(dir + "/config.json");
  ASSERT_TRUE(parsed.quantization.has_value());
  EXPECT_EQ(parsed.quantization->global, (formats::QuantSpec{bits, 64}));
  EXPECT_EQ(formats::SafetensorsFile(dir + "/model.safetensors").metadata().at("format"), "mlx");
  if (bits == 4) {  // untied: language_model.lm_head.{weight,scales,biases}
    EXPECT_EQ(layout_of(generated(options("qwen35-small", 7, false, q)) + "/model.safetensors"),
              layout_of(::verdict::testing::fixture("qwen35-small-mlx4/model.safetensors")));
  }
}

TEST_P(GeneratedMlx, DequantizesCloseToTheBf16OriginalWithMlxInvariants) {
  const int bits = GetParam();
  const Quantization q = quantization(bits);
  const auto mlx = formats::TensorStore::open_dir(generated(options("qwen35-tiny", 7, false, q)));
  const auto hf = formats::TensorStore::open_dir(generated(options("qwen35-tiny", 7)));
  const float top = static_cast<float>((1 << bits) - 1);
  int modules = 0;
  std::size_t scales = 0, negative = 0;
  for (const auto& [name, t] : mlx.tensors()) {
    const std::string original = hf_name(name);
    if (name.ends_with(".scales") || name.ends_with(".biases")) continue;
    if (t.dtype == DType::U32) {
      const std::string module = name.substr(0, name.size() - 7);
      const auto qt = formats::make_quantized(t, mlx.get(module + ".scales"), mlx.get(module + ".biases"), {bits, 64});
      const std::vector<float> deq = formats::mlx_dequantize(qt);
      const std::vector<float> ref = formats::to_f32(hf.get(original));
      const std::vector<float> s = formats::to_f32(mlx.get(module + ".scales"));
      ASSERT_EQ(deq.size(), ref.size()) << name;
      const std::vector<float> b = formats::to_f32(mlx.get(module + ".biases"));
      // Half a step, plus the bf16 rounding of the stored scale (≤ 2⁻⁸ relative, times the level); the
      // far end of a group may be clamped by up to one step (MLX's zero-point adjustment).
      for (std::size_t i = 0; i < ref.size(); ++i) {
        const float step = std::abs(s[i / 64]);
        const float level = std::round((deq[i] - b[i / 64]) / s[i / 64]);
        const float bound = (level >= top ? 1.0f : 0.5f) * step * 1.01f + step * level / 256.0f + 1e-7f;
        ASSERT_LE(std::abs(deq[i] - ref[i]), bound) << name << " element " << i;
      }
      for (float v : s) negative += v < 0;
      scales += s.size();
      ++modules;
    } else if (name.ends_with("conv1d.weight")) {
      EXPECT_EQ(t.shape.back(), 1) << name;  // [C, K, 1]
      EXPECT_EQ(formats::to_f32(t), formats::to_f32(hf.get(original))) << name;
    } else if (name.ends_with("layernorm.weight") || name.ends_with("q_norm.weight") ||
               name.ends_with("k_norm.weight") || name == "language_model.model.norm.weight") {
      const std::vector<float> w = formats::to_f32(hf.get(original)), folded = formats::to_f32(t);
      for (std::size_t i = 0; i < w.size(); ++i) EXPECT_EQ(folded[i], bf16_to_f32(f32_to_bf16(1.0f + w[i]))) << name;
    } else if (name.ends_with("A_log")) {
      EXPECT_EQ(t.dtype, DType::F32);
      EXPECT_EQ(formats::to_f32(t), formats::to_f32(hf.get(original)));
    } else {  // dt_bias, linear_attn.norm.weight: cast to bf16, not shifted
      EXPECT_EQ(t.dtype, DType::BF16) << name;
      const std::vector<float> w = formats::to_f32(hf.get(original)), cast = formats::to_f32(t);
      for (std::size_t i = 0; i < w.size(); ++i) EXPECT_EQ(cast[i], bf16_to_f32(f32_to_bf16(w[i]))) << name;
    }
  }
  EXPECT_EQ(modules, 1 + 3 * 8 + 7);  // embed_tokens (tied), 8 per DeltaNet layer, 7 per attention layer
  const double frac = static_cast<double>(negative) / static_cast<double>(scales);
  EXPECT_GT(frac, 0.3);
  EXPECT_LT(frac, 0.7);
}

TEST_P(GeneratedMlx, BackboneRunsOnTheQuantizedCopy) {
  const Quantization q = quantization(GetParam());
  for (const char* preset : {"qwen35-tiny", "qwen35-small"}) {
    const auto s = testing::run_backbone(generated(options(preset, 7, false, q)), "The order has not arrived yet.");
    EXPECT_TRUE(s.finite) << preset;
    EXPECT_GT(s.min_row_rms, 0.5) << preset;
    EXPECT_LT(s.max_row_rms, 2.0) << preset;
  }
}

// Files do not depend on how rows are split into blocks and threads (the scales kept between X.biases
// and X.scales included).
TEST_P(GeneratedMlx, BytesDoNotDependOnBlocksOrThreads) {
  const Quantization q = quantization(GetParam());
  GenerateOptions o = options("qwen35-small", 7, false, q);
  o.threads = 3;
  o.block_values = 100000;  // the large matrices span two blocks, each split over three threads
  testing::ScratchDir dir;
  write_model(plan_model(o), dir.path());
  EXPECT_TRUE(testing::read_bytes(dir.file("model.safetensors")) ==
              testing::read_bytes(generated(options("qwen35-small", 7, false, q)) + "/model.safetensors"));
}

INSTANTIATE_TEST_SUITE_P(Bits, GeneratedMlx, ::testing::Values(4, 6, 8));

}  // namespace
}  // namespace verdict::modelgen
