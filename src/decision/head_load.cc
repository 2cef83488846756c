// Strict loading of joint_head.safetensors (clef-decision.md §6.2) into HeadWeights: the matrices as stored
// (F32, BF16 or F16), the vectors and scalars upcast to fp32.
#include <cstring>
#include <map>
#include <set>

#include "core/error.h"
#include "decision/head.h"
#include "decision/head_weights.h"
#include "formats/convert.h"
#include "formats/safetensors.h"
#include "kernels/thread_pool.h"

namespace verdict::decision {

namespace {

class Loader {
 public:
  Loader(const formats::SafetensorsFile& file, const std::string& path) : path_(path) {
    for (const formats::TensorView& t : file.tensors()) views_.emplace(t.name, &t);
  }

  std::vector<float> tensor(const std::string& name, std::vector<int64_t> shape) {
    return formats::to_f32(view(name, std::move(shape)));
  }

  HeadMatrix matrix(const std::string& name, std::size_t rows, std::size_t cols) {
    const formats::TensorView& t = view(name, {static_cast<int64_t>(rows), static_cast<int64_t>(cols)});
    HeadMatrix m;
    m.rows = rows;
    m.cols = cols;
    if (t.dtype == DType::F32) {
      m.f32 = formats::to_f32(t);
      return m;
    }
    m.type = t.dtype == DType::BF16 ? kernels::WeightType::BF16 : kernels::WeightType::F16;
    m.halves = WeightArray<uint16_t>(rows * cols);  // view() checked the shape; the safetensors reader, the bytes
    // Over the pool: one thread's copy (and page faults) of a clef-0.8b head's 205 MB took a quarter of a cold
    // decision's samples (docs/performance.md).
    kernels::parallel_copy(m.halves.data(), t.data, t.nbytes);
    return m;
  }

  const formats::TensorView& view(const std::string& name, std::vector<int64_t> shape) {
    auto it = views_.find(name);
    if (it == views_.end()) throw Error(path_ + ": missing tensor " + name);
    const formats::TensorView& t = *it->second;
    if (t.shape != shape) {
      throw Error(path_ + ": tensor " + name + " has shape " + shape_text(t.shape) + ", expected " +
                  shape_text(shape));
    }
    if (t.dtype != DType::F32 && t.dtype != DType::BF16 && t.dtype != DType::F16) {
      throw Error(path_ + ": tensor " + name + " has dtype " + std::string(dtype_name(t.dtype)) +
                  "; expected F32, BF16 or F16");
    }
    used_.insert(name);
    return t;
  }

  LayerNormWeights layer_norm(const std::string& prefix, std::size_t n) {
    const auto d = static_cast<int64_t>(n);
    return {tensor(prefix + ".weight", {d}), tensor(prefix + ".bias", {d})};
  }

  LinearWeights linear(const std::string& prefix, std::size_t out, std::size_t in, bool bias) {
    LinearWeights l;
    l.out = out;
    l.in = in;
    l.weight = matrix(prefix + ".weight", out, in);
    if (bias) l.bias = tensor(prefix + ".bias", {static_cast<int64_t>(out)});
    return l;
  }

  AttentionWeights attention(const std::string& prefix, std::size_t w) {
    AttentionWeights a;
    const auto d = static_cast<int64_t>(w);
    a.in_proj.out = 3 * w;
    a.in_proj.in = w;
    a.in_proj.weight = matrix(prefix + ".in_proj_weight", 3 * w, w);
    a.in_proj.bias = tensor(prefix + ".in_proj_bias", {3 * d});
    a.out_proj = linear(prefix + ".out_proj", w, w, true);
    return a;
  }

  float scalar(const std::string& name) { return tensor(name, {}).at(0); }

  void check_no_extra() const {
    for (const auto& [name, view] : views_) {
      if (used_.count(name) == 0) throw Error(path_ + ": unexpected tensor " + name);
    }
  }

 private:
  static std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }

  std::string path_;
  std::map<std::string, const formats::TensorView*> views_;
  std::set<std::string> used_;
};

}  // namespace

JointHead::JointHead(HeadConfig config, std::unique_ptr<HeadWeights> weights)
    : config_(config), weights_(std::move(weights)) {}
JointHead::JointHead(JointHead&&) noexcept = default;
JointHead& JointHead::operator=(JointHead&&) noexcept = default;
JointHead::~JointHead() = default;

float JointHead::prior_logit_scale() const { return weights_->prior_logit_scale; }
float JointHead::joint_logit_scale() const { return weights_->joint_logit_scale; }
float JointHead::residual_gate() const { return weights_->residual_gate; }

std::size_t JointHead::loaded_bytes(const std::string& weights_path) {
  const formats::SafetensorsFile file(weights_path);
  std::size_t n = 0;
  for (const formats::TensorView& t : file.tensors()) {
    // Loader::matrix takes every 2-D tensor but the type embeddings (a table of vectors) as stored.
    const bool matrix = t.shape.size() == 2 && t.name != "type_embedding.weight";
    n += matrix ? t.nbytes : static_cast<std::size_t>(t.numel()) * sizeof(float);
  }
  return n;
}

