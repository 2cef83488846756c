// Generated checkpoints in the Hugging Face layout: the fixture files' structure, loading with formats,
// tokenizer and backbone, finite O(1) activations, F32 = exact upcast of BF16, and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backbone_check.h"
#include "core/dtype.h"
#include "core/json.h"
#include "core/mapped_file.h"
#include "formats/convert.h"
#include "formats/hf_config.h"
#include "formats/tensor_store.h"
#include "scratch.h"
#include "support/fixtures.h"
#include "tokenizer/tokenizer.h"

namespace verdict::modelgen {
namespace {

using testing::generated;
using testing::options;
using testing::read_bytes;
using testing::run_backbone;
using testing::ScratchDir;

constexpr const char* kPrompt =
    "<|im_start|>user\nThe order has not arrived. ¿Dónde está mi pedido? 订单还没有到。<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n";

struct Stored {
  std::string dtype;
  std::vector<int64_t> shape;
  bool operator==(const Stored&) const = default;
};

std::map<std::string, Stored> stored_tensors_of(const std::vector<std::string>& files) {
  std::map<std::string, Stored> out;
  const auto store = formats::TensorStore::open_files(files);
  for (const auto& [name, t] : store.tensors())
    out[name] = {std::string(dtype_name(t.dtype)), t.shape};
  return out;
}

TEST(GeneratedCheckpoint, QwenTinyHasTheFixtureLayout) {
  const std::string& dir = generated(options("qwen35-tiny"));
  EXPECT_EQ(stored_tensors_of({dir + "/model.safetensors"}),
            stored_tensors_of({::verdict::testing::fixture("qwen35-tiny/model.safetensors")}));
  // config.json is the fixture's, byte for byte, except that no MTP layer is written.
  std::string expected = read_text_file(::verdict::testing::fixture("qwen35-tiny/config.json"));
  const std::string mtp1 = "\"mtp_num_hidden_layers\": 1", mtp0 = "\"mtp_num_hidden_layers\": 0";
  ASSERT_NE(expected.find(mtp1), std::string::npos);
  expected.replace(expected.find(mtp1), mtp1.size(), mtp0);
  EXPECT_EQ(read_text_file(dir + "/config.json"), expected);
  EXPECT_EQ(read_text_file(dir + "/generation_config.json"),
            read_text_file(::verdict::testing::fixture("qwen35-tiny/generation_config.json")));
  const formats::ModelConfig config = formats::load_model_config(dir + "/config.json");
  EXPECT_TRUE(config.nested_text_config);
  EXPECT_EQ(config.text.mtp_num_hidden_layers, 0);
  EXPECT_FALSE(config.quantization.has_value());
  EXPECT_EQ(formats::SafetensorsFile(dir + "/model.safetensors").metadata().at("format"), "pt");
}

TEST(GeneratedCheckpoint, QwenSmallHasTheFixtureLayout) {
  const std::string& dir = generated(options("qwen35-small"));
  EXPECT_EQ(stored_tensors_of({dir + "/model.safetensors"}),
            stored_tensors_of({::verdict::testing::fixture("qwen35-small/model.safetensors")}));
  EXPECT_TRUE(parse_json(read_text_file(dir + "/tokenizer.json"), "tok").contains("model"));
}

// The tensor names of clef-decision.md §6.2 for R routing and Ld field layers, with their shapes.
std::map<std::string, std::vector<int64_t>> spec_head_tensors(int64_t H, int64_t W, int64_t F, int64_t R,
                                                              int64_t Ld) {
  std::map<std::string, std::vector<int64_t>> t;
  t["hidden_norm.weight"] = t["hidden_norm.bias"] = {H};
  for (const char* p : {"memory_projection", "question_projection", "option_question_projection",
                        "global_projection", "option_context_projection", "option_lexical_projection"})
    t[std::string(p) + ".weight"] = {W, H};
  t["type_embedding.weight"] = {3, W};
  for (int64_t r = 0; r < R; ++r) {
    const std::string e = "evidence_layers." + std::to_string(r) + ".";
    for (const char* n : {"query_norm", "memory_norm", "feedforward_norm"})
      t[e + n + ".weight"] = t[e + n + ".bias"] = {W};
    t[e + "attention.in_proj_weight"] = {3 * W, W};
    t[e + "attention.in_proj_bias"] = {3 * W};
    t[e + "attention.out_proj.weight"] = {W, W};
    t[e + "attention.out_proj.bias"] = {W};
    t[e + "feedforward.0.weight"] = {F, W};
    t[e + "feedforward.0.bias"] = {F};
    t[e + "feedforward.3.weight"] = {W, F};
    t[e + "feedforward.3.bias"] = {W};
  }
  t["option_summary_norm.weight"] = t["option_summary_norm.bias"] = {W};
  for (int64_t l = 0; l < Ld; ++l) {
    const std::string f = "layers." + std::to_string(l) + ".";
    for (const char* a : {"self_attn", "multihead_attn"}) {
      t[f + a + ".in_proj_weight"] = {3 * W, W};
      t[f + a + ".in_proj_bias"] = {3 * W};
      t[f + a + ".out_proj.weight"] = {W, W};
      t[f + a + ".out_proj.bias"] = {W};
    }
    t[f + "linear1.weight"] = {F, W};
    t[f + "linear1.bias"] = {F};
    t[f + "linear2.weight"] = {W, F};
    t[f + "linear2.bias"] = {W};
    for (const char* n : {"norm1", "norm2", "norm3"}) t[f + n + ".weight"] = t[f + n + ".bias"] = {W};
  }
  t["field_norm.weight"] = t["field_norm.bias"] = {W};
  t["option_norm.weight"] = t["option_norm.bias"] = {W};
  t["residual_scorer.0.weight"] = {W, 4 * W};
  t["residual_scorer.0.bias"] = {W};
  t["residual_scorer.3.weight"] = {1, W};
  t["residual_scorer.3.bias"] = {1};
  t["prior_logit_scale"] = t["joint_logit_scale"] = t["residual_gate"] = {};
  return t;
}

TEST(GeneratedCheckpoint, ClefTinyHasTheReleaseLayoutAndExactlyTheSpecHeadTensors) {
  for (bool f32 : {false, true}) {
    const std::string& dir = generated(options("clef-tiny", 7, f32));
    const std::string fixture_dir = ::verdict::testing::fixture(f32 ? "clef-tiny/f32" : "clef-tiny/bf16");
    for (const char* f : {"config.json", "generation_config.json", "joint_head_config.json"})
      EXPECT_EQ(read_text_file(dir + "/" + f), read_text_file(fixture_dir + "/" + f)) << f;
    EXPECT_EQ(stored_tensors_of({dir + "/model.safetensors"}), stored_tensors_of({fixture_dir + "/model.safetensors"}));

    const formats::SafetensorsFile head(dir + "/joint_head.safetensors");
    std::map<std::string, std::vector<int64_t>> found;
    for (const auto& t : head.tensors()) {
      found[t.name] = t.shape;
      EXPECT_EQ(t.dtype, f32 ? DType::F32 : DType::BF16) << t.name;
    }
    EXPECT_EQ(found, spec_head_tensors(64, 32, 64, 2, 2));
    EXPECT_EQ(found.size(), 9u + 14 * 2 + 2 + 18 * 2 + 2 + 2 + 4 + 3);
    EXPECT_EQ(head.metadata().at("seed"), "7");
    const auto store = formats::TensorStore::open_files({dir + "/joint_head.safetensors"});
    EXPECT_EQ(formats::to_f32(store.get("prior_logit_scale")), std::vector<float>{2.296875f});
    EXPECT_EQ(formats::to_f32(store.get("joint_logit_scale")), std::vector<float>{2.296875f});
    EXPECT_EQ(formats::to_f32(store.get("residual_gate")), std::vector<float>{-2.0f});
  }
}

TEST(GeneratedCheckpoint, BackboneRunsWithFiniteUnitScaleActivations) {
  for (const char* preset : {"qwen35-tiny", "qwen35-small", "qwen-demo", "clef-tiny"}) {
    const testing::ForwardStats s = run_backbone(generated(options(preset)), kPrompt);
    EXPECT_TRUE(s.finite) << preset;
    EXPECT_GT(s.min_row_rms, 0.5) << preset;
    EXPECT_LT(s.max_row_rms, 2.0) << preset;
    EXPECT_GT(s.logits_std, 0.2) << preset;
    EXPECT_LT(s.logits_std, 5.0) << preset;
    ASSERT_GE(s.hidden.size(), 2u);
    EXPECT_NE(s.hidden.front(), s.hidden.back()) << preset;
  }
}

TEST(GeneratedCheckpoint, TokenizerRoundTripsText) {
  const auto tok = tokenizer::Tokenizer::from_file(generated(options("qwen35-tiny")) + "/tokenizer.json");
  const std::string text = "Respuesta: el pedido llegará mañana. 谢谢！ Thank you.";
  EXPECT_EQ(tok.decode(tok.encode(text)), text);
  EXPECT_EQ(tok.encode("<|im_end|>"), std::vector<int32_t>{758});
}

TEST(GeneratedCheckpoint, F32IsTheExactUpcastOfBf16) {
  const std::string& bf16 = generated(options("qwen35-tiny"));
  const std::string& f32 = generated(options("qwen35-tiny", 7, true));
  const auto a = formats::TensorStore::open_dir(bf16), b = formats::TensorStore::open_dir(f32);
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const auto& [name, t] : a.tensors()) {
    const formats::TensorView& u = b.get(name);
    EXPECT_EQ(u.dtype, DType::F32) << name;
    EXPECT_EQ(formats::to_f32(t), formats::to_f32(u)) << name;
  }
  EXPECT_EQ(formats::load_model_config(f32 + "/config.json").text.dtype, "float32");
  const auto x = run_backbone(bf16, kPrompt), y = run_backbone(f32, kPrompt);
  ASSERT_EQ(x.hidden.size(), y.hidden.size());
  for (std::size_t r = 0; r < x.hidden.size(); ++r)
    for (std::size_t k = 0; k < x.hidden[r].size(); ++k) EXPECT_NEAR(x.hidden[r][k], y.hidden[r][k], 1e-5);
}

TEST(GeneratedCheckpoint, SameSeedSameBytesOtherSeedOtherWeights) {
  const GenerateOptions o = options("clef-tiny", 7);
  const std::string& first = generated(o);
  ScratchDir again;
  write_model(plan_model(o), again.path());
  ScratchDir other;
  write_model(plan_model(options("clef-tiny", 8)), other.path());
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(first)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"config.json", "generation_config.json", "joint_head.safetensors",
                                          "joint_head_config.json", "model.safetensors", "tokenizer.json",
                                          "tokenizer_config.json"}));
  for (const std::string& f : files) {
    EXPECT_TRUE(read_bytes(first + "/" + f) == read_bytes(again.file(f))) << f;
    const bool weights = f.ends_with(".safetensors");
    EXPECT_EQ(read_bytes(first + "/" + f) == read_bytes(other.file(f)), !weights) << f;
  }
  // A different seed changes every weight tensor, not just a few bytes.
  const auto a = formats::TensorStore::open_dir(first), b = formats::TensorStore::open_dir(other.path());
  for (const auto& [name, t] : a.tensors())
    EXPECT_NE(formats::to_f32(t), formats::to_f32(b.get(name))) << name;
}

