#include "registry/model_spec.h"

#include <sys/stat.h>

#include <algorithm>

#include "core/error.h"
#include "core/mapped_file.h"
#include "registry/model_source.h"

namespace verdict::registry {
namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// Length of the UTF-8 sequence starting at s[i], 0 when invalid.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

bool name_is_valid(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  if (space(name.front()) || space(name.back())) return false;
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7F || c == '/') return false;
    const std::size_t n = utf8_sequence(name, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace

const char* kind_name(ModelKind kind) { return kind == ModelKind::kDecision ? "decision" : "chat"; }

bool is_checkpoint_dir(const std::string& dir) {
  if (is_gguf_model(dir)) return true;  // a llama.cpp qwen35 GGUF file (docs/gguf.md)
  if (!is_dir(dir)) return false;
  // A decision model whose backbone is a .gguf file beside the joint head (backbone_path).
  if (!file_exists(dir + "/config.json"))
    return detect_kind(dir) == ModelKind::kDecision && !gguf_files_in(dir).empty();
  if (file_exists(dir + "/model.safetensors") || file_exists(dir + "/model.safetensors.index.json")) return true;
  for (const std::string& name : list_folder(dir))
    if (name.ends_with(".safetensors") && name != "joint_head.safetensors") return true;
  return false;
}

ModelKind detect_kind(const std::string& dir) {
  return file_exists(dir + "/joint_head.safetensors") && file_exists(dir + "/joint_head_config.json")
             ? ModelKind::kDecision
             : ModelKind::kChat;
}

void check_model_name(std::string_view name) {
  if (!name_is_valid(name))
    throw Error("'" + std::string(name) +
                "' is not a usable model name (1–128 bytes of UTF-8 without '/', control characters or "
                "surrounding whitespace)");
}

ModelSpec model_from_flag(std::string_view value) {
  ModelSpec spec;
  const std::size_t eq = value.find('=');
  // A path may itself contain '='; only a NAME without '/' before it counts as a name.
  if (eq != std::string_view::npos && value.substr(0, eq).find('/') == std::string_view::npos) {
    spec.name = std::string(value.substr(0, eq));
    spec.path = strip_trailing_slashes(std::string(value.substr(eq + 1)));
  } else {
    spec.path = strip_trailing_slashes(std::string(value));
    const std::size_t slash = spec.path.find_last_of('/');
    spec.name = slash == std::string::npos ? spec.path : spec.path.substr(slash + 1);
    if (is_gguf_model(spec.path)) spec.name = spec.name.substr(0, spec.name.size() - 5);  // without ".gguf"
  }
  check_model_name(spec.name);
  if (spec.path.empty() || !is_checkpoint_dir(spec.path))
    throw Error("--model " + std::string(value) + ": '" + spec.path +
                "' is not a checkpoint folder (config.json and *.safetensors expected), a .gguf file, or a "
                "decision folder (joint head and one .gguf backbone)");
  spec.kind = detect_kind(spec.path);
  return spec;
}

std::vector<ModelSpec> scan_models_dir(const std::string& dir) {
  const std::string root = strip_trailing_slashes(dir);
  if (!is_dir(root)) throw Error("--models " + dir + ": not a folder");
  std::vector<ModelSpec> specs;
  for (const std::string& name : list_folder(root)) {
    const std::string path = root + "/" + name;
    if (!name_is_valid(name) || !is_checkpoint_dir(path)) continue;
    // A .gguf file is named as --model names it: without the extension.
    specs.push_back({is_gguf_model(path) ? name.substr(0, name.size() - 5) : name, path, detect_kind(path)});
  }
  return specs;
}

}  // namespace verdict::registry
