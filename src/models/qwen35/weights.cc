#include "models/qwen35/weights.h"

#include <cstring>
#include <utility>

#include "core/error.h"
#include "formats/convert.h"
#include "formats/mlx_quant.h"

namespace verdict::models::qwen35 {
namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool aligned(const void* p, std::size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

template <typename T>
std::vector<T> copy_elements(const formats::TensorView& t) {
  std::vector<T> out(t.nbytes / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), t.data, out.size() * sizeof(T));
  return out;
}

class Loader {
 public:
  Loader(const formats::TensorStore& store, const Config& c, const formats::ModelConfig& model,
         std::string dir)
      : store_(store), c_(c), model_(model), dir_(std::move(dir)) {}

  [[noreturn]] void fail(const std::string& problem) const { throw Error(dir_ + ": " + problem); }

  const formats::TensorView& get(const std::string& name) const {
    const formats::TensorView* t = store_.find(name);
    if (t == nullptr) fail("missing tensor " + name);
    return *t;
  }

  void expect_shape(const formats::TensorView& t, const std::vector<int64_t>& want) const {
    if (t.shape != want)
      fail("tensor " + t.name + ": expected shape " + shape_string(want) + ", found " + shape_string(t.shape));
  }

  // The matrix of module `name` (without ".weight"): MLX-quantized when `name.scales` exists.
  Matrix matrix(const std::string& name, int64_t rows, int64_t cols) {
    Matrix m;
    m.view.rows = rows;
    m.view.cols = cols;
    const formats::TensorView& weight = get(name + ".weight");
    if (store_.contains(name + ".scales")) {
      load_quantized(m, name, weight);
    } else {
      expect_shape(weight, {rows, cols});
      if (weight.dtype == DType::F32 && aligned(weight.data, alignof(float))) {
        m.view.type = kernels::WeightType::F32;
        m.view.f32 = reinterpret_cast<const float*>(weight.data);
      } else if (weight.dtype == DType::BF16) {
        m.view.type = kernels::WeightType::BF16;
        if (aligned(weight.data, alignof(uint16_t))) {
          m.view.bf16 = reinterpret_cast<const uint16_t*>(weight.data);
        } else {
          m.bf16 = copy_elements<uint16_t>(weight);
          m.view.bf16 = m.bf16.data();
        }
      } else {
        m.view.type = kernels::WeightType::F32;
        m.f32 = formats::to_f32(weight);
        m.view.f32 = m.f32.data();
      }
    }
    kernels::check_weight(m.view, name.c_str());
    return m;
  }

  std::vector<float> vector(const std::string& name, int64_t n) const {
    const formats::TensorView& t = get(name);
    expect_shape(t, {n});
    return formats::to_f32(t);
  }

  // A zero-centred RMSNorm weight as its full scale: 1 + w, or the stored value when folded.
  std::vector<float> norm_scale(const std::string& name, int64_t n, bool folded) const {
    std::vector<float> v = vector(name, n);
    if (!folded)
      for (float& x : v) x = 1.0f + x;
    return v;
  }

  // conv1d.weight transposed to [K, C] (contiguous channels per tap): Hugging Face stores [C, 1, K],
  // MLX [C, K, 1]; both hold the taps of channel c at [c·K, (c+1)·K).
  std::vector<float> conv(const std::string& name, bool mlx_layout) const {
    const formats::TensorView& t = get(name);
    const int64_t C = c_.conv_dim(), K = c_.conv_kernel;
    expect_shape(t, mlx_layout ? std::vector<int64_t>{C, K, 1} : std::vector<int64_t>{C, 1, K});
    const std::vector<float> stored = formats::to_f32(t);
    std::vector<float> taps(stored.size());
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t j = 0; j < K; ++j) taps[static_cast<std::size_t>(j * C + ch)] = stored[static_cast<std::size_t>(ch * K + j)];
    return taps;
  }

