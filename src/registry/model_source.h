// What the registry reads from a model path, which is a checkpoint folder or a llama.cpp `qwen35`
// .gguf file (docs/gguf.md): its configuration, tokenizer, chat template and weight bytes.
#pragma once
#include <cstddef>
#include <string>

#include "chat/chat_template.h"
#include "formats/hf_config.h"
#include "tokenizer/tokenizer.h"

namespace verdict::registry {

// True for an existing regular file whose name ends in ".gguf".
bool is_gguf_model(const std::string& path);

// config.json of a folder, or the dimensions in a GGUF file's metadata.
formats::ModelConfig read_model_config(const std::string& path);
// The file (or folder) that `path`'s configuration is reported from in errors.
std::string model_config_path(const std::string& path);

// DIR/tokenizer.json, or for a GGUF file a tokenizer.json beside it, else its tokenizer metadata.
tokenizer::Tokenizer read_model_tokenizer(const std::string& path);

// The folder's chat template (chat_template.jinja or tokenizer_config.json), or for a GGUF file its
// `tokenizer.chat_template` with the bos/eos token texts of its tokenizer metadata.
chat::ChatTemplate read_chat_template(const std::string& path, const tokenizer::Tokenizer& tok);

// Bytes of a GGUF file's tensors (0 for a folder).
std::size_t gguf_weight_bytes(const std::string& path);

}  // namespace verdict::registry
