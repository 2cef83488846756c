#include "models/qwen35/config.h"

#include <cstdio>

#include "core/error.h"

namespace verdict::models::qwen35 {

Config make_config(const formats::ModelConfig& model, const std::string& what) {
  const formats::TextConfig& t = model.text;
  auto fail = [&](const std::string& problem) { throw Error(what + ": " + problem); };
  if (t.model_type != "qwen3_5_text" && t.model_type != "qwen3_5")
    fail("model_type '" + t.model_type + "' is not a Qwen3.5 text model (qwen3_5_text)");
  if (t.hidden_act != "silu") fail("hidden_act '" + t.hidden_act + "' is not supported (expected silu)");
  if (model.quantization && model.quantization->mode != "affine")
    fail("quantization mode '" + model.quantization->mode + "' is not supported (expected affine)");
  if (t.output_gate_type && *t.output_gate_type != "sigmoid")
    std::fprintf(stderr, "warning: %s: output_gate_type '%s' ignored; the output gate is a sigmoid\n",
                 what.c_str(), t.output_gate_type->c_str());

  Config c;
  c.hidden = t.hidden_size;
  c.layers = t.num_hidden_layers;
  c.intermediate = t.intermediate_size;
  c.vocab = t.vocab_size;
  c.eps = t.rms_norm_eps;
  c.tied = t.tie_word_embeddings;
  c.nq = t.num_attention_heads;
  c.nkv = t.num_key_value_heads;
  c.head_dim = t.head_dim;
  c.rotary_dim = t.rotary_dim();
  c.rope_theta = t.rope_theta;
  c.nk = t.linear_num_key_heads;
  c.nv = t.linear_num_value_heads;
  c.dk = t.linear_key_head_dim;
  c.dv = t.linear_value_head_dim;
  c.conv_kernel = t.linear_conv_kernel_dim;
  c.eos_token_ids = t.eos_token_ids;
  if (static_cast<int64_t>(t.layer_types.size()) != c.layers)
    fail("layer_types has " + std::to_string(t.layer_types.size()) + " entries for " +
         std::to_string(c.layers) + " layers");
  for (formats::LayerType lt : t.layer_types) {
    const bool attn = lt == formats::LayerType::FullAttention;
    c.attention.push_back(attn);
    c.kind_index.push_back(attn ? c.attention_layers++ : c.deltanet_layers++);
  }
  if (c.attention_layers > 0) {
    if (c.nq % c.nkv != 0) fail("num_key_value_heads does not divide num_attention_heads");
    if (c.rotary_dim <= 0 || c.rotary_dim % 2 != 0 || c.rotary_dim > c.head_dim)
      fail("rotary dim " + std::to_string(c.rotary_dim) + " must be even and in (0, head_dim]");
    if (!(c.rope_theta > 1.0)) fail("rope_theta must be greater than 1");
  }
  if (c.deltanet_layers > 0) {
    if (c.nk <= 0 || c.nv <= 0 || c.dk <= 0 || c.dv <= 0 || c.conv_kernel <= 0)
      fail("Gated DeltaNet dimensions must be positive");
    if (c.nv % c.nk != 0) fail("linear_num_value_heads is not a multiple of linear_num_key_heads");
  }
  return c;
}

}  // namespace verdict::models::qwen35
