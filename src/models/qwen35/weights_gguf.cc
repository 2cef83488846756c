// Weights::load_gguf: a llama.cpp `qwen35` GGUF file (spec §9.3) mapped onto the same weight views as
// a Hugging Face checkpoint. What differs from Hugging Face, and how it is handled:
//  * names: `token_embd`, `blk.N.attn_qkv`, ... (formats/gguf_qwen35.h);
//  * dimensions are listed ne[0] first: a matrix [rows, cols] is stored ne = [cols, rows], row-major
//    exactly like the PyTorch tensor, so matrices are used in place;
//  * the zero-centred norms hold 1 + w already (used as the full scale, like MLX files);
//  * `ssm_a` holds −exp(A_log): A_log = log(−ssm_a);
//  * `ssm_conv1d` is [C, K] (the squeezed [C, 1, K]);
//  * value heads are in llama.cpp's tiled order (spec §9.4): every per-value-head tensor is permuted
//    consistently, so the file's order is kept and the forward reads key head p mod nk for slot p
//    (head_mapping = Tiled), which computes exactly the Hugging Face model.
// Matrices of every supported type (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K,
// Q6_K, IQ4_NL, IQ4_XS) are used in place from the memory-mapped file (the kernels read ggml blocks directly);
// vectors are converted to fp32.
#include <cmath>
#include <cstring>
#include <utility>

#include "core/error.h"
#include "formats/gguf_qwen35.h"
#include "models/qwen35/weights.h"

