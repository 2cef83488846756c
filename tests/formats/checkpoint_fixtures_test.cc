// Every checkpoint under shared/fixtures: config dims as in the fixture README's table, tensor names,
// dtypes and shapes as in spec qwen35.md §9.1 / §9.2, vision and MTP tensors skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "formats/checkpoint_summary.h"
#include "formats/convert.h"
#include "formats/hf_config.h"
#include "formats/tensor_store.h"
#include "support/fixtures.h"

namespace verdict::formats {
namespace {

// The fixture README's table ("layers" as the DeltaNet/attention pattern from its config).
struct Dims {
  int64_t hidden, layers, ffn, nq, nkv, head_dim, rotary_dim, nk, nv, dk, dv, kernel, vocab;
  std::vector<bool> full_attention;  // per layer
};
const Dims kTiny = {64, 4, 192, 4, 2, 32, 8, 2, 4, 16, 16, 4, 768, {false, false, false, true}};
const Dims kSmall = {256, 8, 768, 8, 2, 64, 16, 4, 8, 32, 32, 4, 768,
                     {false, false, false, true, false, false, false, true}};

enum class Storage { BF16, F32, MLX };

struct Case {
  const char* label;
  const char* dir;
  const Dims* dims;
  bool tied;
  int64_t mtp_layers;      // config mtp_num_hidden_layers
  bool vision_in_file;     // dummy model.visual.* tensors stored
  bool mtp_in_file;        // mtp.* tensors stored
  Storage storage;
  int bits = 0;            // MLX
};

const std::vector<Case> kCases = {
    {"qwen35_tiny", "qwen35-tiny", &kTiny, true, 1, true, true, Storage::BF16},
    {"qwen35_tiny_f32", "qwen35-tiny-f32", &kTiny, true, 1, true, true, Storage::F32},
    {"qwen35_small", "qwen35-small", &kSmall, false, 1, true, true, Storage::BF16},
    {"qwen35_tiny_mlx4", "qwen35-tiny-mlx4", &kTiny, true, 1, false, false, Storage::MLX, 4},
    {"qwen35_tiny_mlx8", "qwen35-tiny-mlx8", &kTiny, true, 1, false, false, Storage::MLX, 8},
    {"qwen35_small_mlx4", "qwen35-small-mlx4", &kSmall, false, 1, false, false, Storage::MLX, 4},
    {"clef_tiny_bf16", "clef-tiny/bf16", &kTiny, false, 0, true, false, Storage::BF16},
    {"clef_tiny_f32", "clef-tiny/f32", &kTiny, false, 0, true, false, Storage::F32},
};

using Expected = std::map<std::string, std::pair<DType, std::vector<int64_t>>>;

// Spec §9.1 (Hugging Face) and §9.2 (MLX, group size 64) names, dtypes and shapes.
Expected expected_tensors(const Case& c) {
  const Dims& d = *c.dims;
  const bool mlx = c.storage == Storage::MLX;
  const DType fl = c.storage == Storage::F32 ? DType::F32 : DType::BF16;
  const std::string prefix = mlx ? "language_model.model." : "model.language_model.";
  const int64_t key_dim = d.nk * d.dk, value_dim = d.nv * d.dv, conv_dim = 2 * key_dim + value_dim;
  Expected e;
  auto add = [&](const std::string& name, DType t, std::vector<int64_t> shape) { e[name] = {t, std::move(shape)}; };
  auto linear = [&](const std::string& module, int64_t out, int64_t in) {
    if (mlx) {
      add(module + ".weight", DType::U32, {out, in * c.bits / 32});
      add(module + ".scales", DType::BF16, {out, in / 64});
      add(module + ".biases", DType::BF16, {out, in / 64});
    } else {
      add(module + ".weight", fl, {out, in});
    }
  };
  linear(prefix + "embed_tokens", d.vocab, d.hidden);
  add(prefix + "norm.weight", fl, {d.hidden});
  if (!c.tied) linear(mlx ? "language_model.lm_head" : "lm_head", d.vocab, d.hidden);
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string l = prefix + "layers." + std::to_string(i) + ".";
    add(l + "input_layernorm.weight", fl, {d.hidden});
    add(l + "post_attention_layernorm.weight", fl, {d.hidden});
    linear(l + "mlp.gate_proj", d.ffn, d.hidden);
    linear(l + "mlp.up_proj", d.ffn, d.hidden);
    linear(l + "mlp.down_proj", d.hidden, d.ffn);
    if (d.full_attention[static_cast<std::size_t>(i)]) {
      linear(l + "self_attn.q_proj", 2 * d.nq * d.head_dim, d.hidden);
      linear(l + "self_attn.k_proj", d.nkv * d.head_dim, d.hidden);
      linear(l + "self_attn.v_proj", d.nkv * d.head_dim, d.hidden);
      linear(l + "self_attn.o_proj", d.hidden, d.nq * d.head_dim);
      add(l + "self_attn.q_norm.weight", fl, {d.head_dim});
      add(l + "self_attn.k_norm.weight", fl, {d.head_dim});
    } else {
      linear(l + "linear_attn.in_proj_qkv", conv_dim, d.hidden);
      linear(l + "linear_attn.in_proj_z", value_dim, d.hidden);
      linear(l + "linear_attn.in_proj_b", d.nv, d.hidden);
      linear(l + "linear_attn.in_proj_a", d.nv, d.hidden);
      linear(l + "linear_attn.out_proj", d.hidden, value_dim);
      add(l + "linear_attn.conv1d.weight", fl, mlx ? std::vector<int64_t>{conv_dim, d.kernel, 1}
                                                   : std::vector<int64_t>{conv_dim, 1, d.kernel});
      add(l + "linear_attn.A_log", DType::F32, {d.nv});
      add(l + "linear_attn.dt_bias", fl, {d.nv});
      // F32 in the Hugging Face release layout; cast to the model dtype by MLX.
      add(l + "linear_attn.norm.weight", mlx ? DType::BF16 : DType::F32, {d.dv});
    }
  }
  return e;
}

std::string dir_of(const Case& c) { return verdict::testing::fixture(c.dir); }

class Checkpoint : public ::testing::TestWithParam<Case> {};

TEST_P(Checkpoint, ConfigMatchesTheFixtureTable) {
  const Case& c = GetParam();
  const Dims& d = *c.dims;
  const ModelConfig cfg = load_model_config(dir_of(c) + "/config.json");
  const TextConfig& t = cfg.text;
  EXPECT_TRUE(cfg.nested_text_config);
  EXPECT_EQ(cfg.model_type, "qwen3_5");
  EXPECT_EQ(t.hidden_size, d.hidden);
  EXPECT_EQ(t.num_hidden_layers, d.layers);
  EXPECT_EQ(t.intermediate_size, d.ffn);
  EXPECT_EQ(t.num_attention_heads, d.nq);
  EXPECT_EQ(t.num_key_value_heads, d.nkv);
  EXPECT_EQ(t.head_dim, d.head_dim);
  EXPECT_EQ(t.rotary_dim(), d.rotary_dim);
  EXPECT_EQ(t.linear_num_key_heads, d.nk);
  EXPECT_EQ(t.linear_num_value_heads, d.nv);
  EXPECT_EQ(t.linear_key_head_dim, d.dk);
  EXPECT_EQ(t.linear_value_head_dim, d.dv);
  EXPECT_EQ(t.linear_conv_kernel_dim, d.kernel);
  EXPECT_EQ(t.vocab_size, d.vocab);
  EXPECT_EQ(t.tie_word_embeddings, c.tied);
  EXPECT_EQ(t.mtp_num_hidden_layers, c.mtp_layers);
  ASSERT_EQ(t.layer_types.size(), d.full_attention.size());
  for (std::size_t i = 0; i < d.full_attention.size(); ++i)
    EXPECT_EQ(t.layer_types[i] == LayerType::FullAttention, d.full_attention[i]) << "layer " << i;
  EXPECT_EQ(t.dtype, c.storage == Storage::F32 ? "float32" : "bfloat16");
  if (c.storage == Storage::MLX) {
    ASSERT_TRUE(cfg.quantization.has_value());
    EXPECT_EQ(cfg.quantization->global, (QuantSpec{c.bits, 64}));
    EXPECT_EQ(cfg.quantization->mode, "affine");
    EXPECT_TRUE(cfg.quantization->overrides.empty());
  } else {
    EXPECT_FALSE(cfg.quantization.has_value());
  }
  const GenerationConfig g = load_generation_config(dir_of(c) + "/generation_config.json");
  EXPECT_EQ(g.eos_token_ids, (std::vector<int64_t>{758, 756}));
}

TEST_P(Checkpoint, TensorsHaveTheSpecNamesDtypesAndShapes) {
  const Case& c = GetParam();
  const TensorStore store = TensorStore::open_dir(dir_of(c));
  const Expected expected = expected_tensors(c);
  for (const auto& [name, want] : expected) {
    const TensorView* t = store.find(name);
    ASSERT_NE(t, nullptr) << "missing " << name;
    EXPECT_EQ(t->dtype, want.first) << name;
    EXPECT_EQ(t->shape, want.second) << name;
  }
  for (const auto& [name, t] : store.tensors()) EXPECT_TRUE(expected.contains(name)) << "unexpected " << name;
  EXPECT_EQ(store.tensors().size(), expected.size());
  EXPECT_EQ(store.files(), (std::vector<std::string>{dir_of(c) + "/model.safetensors"}));
}

TEST_P(Checkpoint, VisionAndMtpTensorsAreSkipped) {
  const Case& c = GetParam();
  const TensorStore store = TensorStore::open_dir(dir_of(c));
  int64_t vision = 0, mtp = 0;
  for (const std::string& name : store.skipped()) {
    if (name.starts_with("model.visual.")) {
      ++vision;
    } else if (name.starts_with("mtp.")) {
      ++mtp;
    } else {
      ADD_FAILURE() << "skipped " << name;
    }
  }
  // README: four dummy model.visual.* tensors, one mtp.* block (absent from the MLX and Clef files).
  EXPECT_EQ(vision, c.vision_in_file ? 4 : 0);
  if (c.mtp_in_file) {
    EXPECT_GT(mtp, 0);
  } else {
    EXPECT_EQ(mtp, 0);
  }
  for (const auto& [name, t] : store.tensors()) EXPECT_FALSE(is_skipped_tensor(name, {})) << name;

  const TensorStore all = TensorStore::open_dir(dir_of(c), {.include_vision = true, .include_mtp = true});
  EXPECT_TRUE(all.skipped().empty());
  EXPECT_EQ(all.tensors().size(), store.tensors().size() + store.skipped().size());
  if (c.mtp_in_file) {
    EXPECT_TRUE(all.contains("mtp.fc.weight"));
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Checkpoint, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param_info) { return std::string(param_info.param.label); });

// The F32 copies are exact upcasts: to_f32 of every common tensor is bit-identical.
void expect_bit_identical(const std::string& bf16_dir, const std::string& f32_dir, const std::string& file) {
  const TensorStore a = TensorStore::open_files({verdict::testing::fixture(bf16_dir + "/" + file)},
                                                {.include_vision = true, .include_mtp = true});
  const TensorStore b = TensorStore::open_files({verdict::testing::fixture(f32_dir + "/" + file)},
                                                {.include_vision = true, .include_mtp = true});
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  int64_t bf16_tensors = 0;
  for (const auto& [name, ta] : a.tensors()) {
    SCOPED_TRACE(name);
    const TensorView* tb = b.find(name);
    ASSERT_NE(tb, nullptr);
    EXPECT_EQ(tb->dtype, DType::F32);
    EXPECT_EQ(ta.shape, tb->shape);
    if (ta.dtype == DType::BF16) ++bf16_tensors;
    const std::vector<float> va = to_f32(ta);
    const std::vector<float> vb = to_f32(*tb);
    ASSERT_EQ(va.size(), vb.size());
    EXPECT_EQ(std::memcmp(va.data(), vb.data(), va.size() * sizeof(float)), 0);
  }
  EXPECT_GT(bf16_tensors, 0);
}

TEST(CheckpointUpcast, Qwen35TinyF32IsAnExactCopy) {
  expect_bit_identical("qwen35-tiny", "qwen35-tiny-f32", "model.safetensors");
}

TEST(CheckpointUpcast, ClefTinyF32IsAnExactCopy) {
  expect_bit_identical("clef-tiny/bf16", "clef-tiny/f32", "model.safetensors");
  expect_bit_identical("clef-tiny/bf16", "clef-tiny/f32", "joint_head.safetensors");
}

TEST(CheckpointUpcast, ClefHeadOpensOnItsOwn) {
  // open_dir never reads the head; open_files does. README: head_a-like, 86 tensors.
  const TensorStore head = TensorStore::open_files({verdict::testing::fixture("clef-tiny/bf16/joint_head.safetensors")});
  EXPECT_EQ(head.tensors().size(), 86u);
  EXPECT_EQ(to_f32(head.get("prior_logit_scale")), (std::vector<float>{2.296875f}));
  EXPECT_EQ(to_f32(head.get("joint_logit_scale")), (std::vector<float>{5.0f}));
  EXPECT_EQ(to_f32(head.get("residual_gate")), (std::vector<float>{-2.0f}));
  const TensorStore backbone = TensorStore::open_dir(verdict::testing::fixture("clef-tiny/bf16"));
  EXPECT_FALSE(backbone.contains("prior_logit_scale"));
}

// Logical parameters of the text model from the table's dimensions.
int64_t text_params(const Dims& d, bool tied) {
  const int64_t key_dim = d.nk * d.dk, value_dim = d.nv * d.dv, conv_dim = 2 * key_dim + value_dim;
  int64_t n = d.vocab * d.hidden + d.hidden + (tied ? 0 : d.vocab * d.hidden);
  for (bool full : d.full_attention) {
    n += 2 * d.hidden + 3 * d.ffn * d.hidden;
    if (full)
      n += 2 * d.nq * d.head_dim * d.hidden + 2 * d.nkv * d.head_dim * d.hidden + d.hidden * d.nq * d.head_dim +
           2 * d.head_dim;
    else
      n += conv_dim * d.hidden + value_dim * d.hidden + 2 * d.nv * d.hidden + conv_dim * d.kernel + 2 * d.nv +
           d.dv + d.hidden * value_dim;
  }
  return n;
}

TEST(CheckpointSummary, CountsLogicalParameters) {
  const TensorStore hf = TensorStore::open_dir(verdict::testing::fixture("qwen35-tiny"));
  const CheckpointSummary s = summarize_checkpoint(hf);
  EXPECT_EQ(s.total_params, text_params(kTiny, true));
  EXPECT_EQ(s.quantized_params, 0);
  EXPECT_EQ(s.tensors.size(), hf.tensors().size());
  // A_log and linear_attn.norm.weight of the three DeltaNet layers are F32, the rest BF16.
  EXPECT_EQ(s.dtype_tensors.at("F32"), 6);
  EXPECT_EQ(s.dtype_tensors.at("BF16"), static_cast<int64_t>(hf.tensors().size()) - 6);
  EXPECT_EQ(s.format_params.at("F32"), 3 * (kTiny.nv + kTiny.dv));
  EXPECT_EQ(s.stored_bytes, hf.stored_bytes());

  const TensorStore small = TensorStore::open_dir(verdict::testing::fixture("qwen35-small"));
  EXPECT_EQ(summarize_checkpoint(small).total_params, text_params(kSmall, false));
}

TEST(CheckpointSummary, QuantizedMatricesCountUnpacked) {
  for (const char* dir : {"qwen35-tiny-mlx4", "qwen35-tiny-mlx8", "qwen35-small-mlx4"}) {
    SCOPED_TRACE(dir);
    const std::string path = verdict::testing::fixture(dir);
    const bool small = std::string(dir).starts_with("qwen35-small");
    const Dims& d = small ? kSmall : kTiny;
    const ModelConfig cfg = load_model_config(path + "/config.json");
    const TensorStore store = TensorStore::open_dir(path);
    const CheckpointSummary s = summarize_checkpoint(store, cfg.quantization);
    EXPECT_EQ(s.total_params, text_params(d, !small));
    const auto deltanet =
        static_cast<int64_t>(std::count(d.full_attention.begin(), d.full_attention.end(), false));
    const int64_t unquantized = d.hidden * (1 + 2 * d.layers) + 2 * d.head_dim * (d.layers - deltanet) +
                                deltanet * ((2 * d.nk * d.dk + d.nv * d.dv) * d.kernel + 2 * d.nv + d.dv);
    EXPECT_EQ(s.quantized_params, s.total_params - unquantized);
    const std::string format = quant_format_name(cfg.quantization->global);
    EXPECT_EQ(s.format_params.at(format), s.quantized_params);
    EXPECT_EQ(s.dtype_tensors.at("F32"), deltanet);  // A_log only
    EXPECT_EQ(s.dtype_tensors.at("U32"), s.quantized_modules);
    for (const TensorSummary& t : s.tensors) {
      EXPECT_FALSE(t.name.ends_with(".scales") || t.name.ends_with(".biases")) << t.name;
      if (t.quant) {
        EXPECT_EQ(t.format, format);
      }
    }
    // Without the config every stored tensor counts as stored.
    EXPECT_EQ(summarize_checkpoint(store).tensors.size(), store.tensors().size());
  }
  EXPECT_EQ(quant_format_name({4, 64}), "mlx-q4g64");
}

}  // namespace
}  // namespace verdict::formats
