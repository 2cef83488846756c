// Where the files of a checkpoint folder are, and what kind of model it holds.
#pragma once
#include <string>

namespace verdict::cli {

enum class ModelKind { Decision, Chat };

// "decision" when DIR holds joint_head.safetensors + joint_head_config.json, else "chat".
ModelKind detect_kind(const std::string& dir);
const char* kind_name(ModelKind kind);

// True when DIR's model.safetensors was written by `verdict make-model` (random weights: every
// answer or text the model produces is meaningless, and the commands that print them say so).
bool has_random_weights(const std::string& dir);

// DIR/tokenizer.json, or the path itself when it names a file. Throws verdict::Error if missing.
std::string tokenizer_path(const std::string& dir_or_file);

}  // namespace verdict::cli
