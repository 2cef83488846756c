// The registry with a .gguf model path: the spec, configuration, tokenizer and chat template come from
// the file (docs/gguf.md), and agree with the checkpoint folder the file was converted from.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>

#include "core/error.h"
#include "formats/gguf.h"
#include "models/qwen35/backbone.h"
#include "models/qwen35/gguf_export.h"
#include "registry/memory.h"
#include "registry/model_source.h"
#include "registry/model_spec.h"
#include "support/fixtures.h"
#include "support/gguf_edit.h"
#include "support/scoped_env.h"

namespace verdict::registry {
namespace {

using verdict::testing::fixture;

TEST(GgufModel, SpecNamedAfterTheFileAsAChatModel) {
  const std::string path = fixture("qwen35-tiny/model-f32.gguf");
  EXPECT_TRUE(is_gguf_model(path));
  EXPECT_TRUE(is_checkpoint_dir(path));
  const ModelSpec spec = model_from_flag(path);
  EXPECT_EQ(spec.name, "model-f32");
  EXPECT_EQ(spec.kind, ModelKind::kChat);
  EXPECT_EQ(model_from_flag("tiny=" + path).name, "tiny");
  EXPECT_FALSE(is_gguf_model(fixture("qwen35-tiny/missing.gguf")));
}

TEST(GgufModel, SameConfigTokenizerAndTemplateAsTheFolder) {
  const std::string folder = fixture("qwen35-tiny");
  // A copy of the file alone in a folder: nothing but the GGUF metadata to go by.
  const std::string dir = ::testing::TempDir() + "/registry_gguf_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/tiny.gguf";
  std::filesystem::copy_file(fixture("qwen35-tiny/model-f32.gguf"), path, std::filesystem::copy_options::overwrite_existing);

  const formats::ModelConfig a = read_model_config(path), b = read_model_config(folder);
  EXPECT_EQ(a.text.hidden_size, b.text.hidden_size);
  EXPECT_EQ(a.text.num_hidden_layers, b.text.num_hidden_layers);
  EXPECT_EQ(a.text.vocab_size, b.text.vocab_size);
  EXPECT_EQ(a.text.rotary_dim(), b.text.rotary_dim());
  EXPECT_EQ(model_config_path(path), path);

  const tokenizer::Tokenizer ta = read_model_tokenizer(path), tb = read_model_tokenizer(folder);
  EXPECT_EQ(ta.encode("Hello, wörld <|im_end|>"), tb.encode("Hello, wörld <|im_end|>"));

  chat::ChatRequest request;
  request.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Hi there"}])");
  EXPECT_EQ(read_chat_template(path, ta).render(request), read_chat_template(folder, tb).render(request));
  EXPECT_GT(gguf_weight_bytes(path, false), 1'000'000u);
  EXPECT_EQ(gguf_weight_bytes(folder, false), 0u);
  std::filesystem::remove_all(dir);
}

// The budget's weight estimate of a GGUF model is what the loaded model holds (Weights::held_bytes,
// measured from its packed copies and stored rows) plus its vectors (norms, conv taps, gates), for every
// packed and unpacked type, with and without the chat models' packed output copy.
TEST(GgufModel, TheWeightEstimateIsWhatTheLoadedModelHolds) {
  const verdict::testing::ScopedEnv packed("VERDICT_PACK", nullptr);  // the default: packed GEMMs
  const std::string dir = ::testing::TempDir() + "/registry_gguf_estimate_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  using formats::GgmlType;
  // The K-quants on qwen35-small, whose rows are whole 256-column super-blocks (qwen35-tiny's 64 are not).
  const std::pair<const char*, GgmlType> cases[] = {
      {"qwen35-tiny", GgmlType::F32},  {"qwen35-tiny", GgmlType::F16},  {"qwen35-tiny", GgmlType::BF16},
      {"qwen35-tiny", GgmlType::Q8_0}, {"qwen35-tiny", GgmlType::Q4_0}, {"qwen35-small", GgmlType::Q4_K},
      {"qwen35-small", GgmlType::Q5_K}, {"qwen35-small", GgmlType::Q6_K}, {"qwen35-small", GgmlType::Q3_K},
      {"qwen35-tiny", GgmlType::IQ4_NL}, {"qwen35-small", GgmlType::IQ4_XS}, {"qwen35-tiny", GgmlType::Q4_1},
      {"qwen35-tiny", GgmlType::Q5_0},   {"qwen35-tiny", GgmlType::Q5_1},  {"qwen35-small", GgmlType::Q2_K}};
  for (const auto& [checkpoint, type] : cases) {
    const std::string path = dir + "/" + checkpoint + "-" + std::string(formats::ggml_type_name(type)) + ".gguf";
    models::qwen35::GgufExportOptions options;
    options.type = type;
    models::qwen35::export_gguf(fixture(checkpoint), path, options);
    std::size_t vectors = 0;
    const formats::GgufFile file(path);
    for (const formats::GgufTensor& t : file.tensors())
      if (t.ne.size() == 1 || t.name.ends_with("ssm_conv1d.weight")) vectors += t.nbytes;
    for (const bool output_copy : {false, true}) {
      models::qwen35::LoadOptions load;
      load.pack_output = output_copy;
      const auto model = models::qwen35::Backbone::load(path, load);
      EXPECT_EQ(gguf_weight_bytes(path, output_copy), model->weights().held_bytes() + vectors)
          << formats::ggml_type_name(type) << (output_copy ? " with" : " without") << " the output copy";
    }
  }
  std::filesystem::remove_all(dir);
}

// A decision folder may hold its backbone as one .gguf file beside the joint head (backbone_path).
TEST(GgufModel, DecisionFolderWithAGgufBackbone) {
  const std::string clef = fixture("clef-tiny/bf16");
  const std::string root = ::testing::TempDir() + "/registry_gguf_decision_" + std::to_string(::getpid());
  const std::string dir = root + "/clef-q8";
  std::filesystem::create_directories(dir);
  models::qwen35::GgufExportOptions options;
  options.type = formats::GgmlType::Q8_0;
  models::qwen35::export_gguf(clef, dir + "/backbone.gguf", options);
  EXPECT_FALSE(is_checkpoint_dir(dir)) << "a .gguf file alone in a folder is not a decision model";
  for (const char* file : {"joint_head.safetensors", "joint_head_config.json"})
    std::filesystem::copy_file(clef + "/" + file, dir + "/" + file);

  EXPECT_TRUE(is_checkpoint_dir(dir));
  EXPECT_EQ(backbone_path(dir), dir + "/backbone.gguf");
  EXPECT_EQ(backbone_path(clef), clef);
  EXPECT_EQ(model_config_path(dir), dir + "/backbone.gguf");
  const ModelSpec spec = model_from_flag(dir);
  EXPECT_EQ(spec.name, "clef-q8");
  EXPECT_EQ(spec.kind, ModelKind::kDecision);
  const std::vector<ModelSpec> scanned = scan_models_dir(root);
  ASSERT_EQ(scanned.size(), 1u);
  EXPECT_EQ(scanned[0].kind, ModelKind::kDecision);

  const formats::ModelConfig a = read_model_config(dir), b = read_model_config(clef);
  EXPECT_EQ(a.text.hidden_size, b.text.hidden_size);
  EXPECT_EQ(a.text.vocab_size, b.text.vocab_size);
  const tokenizer::Tokenizer ta = read_model_tokenizer(dir), tb = read_model_tokenizer(clef);
  EXPECT_EQ(ta.encode("Café naïve <|im_start|> 12.5%"), tb.encode("Café naïve <|im_start|> 12.5%"));
  EXPECT_GT(gguf_weight_bytes(dir, false), 100'000u);

  // Two backbones: which one is meant cannot be guessed.
  std::filesystem::copy_file(dir + "/backbone.gguf", dir + "/other.gguf");
  try {
    backbone_path(dir);
    ADD_FAILURE() << "two .gguf files accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 .gguf files"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(root);
}

// A file with a text-model tensor of a type the loader cannot compute with is refused when the registry
// reads it (at a server's start-up), in the loader's words; tensors past the text layers are not its
// concern. The file: a Q3_K conversion with blk.0.ffn_down.weight relabelled IQ3_S (same block geometry).
TEST(GgufModel, UnsupportedTensorTypesAreRefusedUpFront) {
  const std::string dir = ::testing::TempDir() + "/registry_gguf_iq3_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/small.gguf";
  models::qwen35::GgufExportOptions options;
  options.type = formats::GgmlType::Q3_K;
  models::qwen35::export_gguf(fixture("qwen35-small"), path, options);
  const int64_t layers = read_model_config(path).text.num_hidden_layers;
  EXPECT_NO_THROW(check_gguf_tensor_types(path, layers));
  ASSERT_EQ(verdict::testing::relabel_gguf_tensor(path, "blk.0.ffn_down.weight", 21), 11u);
  try {
    check_gguf_tensor_types(path, layers);
    ADD_FAILURE() << "an IQ3_S tensor accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor blk.0.ffn_down.weight: type IQ3_S is not supported"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(check_gguf_tensor_types(path, 0));  // were blk.0 not a text layer
  EXPECT_THROW(models::qwen35::Backbone::load(path), Error);  // what the check stands in for
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace verdict::registry
