// `verdict info` on every fixture checkpoint: dimensions from the fixtures README, parameter counts from
// the spec's formulas (qwen35.md §1.3, clef-decision.md §6.1), computed here independently of the code.
#include <gtest/gtest.h>

#include "core/json.h"
#include "decision/head.h"
#include "support/fixtures.h"
#include "support/process.h"

namespace verdict {
namespace {

using testing::fixture;
using testing::run_process;
using testing::verdict_bin;

struct Dims {  // the table in shared/fixtures/README.md
  int64_t H, L, linear, full, I, nq, nkv, hd, rot, nk, nv, dk, dv, K, V;
  bool tied;
};

constexpr Dims kTiny{64, 4, 3, 1, 192, 4, 2, 32, 8, 2, 4, 16, 16, 4, 768, true};
constexpr Dims kSmall{256, 8, 6, 2, 768, 8, 2, 64, 16, 4, 8, 32, 32, 4, 768, false};
constexpr Dims kClefTiny{64, 4, 3, 1, 192, 4, 2, 32, 8, 2, 4, 16, 16, 4, 768, false};

// Parameters of the text model from the tensor table of qwen35.md §9.1.
int64_t expected_parameters(const Dims& d) {
  const int64_t key_dim = d.nk * d.dk, value_dim = d.nv * d.dv, conv_dim = 2 * key_dim + value_dim;
  const int64_t mlp = 3 * d.I * d.H, norms = 2 * d.H;
  const int64_t deltanet = conv_dim * d.H + value_dim * d.H + 2 * d.nv * d.H + conv_dim * d.K + 2 * d.nv +
                           d.dv + d.H * value_dim + norms + mlp;
  const int64_t attention = 2 * d.nq * d.hd * d.H + 2 * d.nkv * d.hd * d.H + d.H * d.nq * d.hd + 2 * d.hd +
                            norms + mlp;
  const int64_t embeddings = d.V * d.H * (d.tied ? 1 : 2);
  return embeddings + d.linear * deltanet + d.full * attention + d.H;
}

// JointSchemaHead parameters from the tensor table of clef-decision.md §6.2.
int64_t expected_head_parameters(int64_t H, int64_t W, int64_t R, int64_t Ld, int64_t F) {
  const int64_t evidence = 4 * W * W + 2 * W * F + 11 * W + F;
  const int64_t field = 8 * W * W + 2 * W * F + 15 * W + F;
  return 2 * H + 6 * W * H + 3 * W + R * evidence + 2 * W + Ld * field + 4 * W + (4 * W * W + W) + (W + 1) + 3;
}

TEST(ParameterFormula, ReproducesPublishedCounts) {
  // Qwen3.5-9B: "≈ 8.95 B parameters (llama.cpp reports 8.95 B)"; clef-flash head: 121,762,820.
  const Dims nine_b{4096, 32, 24, 8, 12288, 16, 4, 256, 64, 16, 32, 128, 128, 4, 248320, false};
  EXPECT_NEAR(static_cast<double>(expected_parameters(nine_b)) / 1e9, 8.95, 0.005);
  EXPECT_EQ(expected_head_parameters(4096, 1024, 2, 4, 4096), 121762820);
  EXPECT_EQ(expected_head_parameters(5120, 1024, 2, 4, 4096), 128056324);
}

Json info_json(const std::string& dir) {
  auto r = run_process(verdict_bin(), {"info", dir, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return parse_json(r.out, "verdict info output");
}

void expect_dims(const Json& j, const Dims& d) {
  const Json& dim = j["dimensions"];
  EXPECT_EQ(dim["hidden_size"], d.H);
  EXPECT_EQ(dim["num_hidden_layers"], d.L);
  EXPECT_EQ(dim["intermediate_size"], d.I);
  EXPECT_EQ(dim["num_attention_heads"], d.nq);
  EXPECT_EQ(dim["num_key_value_heads"], d.nkv);
  EXPECT_EQ(dim["head_dim"], d.hd);
  EXPECT_EQ(dim["rotary_dim"], d.rot);
  EXPECT_EQ(dim["linear_num_key_heads"], d.nk);
  EXPECT_EQ(dim["linear_num_value_heads"], d.nv);
  EXPECT_EQ(dim["linear_key_head_dim"], d.dk);
  EXPECT_EQ(dim["linear_value_head_dim"], d.dv);
  EXPECT_EQ(dim["linear_conv_kernel_dim"], d.K);
  EXPECT_EQ(dim["vocab_size"], d.V);
  EXPECT_EQ(dim["tie_word_embeddings"], d.tied);
  EXPECT_EQ(j["layers"]["linear_attention"], d.linear);
  EXPECT_EQ(j["layers"]["full_attention"], d.full);
  EXPECT_EQ(j["parameters"], expected_parameters(d));
}

void expect_tokenizer(const Json& j) {
  const Json& t = j["tokenizer"];
  ASSERT_TRUE(t.is_object());
  EXPECT_EQ(t["vocab_size"], 765);  // 756 regular + 9 added (README)
  EXPECT_EQ(t["model_vocab_size"], 756);
  EXPECT_EQ(t["normalizer"], "NFC");
  EXPECT_EQ(t["special_tokens"]["<|im_start|>"], 757);
  EXPECT_EQ(t["special_tokens"]["<|im_end|>"], 758);
  EXPECT_FALSE(t["special_tokens"].contains("<think>"));  // special: false
}

TEST(Info, QwenTinyBf16) {
  const Json j = info_json(fixture("qwen35-tiny"));
  EXPECT_EQ(j["kind"], "chat");
  EXPECT_EQ(j["architecture"], "Qwen3_5ForConditionalGeneration");
  EXPECT_EQ(j["layer_pattern"], "LLLA");
  EXPECT_TRUE(j["quantization"].is_null());
  EXPECT_GT(j["stored_dtypes"]["BF16"].get<int>(), 0);
  EXPECT_EQ(j["stored_dtypes"]["F32"], 6);  // A_log and linear_attn.norm.weight of 3 DeltaNet layers
  // 4 dummy model.visual.* (README) + one MTP block: mtp.fc, 3 MTP norms and one attention layer of
  // 11 tensors (qwen35.md §15, §9.1).
  EXPECT_EQ(j["skipped_tensors"], 4 + 4 + 11);
  expect_dims(j, kTiny);
  expect_tokenizer(j);
  EXPECT_GT(j["memory_bytes"].get<int64_t>(), expected_parameters(kTiny) * 2 - 1);
}

TEST(Info, QwenTinyF32) {
  const Json j = info_json(fixture("qwen35-tiny-f32"));
  expect_dims(j, kTiny);
  EXPECT_FALSE(j["stored_dtypes"].contains("BF16"));
  EXPECT_EQ(j["memory_bytes"], expected_parameters(kTiny) * 4);
}

TEST(Info, QwenSmallUntied) {
  const Json j = info_json(fixture("qwen35-small"));
  EXPECT_EQ(j["layer_pattern"], "LLLA LLLA");
  expect_dims(j, kSmall);
  expect_tokenizer(j);
}

TEST(Info, MlxQuantizedCountsUnpackedParameters) {
  for (const char* name : {"qwen35-tiny-mlx4", "qwen35-tiny-mlx8", "qwen35-small-mlx4"}) {
    SCOPED_TRACE(name);
    const Json j = info_json(fixture(name));
    const bool small = std::string(name).find("small") != std::string::npos;
    expect_dims(j, small ? kSmall : kTiny);
    ASSERT_TRUE(j["quantization"].is_object());
    EXPECT_EQ(j["quantization"]["bits"], std::string(name).find("mlx8") != std::string::npos ? 8 : 4);
    EXPECT_EQ(j["quantization"]["group_size"], 64);
    EXPECT_EQ(j["quantization"]["mode"], "affine");
    EXPECT_GT(j["stored_dtypes"]["U32"].get<int>(), 0);
    // Quantized weights take far less memory than the BF16 ones.
    EXPECT_LT(j["memory_bytes"].get<int64_t>(), expected_parameters(small ? kSmall : kTiny) * 2);
  }
}

TEST(Info, ClefTinyIsADecisionModel) {
  for (const char* name : {"clef-tiny/bf16", "clef-tiny/f32"}) {
    SCOPED_TRACE(name);
    const Json j = info_json(fixture(name));
    EXPECT_EQ(j["kind"], "decision");
    expect_dims(j, kClefTiny);
    EXPECT_EQ(j["dimensions"]["mtp_num_hidden_layers"], 0);
    ASSERT_TRUE(j.contains("decision_head"));
    EXPECT_EQ(j["decision_head"]["config"]["width"], 32);
    EXPECT_EQ(j["decision_head"]["parameters"], expected_head_parameters(64, 32, 2, 2, 64));
    EXPECT_EQ(j["decision_head"]["tensors"], 9 + 14 * 2 + 2 + 18 * 2 + 2 + 2 + 4 + 3);
    // Loaded, the head takes what the loaded head holds (its matrices as stored, its vectors in fp32), as the
    // memory budget charges it.
    const auto head_bytes = decision::JointHead::load_dir(fixture(name)).weight_bytes();
    EXPECT_EQ(j["decision_head"]["loaded_bytes"], head_bytes);
    EXPECT_GE(j["decision_head"]["loaded_bytes"].get<int64_t>(), j["decision_head"]["bytes"].get<int64_t>());
  }
}

TEST(Info, TextOutputNamesEveryField) {
  auto r = run_process(verdict_bin(), {"info", fixture("qwen35-tiny-mlx4")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* key : {"kind", "architecture", "dimensions", "layers", "dtypes", "quantization",
                          "parameters", "tokenizer", "memory"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  EXPECT_NE(r.out.find("4-bit, group size 64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::to_string(expected_parameters(kTiny))), std::string::npos) << r.out;
}

TEST(Info, MissingFolderIsOneLineError) {
  auto r = run_process(verdict_bin(), {"info", "/nonexistent/model"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/model"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

}  // namespace
}  // namespace verdict
