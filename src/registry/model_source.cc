#include "registry/model_source.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/gguf.h"
#include "formats/gguf_qwen35.h"
#include "formats/gguf_tokenizer.h"
#include "formats/hf_config.h"
#include "formats/tensor_store.h"
#include "kernels/ops.h"
#include "models/qwen35/weights.h"

namespace verdict::registry {

bool is_gguf_model(const std::string& path) {
  struct stat st {};
  return formats::is_gguf_path(path) && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> list_folder(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) throw Error(dir + ": cannot read this folder");
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> gguf_files_in(const std::string& dir) {
  std::vector<std::string> files;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return files;
  for (const std::string& name : list_folder(dir)) {
    // Hidden files (e.g. macOS "._x.gguf") are not models.
    if (name.front() != '.' && is_gguf_model(dir + "/" + name)) files.push_back(dir + "/" + name);
  }
  return files;
}

std::string backbone_path(const std::string& path) {
  if (formats::is_gguf_path(path) || file_exists(path + "/config.json")) return path;
  const std::vector<std::string> files = gguf_files_in(path);
  if (files.size() > 1)
    throw Error(path + ": " + std::to_string(files.size()) +
                " .gguf files and no config.json; a model folder holds one backbone (keep one .gguf file)");
  return files.empty() ? path : files.front();
}

std::string model_config_path(const std::string& path) {
  const std::string backbone = backbone_path(path);
  return formats::is_gguf_path(backbone) ? backbone : backbone + "/config.json";
}

formats::ModelConfig read_model_config(const std::string& path) {
  const std::string backbone = backbone_path(path);
  if (formats::is_gguf_path(backbone)) return formats::gguf_qwen35_model_config(formats::GgufFile(backbone));
  return formats::load_model_config(backbone + "/config.json");
}

std::vector<std::pair<std::string, std::string>> unsupported_gguf_tensors(const formats::GgufFile& file,
                                                                         int64_t layers) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const formats::GgufTensor& t : file.tensors()) {
    bool text = t.name == "token_embd.weight" || t.name == "output.weight" || t.name == "output_norm.weight";
    if (t.name.starts_with("blk.")) {
      const std::size_t dot = t.name.find('.', 4);
      const std::string index = t.name.substr(4, dot == std::string::npos ? std::string::npos : dot - 4);
      text = !index.empty() && index.size() < 9 && std::all_of(index.begin(), index.end(), ::isdigit) &&
             std::stoll(index) < layers;
    }
    if (text && !models::qwen35::gguf_weight_type(t.type))
      out.emplace_back(t.name, std::string(formats::ggml_type_name(t.type)));
  }
  return out;
}

void check_gguf_tensor_types(const std::string& path, int64_t layers) {
  const std::string backbone = backbone_path(path);
  if (!formats::is_gguf_path(backbone)) return;
  const auto bad = unsupported_gguf_tensors(formats::GgufFile(backbone), layers);
  if (!bad.empty())
    throw Error(backbone + ": tensor " + bad.front().first + ": type " + bad.front().second + " is not supported (" +
                models::qwen35::gguf_weight_type_names() + ")");
}

tokenizer::Tokenizer read_model_tokenizer(const std::string& model_path) {
  // A decision folder's tokenizer.json sits beside its .gguf backbone, where the GGUF reader looks first.
  const std::string path = backbone_path(model_path);
  if (formats::is_gguf_path(path)) {
    std::string source;
    const std::string text = formats::gguf_model_tokenizer_json(path, &source);
    return tokenizer::Tokenizer::from_json(text, source);
  }
  return tokenizer::Tokenizer::from_file(path + "/tokenizer.json");
}

chat::ChatTemplate read_chat_template(const std::string& path, const tokenizer::Tokenizer& tok) {
  if (!formats::is_gguf_path(path)) return chat::ChatTemplate::from_model_dir(path);
  const formats::GgufFile file(path);
  const formats::GgufValue* tmpl = file.find("tokenizer.chat_template");
  if (tmpl == nullptr || tmpl->as_string() == nullptr) throw Error(path + ": no tokenizer.chat_template");
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  config["chat_template"] = *tmpl->as_string();
  for (const auto& [key, name] : {std::pair{"tokenizer.ggml.bos_token_id", "bos_token"},
                                  std::pair{"tokenizer.ggml.eos_token_id", "eos_token"},
                                  std::pair{"tokenizer.ggml.padding_token_id", "pad_token"}}) {
    const auto id = file.find_int(key);
    if (id && *id >= 0 && static_cast<std::size_t>(*id) < tok.vocab_size())
      config[name] = tok.id_to_token(static_cast<tokenizer::TokenId>(*id));
  }
  return chat::ChatTemplate::from_tokenizer_config(config, path, std::nullopt);
}

