#include "cli/model_summary.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "core/mapped_file.h"
#include "decision/head.h"
#include "formats/checkpoint_summary.h"
#include "formats/ggml_type.h"
#include "formats/gguf.h"
#include "formats/gguf_qwen35.h"
#include "formats/tensor_store.h"
#include "models/qwen35/weights.h"
#include "registry/model_source.h"
#include "tokenizer/tokenizer.h"

namespace verdict::cli {
namespace {

std::optional<std::string> token_string(const Json& cfg, const char* key) {
  if (!cfg.contains(key)) return std::nullopt;
  const Json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return std::nullopt;
}

TokenizerSummary summarize_tokens(const tokenizer::Tokenizer& tok) {
  TokenizerSummary t;
  t.vocab_size = tok.vocab_size();
  t.model_vocab_size = tok.model_vocab_size();
  t.added_tokens = tok.added_tokens().size();
  t.normalizer = tok.normalizer_name();
  t.pre_tokenizer = tok.pre_tokenizer_name();
  t.model = tok.model_type();
  t.decoder = tok.decoder_name();
  for (const auto& a : tok.added_tokens())
    if (a.special) t.special_tokens.emplace_back(a.content, a.id);
  return t;
}

TokenizerSummary summarize_tokenizer(const std::string& dir) {
  TokenizerSummary t = summarize_tokens(tokenizer::Tokenizer::from_file(dir + "/tokenizer.json"));
  const std::string cfg_path = dir + "/tokenizer_config.json";
  if (file_exists(cfg_path)) {
    const Json cfg = load_json_file(cfg_path);
    if (cfg.is_object()) {
      t.eos_token = token_string(cfg, "eos_token");
      t.bos_token = token_string(cfg, "bos_token");
      t.pad_token = token_string(cfg, "pad_token");
      t.chat_template = cfg.contains("chat_template");
    }
  }
  if (file_exists(dir + "/chat_template.jinja")) t.chat_template = true;
  return t;
}

HeadSummary summarize_head(const std::string& dir) {
  HeadSummary h;
  h.config = load_json_file(dir + "/joint_head_config.json");
  const auto store = formats::TensorStore::open_files({dir + "/joint_head.safetensors"});
  const auto counts = formats::summarize_checkpoint(store);
  h.parameters = counts.total_params;
  h.tensors = store.tensors().size();
  h.bytes = counts.stored_bytes;
  h.loaded_bytes = decision::JointHead::loaded_bytes(dir + "/joint_head.safetensors");
  h.dtypes = counts.dtype_tensors;
  return h;
}

std::string mib(std::size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string dtype_list(const std::map<std::string, int64_t>& dtypes) {
  std::string out;
  for (const auto& [name, n] : dtypes) {
    if (!out.empty()) out += ", ";
    out += name + " ×" + std::to_string(n);
  }
  return out;
}

std::string quantization_text(const ModelSummary& s) {
  const formats::ModelConfig& c = s.config;
  if (s.gguf_file_type) {
    const std::string_view name = formats::gguf_file_type_name(*s.gguf_file_type);
    const std::string id = "general.file_type " + std::to_string(*s.gguf_file_type);
    if (name.empty()) return "GGUF, unknown " + id + " (see dtypes)";
    if (!formats::gguf_file_type_is_quantized(*s.gguf_file_type)) return "none (GGUF " + std::string(name) + ")";
    return "GGUF " + std::string(name) + " (" + id + "; tensor types under dtypes)";
  }
  if (!c.quantization) return "none";
  const auto& q = *c.quantization;
  std::string out = "MLX " + q.mode + ", " + std::to_string(q.global.bits) + "-bit, group size " +
                    std::to_string(q.global.group_size);
  if (!q.overrides.empty()) out += ", " + std::to_string(q.overrides.size()) + " per-module overrides";
  if (!q.unquantized.empty()) out += ", " + std::to_string(q.unquantized.size()) + " modules unquantized";
  return out;
}

}  // namespace

std::string layer_pattern(const formats::TextConfig& text) {
  std::string out;
  for (std::size_t i = 0; i < text.layer_types.size(); ++i) {
    if (i > 0 && i % 4 == 0) out += ' ';
    out += text.layer_types[i] == formats::LayerType::FullAttention ? 'A' : 'L';
  }
  return out;
}

namespace {

// A llama.cpp qwen35 GGUF file: dimensions from its metadata, dtypes = ggml tensor types.
ModelSummary summarize_gguf(const std::string& path) {
  ModelSummary s;
  s.path = path;
  const formats::GgufFile file(path);
  s.config = formats::gguf_qwen35_model_config(file);
  for (const formats::GgufTensor& t : file.tensors()) {
    ++s.dtypes[std::string(formats::ggml_type_name(t.type))];
    s.parameters += t.numel();
    if (t.name == "token_embd.weight" || t.name == "output.weight") s.embedding_parameters += t.numel();
    s.weight_bytes += t.nbytes;
  }
  s.tensors = file.tensors().size();
  if (const auto ft = file.find_int("general.file_type")) s.gguf_file_type = *ft;
  // The types of the tensors the loader would read that it cannot compute with (registry's rule).
  for (const auto& [name, type] : registry::unsupported_gguf_tensors(file, s.config.text.num_hidden_layers))
    if (std::find(s.unsupported_types.begin(), s.unsupported_types.end(), type) == s.unsupported_types.end())
      s.unsupported_types.push_back(type);
  const tokenizer::Tokenizer tok = load_tokenizer(path);
  s.tokenizer = summarize_tokens(tok);
  auto token = [&](const char* key) -> std::optional<std::string> {
    const auto id = file.find_int(key);
    if (!id || *id < 0) return std::nullopt;
    return tok.id_to_token(static_cast<tokenizer::TokenId>(*id));
  };
  s.tokenizer->eos_token = token("tokenizer.ggml.eos_token_id");
  s.tokenizer->bos_token = token("tokenizer.ggml.bos_token_id");
  s.tokenizer->pad_token = token("tokenizer.ggml.padding_token_id");
  s.tokenizer->chat_template = file.find("tokenizer.chat_template") != nullptr;
  return s;
}

}  // namespace

ModelSummary summarize_model(const std::string& dir) {
  // Chat models also hold the packed copy of their output projection; decision models compute no logits.
  if (formats::is_gguf_path(dir)) {
    ModelSummary s = summarize_gguf(dir);
    s.loaded_weight_bytes = registry::gguf_weight_bytes(dir, true);
    return s;
  }
  const std::string backbone = registry::backbone_path(dir);
  if (formats::is_gguf_path(backbone)) {  // a decision folder with a .gguf backbone
    ModelSummary s = summarize_gguf(backbone);
    s.path = dir;
    s.kind = detect_kind(dir);
    if (s.kind == ModelKind::Decision) s.head = summarize_head(dir);
    s.loaded_weight_bytes = registry::gguf_weight_bytes(backbone, s.kind == ModelKind::Chat);
    return s;
  }
  ModelSummary s;
  s.path = dir;
  s.kind = detect_kind(dir);
  s.random_weights = has_random_weights(dir);
  s.config = formats::load_model_config(dir + "/config.json");
  const auto store = formats::TensorStore::open_dir(dir);
  const auto counts = formats::summarize_checkpoint(store, s.config.quantization);
  s.dtypes = counts.dtype_tensors;
  s.tensors = store.tensors().size();
  s.skipped_tensors = store.skipped().size();
  s.parameters = counts.total_params;
  for (const auto& t : counts.tensors)
    if (t.name.find("embed_tokens.") != std::string::npos || t.name.find("lm_head.") != std::string::npos)
      s.embedding_parameters += t.params;
  s.weight_bytes = counts.stored_bytes;
  s.loaded_weight_bytes =
      registry::safetensors_weight_bytes(dir, s.config.text.tie_word_embeddings, s.kind == ModelKind::Chat);
  if (file_exists(dir + "/tokenizer.json")) s.tokenizer = summarize_tokenizer(dir);
  if (s.kind == ModelKind::Decision) s.head = summarize_head(dir);
  return s;
}

Json summary_to_json(const ModelSummary& s) {
  const auto& c = s.config;
  const auto& t = c.text;
  Json j;
  j["path"] = s.path;
  j["kind"] = kind_name(s.kind);
  j["random_weights"] = s.random_weights;
  j["architecture"] = c.architectures.empty() ? Json(nullptr) : Json(c.architectures.front());
  j["model_type"] = c.model_type;
  j["text_model_type"] = t.model_type;
  j["dimensions"] = {
      {"hidden_size", t.hidden_size},
      {"num_hidden_layers", t.num_hidden_layers},
      {"intermediate_size", t.intermediate_size},
      {"vocab_size", t.vocab_size},
      {"num_attention_heads", t.num_attention_heads},
      {"num_key_value_heads", t.num_key_value_heads},
      {"head_dim", t.head_dim},
      {"rotary_dim", t.rotary_dim()},
      {"rope_theta", t.rope_theta},
      {"linear_num_key_heads", t.linear_num_key_heads},
      {"linear_num_value_heads", t.linear_num_value_heads},
      {"linear_key_head_dim", t.linear_key_head_dim},
      {"linear_value_head_dim", t.linear_value_head_dim},
      {"linear_conv_kernel_dim", t.linear_conv_kernel_dim},
      {"max_position_embeddings", t.max_position_embeddings},
      {"tie_word_embeddings", t.tie_word_embeddings},
      {"mtp_num_hidden_layers", t.mtp_num_hidden_layers},
  };
  j["layer_pattern"] = layer_pattern(t);
  j["layers"] = {{"linear_attention", t.count(formats::LayerType::LinearAttention)},
                 {"full_attention", t.count(formats::LayerType::FullAttention)}};
  j["dtype"] = t.dtype;
  j["stored_dtypes"] = s.dtypes;
  j["tensors"] = s.tensors;
  j["skipped_tensors"] = s.skipped_tensors;
  if (s.gguf_file_type) {
    const std::string_view name = formats::gguf_file_type_name(*s.gguf_file_type);
    j["quantization"] = formats::gguf_file_type_is_quantized(*s.gguf_file_type)
                            ? Json{{"format", "gguf"}, {"file_type", *s.gguf_file_type}, {"name", std::string(name)}}
                            : Json(nullptr);
  } else if (c.quantization) {
    Json overrides = Json::object();
    for (const auto& [path, spec] : c.quantization->overrides)
      overrides[path] = {{"bits", spec.bits}, {"group_size", spec.group_size}};
    j["quantization"] = {{"format", "mlx"},
                         {"mode", c.quantization->mode},
                         {"bits", c.quantization->global.bits},
                         {"group_size", c.quantization->global.group_size},
                         {"overrides", overrides},
                         {"unquantized", c.quantization->unquantized}};
  } else {
    j["quantization"] = nullptr;
  }
  j["parameters"] = s.parameters;
  j["embedding_parameters"] = s.embedding_parameters;
  j["weight_bytes"] = s.weight_bytes;
  j["memory_bytes"] = s.memory_bytes();
  j["loaded_bytes"] = s.unsupported_types.empty() ? Json(s.loaded_bytes()) : Json(nullptr);
  j["unsupported_tensor_types"] = s.unsupported_types;
  if (s.tokenizer) {
    const auto& tk = *s.tokenizer;
    Json special = Json::object();
    for (const auto& [content, id] : tk.special_tokens) special[content] = id;
    j["tokenizer"] = {{"vocab_size", tk.vocab_size},     {"model_vocab_size", tk.model_vocab_size},
                      {"added_tokens", tk.added_tokens}, {"normalizer", tk.normalizer},
                      {"pre_tokenizer", tk.pre_tokenizer}, {"model", tk.model},
                      {"decoder", tk.decoder},           {"special_tokens", special},
                      {"eos_token", tk.eos_token ? Json(*tk.eos_token) : Json(nullptr)},
                      {"bos_token", tk.bos_token ? Json(*tk.bos_token) : Json(nullptr)},
                      {"pad_token", tk.pad_token ? Json(*tk.pad_token) : Json(nullptr)},
                      {"chat_template", tk.chat_template}};
  } else {
    j["tokenizer"] = nullptr;
  }
  if (s.head) {
    j["decision_head"] = {{"config", s.head->config},     {"parameters", s.head->parameters},
                          {"tensors", s.head->tensors},   {"bytes", s.head->bytes},
                          {"loaded_bytes", s.head->loaded_bytes},
                          {"stored_dtypes", s.head->dtypes}};
  }
  return j;
}

std::string summary_to_text(const ModelSummary& s) {
  const auto& c = s.config;
  const auto& t = c.text;
  std::ostringstream o;
  auto row = [&](const char* key, const std::string& value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%-14s", key);
    o << buf << value << "\n";
  };
  row("path", s.path);
  row("kind", std::string(kind_name(s.kind)) +
                  (s.random_weights ? " (random weights from verdict make-model: outputs are meaningless)" : ""));
  row("architecture", (c.architectures.empty() ? std::string("?") : c.architectures.front()) + " (" +
                          c.model_type + (t.model_type.empty() ? "" : " / " + t.model_type) + ")");
  row("dimensions", "hidden " + std::to_string(t.hidden_size) + ", layers " +
                        std::to_string(t.num_hidden_layers) + ", ffn " + std::to_string(t.intermediate_size) +
                        ", vocab " + std::to_string(t.vocab_size) +
                        (t.tie_word_embeddings ? ", tied embeddings" : ", untied lm_head"));
  row("attention", std::to_string(t.num_attention_heads) + " query / " + std::to_string(t.num_key_value_heads) +
                       " kv heads × " + std::to_string(t.head_dim) + ", rotary " + std::to_string(t.rotary_dim()) +
                       " dims");
  row("deltanet", std::to_string(t.linear_num_key_heads) + " key / " + std::to_string(t.linear_num_value_heads) +
                      " value heads × " + std::to_string(t.linear_key_head_dim) + "/" +
                      std::to_string(t.linear_value_head_dim) + ", conv kernel " +
                      std::to_string(t.linear_conv_kernel_dim));
  row("layers", layer_pattern(t) + "  (" + std::to_string(t.count(formats::LayerType::LinearAttention)) +
                    " DeltaNet + " + std::to_string(t.count(formats::LayerType::FullAttention)) +
                    " attention; L = DeltaNet, A = attention)");
  row("dtypes", dtype_list(s.dtypes) + " (" + std::to_string(s.tensors) + " tensors, " +
                    std::to_string(s.skipped_tensors) + " vision/MTP skipped)");
  row("quantization", quantization_text(s));
  row("parameters", std::to_string(s.parameters) + " (embeddings " + std::to_string(s.embedding_parameters) + ")");
  if (s.tokenizer) {
    const auto& tk = *s.tokenizer;
    row("tokenizer", tk.model + ", vocab " + std::to_string(tk.vocab_size) + " (" +
                         std::to_string(tk.model_vocab_size) + " + " + std::to_string(tk.added_tokens) +
                         " added), normalizer " + tk.normalizer + ", pre-tokenizer " + tk.pre_tokenizer);
    std::string special;
    for (const auto& [content, id] : tk.special_tokens) {
      if (!special.empty()) special += " ";
      special += content + "=" + std::to_string(id);
    }
    row("special", special.empty() ? "none" : special);
    if (tk.eos_token) row("eos", *tk.eos_token);
  } else {
    row("tokenizer", "none (no tokenizer.json)");
  }
  if (s.head) {
    row("decision head", s.head->config.dump() + ", " + std::to_string(s.head->parameters) + " parameters, " +
                             dtype_list(s.head->dtypes));
  }
  if (!s.unsupported_types.empty()) {
    std::string types;
    for (const std::string& name : s.unsupported_types) types += (types.empty() ? "" : ", ") + name;
    row("loader", "cannot run this file: " + types +
                      " tensors (verdict computes with " + models::qwen35::gguf_weight_type_names() + ")");
    row("memory", mib(s.memory_bytes()) + " as stored" + std::string(s.head ? ", head included" : ""));
  } else {
    row("memory", mib(s.loaded_bytes()) + " once loaded on this CPU (the kernels' packed copies included; " +
                      mib(s.memory_bytes()) + " as stored" + std::string(s.head ? ", head included" : "") + ")");
  }
  return o.str();
}

}  // namespace verdict::cli
