// Qwen3.5 from GGUF: llama.cpp's files of the fixture models against the float64 goldens, the value-head
// order, and `convert` round trips (F32/F16/BF16 exact; quantized files computed exactly on their
// dequantized values).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/gguf.h"
#include "formats/gguf_writer.h"
#include "golden_util.h"
#include "kernels/ops.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/gguf_export.h"
#include "support/scoped_env.h"

namespace verdict::models::qwen35 {
namespace {

using namespace testing;

std::string temp_path(const std::string& tag) {
  return ::testing::TempDir() + "/qwen35_gguf_test_" + std::to_string(::getpid()) + "_" + tag + ".gguf";
}

// Exact fp32 activations (the test binaries' default, see tests/support/exact_mode.cc), whatever
// VERDICT_PACK the suite runs with: these exactness checks are not about the packed GEMMs' rounding.
struct ExactActivations {
  verdict::testing::ScopedEnv env{"VERDICT_PACK", "0"};
};

struct TempFile {
  std::string path;
  ~TempFile() { std::remove(path.c_str()); }
};

// Prefill of every prompt of golden(name): the last row's logits and the row-0/T-1 hidden rows.
void expect_matches_golden(const Backbone& model, const std::string& golden_name, const std::string& what) {
  for (const Json& prompt : golden(golden_name)["prompts"]) {
    const std::vector<int32_t> ids = to_ids(prompt["ids"]);
    const auto n = static_cast<int64_t>(ids.size());
    SeqStatePool pool = model.make_pool(1, n);
    const int64_t last = n - 1;
    const ForwardOutput out = model.prefill(pool, pool.acquire(), ids, std::span<const int64_t>(&last, 1));
    const std::string name = what + " " + prompt["name"].get<std::string>();
    for (const auto& [row, values] : prompt["hidden_rows"].items())
      expect_row_close(out.hidden_row(0, std::stoll(row)), to_floats(values), name + " hidden row " + row);
    expect_row_close(out.logits_row(0, 0), to_floats(prompt["logits_last"]), name + " logits_last");
  }
}

std::vector<float> last_logits(const Backbone& model, const std::vector<int32_t>& ids) {
  SeqStatePool pool = model.make_pool(1, static_cast<int64_t>(ids.size()));
  const int64_t last = static_cast<int64_t>(ids.size()) - 1;
  const ForwardOutput out = model.prefill(pool, pool.acquire(), ids, std::span<const int64_t>(&last, 1));
  const auto row = out.logits_row(0, 0);
  return {row.begin(), row.end()};
}

TEST(GgufModel, LlamaCppFilesMatchTheGoldens) {
  for (const std::string name : {"qwen35-tiny", "qwen35-small"}) {
    const auto model = Backbone::load(checkpoint_dir(name + "/model-f32.gguf"));
    EXPECT_EQ(model->weights().head_mapping, HeadMapping::Tiled);
    const Json& cfg = golden(name)["config"];
    EXPECT_EQ(model->config().vocab, cfg["vocab_size"].get<int64_t>());
    EXPECT_EQ(model->config().tied, cfg["tie_word_embeddings"].get<bool>());
    EXPECT_EQ(model->config().rotary_dim, cfg["rotary_dim"].get<int64_t>());
    EXPECT_EQ(model->config().nv, cfg["linear_num_value_heads"].get<int64_t>());
    expect_matches_golden(*model, name, name + ".gguf");
  }
}

TEST(GgufModel, GroupedValueHeadsBreakTheGgufOrder) {
  // nv ≠ nk in both fixture models: reading GGUF slots with the Hugging Face mapping is wrong.
  const std::string path = checkpoint_dir("qwen35-small/model-f32.gguf");
  const std::vector<int32_t> ids = to_ids(golden("qwen35-small")["prompts"][1]["ids"]);
  const std::vector<float> ref = to_floats(golden("qwen35-small")["prompts"][1]["logits_last"]);
  LoadOptions wrong;
  wrong.head_mapping = HeadMapping::Grouped;
  EXPECT_LT(row_diff(last_logits(*Backbone::load(path), ids), ref).rel(), kRelTolerance);
  EXPECT_GT(row_diff(last_logits(*Backbone::load(path, wrong), ids), ref).rel(), 1e-2);
}

TEST(GgufModel, ConvertWritesWhatLlamaCppWrote) {
  // The fixture GGUF files were written bit-identically to llama.cpp's convert_hf_to_gguf.py.
  for (const std::string name : {"qwen35-tiny", "qwen35-small"}) {
    const TempFile out{temp_path(name + "-f32")};
    export_gguf(checkpoint_dir(name), out.path, {});
    const formats::GgufFile ours(out.path), theirs(checkpoint_dir(name + "/model-f32.gguf"));
    ASSERT_EQ(ours.header().metadata.size(), theirs.header().metadata.size()) << name;
    for (std::size_t i = 0; i < ours.header().metadata.size(); ++i) {
      const auto& [key, value] = ours.header().metadata[i];
      const auto& [want_key, want] = theirs.header().metadata[i];
      EXPECT_EQ(key, want_key) << name;
      EXPECT_EQ(value.to_string(1u << 20), want.to_string(1u << 20)) << name << " " << key;
      EXPECT_EQ(value.raw(), want.raw()) << name << " " << key;
    }
    ASSERT_EQ(ours.tensors().size(), theirs.tensors().size()) << name;
    for (std::size_t i = 0; i < ours.tensors().size(); ++i) {
      const formats::GgufTensor& a = ours.tensors()[i];
      const formats::GgufTensor& b = theirs.tensors()[i];
      EXPECT_EQ(a.name, b.name) << name;
      EXPECT_EQ(a.ne, b.ne) << a.name;
      EXPECT_EQ(a.offset, b.offset) << a.name;
      ASSERT_EQ(a.nbytes, b.nbytes) << a.name;
      const auto* x = reinterpret_cast<const float*>(a.data);
      const auto* y = reinterpret_cast<const float*>(b.data);
      for (std::size_t k = 0; k < a.nbytes / 4; ++k) {
        // ssm_a = −exp(A_log): ours is correctly rounded, PyTorch's float32 exp may be 1 ulp off.
        if (a.name.ends_with("ssm_a")) {
          EXPECT_NEAR(x[k], y[k], std::fabs(y[k]) * 1.2e-7f) << a.name << "[" << k << "]";
        } else if (x[k] != y[k]) {
          ADD_FAILURE() << a.name << "[" << k << "]: " << x[k] << " vs " << y[k];
          break;
        }
      }
    }
  }
}

// convert quantizes a matrix's rows on every thread: the file must be the one a single thread writes.
TEST(GgufModel, ConvertWritesTheSameBytesOnAnyThreadCount) {
  const int threads = kernels::num_threads();
  std::string files[2];
  for (int k = 0; k < 2; ++k) {
    kernels::set_num_threads(k == 0 ? 1 : 3);
    const TempFile out{temp_path("qwen35-small-threads-" + std::to_string(k))};
    export_gguf(checkpoint_dir("qwen35-small"), out.path, {formats::GgmlType::IQ4_XS, "", false});
    std::ifstream in(out.path, std::ios::binary);
    files[k].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  kernels::set_num_threads(threads);
  ASSERT_GT(files[0].size(), 1000000u);
  EXPECT_TRUE(files[0] == files[1]) << "the 3-thread file differs from the 1-thread one";
}

TEST(GgufModel, ConvertRoundTripsFloatTypesAndMlx) {
  const ExactActivations exact;
  struct Case {
    std::string checkpoint, golden_name;
    formats::GgmlType type;
  };
  // The goldens hold the values as stored (BF16, or dequantized MLX): F32, BF16 and F16 (every BF16
  // value of these checkpoints is exact in F16 too, or within its rounding) keep them.
  for (const Case& c : {Case{"qwen35-tiny", "qwen35-tiny", formats::GgmlType::BF16},
                        Case{"qwen35-small", "qwen35-small", formats::GgmlType::F16},
                        Case{"qwen35-tiny-mlx4", "qwen35-tiny-mlx4", formats::GgmlType::F32}}) {
    const TempFile out{temp_path(c.checkpoint + "-" + std::string(formats::ggml_type_name(c.type)))};
    export_gguf(checkpoint_dir(c.checkpoint), out.path, {c.type, ""});
    expect_matches_golden(*Backbone::load(out.path), c.golden_name,
                          c.checkpoint + " as " + std::string(formats::ggml_type_name(c.type)));
  }
}

// An F32 copy of a GGUF file whose tensors hold the dequantized values of the original.
void write_dequantized_copy(const std::string& in, const std::string& out) {
  const formats::GgufFile f(in);
  formats::GgufLayout layout;
  for (const auto& [key, value] : f.header().metadata) layout.add_metadata(key, value);
  for (const formats::GgufTensor& t : f.tensors()) layout.add_tensor(t.name, formats::GgmlType::F32, t.ne);
  formats::write_gguf(out, layout, [&](std::size_t i, std::span<uint8_t> bytes) {
    const formats::GgufTensor& t = f.tensors()[i];
    kernels::WeightMatrix w;
    w.rows = t.rows();
    w.cols = t.ne[0];
    w.blocks = t.data;
    w.f32 = reinterpret_cast<const float*>(t.data);
    switch (t.type) {
      case formats::GgmlType::F32: w.type = kernels::WeightType::F32; break;
      case formats::GgmlType::F16: w.type = kernels::WeightType::F16; break;
      case formats::GgmlType::Q8_0: w.type = kernels::WeightType::Q8_0; break;
      case formats::GgmlType::Q4_0: w.type = kernels::WeightType::Q4_0; break;
      case formats::GgmlType::Q4_1: w.type = kernels::WeightType::Q4_1; break;
      case formats::GgmlType::Q5_0: w.type = kernels::WeightType::Q5_0; break;
      case formats::GgmlType::Q5_1: w.type = kernels::WeightType::Q5_1; break;
      case formats::GgmlType::Q2_K: w.type = kernels::WeightType::Q2_K; break;
      case formats::GgmlType::Q3_K: w.type = kernels::WeightType::Q3_K; break;
      case formats::GgmlType::Q4_K: w.type = kernels::WeightType::Q4_K; break;
      case formats::GgmlType::Q5_K: w.type = kernels::WeightType::Q5_K; break;
      case formats::GgmlType::Q6_K: w.type = kernels::WeightType::Q6_K; break;
      case formats::GgmlType::IQ4_NL: w.type = kernels::WeightType::IQ4_NL; break;
      case formats::GgmlType::IQ4_XS: w.type = kernels::WeightType::IQ4_XS; break;
      default: FAIL() << t.name;
    }
    for (int64_t r = 0; r < w.rows; ++r)
      kernels::dequantize_row(w, r, reinterpret_cast<float*>(bytes.data()) + r * w.cols);
  });
}

TEST(GgufModel, QuantizedFilesComputeTheirDequantizedModel) {
  const ExactActivations exact;
  struct Case {
    std::string checkpoint;
    formats::GgmlType type;
    double max_rel_vs_golden;  // the quantization's own error on these random-weight models
    bool k_m = false;  // llama-quantize's _K_M mix
  };
  for (const Case& c : {Case{"qwen35-tiny", formats::GgmlType::Q8_0, 0.15}, Case{"qwen35-tiny", formats::GgmlType::Q4_0, 1.5},
                        Case{"qwen35-small", formats::GgmlType::Q4_K, 1.5},
                        Case{"qwen35-small", formats::GgmlType::Q6_K, 0.25},
                        Case{"qwen35-small", formats::GgmlType::Q4_K, 1.5, true},
                        Case{"qwen35-small", formats::GgmlType::Q5_K, 0.6, true},
                        Case{"qwen35-small", formats::GgmlType::Q3_K, 1.5},
                        Case{"qwen35-small", formats::GgmlType::Q2_K, 1.5},
                        Case{"qwen35-tiny", formats::GgmlType::IQ4_NL, 1.5},
                        Case{"qwen35-small", formats::GgmlType::IQ4_XS, 1.5},
                        Case{"qwen35-tiny", formats::GgmlType::Q4_1, 1.5},
                        Case{"qwen35-small", formats::GgmlType::Q5_0, 0.6},
                        Case{"qwen35-tiny", formats::GgmlType::Q5_1, 0.6}}) {
    const std::string what = c.checkpoint + " " + std::string(formats::ggml_type_name(c.type)) + (c.k_m ? "_M" : "");
    const std::string tag = std::string(formats::ggml_type_name(c.type)) + (c.k_m ? "-m" : "");
    const TempFile quantized{temp_path(c.checkpoint + "-q-" + tag)};
    const TempFile dequantized{temp_path(c.checkpoint + "-dq-" + tag)};
    const GgufExportSummary summary = export_gguf(checkpoint_dir(c.checkpoint), quantized.path, {c.type, "", c.k_m});
    EXPECT_GT(summary.tensors_by_type.at(std::string(formats::ggml_type_name(c.type))), 0) << what;
    write_dequantized_copy(quantized.path, dequantized.path);
    const auto q = Backbone::load(quantized.path);
    const auto dq = Backbone::load(dequantized.path);
    for (const Json& prompt : golden(c.checkpoint)["prompts"]) {
      const std::vector<int32_t> ids = to_ids(prompt["ids"]);
      const std::vector<float> got = last_logits(*q, ids);
      expect_row_close(got, last_logits(*dq, ids), what + " " + prompt["name"].get<std::string>());
      EXPECT_LT(row_diff(got, to_floats(prompt["logits_last"])).rel(), c.max_rel_vs_golden) << what;
    }
  }
}

// The output projection is packed with the layers (the embeddings themselves when tied): logits go
// through the packed GEMM, while the embedding lookup keeps reading the rows as stored, so the hidden
// states are those of the unpacked output bit for bit.
// llama-quantize's Q4_K_M and Q5_K_M recipes: the layers whose attn_v / attn_qkv and ffn_down get Q6_K, as
// llama-quantize (llama.cpp 80fb11ac) chose them in its Q4_K_M and Q5_K_M files of the 24-layer
// qwen35-0.8b shape, and the recipes on qwen35-small (8 layers, untied: the output matrix Q6_K, the
// embeddings the base type).
TEST(GgufModel, K_MRecipesGiveQ6_KWhereLlamaQuantizeDoes) {
  std::vector<int64_t> more_bits;
  for (int64_t i = 0; i < 24; ++i)
    if (use_more_bits(i, 24)) more_bits.push_back(i);
  EXPECT_EQ(more_bits, (std::vector<int64_t>{0, 1, 2, 5, 8, 11, 14, 17, 20, 21, 22, 23}));

  for (const auto& [base, file_type] : {std::pair{formats::GgmlType::Q4_K, 15}, std::pair{formats::GgmlType::Q5_K, 17}}) {
    const std::string what(formats::ggml_type_name(base));
    const TempFile out{temp_path("qwen35-small-k_m-" + what)};
    GgufExportOptions options;
    options.type = base;
    options.k_m = true;
    export_gguf(checkpoint_dir("qwen35-small"), out.path, options);
    const formats::GgufFile file(out.path);
    ASSERT_NE(file.find("general.file_type"), nullptr);
    EXPECT_EQ(file.find("general.file_type")->as_int(), file_type) << what;  // LLAMA_FTYPE_MOSTLY_Q4_K_M, _Q5_K_M
    int q6 = 0, rest = 0;
    for (const formats::GgufTensor& t : file.tensors()) {
      if (t.type == formats::GgmlType::F32) continue;
      bool more = t.name == "output.weight";
      for (int64_t layer : {0, 3, 6, 7})  // use_more_bits over 8 layers
        for (const char* role : {"attn_v", "attn_qkv", "ffn_down"})
          more = more || t.name == "blk." + std::to_string(layer) + "." + role + ".weight";
      EXPECT_EQ(t.type, more ? formats::GgmlType::Q6_K : base) << what << " " << t.name;
      (t.type == formats::GgmlType::Q6_K ? q6 : rest) += 1;
    }
    EXPECT_EQ(q6, 1 + 2 * 4) << what;  // the output matrix; attn_qkv or attn_v, and ffn_down, of 4 layers
    EXPECT_GT(rest, 0) << what;
    options.type = formats::GgmlType::Q8_0;
    EXPECT_THROW(export_gguf(checkpoint_dir("qwen35-small"), out.path, options), Error);
  }
}

TEST(GgufModel, PackedOutputProjectionLeavesTheEmbeddingLookupAlone) {
  const verdict::testing::ScopedEnv default_mode("VERDICT_PACK", nullptr);  // packed
  const TempFile quantized{temp_path("qwen35-tiny-q8-output")};
  (void)export_gguf(checkpoint_dir("qwen35-tiny"), quantized.path, {formats::GgmlType::Q8_0, ""});
  LoadOptions unpacked_output;
  unpacked_output.pack_output = false;
  const auto packed = Backbone::load(quantized.path);
  const auto plain = Backbone::load(quantized.path, unpacked_output);
  ASSERT_NE(packed->weights().output().pack, nullptr);
  EXPECT_EQ(plain->weights().output().pack, nullptr);
  for (const Json& prompt : golden("qwen35-tiny")["prompts"]) {
    const std::vector<int32_t> ids = to_ids(prompt["ids"]);
    const int64_t last = static_cast<int64_t>(ids.size()) - 1;
    SeqStatePool pa = packed->make_pool(1, last + 1), pb = plain->make_pool(1, last + 1);
    const ForwardOutput a = packed->prefill(pa, pa.acquire(), ids, std::span<const int64_t>(&last, 1));
    const ForwardOutput b = plain->prefill(pb, pb.acquire(), ids, std::span<const int64_t>(&last, 1));
    EXPECT_EQ(a.hidden, b.hidden) << prompt["name"];
    const auto la = a.logits_row(0, 0), lb = b.logits_row(0, 0);
    // Only the activations' int8 rounding separates the two (the weights are the same Q8_0 values).
    EXPECT_LT(row_diff(la, lb).rel(), 0.02) << prompt["name"];
    EXPECT_EQ(std::max_element(la.begin(), la.end()) - la.begin(), std::max_element(lb.begin(), lb.end()) - lb.begin())
        << prompt["name"];
  }
}

TEST(GgufModel, RefusesWhatItCannotLoad) {
  const TempFile out{temp_path("bad-arch")};
  formats::GgufLayout layout;
  layout.add_metadata("general.architecture", formats::GgufValue::string("llama"));
  formats::write_gguf(out.path, layout, [](std::size_t, std::span<uint8_t>) {});
  try {
    (void)Backbone::load(out.path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("general.architecture is 'llama'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)Backbone::load(temp_path("missing")), Error);
}

}  // namespace
}  // namespace verdict::models::qwen35
