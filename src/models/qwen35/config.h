// The Qwen3.5 text decoder's dimensions (spec qwen35.md §1), taken from formats::ModelConfig and
// checked for what this implementation needs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "formats/hf_config.h"

namespace verdict::models::qwen35 {

// Which key head a DeltaNet value head reads (spec §6.4).
enum class HeadMapping {
  Grouped,  // h = ⌊j / r⌋: Hugging Face and MLX files (the only correct choice for them)
  Tiled,    // h = j mod nk: the GGUF layout; on Hugging Face weights only used by a test to show it breaks
};

struct Config {
  int64_t hidden = 0;           // H
  int64_t layers = 0;           // L
  int64_t intermediate = 0;     // I
  int64_t vocab = 0;            // V (embedding rows)
  double eps = 1e-6;            // every RMSNorm
  bool tied = false;            // lm_head = embed_tokens
  // Gated attention.
  int64_t nq = 0, nkv = 0, head_dim = 0, rotary_dim = 0;
  double rope_theta = 1e7;
  // Gated DeltaNet.
  int64_t nk = 0, nv = 0, dk = 0, dv = 0, conv_kernel = 0;
  std::vector<bool> attention;  // per layer: true for full attention, false for DeltaNet
  std::vector<int64_t> kind_index;  // per layer: its index among the layers of its kind
  int64_t attention_layers = 0, deltanet_layers = 0;
  std::vector<int64_t> eos_token_ids;

  int64_t key_dim() const { return nk * dk; }
  int64_t value_dim() const { return nv * dv; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  int64_t value_heads_per_key_head() const { return nk > 0 ? nv / nk : 0; }  // r
  int64_t q_proj_rows() const { return 2 * nq * head_dim; }  // query and gate, interleaved per head
  int64_t kv_dim() const { return nkv * head_dim; }
  int64_t attn_dim() const { return nq * head_dim; }
};

// Builds the config; throws verdict::Error("<what>: ...") for models this backbone cannot run
// (another model type, an activation other than SiLU, a non-affine quantization mode, ...).
Config make_config(const formats::ModelConfig& model, const std::string& what);

}  // namespace verdict::models::qwen35
