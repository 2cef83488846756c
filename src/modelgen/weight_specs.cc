#include "modelgen/weight_specs.h"

#include <algorithm>
#include <cmath>

namespace verdict::modelgen {
namespace {

constexpr float kNormStd = 0.05f;
constexpr float kBiasStd = 0.02f;
// bf16(ln 10): the value a public port reports for prior_logit_scale.
constexpr float kLn10Bf16 = 2.296875f;

float inv_sqrt(int64_t n) { return 1.0f / std::sqrt(static_cast<float>(n)); }

class Builder {
 public:
  void add(std::string name, std::vector<int64_t> shape, Init init, WeightRole role, bool f32 = false) {
    out_.push_back({std::move(name), std::move(shape), init, role, f32});
  }
  void linear(const std::string& name, int64_t out, int64_t in, float extra_scale = 1.0f) {
    add(name, {out, in}, Init::normal(0.0f, inv_sqrt(in) * extra_scale), WeightRole::Linear);
  }
  std::vector<WeightSpec> sorted() {
    std::sort(out_.begin(), out_.end(), [](const WeightSpec& a, const WeightSpec& b) { return a.name < b.name; });
    return std::move(out_);
  }

 private:
  std::vector<WeightSpec> out_;
};

}  // namespace

int64_t WeightSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t WeightSpec::rows() const { return shape.size() >= 2 ? shape[0] : 1; }

std::vector<WeightSpec> backbone_weights(const BackboneShape& s) {
  Builder b;
  const std::string p = "model.language_model.";
  const float residual_scale = inv_sqrt(2 * s.layers);
  const Init zero_centred = Init::normal(0.0f, kNormStd);
  b.add(p + "embed_tokens.weight", {s.vocab, s.hidden}, Init::normal(0.0f, inv_sqrt(s.hidden)), WeightRole::Embedding);
  b.add(p + "norm.weight", {s.hidden}, zero_centred, WeightRole::ZeroCentredNorm);
  if (!s.tied) b.linear("lm_head.weight", s.vocab, s.hidden);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    b.add(l + "input_layernorm.weight", {s.hidden}, zero_centred, WeightRole::ZeroCentredNorm);
    b.add(l + "post_attention_layernorm.weight", {s.hidden}, zero_centred, WeightRole::ZeroCentredNorm);
    b.linear(l + "mlp.gate_proj.weight", s.intermediate, s.hidden);
    b.linear(l + "mlp.up_proj.weight", s.intermediate, s.hidden);
    b.linear(l + "mlp.down_proj.weight", s.hidden, s.intermediate, residual_scale);
    if (s.is_attention(i)) {
      const std::string a = l + "self_attn.";
      b.linear(a + "q_proj.weight", 2 * s.nq * s.head_dim, s.hidden);
      b.linear(a + "k_proj.weight", s.nkv * s.head_dim, s.hidden);
      b.linear(a + "v_proj.weight", s.nkv * s.head_dim, s.hidden);
      b.linear(a + "o_proj.weight", s.hidden, s.nq * s.head_dim, residual_scale);
      b.add(a + "q_norm.weight", {s.head_dim}, zero_centred, WeightRole::ZeroCentredNorm);
      b.add(a + "k_norm.weight", {s.head_dim}, zero_centred, WeightRole::ZeroCentredNorm);
    } else {
      const std::string d = l + "linear_attn.";
      b.linear(d + "in_proj_qkv.weight", s.conv_dim(), s.hidden);
      b.linear(d + "in_proj_z.weight", s.value_dim(), s.hidden);
      b.linear(d + "in_proj_b.weight", s.nv, s.hidden);
      b.linear(d + "in_proj_a.weight", s.nv, s.hidden);
      b.linear(d + "out_proj.weight", s.hidden, s.value_dim(), residual_scale);
      b.add(d + "conv1d.weight", {s.conv_dim(), 1, s.conv_kernel}, Init::normal(0.0f, inv_sqrt(s.conv_kernel)),
            WeightRole::Conv);
      b.add(d + "A_log", {s.nv}, Init::log_uniform(1.0f, 16.0f), WeightRole::Other, true);
      b.add(d + "dt_bias", {s.nv}, Init::normal(0.0f, 0.1f), WeightRole::Other);
      b.add(d + "norm.weight", {s.dv}, Init::normal(1.0f, kNormStd), WeightRole::Other, true);
    }
  }
  return b.sorted();
}

std::vector<WeightSpec> head_weights(const HeadShape& s) {
  Builder b;
  const int64_t W = s.width, F = s.feedforward, H = s.hidden;
  auto layer_norm = [&](const std::string& name, int64_t n) {
    b.add(name + ".weight", {n}, Init::normal(1.0f, kNormStd), WeightRole::Other);
    b.add(name + ".bias", {n}, Init::normal(0.0f, kBiasStd), WeightRole::Other);
  };
  auto linear = [&](const std::string& name, int64_t out, int64_t in) {
    b.linear(name + ".weight", out, in);
    b.add(name + ".bias", {out}, Init::normal(0.0f, kBiasStd), WeightRole::Other);
  };
  auto attention = [&](const std::string& name) {
    b.linear(name + ".in_proj_weight", 3 * W, W);
    b.add(name + ".in_proj_bias", {3 * W}, Init::normal(0.0f, kBiasStd), WeightRole::Other);
    linear(name + ".out_proj", W, W);
  };
  layer_norm("hidden_norm", H);
  for (const char* proj : {"memory_projection", "question_projection", "option_question_projection",
                           "global_projection", "option_context_projection", "option_lexical_projection"})
    b.linear(std::string(proj) + ".weight", W, H);
  b.add("type_embedding.weight", {3, W}, Init::normal(0.0f, 0.5f), WeightRole::Other);
  for (int64_t r = 0; r < s.routing_layers; ++r) {
    const std::string e = "evidence_layers." + std::to_string(r) + ".";
    layer_norm(e + "query_norm", W);
    layer_norm(e + "memory_norm", W);
    attention(e + "attention");
    layer_norm(e + "feedforward_norm", W);
    linear(e + "feedforward.0", F, W);
    linear(e + "feedforward.3", W, F);
  }
  layer_norm("option_summary_norm", W);
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string f = "layers." + std::to_string(l) + ".";
    attention(f + "self_attn");
    attention(f + "multihead_attn");
    linear(f + "linear1", F, W);
    linear(f + "linear2", W, F);
    layer_norm(f + "norm1", W);
    layer_norm(f + "norm2", W);
    layer_norm(f + "norm3", W);
  }
  layer_norm("field_norm", W);
  layer_norm("option_norm", W);
  linear("residual_scorer.0", W, 4 * W);
  linear("residual_scorer.3", 1, W);
  b.add("prior_logit_scale", {}, Init::constant(kLn10Bf16), WeightRole::Other);
  b.add("joint_logit_scale", {}, Init::constant(kLn10Bf16), WeightRole::Other);
  b.add("residual_gate", {}, Init::constant(-2.0f), WeightRole::Other);
  return b.sorted();
}

int64_t count_params(const std::vector<WeightSpec>& weights) {
  int64_t n = 0;
  for (const WeightSpec& w : weights) n += w.numel();
  return n;
}

}  // namespace verdict::modelgen
