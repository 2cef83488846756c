// `verdict make-model`: random-weight checkpoints in the exact release layouts.
//
// A checkpoint directory gets config.json, generation_config.json, tokenizer.json, tokenizer_config.json
// and model.safetensors, plus joint_head.safetensors and joint_head_config.json for decision presets.
// Weights are a pure function of (seed, tensor name, element index) (modelgen/random.h): the same options
// always give byte-identical files. model.safetensors is streamed tensor by tensor in row blocks
// generated on several threads, so memory use stays at a few blocks whatever the model size. Every file
// is written under a temporary name and renamed when complete, model.safetensors last: a directory that
// holds model.safetensors is complete.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "formats/safetensors_writer.h"
#include "modelgen/presets.h"
#include "modelgen/stored_tensors.h"
#include "modelgen/token_layout.h"
#include "modelgen/weight_specs.h"

namespace verdict::modelgen {

struct GenerateOptions {
  std::string preset;
  uint64_t seed = 0;
  bool f32 = false;  // every tensor F32; default BF16 (A_log and linear_attn.norm.weight F32, as released)
  Quantization quantization = Quantization::None;
  int threads = 0;   // 0: one per hardware thread
  // Values generated per block (all threads together); 0: 8 Mi. The files do not depend on it (nor on
  // the thread count): tests vary both to show it.
  int64_t block_values = 0;
};

// One safetensors file of the checkpoint.
struct TensorFile {
  std::string name;                    // "model.safetensors", "joint_head.safetensors"
  std::vector<WeightSpec> weights;     // what it is made from (Hugging Face layout)
  std::vector<StoredTensor> stored;    // in data order
  formats::SafetensorsLayout layout;
};

struct ModelPlan {
  const Preset* preset = nullptr;
  GenerateOptions options;
  TokenLayout tokens;
  TensorFile model;
  std::optional<TensorFile> head;
  int64_t backbone_params = 0;  // logical parameters (quantized matrices count unpacked)
  int64_t head_params = 0;

  uint64_t tensor_bytes() const;  // both safetensors files, headers included
};

// Validates the options (unknown preset: UsageError; F32 with MLX: Error) and lays out every file.
ModelPlan plan_model(const GenerateOptions& options);

// Writes the checkpoint into `dir` (created if needed). Its files replace those already there; files a
// loader would also read but this checkpoint lacks (joint_head.* for a chat preset,
// model.safetensors.index.json, chat_template.jinja) are removed.
void write_model(const ModelPlan& plan, const std::string& dir);

// The dry-run report: every tensor (file, name, dtype, shape, bytes) and the totals.
std::string describe_plan(const ModelPlan& plan);

// Writes the checkpoint into `dir` unless `dir` already holds a complete one (model.safetensors and
// config.json present). For caches: benchmarks, the demo model.
void ensure_model(const GenerateOptions& options, const std::string& dir);

}  // namespace verdict::modelgen