std::size_t JointHead::weight_bytes() const {
  const HeadWeights& w = *weights_;
  std::size_t n = 0;
  auto vec = [&](const std::vector<float>& v) { n += v.size() * sizeof(float); };
  auto norm = [&](const LayerNormWeights& l) { vec(l.weight), vec(l.bias); };
  auto linear = [&](const LinearWeights& l) { n += l.weight.bytes(), vec(l.bias); };
  auto attention = [&](const AttentionWeights& a) { linear(a.in_proj), linear(a.out_proj); };
  norm(w.hidden_norm);
  for (const LinearWeights* l : {&w.memory_projection, &w.question_projection, &w.option_question_projection,
                                 &w.global_projection, &w.option_context_projection, &w.option_lexical_projection})
    linear(*l);
  vec(w.type_embedding);
  for (const EvidenceLayerWeights& e : w.evidence_layers) {
    norm(e.query_norm), norm(e.memory_norm), norm(e.feedforward_norm);
    attention(e.attention);
    linear(e.feedforward0), linear(e.feedforward3);
  }
  norm(w.option_summary_norm);
  for (const FieldLayerWeights& l : w.layers) {
    attention(l.self_attn), attention(l.multihead_attn);
    linear(l.linear1), linear(l.linear2);
    norm(l.norm1), norm(l.norm2), norm(l.norm3);
  }
  norm(w.field_norm), norm(w.option_norm);
  linear(w.residual_scorer0), linear(w.residual_scorer3);
  return n + 3 * sizeof(float);
}

JointHead JointHead::load_dir(const std::string& dir) {
  return load(dir + "/joint_head_config.json", dir + "/joint_head.safetensors");
}

JointHead JointHead::load(const std::string& config_path, const std::string& weights_path) {
  const HeadConfig c = HeadConfig::load(config_path);
  const formats::SafetensorsFile file(weights_path);
  Loader ld(file, weights_path);
  const std::size_t h = c.hidden_size, w = c.width, f = c.feedforward;

  auto hw = std::make_unique<HeadWeights>();
  hw->hidden_norm = ld.layer_norm("hidden_norm", h);
  hw->memory_projection = ld.linear("memory_projection", w, h, false);
  hw->question_projection = ld.linear("question_projection", w, h, false);
  hw->option_question_projection = ld.linear("option_question_projection", w, h, false);
  hw->global_projection = ld.linear("global_projection", w, h, false);
  hw->option_context_projection = ld.linear("option_context_projection", w, h, false);
  hw->option_lexical_projection = ld.linear("option_lexical_projection", w, h, false);
  hw->type_embedding = ld.tensor("type_embedding.weight", {3, static_cast<int64_t>(w)});
  for (std::size_t r = 0; r < c.routing_layers; ++r) {
    const std::string p = "evidence_layers." + std::to_string(r);
    EvidenceLayerWeights e;
    e.query_norm = ld.layer_norm(p + ".query_norm", w);
    e.memory_norm = ld.layer_norm(p + ".memory_norm", w);
    e.attention = ld.attention(p + ".attention", w);
    e.feedforward_norm = ld.layer_norm(p + ".feedforward_norm", w);
    e.feedforward0 = ld.linear(p + ".feedforward.0", f, w, true);
    e.feedforward3 = ld.linear(p + ".feedforward.3", w, f, true);
    hw->evidence_layers.push_back(std::move(e));
  }
  hw->option_summary_norm = ld.layer_norm("option_summary_norm", w);
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l);
    FieldLayerWeights fl;
    fl.self_attn = ld.attention(p + ".self_attn", w);
    fl.multihead_attn = ld.attention(p + ".multihead_attn", w);
    fl.linear1 = ld.linear(p + ".linear1", f, w, true);
    fl.linear2 = ld.linear(p + ".linear2", w, f, true);
    fl.norm1 = ld.layer_norm(p + ".norm1", w);
    fl.norm2 = ld.layer_norm(p + ".norm2", w);
    fl.norm3 = ld.layer_norm(p + ".norm3", w);
    hw->layers.push_back(std::move(fl));
  }
  hw->field_norm = ld.layer_norm("field_norm", w);
  hw->option_norm = ld.layer_norm("option_norm", w);
  hw->residual_scorer0 = ld.linear("residual_scorer.0", w, 4 * w, true);
  hw->residual_scorer3 = ld.linear("residual_scorer.3", 1, w, true);
  hw->prior_logit_scale = ld.scalar("prior_logit_scale");
  hw->joint_logit_scale = ld.scalar("joint_logit_scale");
  hw->residual_gate = ld.scalar("residual_gate");
  ld.check_no_extra();
  return JointHead(c, std::move(hw));
}

}  // namespace verdict::decision
