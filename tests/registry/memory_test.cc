// The budget's weight estimate of a safetensors checkpoint against what the loaded model holds.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "formats/tensor_store.h"
#include "modelgen/generator.h"
#include "models/qwen35/backbone.h"
#include "registry/model_source.h"
#include "support/fixtures.h"
#include "support/scoped_env.h"

namespace verdict::registry {
namespace {

using verdict::testing::fixture;

// Bytes of the fp32 copies the loader makes of everything but the matrices (and their MLX scales and
// biases, which Weights::held_bytes counts): norms, conv taps, gate vectors.
std::size_t vector_bytes(const std::string& dir) {
  std::size_t total = 0;
  const formats::TensorStore store = formats::TensorStore::open_dir(dir);
  for (const auto& [name, t] : store.tensors()) {
    const bool matrix = name.ends_with(".weight") && t.shape.size() == 2 && name.find("conv1d") == std::string::npos;
    if (!matrix && !name.ends_with(".scales") && !name.ends_with(".biases"))
      total += static_cast<std::size_t>(t.numel()) * sizeof(float);
  }
  return total;
}

// For BF16/F32 checkpoints, MLX 4- and 8-bit ones (packed, with fp32 scales and biases beside) and a Clef
// decision model (the head not counted here), with and without the chat models' packed output copy, in
// the default packed mode and unpacked.
TEST(MemoryEstimate, ASafetensorsCheckpointsEstimateIsWhatTheLoadedModelHolds) {
  for (const char* packing : {static_cast<const char*>(nullptr), "0"}) {
    const verdict::testing::ScopedEnv mode("VERDICT_PACK", packing);
    for (const char* name : {"qwen35-tiny", "qwen35-small", "qwen35-tiny-mlx4", "qwen35-small-mlx4", "qwen35-tiny-mlx8",
                             "clef-tiny/bf16"}) {
      const std::string dir = fixture(name);
      for (const bool output_copy : {false, true}) {
        models::qwen35::LoadOptions load;
        load.pack_output = output_copy;
        const auto model = models::qwen35::Backbone::load(dir, load);
        EXPECT_EQ(safetensors_weight_bytes(dir, model->config().tied, output_copy),
                  model->weights().held_bytes() + vector_bytes(dir))
            << name << (packing ? " unpacked" : " packed") << (output_copy ? ", with" : ", without")
            << " the output copy";
      }
    }
  }
}

// MLX 6-bit (the width of some Clef conversions; the fixtures have 4 and 8): generated, packed into 6-bit
// Int8 records (the packed model holds a different number of bytes than the unpacked one) and estimated.
TEST(MemoryEstimate, AnMlx6CheckpointIsPackedAndEstimated) {
  std::string dir = (std::filesystem::temp_directory_path() / "verdict-memory-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  modelgen::GenerateOptions options;
  options.preset = "qwen35-small";
  options.seed = 3;
  options.quantization = modelgen::Quantization::Mlx6;
  modelgen::write_model(modelgen::plan_model(options), dir);
  std::size_t held[2] = {};
  for (int packed = 0; packed < 2; ++packed) {
    const verdict::testing::ScopedEnv mode("VERDICT_PACK", packed ? "1" : "0");
    models::qwen35::LoadOptions load;
    load.pack_output = true;
    const auto model = models::qwen35::Backbone::load(dir, load);
    held[packed] = model->weights().held_bytes();
    EXPECT_EQ(safetensors_weight_bytes(dir, model->config().tied, true), held[packed] + vector_bytes(dir))
        << (packed ? "packed" : "unpacked");
  }
  EXPECT_NE(held[0], held[1]);
  std::filesystem::remove_all(dir);
}

TEST(MemoryEstimate, AGgufModelIsNotASafetensorsCheckpoint) {
  EXPECT_EQ(safetensors_weight_bytes(fixture("qwen35-tiny/model-f32.gguf"), true, true), 0u);
}

}  // namespace
}  // namespace verdict::registry
