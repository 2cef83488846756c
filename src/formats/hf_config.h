// config.json of a Hugging Face checkpoint: the Qwen3.5 text settings, read from `text_config` when
// present (Qwen3_5ForConditionalGeneration) or from the root (Qwen3_5ForCausalLM), and the MLX
// `quantization` block. Every missing or absurd dimension is refused with a message naming the key.
//
// Rules beyond the plain keys: `rope_parameters` first, then the older top-level `rope_theta` /
// `partial_rotary_factor` and `rope_scaling` (M-RoPE sections); rope types other than "default" /
// "mrope" (YaRN, linear, dynamic scaling) are refused. `layer_types` is authoritative, else layer i is
// full attention iff (i + 1) % full_attention_interval == 0. `tie_word_embeddings` comes from the text
// config, else the root (default false); a nested config whose root value disagrees is refused. The
// MLX block is `quantization`, else `quantization_config`; only mode "affine" is accepted, and a block
// with `quant_method` (GPTQ, AWQ, FP8, ...) is refused. Wrong JSON types are verdict::Errors naming the
// key, never JSON library exceptions.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/mlx_quant.h"

namespace verdict::formats {

enum class LayerType { LinearAttention, FullAttention };

struct TextConfig {
  std::string model_type;          // "qwen3_5_text" (or the root model_type for flat configs)
  int64_t hidden_size = 0;         // H
  int64_t num_hidden_layers = 0;   // L (excluding MTP)
  int64_t intermediate_size = 0;   // I
  int64_t num_attention_heads = 0; // nq
  int64_t num_key_value_heads = 0; // nkv
  int64_t head_dim = 0;            // hd
  int64_t linear_num_key_heads = 0;    // nk
  int64_t linear_num_value_heads = 0;  // nv
  int64_t linear_key_head_dim = 0;     // dk
  int64_t linear_value_head_dim = 0;   // dv
  int64_t linear_conv_kernel_dim = 0;  // K
  int64_t full_attention_interval = 4;
  std::vector<LayerType> layer_types;  // size L (derived from the interval when absent)
  double rms_norm_eps = 1e-6;
  double rope_theta = 1e7;
  double partial_rotary_factor = 0.25;
  std::vector<int64_t> mrope_section;  // e.g. [11, 11, 10]
  bool mrope_interleaved = false;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  int64_t mtp_num_hidden_layers = 0;
  std::string hidden_act = "silu";
  std::string dtype;                   // "bfloat16", "float32", ...
  std::vector<int64_t> eos_token_ids;
  std::optional<std::string> output_gate_type;

  int64_t rotary_dim() const;          // head_dim · partial_rotary_factor
  int64_t linear_key_dim() const { return linear_num_key_heads * linear_key_head_dim; }
  int64_t linear_value_dim() const { return linear_num_value_heads * linear_value_head_dim; }
  int64_t linear_conv_dim() const { return 2 * linear_key_dim() + linear_value_dim(); }
  int64_t count(LayerType t) const;
};

struct ModelConfig {
  std::string model_type;                 // root model_type ("qwen3_5")
  std::vector<std::string> architectures; // e.g. ["Qwen3_5ForConditionalGeneration"]
  bool nested_text_config = false;        // true when read from `text_config`
  TextConfig text;
  std::optional<QuantizationConfig> quantization;  // MLX checkpoints
};

// Parses config.json text. `what` names the file in errors.
ModelConfig parse_model_config(std::string_view json_text, const std::string& what);
ModelConfig load_model_config(const std::string& path);

// generation_config.json: stop ids and default sampling.
struct GenerationConfig {
  std::vector<int64_t> eos_token_ids;
  std::optional<int64_t> bos_token_id;
  std::optional<int64_t> pad_token_id;
  std::optional<double> temperature, top_p, repetition_penalty;
  std::optional<int64_t> top_k;
  std::optional<bool> do_sample;
};
GenerationConfig parse_generation_config(std::string_view json_text, const std::string& what);
GenerationConfig load_generation_config(const std::string& path);

}  // namespace verdict::formats