TEST(GeneratedCheckpoint, BytesDoNotDependOnBlocksOrThreads) {
  GenerateOptions o = options("qwen35-small", 7);
  o.threads = 3;
  o.block_values = 100000;  // the large matrices span two blocks, each split over three threads
  ScratchDir dir;
  write_model(plan_model(o), dir.path());
  EXPECT_TRUE(read_bytes(dir.file("model.safetensors")) ==
              read_bytes(generated(options("qwen35-small", 7)) + "/model.safetensors"));
}

TEST(GeneratedCheckpoint, EnsureModelWritesOnceAndKeepsACompleteFolder) {
  ScratchDir dir;
  const std::string path = dir.file("cache/model");
  ensure_model(options("qwen35-tiny", 3), path);
  const auto written = std::filesystem::last_write_time(path + "/model.safetensors");
  ensure_model(options("qwen35-tiny", 3), path);
  EXPECT_EQ(std::filesystem::last_write_time(path + "/model.safetensors"), written);
  for (const auto& e : std::filesystem::directory_iterator(path))
    EXPECT_FALSE(e.path().string().ends_with(".tmp")) << e.path();
}

TEST(GeneratedCheckpoint, RewritingAFolderLeavesNoFilesOfThePreviousCheckpoint) {
  ScratchDir dir;
  write_model(plan_model(options("clef-tiny", 1)), dir.path());
  ASSERT_TRUE(std::filesystem::exists(dir.file("joint_head.safetensors")));
  write_model(plan_model(options("qwen35-tiny", 1)), dir.path());
  EXPECT_FALSE(std::filesystem::exists(dir.file("joint_head.safetensors")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("joint_head_config.json")));
  EXPECT_TRUE(read_bytes(dir.file("model.safetensors")) ==
              read_bytes(generated(options("qwen35-tiny", 1)) + "/model.safetensors"));
}

}  // namespace
}  // namespace verdict::modelgen
