// Where the files of a checkpoint folder are, and what kind of model it holds.
#pragma once
#include <string>

#include "tokenizer/tokenizer.h"

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

// The tokenizer of a model: DIR/tokenizer.json, a tokenizer.json file, or for a .gguf file the rule
// of formats::gguf_model_tokenizer_json (a sibling tokenizer.json, else the file's metadata).
tokenizer::Tokenizer load_tokenizer(const std::string& model);

}  // namespace verdict::cli
