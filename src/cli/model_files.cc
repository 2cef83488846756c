#include "cli/model_files.h"

#include <sys/stat.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/gguf.h"
#include "formats/safetensors.h"
#include "registry/model_source.h"

namespace verdict::cli {

ModelKind detect_kind(const std::string& dir) {
  return file_exists(dir + "/joint_head.safetensors") && file_exists(dir + "/joint_head_config.json")
             ? ModelKind::Decision
             : ModelKind::Chat;
}

const char* kind_name(ModelKind kind) { return kind == ModelKind::Decision ? "decision" : "chat"; }

bool has_random_weights(const std::string& dir) {
  const std::string path = dir + "/model.safetensors";
  if (!file_exists(path)) return false;
  const formats::SafetensorsFile file(path);
  const auto it = file.metadata().find("generator");
  return it != file.metadata().end() && it->second == "verdict make-model";
}

std::string tokenizer_path(const std::string& dir_or_file) {
  if (file_exists(dir_or_file)) return dir_or_file;
  const std::string path = dir_or_file + "/tokenizer.json";
  if (!file_exists(path)) throw Error(dir_or_file + ": no tokenizer.json in this folder");
  return path;
}

tokenizer::Tokenizer load_tokenizer(const std::string& model) {
  if (formats::is_gguf_path(model)) return registry::read_model_tokenizer(model);
  return tokenizer::Tokenizer::from_file(tokenizer_path(model));
}

}  // namespace verdict::cli
