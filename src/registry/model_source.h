// What the registry reads from a model path, which is a checkpoint folder or a llama.cpp `qwen35`
// .gguf file (docs/gguf.md): its configuration, tokenizer, chat template and weight bytes. A decision
// folder may hold its backbone as one .gguf file beside the joint head (backbone_path).
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "chat/chat_template.h"
#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "tokenizer/tokenizer.h"

namespace verdict::registry {

// True for an existing regular file whose name ends in ".gguf".
bool is_gguf_model(const std::string& path);

// The names in a folder (without "." and ".."), sorted; throws verdict::Error if it cannot be read.
std::vector<std::string> list_folder(const std::string& dir);

// The .gguf files directly in a folder (full paths, sorted; none for a file or a missing folder).
std::vector<std::string> gguf_files_in(const std::string& dir);

// Where a model path's backbone is: the path itself for a checkpoint folder with config.json or a .gguf
// file; for a folder without config.json its one .gguf file (a decision model whose backbone is a
// llama.cpp qwen35 GGUF beside joint_head.safetensors, docs/gguf.md). Throws verdict::Error when such a
// folder holds several .gguf files. Every reader below resolves its path through it.
std::string backbone_path(const std::string& path);

// config.json of a folder, or the dimensions in a GGUF file's metadata.
formats::ModelConfig read_model_config(const std::string& path);
// The file (or folder) that `path`'s configuration is reported from in errors.
std::string model_config_path(const std::string& path);

// DIR/tokenizer.json, or for a GGUF file a tokenizer.json beside it, else its tokenizer metadata.
tokenizer::Tokenizer read_model_tokenizer(const std::string& path);

// The folder's chat template (chat_template.jinja or tokenizer_config.json), or for a GGUF file its
// `tokenizer.chat_template` with the bos/eos token texts of its tokenizer metadata.
chat::ChatTemplate read_chat_template(const std::string& path, const tokenizer::Tokenizer& tok);

// For a GGUF backbone: throws verdict::Error naming the first text-model tensor (token_embd, output,
// output_norm, blk.N.* for N below the layer count) whose type the loader cannot compute with, in the
// loader's words, so that a server refuses such a file at start-up instead of at its first request.
void check_gguf_tensor_types(const std::string& path, int64_t layers);
// Those tensors of an open GGUF file, in file order: (name, type name).
std::vector<std::pair<std::string, std::string>> unsupported_gguf_tensors(const formats::GgufFile& file,
                                                                         int64_t layers);

// Bytes the GGUF backbone's tensors hold once loaded (0 for a safetensors checkpoint): as stored, but a
// layer matrix the kernels pack (kernels::pack_enabled, preferred_pack) as its packed copy (its mapped
// pages are dropped), and with `output_copy` (chat models: Weights::pack_matrices(true)) the output
// projection as its packed copy — or, when the embeddings are tied, their stored rows plus that copy.
std::size_t gguf_weight_bytes(const std::string& path, bool output_copy);

// The same for a safetensors checkpoint folder (0 for a GGUF model): the text model's tensors (not the
// vision tower, MTP head or Clef head) as the loader holds them. A layer matrix the kernels pack as its
// packed copy (BF16, MLX 4/6/8-bit), else as stored (F32, BF16, MLX) or as an fp32 copy (other float
// types); MLX scales and biases as fp32 copies; vectors (norms, conv taps, gates) as fp32 copies; the
// embeddings as stored, plus with `output_copy` the packed copy of the output projection (the lm_head's
// instead of its stored bytes, or the tied embeddings' beside them).
std::size_t safetensors_weight_bytes(const std::string& dir, bool tied, bool output_copy);

}  // namespace verdict::registry
