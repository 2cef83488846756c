#include "models/qwen35/gguf_export.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "core/error.h"
#include "formats/ggml_quant.h"
#include "formats/gguf_qwen35.h"
#include "formats/gguf_tokenizer.h"
#include "formats/gguf_writer.h"
#include "formats/hf_config.h"
#include "kernels/ops.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/config.h"
#include "models/qwen35/weights.h"

namespace verdict::models::qwen35 {
namespace {

using formats::GgmlType;
using formats::GgufValue;

// One GGUF tensor: its name, ggml dims and a producer of its fp32 rows (ne[0] values each).
struct OutTensor {
  std::string hf_name;  // for ordering
  std::string name;
  std::vector<int64_t> ne;
  std::function<void(int64_t row, float* out)> row;
  bool keep_f32 = false;
};

int64_t file_type_id(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return 0;
    case GgmlType::F16: return 1;
    case GgmlType::Q4_0: return 2;
    case GgmlType::Q4_1: return 3;
    case GgmlType::Q5_0: return 8;
    case GgmlType::Q5_1: return 9;
    case GgmlType::Q8_0: return 7;
    case GgmlType::Q2_K: return 10;  // LLAMA_FTYPE_MOSTLY_Q2_K
    case GgmlType::Q3_K: return 11;  // LLAMA_FTYPE_MOSTLY_Q3_K_S
    case GgmlType::Q4_K: return 14;  // LLAMA_FTYPE_MOSTLY_Q4_K_S (15: MOSTLY_Q4_K_M, the recipe)
    case GgmlType::Q5_K: return 16;  // LLAMA_FTYPE_MOSTLY_Q5_K_S (17: MOSTLY_Q5_K_M, the recipe)
    case GgmlType::Q6_K: return 18;  // LLAMA_FTYPE_MOSTLY_Q6_K
    case GgmlType::IQ4_NL: return 25;  // LLAMA_FTYPE_MOSTLY_IQ4_NL
    case GgmlType::IQ4_XS: return 30;  // LLAMA_FTYPE_MOSTLY_IQ4_XS
    case GgmlType::BF16: return 32;
    default: throw Error("convert: tensor type " + std::string(formats::ggml_type_name(t)) + " cannot be written");
  }
}

// The type a matrix is written in: the requested one when its rows are whole blocks, else a fallback.
GgmlType matrix_type(GgmlType wanted, int64_t row) {
  for (GgmlType t : {wanted, GgmlType::Q8_0, GgmlType::F16})
    if (formats::ggml_row_bytes(t, static_cast<uint64_t>(row))) return t;
  return GgmlType::F32;
}

class Exporter {
 public:
  explicit Exporter(const Config& c) : c_(c), r_(c.nk > 0 ? c.nv / c.nk : 1) {}

  // Value-head permutation (identity when nv == nk): the HF value head held in GGUF slot p.
  int64_t hf_head(int64_t slot) const { return c_.nk == c_.nv ? slot : formats::hf_value_head(slot, c_.nk, r_); }
  // The HF row of GGUF row `row` of a matrix whose value rows start at `v0` in blocks of `block`.
  int64_t hf_row(int64_t row, int64_t v0, int64_t block) const {
    if (row < v0) return row;
    const int64_t k = row - v0;
    return v0 + hf_head(k / block) * block + k % block;
  }

  void matrix(const std::string& hf, const std::string& gguf, const Matrix& m, int64_t v0 = -1, int64_t block = 1) {
    const kernels::WeightMatrix* view = &m.view;
    add(hf, gguf, {view->cols, view->rows}, [this, view, v0, block](int64_t r, float* out) {
      kernels::dequantize_row(*view, v0 < 0 ? r : hf_row(r, v0, block), out);
    });
  }

  // ssm_out: the columns are permuted (blocks of dv).
  void column_permuted(const std::string& hf, const std::string& gguf, const Matrix& m) {
    const kernels::WeightMatrix* view = &m.view;
    add(hf, gguf, {view->cols, view->rows}, [this, view](int64_t r, float* out) {
      std::vector<float> row(static_cast<std::size_t>(view->cols));
      kernels::dequantize_row(*view, r, row.data());
      for (int64_t col = 0; col < view->cols; ++col) out[col] = row[static_cast<std::size_t>(hf_row(col, 0, c_.dv))];
    });
  }

