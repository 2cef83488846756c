#include "modelgen/config_files.h"

#include "core/json.h"
#include "modelgen/mlx_quantizer.h"

namespace verdict::modelgen {
namespace {

constexpr const char* kTransformersVersion = "5.0.0";

Json text_config(const BackboneShape& s, const TokenLayout& tokens, bool f32) {
  Json layer_types = Json::array();
  for (int64_t i = 0; i < s.layers; ++i) layer_types.push_back(s.is_attention(i) ? "full_attention" : "linear_attention");
  const int64_t eos = tokens.id_of("<|endoftext|>");
  // nlohmann::json keeps object keys sorted, as the release files have them.
  return Json{
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"attn_output_gate", true},
      {"bos_token_id", eos},
      {"dtype", f32 ? "float32" : "bfloat16"},
      {"eos_token_id", eos},
      {"full_attention_interval", s.full_attention_interval},
      {"head_dim", s.head_dim},
      {"hidden_act", "silu"},
      {"hidden_size", s.hidden},
      {"initializer_range", 0.02},
      {"intermediate_size", s.intermediate},
      {"layer_types", layer_types},
      {"linear_conv_kernel_dim", s.conv_kernel},
      {"linear_key_head_dim", s.dk},
      {"linear_num_key_heads", s.nk},
      {"linear_num_value_heads", s.nv},
      {"linear_value_head_dim", s.dv},
      {"mamba_ssm_dtype", "float32"},
      {"max_position_embeddings", 262144},
      {"mlp_only_layers", Json::array()},
      {"model_type", "qwen3_5_text"},
      {"mtp_num_hidden_layers", 0},
      {"mtp_use_dedicated_embeddings", false},
      {"num_attention_heads", s.nq},
      {"num_hidden_layers", s.layers},
      {"num_key_value_heads", s.nkv},
      {"partial_rotary_factor", s.partial_rotary_factor},
      {"rms_norm_eps", 1e-6},
      {"rope_parameters",
       {{"mrope_interleaved", true},
        {"mrope_section", s.mrope_section},
        {"partial_rotary_factor", s.partial_rotary_factor},
        {"rope_theta", 10000000},
        {"rope_type", "default"}}},
      {"tie_word_embeddings", s.tied},
      {"use_cache", true},
      {"vocab_size", s.vocab},
  };
}

// No vision tensors are written; this block only keeps the release's structure (as the fixtures do).
Json vision_config(const BackboneShape& s) {
  return Json{{"depth", 1},
              {"hidden_act", "gelu_pytorch_tanh"},
              {"hidden_size", 16},
              {"in_channels", 3},
              {"initializer_range", 0.02},
              {"intermediate_size", 32},
              {"model_type", "qwen3_5"},
              {"num_heads", 2},
              {"num_position_embeddings", 16},
              {"out_hidden_size", s.hidden},
              {"patch_size", 4},
              {"spatial_merge_size", 2},
              {"temporal_patch_size", 2}};
}

}  // namespace

std::string model_config_json(const BackboneShape& s, const TokenLayout& tokens, bool f32,
                              Quantization quantization) {
  const Json sorted{
      {"architectures", Json::array({"Qwen3_5ForConditionalGeneration"})},
      {"image_token_id", tokens.id_of("<|image_pad|>")},
      {"model_type", "qwen3_5"},
      {"text_config", text_config(s, tokens, f32)},
      {"tie_word_embeddings", s.tied},
      {"transformers_version", kTransformersVersion},
      {"video_token_id", tokens.id_of("<|video_pad|>")},
      {"vision_config", vision_config(s)},
      {"vision_end_token_id", tokens.id_of("<|vision_end|>")},
      {"vision_start_token_id", tokens.id_of("<|vision_start|>")},
  };
  // Keep that order and append the MLX blocks after it, as mlx-lm writes them.
  nlohmann::ordered_json out = nlohmann::ordered_json::parse(sorted.dump());
  if (const int bits = quantization_bits(quantization); bits != 0) {
    nlohmann::ordered_json q;
    q["group_size"] = kMlxGroupSize;
    q["bits"] = bits;
    q["mode"] = "affine";
    out["quantization"] = q;
    out["quantization_config"] = q;
  }
  return out.dump(2) + "\n";
}

std::string generation_config_json(const TokenLayout& tokens) {
  const int64_t eot = tokens.id_of("<|endoftext|>");
  const Json j{{"bos_token_id", eot},
               {"eos_token_id", Json::array({tokens.id_of("<|im_end|>"), eot})},
               {"pad_token_id", eot},
               {"transformers_version", kTransformersVersion}};
  return j.dump(2) + "\n";
}

std::string head_config_json(const HeadShape& h) {
  nlohmann::ordered_json j;
  j["hidden_size"] = h.hidden;
  j["width"] = h.width;
  j["routing_layers"] = h.routing_layers;
  j["layers"] = h.layers;
  j["heads"] = h.heads;
  j["feedforward"] = h.feedforward;
  return j.dump(2) + "\n";
}

}  // namespace verdict::modelgen
