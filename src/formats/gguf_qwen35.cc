#include "formats/gguf_qwen35.h"

#include <array>
#include <utility>

#include "core/error.h"

namespace verdict::formats {
namespace {

// Per-layer names: Hugging Face suffix after "layers.N." → GGUF suffix after "blk.N.".
constexpr std::array<std::pair<std::string_view, std::string_view>, 20> kLayerNames = {{
    {"input_layernorm.weight", "attn_norm.weight"},
    {"post_attention_layernorm.weight", "post_attention_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
    {"linear_attn.in_proj_qkv.weight", "attn_qkv.weight"},
    {"linear_attn.in_proj_z.weight", "attn_gate.weight"},
    {"linear_attn.in_proj_b.weight", "ssm_beta.weight"},
    {"linear_attn.in_proj_a.weight", "ssm_alpha.weight"},
    {"linear_attn.conv1d.weight", "ssm_conv1d.weight"},
    {"linear_attn.A_log", "ssm_a"},
    {"linear_attn.dt_bias", "ssm_dt.bias"},
    {"linear_attn.norm.weight", "ssm_norm.weight"},
    {"linear_attn.out_proj.weight", "ssm_out.weight"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
}};

}  // namespace

std::string gguf_qwen35_tensor_name(const std::string& hf_name) {
  if (hf_name == "embed_tokens.weight") return "token_embd.weight";
  if (hf_name == "norm.weight") return "output_norm.weight";
  if (hf_name == "lm_head.weight") return "output.weight";
  constexpr std::string_view layers = "layers.";
  if (hf_name.rfind(layers, 0) != 0) return "";
  const std::size_t dot = hf_name.find('.', layers.size());
  if (dot == std::string::npos || dot == layers.size()) return "";
  const std::string index = hf_name.substr(layers.size(), dot - layers.size());
  for (char ch : index)
    if (ch < '0' || ch > '9') return "";
  const std::string_view suffix = std::string_view(hf_name).substr(dot + 1);
  for (const auto& [hf, gguf] : kLayerNames)
    if (suffix == hf) return "blk." + index + "." + std::string(gguf);
  return "";
}

ModelConfig gguf_qwen35_model_config(const GgufFile& f) {
  const std::string& arch = f.get_string("general.architecture");
  if (arch != kGgufQwen35Arch)
    throw Error(f.path() + ": general.architecture is '" + arch + "'; only 'qwen35' (Qwen3.5 dense) is supported");
  const std::string p = "qwen35.";
  auto positive = [&](const std::string& key) {
    const int64_t v = f.get_int(p + key);
    if (v <= 0 || v > (int64_t{1} << 31))
      throw Error(f.path() + ": metadata key '" + p + key + "' = " + std::to_string(v) + " is out of range");
    return v;
  };

  ModelConfig m;
  m.model_type = "qwen3_5";
  m.architectures = {"qwen35 (GGUF)"};
  TextConfig& t = m.text;
  t.model_type = "qwen3_5_text";
  t.dtype = "gguf";
  const int64_t blocks = positive("block_count");
  const int64_t mtp = f.find_int(p + "nextn_predict_layers").value_or(0);
  if (mtp < 0 || mtp >= blocks)
    throw Error(f.path() + ": qwen35.nextn_predict_layers " + std::to_string(mtp) + " leaves no main layer");
  t.num_hidden_layers = blocks - mtp;
  t.mtp_num_hidden_layers = mtp;
  t.hidden_size = positive("embedding_length");
  t.intermediate_size = positive("feed_forward_length");
  t.num_attention_heads = positive("attention.head_count");
  t.num_key_value_heads = positive("attention.head_count_kv");
  t.head_dim = positive("attention.key_length");
  if (const auto v = f.find_int(p + "attention.value_length"); v && *v != t.head_dim)
    throw Error(f.path() + ": attention.value_length " + std::to_string(*v) + " differs from key_length " +
                std::to_string(t.head_dim));
  t.rms_norm_eps = f.get_double(p + "attention.layer_norm_rms_epsilon");
  t.rope_theta = f.get_double(p + "rope.freq_base");
  const int64_t rot = positive("rope.dimension_count");
  if (rot > t.head_dim || rot % 2 != 0)
    throw Error(f.path() + ": qwen35.rope.dimension_count " + std::to_string(rot) + " must be even and at most " +
                std::to_string(t.head_dim));
  t.partial_rotary_factor = static_cast<double>(rot) / static_cast<double>(t.head_dim);
  if (const GgufValue* s = f.find(p + "rope.dimension_sections")) {
    if (!s->is_array()) throw Error(f.path() + ": qwen35.rope.dimension_sections is not an array");
    for (uint64_t i = 0; i < s->size() && i < 3; ++i) {
      const auto v = s->int_at(i);
      if (!v) throw Error(f.path() + ": qwen35.rope.dimension_sections holds a non-integer");
      t.mrope_section.push_back(*v);
    }
    t.mrope_interleaved = true;
  }
  t.linear_conv_kernel_dim = positive("ssm.conv_kernel");
  t.linear_key_head_dim = positive("ssm.state_size");
  t.linear_num_key_heads = positive("ssm.group_count");
  t.linear_num_value_heads = positive("ssm.time_step_rank");
  const int64_t inner = positive("ssm.inner_size");
  if (inner % t.linear_num_value_heads != 0)
    throw Error(f.path() + ": qwen35.ssm.inner_size " + std::to_string(inner) + " is not a multiple of time_step_rank " +
                std::to_string(t.linear_num_value_heads));
  t.linear_value_head_dim = inner / t.linear_num_value_heads;
  t.full_attention_interval = positive("full_attention_interval");
  for (int64_t i = 0; i < t.num_hidden_layers; ++i)
    t.layer_types.push_back((i + 1) % t.full_attention_interval == 0 ? LayerType::FullAttention
                                                                     : LayerType::LinearAttention);
  t.max_position_embeddings = f.find_int(p + "context_length").value_or(0);

  const GgufTensor* embd = f.find_tensor("token_embd.weight");
  if (embd == nullptr) throw Error(f.path() + ": missing tensor token_embd.weight");
  if (embd->ne.size() != 2) throw Error(f.path() + ": tensor token_embd.weight is not a matrix");
  t.vocab_size = embd->ne[1];
  t.tie_word_embeddings = f.find_tensor("output.weight") == nullptr;
  if (const auto eos = f.find_int("tokenizer.ggml.eos_token_id")) t.eos_token_ids = {*eos};
  return m;
}

}  // namespace verdict::formats