  void vector(const std::string& hf, const std::string& gguf, const std::vector<float>& v, bool permuted = false,
              std::function<float(float)> map = nullptr) {
    const std::vector<float>* data = &v;
    add(hf, gguf, {static_cast<int64_t>(v.size())}, [this, data, permuted, map](int64_t, float* out) {
      for (std::size_t i = 0; i < data->size(); ++i) {
        const float x = (*data)[permuted ? static_cast<std::size_t>(hf_head(static_cast<int64_t>(i))) : i];
        out[i] = map ? map(x) : x;
      }
    });
    tensors_.back().keep_f32 = true;
  }

  // conv taps [K, C] back to [C, K] rows, the V channels permuted.
  void conv(const std::string& hf, const std::string& gguf, const std::vector<float>& taps) {
    const std::vector<float>* data = &taps;
    const int64_t C = c_.conv_dim(), K = c_.conv_kernel, v0 = 2 * c_.key_dim();
    add(hf, gguf, {K, C}, [this, data, C, K, v0](int64_t ch, float* out) {
      const int64_t src = hf_row(ch, v0, c_.dv);
      for (int64_t j = 0; j < K; ++j) out[j] = (*data)[static_cast<std::size_t>(j * C + src)];
    });
    tensors_.back().keep_f32 = true;
  }

  std::vector<OutTensor>& tensors() { return tensors_; }

 private:
  void add(const std::string& hf, const std::string& gguf, std::vector<int64_t> ne,
           std::function<void(int64_t, float*)> row) {
    tensors_.push_back({hf, gguf, std::move(ne), std::move(row), false});
  }

  const Config& c_;
  int64_t r_;
  std::vector<OutTensor> tensors_;
};

void add_model_metadata(formats::GgufLayout& out, const formats::TextConfig& t, const Config& c, int64_t file_type,
                        const std::string& name) {
  const std::string p = "qwen35.";
  auto u32 = [](int64_t v) { return GgufValue::u32(static_cast<uint32_t>(v)); };
  out.add_metadata("general.architecture", GgufValue::string("qwen35"));
  out.add_metadata("general.type", GgufValue::string("model"));
  out.add_metadata("general.name", GgufValue::string(name));
  out.add_metadata(p + "block_count", u32(c.layers));
  out.add_metadata(p + "context_length", u32(t.max_position_embeddings));
  out.add_metadata(p + "embedding_length", u32(c.hidden));
  out.add_metadata(p + "feed_forward_length", u32(c.intermediate));
  out.add_metadata(p + "attention.head_count", u32(c.nq));
  out.add_metadata(p + "attention.head_count_kv", u32(c.nkv));
  std::vector<int32_t> sections;
  for (int64_t s : t.mrope_section) sections.push_back(static_cast<int32_t>(s));
  if (sections.empty()) sections = {11, 11, 10};
  sections.resize(4, 0);
  out.add_metadata(p + "rope.dimension_sections", GgufValue::i32_array(sections));
  out.add_metadata(p + "rope.freq_base", GgufValue::f32(static_cast<float>(c.rope_theta)));
  out.add_metadata(p + "attention.layer_norm_rms_epsilon", GgufValue::f32(static_cast<float>(c.eps)));
  out.add_metadata(p + "attention.key_length", u32(c.head_dim));
  out.add_metadata(p + "attention.value_length", u32(c.head_dim));
  out.add_metadata("general.file_type", u32(file_type));
  out.add_metadata(p + "ssm.conv_kernel", u32(c.conv_kernel));
  out.add_metadata(p + "ssm.state_size", u32(c.dk));
  out.add_metadata(p + "ssm.group_count", u32(c.nk));
  out.add_metadata(p + "ssm.time_step_rank", u32(c.nv));
  out.add_metadata(p + "ssm.inner_size", u32(c.value_dim()));
  out.add_metadata(p + "full_attention_interval", u32(t.full_attention_interval));
  out.add_metadata(p + "rope.dimension_count", u32(c.rotary_dim));
  out.add_metadata("general.quantization_version", u32(2));
}

// The type the Q4_K_M (base Q4_K) or Q5_K_M (base Q5_K) recipe gives the matrix `name` (GGUF name) of a
// model with `layers` layers: llama-quantize treats both alike but for the base type.
GgmlType k_m_type(GgmlType base, const std::string& name, int64_t layers, bool tied) {
  if (name == "output.weight" || (tied && name == "token_embd.weight")) return GgmlType::Q6_K;
  // blk.<layer>.<role>.weight
  const std::size_t dot = name.find('.', 4), end = name.find('.', dot + 1);
  int64_t layer = -1;
  if (!name.starts_with("blk.") || dot == std::string::npos || end == std::string::npos ||
      std::from_chars(name.data() + 4, name.data() + dot, layer).ec != std::errc())
    return base;
  const std::string role = name.substr(dot + 1, end - dot - 1);
  if ((role == "attn_v" || role == "attn_qkv" || role == "ffn_down") && use_more_bits(layer, layers))
    return GgmlType::Q6_K;
  return base;
}

}  // namespace