 private:
  void load_quantized(Matrix& m, const std::string& name, const formats::TensorView& weight) {
    if (!model_.quantization)
      fail("tensor " + name + ".scales: quantized weights but config.json has no quantization block");
    const formats::QuantSpec spec = model_.quantization->spec_for(name);
    const formats::QuantizedTensor q =
        formats::make_quantized(weight, get(name + ".scales"), get(name + ".biases"), spec);
    if (q.rows != m.view.rows || q.cols != m.view.cols)
      fail("tensor " + name + " (quantized): expected shape " + shape_string({m.view.rows, m.view.cols}) +
           ", found " + shape_string({q.rows, q.cols}));
    m.view.type = kernels::WeightType::MlxAffine;
    m.view.bits = spec.bits;
    m.view.group_size = spec.group_size;
    if (aligned(weight.data, alignof(uint32_t))) {
      m.view.packed = reinterpret_cast<const uint32_t*>(weight.data);
    } else {
      m.packed = copy_elements<uint32_t>(weight);
      m.view.packed = m.packed.data();
    }
    m.scales = formats::to_f32(*q.scales);
    m.biases = formats::to_f32(*q.biases);
    m.view.scales = m.scales.data();
    m.view.biases = m.biases.data();
  }

  const formats::TensorStore& store_;
  const Config& c_;
  const formats::ModelConfig& model_;
  std::string dir_;
};

// The prefix of the text model's tensors (spec §9.1).
std::string detect_prefix(const formats::TensorStore& store, const std::string& dir) {
  for (const char* p : {"model.language_model.", "language_model.model.", "model."})
    if (store.contains(std::string(p) + "embed_tokens.weight")) return p;
  throw Error(dir + ": no embed_tokens.weight under any known prefix (model.language_model., model., "
                    "language_model.model.)");
}

// MLX's own rule (spec §9.2): a conv1d weight whose last dimension is 1 (and no mtp.* tensors) means a
// sanitized MLX file, with the +1 folded into the zero-centred norms and conv stored [C, K, 1].
bool detect_mlx_layout(const formats::TensorStore& store, const Config& c, const std::string& prefix) {
  for (const std::string& name : store.skipped())
    if (name.rfind("mtp.", 0) == 0 || name.find(".mtp.") != std::string::npos) return false;
  for (int64_t i = 0; i < c.layers; ++i) {
    if (c.attention[static_cast<std::size_t>(i)]) continue;
    const auto* conv = store.find(prefix + "layers." + std::to_string(i) + ".linear_attn.conv1d.weight");
    if (conv == nullptr || conv->shape.size() != 3) return false;
    if (c.conv_kernel != 1) return conv->shape[2] == 1;
    break;
  }
  return prefix == "language_model.model.";
}

}  // namespace

std::unique_ptr<Weights> Weights::load(const std::string& dir, const Config& c,
                                       const formats::ModelConfig& model) {
  auto w = std::make_unique<Weights>();
  w->store_ = std::make_unique<formats::TensorStore>(formats::TensorStore::open_dir(dir));
  const formats::TensorStore& store = *w->store_;
  Loader ld(store, c, model, dir);
  const std::string& p = w->prefix = detect_prefix(store, dir);
  const bool folded = w->norms_folded = detect_mlx_layout(store, c, p);

  w->embed = ld.matrix(p + "embed_tokens", c.vocab, c.hidden);
  w->final_norm = ld.norm_scale(p + "norm.weight", c.hidden, folded);
  if (!c.tied) {
    std::string head = "lm_head";
    if (!store.contains(head + ".weight") && store.contains("language_model.lm_head.weight"))
      head = "language_model.lm_head";
    if (!store.contains(head + ".weight"))
      ld.fail("missing tensor lm_head.weight (tie_word_embeddings is false)");
    w->lm_head = ld.matrix(head, c.vocab, c.hidden);
  }

  const int64_t H = c.hidden;
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    LayerWeights lw;
    lw.input_norm = ld.norm_scale(l + "input_layernorm.weight", H, folded);
    lw.post_norm = ld.norm_scale(l + "post_attention_layernorm.weight", H, folded);
    if (c.attention[static_cast<std::size_t>(i)]) {
      AttentionWeights& a = lw.attention;
      a.q_proj = ld.matrix(l + "self_attn.q_proj", c.q_proj_rows(), H);
      a.k_proj = ld.matrix(l + "self_attn.k_proj", c.kv_dim(), H);
      a.v_proj = ld.matrix(l + "self_attn.v_proj", c.kv_dim(), H);
      a.o_proj = ld.matrix(l + "self_attn.o_proj", H, c.attn_dim());
      a.q_norm = ld.norm_scale(l + "self_attn.q_norm.weight", c.head_dim, folded);
      a.k_norm = ld.norm_scale(l + "self_attn.k_norm.weight", c.head_dim, folded);
    } else {
      DeltaNetWeights& d = lw.deltanet;
      d.in_proj_qkv = ld.matrix(l + "linear_attn.in_proj_qkv", c.conv_dim(), H);
      d.in_proj_z = ld.matrix(l + "linear_attn.in_proj_z", c.value_dim(), H);
      d.in_proj_b = ld.matrix(l + "linear_attn.in_proj_b", c.nv, H);
      d.in_proj_a = ld.matrix(l + "linear_attn.in_proj_a", c.nv, H);
      d.out_proj = ld.matrix(l + "linear_attn.out_proj", H, c.value_dim());
      d.conv = ld.conv(l + "linear_attn.conv1d.weight", folded);
      d.a_log = ld.vector(l + "linear_attn.A_log", c.nv);
      d.dt_bias = ld.vector(l + "linear_attn.dt_bias", c.nv);
      d.norm = ld.vector(l + "linear_attn.norm.weight", c.dv);
    }
    lw.mlp.gate_proj = ld.matrix(l + "mlp.gate_proj", c.intermediate, H);
    lw.mlp.up_proj = ld.matrix(l + "mlp.up_proj", c.intermediate, H);
    lw.mlp.down_proj = ld.matrix(l + "mlp.down_proj", H, c.intermediate);
    w->layers.push_back(std::move(lw));
  }
  for (const auto& [name, t] : store.tensors())
    if (t.dtype == DType::U32) w->quantized = true;
  return w;
}

