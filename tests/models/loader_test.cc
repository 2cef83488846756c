// Loading refuses inconsistent checkpoints with a message naming the tensor, the expected and the
// found shape (spec §1.3); the config checks refuse what this backbone cannot run.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "core/mapped_file.h"
#include "formats/hf_config.h"
#include "formats/tensor_store.h"
#include "golden_util.h"

namespace verdict::models::qwen35 {
namespace {

using namespace testing;

// A copy of a fixture checkpoint in a temporary folder, with tensors edited before writing.
class EditedCheckpoint {
 public:
  struct Tensor {
    std::string dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
  };

  explicit EditedCheckpoint(const std::string& fixture) {
    char tmpl[] = "/tmp/verdict_qwen35_test_XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    if (made == nullptr) throw Error("mkdtemp failed");
    dir_ = made;
    config_ = read_text_file(checkpoint_dir(fixture) + "/config.json");
    const auto store = formats::TensorStore::open_dir(checkpoint_dir(fixture));
    for (const auto& [name, t] : store.tensors())
      tensors_[name] = {std::string(dtype_name(t.dtype)), t.shape, std::vector<uint8_t>(t.data, t.data + t.nbytes)};
  }
  ~EditedCheckpoint() {
    std::remove((dir_ + "/model.safetensors").c_str());
    std::remove((dir_ + "/config.json").c_str());
    ::rmdir(dir_.c_str());
  }
  EditedCheckpoint(const EditedCheckpoint&) = delete;
  EditedCheckpoint& operator=(const EditedCheckpoint&) = delete;

  std::map<std::string, Tensor>& tensors() { return tensors_; }
  std::string& config() { return config_; }

  // Writes config.json and model.safetensors; returns the folder.
  const std::string& write() {
    Json header = Json::object();
    std::size_t offset = 0;
    for (const auto& [name, t] : tensors_) {
      header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
      offset += t.bytes.size();
    }
    std::string text = header.dump();
    while (text.size() % 8 != 0) text += ' ';
    std::ofstream out(dir_ + "/model.safetensors", std::ios::binary);
    const uint64_t len = text.size();
    out.write(reinterpret_cast<const char*>(&len), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& [name, t] : tensors_)
      out.write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
    std::ofstream(dir_ + "/config.json") << config_;
    return dir_;
  }

 private:
  std::string dir_, config_;
  std::map<std::string, Tensor> tensors_;
};

std::string load_error(const std::string& dir) {
  try {
    Backbone::load(dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Loader, UnchangedCopyLoads) {
  EditedCheckpoint copy("qwen35-tiny-f32");
  EXPECT_NO_THROW(Backbone::load(copy.write()));
}

TEST(Loader, RefusesWrongShapeNamingTensorAndShapes) {
  EditedCheckpoint copy("qwen35-tiny-f32");
  auto& t = copy.tensors().at("model.language_model.layers.0.linear_attn.in_proj_z.weight");
  t.shape = {60, 64};
  t.bytes.resize(60 * 64 * 4);
  const std::string message = load_error(copy.write());
  EXPECT_NE(message.find("model.language_model.layers.0.linear_attn.in_proj_z.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("expected shape [64, 64]"), std::string::npos) << message;
  EXPECT_NE(message.find("found [60, 64]"), std::string::npos) << message;
}

TEST(Loader, RefusesWrongConvAndNormShapes) {
  {
    EditedCheckpoint copy("qwen35-tiny-f32");
    auto& t = copy.tensors().at("model.language_model.layers.1.linear_attn.conv1d.weight");
    t.shape = {128, 1, 3};
    t.bytes.resize(128 * 3 * 4);
    const std::string message = load_error(copy.write());
    EXPECT_NE(message.find("layers.1.linear_attn.conv1d.weight: expected shape [128, 1, 4], found [128, 1, 3]"),
              std::string::npos)
        << message;
  }
  {
    EditedCheckpoint copy("qwen35-tiny-f32");
    auto& t = copy.tensors().at("model.language_model.layers.3.self_attn.q_norm.weight");
    t.shape = {16};
    t.bytes.resize(16 * 4);
    const std::string message = load_error(copy.write());
    EXPECT_NE(message.find("q_norm.weight: expected shape [32], found [16]"), std::string::npos) << message;
  }
}

TEST(Loader, RefusesMissingTensorsAndUntiedWithoutHead) {
  {
    EditedCheckpoint copy("qwen35-tiny-f32");
    copy.tensors().erase("model.language_model.layers.2.linear_attn.A_log");
    const std::string message = load_error(copy.write());
    EXPECT_NE(message.find("missing tensor model.language_model.layers.2.linear_attn.A_log"), std::string::npos)
        << message;
  }
  {
    EditedCheckpoint copy("qwen35-tiny-f32");
    std::string& cfg = copy.config();
    for (std::size_t at; (at = cfg.find("\"tie_word_embeddings\": true")) != std::string::npos;)
      cfg.replace(at, 27, "\"tie_word_embeddings\": false");
    const std::string message = load_error(copy.write());
    EXPECT_NE(message.find("lm_head.weight"), std::string::npos) << message;
  }
}

TEST(Loader, RefusesModelsItCannotRun) {
  formats::ModelConfig model = formats::load_model_config(checkpoint_dir("qwen35-tiny") + "/config.json");
  EXPECT_NO_THROW(make_config(model, "config.json"));
  model.text.model_type = "qwen3_next";
  EXPECT_THROW(make_config(model, "config.json"), Error);
  model.text.model_type = "qwen3_5_text";
  model.text.hidden_act = "gelu";
  EXPECT_THROW(make_config(model, "config.json"), Error);
}

}  // namespace
}  // namespace verdict::models::qwen35