GgufExportSummary export_gguf(const std::string& in_dir, const std::string& out_path, const GgufExportOptions& options) {
  const GgmlType type = options.type;
  if (!formats::ggml_can_quantize(type))
    throw Error("convert: tensor type " + std::string(formats::ggml_type_name(type)) + " cannot be written");
  if (options.k_m && type != GgmlType::Q4_K && type != GgmlType::Q5_K)
    throw Error("convert: the _K_M recipes mix Q4_K or Q5_K with Q6_K");
  const std::string config_path = in_dir + "/config.json";
  const formats::ModelConfig model = formats::load_model_config(config_path);
  const Config c = make_config(model, config_path);
  const formats::TextConfig& t = model.text;
  // GGUF can only say "every full_attention_interval-th layer": refuse other layer patterns.
  for (int64_t i = 0; i < c.layers; ++i)
    if (c.attention[static_cast<std::size_t>(i)] != ((i + 1) % t.full_attention_interval == 0))
      throw Error(config_path + ": layer_types do not follow full_attention_interval " +
                  std::to_string(t.full_attention_interval) + "; qwen35 GGUF files cannot express that");
  const auto weights = Weights::load(in_dir, c, model);
  const Weights& w = *weights;

  Exporter ex(c);
  const std::string hp = "model.language_model.";  // only orders the tensors, as the HF file names them
  ex.matrix(hp + "embed_tokens.weight", "token_embd.weight", w.embed);
  if (!c.tied) ex.matrix("lm_head.weight", "output.weight", w.lm_head);
  ex.vector(hp + "norm.weight", "output_norm.weight", w.final_norm);
  for (int64_t i = 0; i < c.layers; ++i) {
    const LayerWeights& lw = w.layers[static_cast<std::size_t>(i)];
    const std::string l = hp + "layers." + std::to_string(i) + ".";
    const std::string b = "blk." + std::to_string(i) + ".";
    ex.vector(l + "input_layernorm.weight", b + "attn_norm.weight", lw.input_norm);
    ex.vector(l + "post_attention_layernorm.weight", b + "post_attention_norm.weight", lw.post_norm);
    if (c.attention[static_cast<std::size_t>(i)]) {
      const AttentionWeights& a = lw.attention;
      ex.matrix(l + "self_attn.q_proj.weight", b + "attn_q.weight", a.q_proj);
      ex.matrix(l + "self_attn.k_proj.weight", b + "attn_k.weight", a.k_proj);
      ex.matrix(l + "self_attn.v_proj.weight", b + "attn_v.weight", a.v_proj);
      ex.matrix(l + "self_attn.o_proj.weight", b + "attn_output.weight", a.o_proj);
      ex.vector(l + "self_attn.q_norm.weight", b + "attn_q_norm.weight", a.q_norm);
      ex.vector(l + "self_attn.k_norm.weight", b + "attn_k_norm.weight", a.k_norm);
    } else {
      const DeltaNetWeights& d = lw.deltanet;
      ex.matrix(l + "linear_attn.in_proj_qkv.weight", b + "attn_qkv.weight", d.in_proj_qkv, 2 * c.key_dim(), c.dv);
      ex.matrix(l + "linear_attn.in_proj_z.weight", b + "attn_gate.weight", d.in_proj_z, 0, c.dv);
      ex.matrix(l + "linear_attn.in_proj_b.weight", b + "ssm_beta.weight", d.in_proj_b, 0, 1);
      ex.matrix(l + "linear_attn.in_proj_a.weight", b + "ssm_alpha.weight", d.in_proj_a, 0, 1);
      ex.column_permuted(l + "linear_attn.out_proj.weight", b + "ssm_out.weight", d.out_proj);
      ex.conv(l + "linear_attn.conv1d.weight", b + "ssm_conv1d.weight", d.conv);
      ex.vector(l + "linear_attn.A_log", b + "ssm_a", d.a_log, true,
                [](float a) { return static_cast<float>(-std::exp(static_cast<double>(a))); });
      ex.vector(l + "linear_attn.dt_bias", b + "ssm_dt.bias", d.dt_bias, true);
      ex.vector(l + "linear_attn.norm.weight", b + "ssm_norm.weight", d.norm);
    }
    ex.matrix(l + "mlp.gate_proj.weight", b + "ffn_gate.weight", lw.mlp.gate_proj);
    ex.matrix(l + "mlp.up_proj.weight", b + "ffn_up.weight", lw.mlp.up_proj);
    ex.matrix(l + "mlp.down_proj.weight", b + "ffn_down.weight", lw.mlp.down_proj);
  }
  std::vector<OutTensor>& tensors = ex.tensors();
  std::stable_sort(tensors.begin(), tensors.end(), [](const OutTensor& x, const OutTensor& y) { return x.hf_name < y.hf_name; });

  formats::GgufLayout layout;
  std::string name = options.name;
  if (name.empty()) name = std::filesystem::path(in_dir).lexically_normal().filename().string();
  if (name.empty() || name == ".") name = std::filesystem::absolute(in_dir).lexically_normal().parent_path().filename().string();
  // The _K_M recipes' file types: MOSTLY_Q4_K_M = 15, MOSTLY_Q5_K_M = 17 (one above the _K_S ones).
  add_model_metadata(layout, t, c, file_type_id(type) + (options.k_m ? 1 : 0), name);
  for (auto& [key, value] : formats::gguf_tokenizer_metadata(in_dir, c.vocab)) layout.add_metadata(key, std::move(value));

  GgufExportSummary summary;
  std::vector<GgmlType> types;
  for (const OutTensor& o : tensors) {
    const bool f32 = o.keep_f32 || o.ne.size() == 1;
    const GgmlType wanted = options.k_m ? k_m_type(type, o.name, c.layers, c.tied) : type;
    const GgmlType tt = f32 ? GgmlType::F32 : matrix_type(wanted, o.ne[0]);
    layout.add_tensor(o.name, tt, o.ne);
    types.push_back(tt);
    ++summary.tensors_by_type[std::string(formats::ggml_type_name(tt))];
  }
  summary.tensors = static_cast<int64_t>(tensors.size());
  formats::write_gguf(out_path, layout, [&](std::size_t i, std::span<uint8_t> out) {
    const OutTensor& o = tensors[i];
    const int64_t cols = o.ne[0];
    const int64_t rows = o.ne.size() > 1 ? o.ne[1] : 1;
    const std::size_t row_bytes = static_cast<std::size_t>(*formats::ggml_row_bytes(types[i], static_cast<uint64_t>(cols)));
    // Rows on every thread (each row's bytes depend on that row alone, so the file is the same); the cost is
    // rough: the IQ4 and K-quant searches run a few hundred operations per value.
    kernels::parallel_for(rows, 256.0 * static_cast<double>(cols), [&](int64_t r) {
      thread_local std::vector<float> row;
      row.resize(static_cast<std::size_t>(cols));
      o.row(r, row.data());
      formats::ggml_quantize_row(types[i], row, out.data() + static_cast<std::size_t>(r) * row_bytes);
    });
  });
  summary.file_bytes = std::filesystem::file_size(out_path);
  return summary;
}

}  // namespace verdict::models::qwen35