namespace {

// Calls f(matrix) for every matrix of every layer (const or not, as `layers` is).
template <typename Layers, typename F>
void for_each_layer_matrix(Layers& layers, const F& f) {
  for (auto& l : layers)
    for (auto* m : {&l.deltanet.in_proj_qkv, &l.deltanet.in_proj_z, &l.deltanet.in_proj_b, &l.deltanet.in_proj_a,
                    &l.deltanet.out_proj, &l.attention.q_proj, &l.attention.k_proj, &l.attention.v_proj,
                    &l.attention.o_proj, &l.mlp.gate_proj, &l.mlp.up_proj, &l.mlp.down_proj})
      f(*m);
}

}  // namespace

std::size_t Weights::held_bytes() const {
  // Copies a matrix owns (converted or realigned data, MLX scales and biases): held whether packed or not.
  auto owned = [](const Matrix& m) {
    return (m.f32.size() + m.scales.size() + m.biases.size()) * sizeof(float) + m.bf16.size() * sizeof(uint16_t) +
           m.packed.size() * sizeof(uint32_t);
  };
  // The stored rows when they are mapped from the file rather than owned.
  auto mapped = [](const Matrix& m) {
    const kernels::WeightMatrix& v = m.view;
    const bool copy = (v.f32 != nullptr && v.f32 == m.f32.data()) || (v.bf16 != nullptr && v.bf16 == m.bf16.data()) ||
                      (v.packed != nullptr && v.packed == m.packed.data());
    return copy ? std::size_t{0} : static_cast<std::size_t>(v.rows * v.row_bytes());
  };
  auto held = [&](const Matrix& m) {
    return owned(m) + (m.repacked.view() != nullptr ? static_cast<std::size_t>(m.repacked.bytes()) : mapped(m));
  };
  // The embeddings keep their rows (lookups read them) beside any packed copy.
  std::size_t total = owned(embed) + mapped(embed) + static_cast<std::size_t>(embed.repacked.bytes());
  if (lm_head.view.rows > 0) total += held(lm_head);
  for_each_layer_matrix(layers, [&](const Matrix& m) { total += held(m); });
  return total;
}

void Weights::pack_matrices(bool output) {
  if (!kernels::pack_enabled(/*by_default=*/true)) return;
  auto pack = [&](Matrix& m) {
    m.repacked = kernels::pack(m.view);
    m.view.pack = m.repacked.view();
    if (m.view.pack == nullptr || &m == &embed) return;
    const kernels::WeightMatrix& v = m.view;
    const void* stored = v.f32 != nullptr ? static_cast<const void*>(v.f32)
                         : v.bf16 != nullptr ? static_cast<const void*>(v.bf16)
                         : v.packed != nullptr ? static_cast<const void*>(v.packed)
                                               : static_cast<const void*>(v.blocks);
    const auto bytes = static_cast<std::size_t>(v.rows * v.row_bytes());
    if (store_) store_->drop_pages(stored, bytes);
    if (gguf_) gguf_->mapping().drop_pages(stored, bytes);
  };
  for_each_layer_matrix(layers, pack);
  if (output) pack(lm_head.view.rows > 0 ? lm_head : embed);
}

}  // namespace verdict::models::qwen35
