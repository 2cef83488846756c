// The llama.cpp `qwen35` GGUF schema (spec qwen35.md §9.3, §9.4), shared by the GGUF loader and the
// converter: tensor names, the metadata keys holding the text-model dimensions, and the value-head
// order.
//
// Value heads: Hugging Face groups the DeltaNet value heads by key head (value head j reads key head
// ⌊j / r⌋, r = nv / nk); llama.cpp's converter reorders them so that GGUF slot p reads key head p mod nk
// ("tiled"). HF head j sits in GGUF slot (j mod r)·nk + ⌊j / r⌋.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "formats/gguf.h"
#include "formats/hf_config.h"

namespace verdict::formats {

inline constexpr std::string_view kGgufQwen35Arch = "qwen35";

// The GGUF name of a text-model tensor given its Hugging Face name without the model prefix
// ("embed_tokens.weight", "layers.3.linear_attn.A_log", "lm_head.weight"); "" when it has none.
std::string gguf_qwen35_tensor_name(const std::string& hf_name);

// GGUF slot of Hugging Face value head j, and the reverse.
inline int64_t gguf_value_slot(int64_t hf_head, int64_t nk, int64_t r) { return (hf_head % r) * nk + hf_head / r; }
inline int64_t hf_value_head(int64_t slot, int64_t nk, int64_t r) { return (slot % nk) * r + slot / nk; }

// The text-model settings a `qwen35` GGUF file declares (general.architecture must be "qwen35"):
// dimensions from the qwen35.* keys, layer types from full_attention_interval, vocabulary from
// token_embd, tied embeddings when there is no `output` tensor, stop id from tokenizer.ggml.eos_token_id.
// Throws verdict::Error naming the file and the key.
ModelConfig gguf_qwen35_model_config(const GgufFile& file);

}  // namespace verdict::formats
