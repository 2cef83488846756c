// Which models the server knows, from its flags: `--model PATH`, `--model NAME=PATH` and
// `--models DIR` (every subfolder holding a checkpoint is a model named after the folder). The kind
// is read from the files: a Clef decision checkpoint has joint_head.safetensors and
// joint_head_config.json next to the backbone; any other checkpoint is a chat model.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace verdict::registry {

enum class ModelKind { kDecision, kChat };

// "decision" or "chat".
const char* kind_name(ModelKind kind);

struct ModelSpec {
  std::string name;  // canonical name (what `model` matches)
  std::string path;  // checkpoint folder
  ModelKind kind = ModelKind::kDecision;
};

// True when `dir` holds a checkpoint: config.json plus model.safetensors, a sharded index or any
// *.safetensors file; or when it is a llama.cpp qwen35 .gguf file (a chat model; docs/gguf.md).
bool is_checkpoint_dir(const std::string& dir);
// Decision when the joint head files are present, else chat.
ModelKind detect_kind(const std::string& dir);

// `--model` value: "NAME=PATH", or "PATH" (named after its last path component, without ".gguf"). Throws
// verdict::Error when PATH holds no checkpoint or NAME is not a valid model name.
ModelSpec model_from_flag(std::string_view value);
// Every immediate subfolder of `dir` holding a checkpoint, sorted by name. Subfolders whose name is
// not a valid model name are skipped. Throws verdict::Error when `dir` cannot be read.
std::vector<ModelSpec> scan_models_dir(const std::string& dir);

// Throws verdict::Error unless `name` is a usable model name: 1–128 bytes of valid UTF-8, no
// control characters, no '/', no leading or trailing whitespace (requests are matched trimmed).
void check_model_name(std::string_view name);

}  // namespace verdict::registry