namespace verdict::models::qwen35 {

std::optional<kernels::WeightType> gguf_weight_type(formats::GgmlType t) {
  switch (t) {
    case formats::GgmlType::F32: return kernels::WeightType::F32;
    case formats::GgmlType::F16: return kernels::WeightType::F16;
    case formats::GgmlType::BF16: return kernels::WeightType::BF16;
    case formats::GgmlType::Q8_0: return kernels::WeightType::Q8_0;
    case formats::GgmlType::Q4_0: return kernels::WeightType::Q4_0;
    case formats::GgmlType::Q4_1: return kernels::WeightType::Q4_1;
    case formats::GgmlType::Q5_0: return kernels::WeightType::Q5_0;
    case formats::GgmlType::Q5_1: return kernels::WeightType::Q5_1;
    case formats::GgmlType::Q2_K: return kernels::WeightType::Q2_K;
    case formats::GgmlType::Q3_K: return kernels::WeightType::Q3_K;
    case formats::GgmlType::Q4_K: return kernels::WeightType::Q4_K;
    case formats::GgmlType::Q5_K: return kernels::WeightType::Q5_K;
    case formats::GgmlType::Q6_K: return kernels::WeightType::Q6_K;
    case formats::GgmlType::IQ4_NL: return kernels::WeightType::IQ4_NL;
    case formats::GgmlType::IQ4_XS: return kernels::WeightType::IQ4_XS;
    default: return std::nullopt;
  }
}

std::string gguf_weight_type_names() {
  std::string out;
  for (uint32_t id = 0; id < 64; ++id) {
    const auto info = formats::ggml_type_info(id);
    if (info && gguf_weight_type(info->type)) out += (out.empty() ? "" : ", ") + std::string(info->name);
  }
  return out;
}

namespace {

bool aligned(const void* p, std::size_t alignment) { return reinterpret_cast<uintptr_t>(p) % alignment == 0; }

std::string ne_string(const std::vector<int64_t>& ne) {
  std::string s = "[";
  for (std::size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

bool supported(formats::GgmlType t) { return gguf_weight_type(t).has_value(); }

// A kernel view of tensor t as a [rows, cols] matrix, zero-copy unless its data is misaligned for its
// element type (then copied into `m`).
void make_view(const formats::GgufTensor& t, int64_t rows, int64_t cols, Matrix& m) {
  m.view.rows = rows;
  m.view.cols = cols;
  switch (t.type) {
    case formats::GgmlType::F32:
      m.view.type = kernels::WeightType::F32;
      if (aligned(t.data, alignof(float))) {
        m.view.f32 = reinterpret_cast<const float*>(t.data);
      } else {
        m.f32.resize(t.nbytes / sizeof(float));
        std::memcpy(m.f32.data(), t.data, t.nbytes);
        m.view.f32 = m.f32.data();
      }
      return;
    case formats::GgmlType::BF16:
      m.view.type = kernels::WeightType::BF16;
      if (aligned(t.data, alignof(uint16_t))) {
        m.view.bf16 = reinterpret_cast<const uint16_t*>(t.data);
      } else {
        m.bf16.resize(t.nbytes / sizeof(uint16_t));
        std::memcpy(m.bf16.data(), t.data, t.nbytes);
        m.view.bf16 = m.bf16.data();
      }
      return;
    default: {
      const auto type = gguf_weight_type(t.type);
      if (!type) throw Error(t.name + ": unsupported tensor type");  // refused by the loader before
      m.view.type = *type;
      m.view.blocks = t.data;
    }
  }
}

class GgufLoader {
 public:
  GgufLoader(const formats::GgufFile& file, const Config& c) : f_(file), c_(c) {}

  [[noreturn]] void fail(const std::string& problem) const { throw Error(f_.path() + ": " + problem); }

  const formats::GgufTensor& get(const std::string& name, const std::vector<int64_t>& ne) const {
    const formats::GgufTensor* t = f_.find_tensor(name);
    if (t == nullptr) fail("missing tensor " + name);
    if (t->ne != ne) fail("tensor " + name + ": expected dimensions " + ne_string(ne) + ", found " + ne_string(t->ne));
    if (!supported(t->type))
      fail("tensor " + name + ": type " + std::string(formats::ggml_type_name(t->type)) +
           " is not supported (" + gguf_weight_type_names() + ")");
    return *t;
  }

  Matrix matrix(const std::string& name, int64_t rows, int64_t cols) const {
    Matrix m;
    make_view(get(name, {cols, rows}), rows, cols, m);
    kernels::check_weight(m.view, name.c_str());
    return m;
  }

  // All values of tensor `name` (dimensions ne) as fp32.
  std::vector<float> values(const std::string& name, const std::vector<int64_t>& ne) const {
    const formats::GgufTensor& t = get(name, ne);
    Matrix m;
    make_view(t, t.rows(), t.ne[0], m);
    kernels::check_weight(m.view, name.c_str());
    std::vector<float> out(static_cast<std::size_t>(t.numel()));
    for (int64_t r = 0; r < m.view.rows; ++r) kernels::dequantize_row(m.view, r, out.data() + r * m.view.cols);
    return out;
  }

  std::vector<float> vector(const std::string& name, int64_t n) const { return values(name, {n}); }

  // ssm_conv1d [C, K] (ne = [K, C]) transposed to taps-major [K, C].
  std::vector<float> conv(const std::string& name) const {
    const int64_t C = c_.conv_dim(), K = c_.conv_kernel;
    const std::vector<float> stored = values(name, {K, C});
    std::vector<float> taps(stored.size());
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t j = 0; j < K; ++j)
        taps[static_cast<std::size_t>(j * C + ch)] = stored[static_cast<std::size_t>(ch * K + j)];
    return taps;
  }

  // A_log from ssm_a = −exp(A_log); ssm_a must be negative.
  std::vector<float> a_log(const std::string& name) const {
    std::vector<float> v = vector(name, c_.nv);
    for (float& x : v) {
      if (!(x < 0.0f) || !std::isfinite(x))
        fail("tensor " + name + ": value " + std::to_string(x) + " is not negative (ssm_a = -exp(A_log))");
      x = static_cast<float>(std::log(-static_cast<double>(x)));
    }
    return v;
  }

 private:
  const formats::GgufFile& f_;
  const Config& c_;
};

}  // namespace

std::unique_ptr<Weights> Weights::load_gguf(std::unique_ptr<formats::GgufFile> file, const Config& c) {
  auto w = std::make_unique<Weights>();
  const GgufLoader ld(*file, c);
  w->prefix = "";
  w->norms_folded = true;
  w->head_mapping = HeadMapping::Tiled;
  const int64_t H = c.hidden;

  w->embed = ld.matrix("token_embd.weight", c.vocab, H);
  w->final_norm = ld.vector("output_norm.weight", H);
  if (!c.tied) w->lm_head = ld.matrix("output.weight", c.vocab, H);
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    LayerWeights lw;
    lw.input_norm = ld.vector(b + "attn_norm.weight", H);
    lw.post_norm = ld.vector(b + "post_attention_norm.weight", H);
    if (c.attention[static_cast<std::size_t>(i)]) {
      AttentionWeights& a = lw.attention;
      a.q_proj = ld.matrix(b + "attn_q.weight", c.q_proj_rows(), H);
      a.k_proj = ld.matrix(b + "attn_k.weight", c.kv_dim(), H);
      a.v_proj = ld.matrix(b + "attn_v.weight", c.kv_dim(), H);
      a.o_proj = ld.matrix(b + "attn_output.weight", H, c.attn_dim());
      a.q_norm = ld.vector(b + "attn_q_norm.weight", c.head_dim);
      a.k_norm = ld.vector(b + "attn_k_norm.weight", c.head_dim);
    } else {
      DeltaNetWeights& d = lw.deltanet;
      d.in_proj_qkv = ld.matrix(b + "attn_qkv.weight", c.conv_dim(), H);
      d.in_proj_z = ld.matrix(b + "attn_gate.weight", c.value_dim(), H);
      d.in_proj_b = ld.matrix(b + "ssm_beta.weight", c.nv, H);
      d.in_proj_a = ld.matrix(b + "ssm_alpha.weight", c.nv, H);
      d.out_proj = ld.matrix(b + "ssm_out.weight", H, c.value_dim());
      d.conv = ld.conv(b + "ssm_conv1d.weight");
      d.a_log = ld.a_log(b + "ssm_a");
      d.dt_bias = ld.vector(b + "ssm_dt.bias", c.nv);
      d.norm = ld.vector(b + "ssm_norm.weight", c.dv);
    }
    lw.mlp.gate_proj = ld.matrix(b + "ffn_gate.weight", c.intermediate, H);
    lw.mlp.up_proj = ld.matrix(b + "ffn_up.weight", c.intermediate, H);
    lw.mlp.down_proj = ld.matrix(b + "ffn_down.weight", H, c.intermediate);
    w->layers.push_back(std::move(lw));
  }
  for (const formats::GgufTensor& t : file->tensors())
    if (t.type != formats::GgmlType::F32 && t.type != formats::GgmlType::F16 && t.type != formats::GgmlType::BF16)
      w->quantized = true;
  w->gguf_ = std::move(file);
  return w;
}

}  // namespace verdict::models::qwen35
