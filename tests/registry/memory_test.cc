// The budget's weight estimate of a safetensors checkpoint against what the loaded model holds.
#include <gtest/gtest.h>

#include <string>

#include "formats/tensor_store.h"
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

TEST(MemoryEstimate, AGgufModelIsNotASafetensorsCheckpoint) {
  EXPECT_EQ(safetensors_weight_bytes(fixture("qwen35-tiny/model-f32.gguf"), true, true), 0u);
}

}  // namespace
}  // namespace verdict::registry