namespace {

// Bytes of `t` packed for the kernels, or 0 when the kernels would not pack it.
std::size_t packed_size(const formats::GgufTensor& t) {
  const auto type = models::qwen35::gguf_weight_type(t.type);
  if (!type || t.ne.size() != 2) return 0;
  kernels::WeightMatrix shape;
  shape.type = *type;
  shape.rows = t.ne[1];
  shape.cols = t.ne[0];
  return static_cast<std::size_t>(kernels::packed_bytes(shape, kernels::preferred_pack(shape)));
}

}  // namespace

std::size_t gguf_weight_bytes(const std::string& model_path, bool output_copy) {
  const std::string path = backbone_path(model_path);
  if (!formats::is_gguf_path(path)) return 0;
  const formats::GgufFile file(path);
  const bool packing = kernels::pack_enabled(/*by_default=*/true);
  const bool tied = file.find_tensor("output.weight") == nullptr;
  std::size_t total = 0;
  for (const formats::GgufTensor& t : file.tensors()) {
    // The layer matrices: every 2-D blk.* weight but the DeltaNet conv taps (a vector per channel).
    const bool layer_matrix = t.name.starts_with("blk.") && t.name.ends_with(".weight") && t.ne.size() == 2 &&
                              !t.name.ends_with(".ssm_conv1d.weight");
    const std::size_t packed = packing ? packed_size(t) : 0;
    if (t.name == "token_embd.weight") {
      total += t.nbytes + (output_copy && tied ? packed : 0);
    } else if ((layer_matrix || (t.name == "output.weight" && output_copy)) && packed > 0) {
      total += packed;
    } else {
      total += t.nbytes;
    }
  }
  return total;
}

std::size_t safetensors_weight_bytes(const std::string& dir, bool tied, bool output_copy) {
  if (is_gguf_model(backbone_path(dir))) return 0;
  const formats::TensorStore store = formats::TensorStore::open_dir(dir);
  const formats::ModelConfig model = formats::load_model_config(dir + "/config.json");
  const bool packing = kernels::pack_enabled(/*by_default=*/true);
  const auto fp32 = [](const formats::TensorView& t) { return static_cast<std::size_t>(t.numel()) * sizeof(float); };
  std::size_t total = 0;
  for (const auto& [name, t] : store.tensors()) {
    const bool is_weight = name.ends_with(".weight");
    const std::string module = is_weight ? name.substr(0, name.size() - 7) : "";
    if (!is_weight || t.shape.size() != 2 || name.find("conv1d") != std::string::npos) {
      total += fp32(t);  // vectors; MLX scales and biases (2-D, not .weight)
      continue;
    }
    kernels::WeightMatrix shape;
    shape.rows = t.shape[0];
    std::size_t stored = t.nbytes;
    if (model.quantization && store.contains(module + ".scales")) {
      const formats::QuantSpec spec = model.quantization->spec_for(module);
      shape.type = kernels::WeightType::MlxAffine;
      shape.bits = spec.bits;
      shape.group_size = spec.group_size;
      shape.cols = spec.bits > 0 ? t.shape[1] * 32 / spec.bits : 0;
    } else {
      shape.cols = t.shape[1];
      shape.type = t.dtype == DType::BF16 ? kernels::WeightType::BF16 : kernels::WeightType::F32;
      if (t.dtype != DType::BF16 && t.dtype != DType::F32) stored = fp32(t);  // converted at load
    }
    const std::size_t packed =
        packing ? static_cast<std::size_t>(kernels::packed_bytes(shape, kernels::preferred_pack(shape))) : 0;
    if (module.ends_with("embed_tokens")) {
      total += stored + (output_copy && tied ? packed : 0);
    } else if (module.ends_with("lm_head")) {
      total += output_copy && packed > 0 ? packed : stored;
    } else {
      total += packed > 0 ? packed : stored;
    }
  }
  return total;
}

}  // namespace verdict::registry
