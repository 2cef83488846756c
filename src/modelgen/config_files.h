// The JSON files of a generated checkpoint, laid out as the release (and the fixture checkpoints) lay
// them out: config.json (`Qwen3_5ForConditionalGeneration`, text settings nested in `text_config`, a
// placeholder `vision_config`, keys sorted, MLX `quantization` + `quantization_config` blocks appended),
// generation_config.json and joint_head_config.json. Two-space indentation and a final newline.
#pragma once
#include <string>

#include "modelgen/presets.h"
#include "modelgen/stored_tensors.h"
#include "modelgen/token_layout.h"

namespace verdict::modelgen {

std::string model_config_json(const BackboneShape& shape, const TokenLayout& tokens, bool f32,
                              Quantization quantization);
std::string generation_config_json(const TokenLayout& tokens);
std::string head_config_json(const HeadShape& head);

}  // namespace verdict::modelgen
