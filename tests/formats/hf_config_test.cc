#include "formats/hf_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/json.h"
#include "core/mapped_file.h"
#include "safetensors_writer.h"
#include "support/fixtures.h"

namespace verdict::formats {
namespace {

using testing::contains_all;
using testing::error_message;

const std::string kConfigPath = "cfg/config.json";

Json tiny_config() { return load_json_file(verdict::testing::fixture("qwen35-tiny/config.json")); }

std::string config_error(const Json& j) {
  return error_message([&] { parse_model_config(j.dump(), kConfigPath); });
}
std::string config_error(const std::string& text) {
  return error_message([&] { parse_model_config(text, kConfigPath); });
}

// A text-only (Qwen3_5ForCausalLM) config in the older style: keys at the root, top-level rope_theta
// and partial_rotary_factor, M-RoPE in rope_scaling, no layer_types, no head_dim.
const char* kFlatConfig = R"({
  "architectures": ["Qwen3_5ForCausalLM"],
  "model_type": "qwen3_5_text",
  "hidden_size": 128,
  "num_hidden_layers": 8,
  "intermediate_size": 256,
  "num_attention_heads": 4,
  "num_key_value_heads": 1,
  "linear_num_key_heads": 2,
  "linear_num_value_heads": 6,
  "linear_key_head_dim": 16,
  "linear_value_head_dim": 8,
  "linear_conv_kernel_dim": 4,
  "vocab_size": 1000,
  "rope_theta": 5000.0,
  "partial_rotary_factor": 0.5,
  "rope_scaling": {"rope_type": "default", "mrope_section": [4, 2, 2], "mrope_interleaved": true},
  "rms_norm_eps": 1e-5,
  "eos_token_id": [7, 8],
  "torch_dtype": "bfloat16",
  "output_gate_type": "swish"
})";

TEST(HfConfig, NestedFixtureConfig) {
  const ModelConfig cfg = parse_model_config(read_text_file(verdict::testing::fixture("qwen35-tiny/config.json")),
                                             "config.json");
  EXPECT_EQ(cfg.model_type, "qwen3_5");
  EXPECT_EQ(cfg.architectures, (std::vector<std::string>{"Qwen3_5ForConditionalGeneration"}));
  EXPECT_TRUE(cfg.nested_text_config);
  EXPECT_FALSE(cfg.quantization.has_value());
  const TextConfig& t = cfg.text;
  EXPECT_EQ(t.model_type, "qwen3_5_text");
  EXPECT_EQ(t.hidden_size, 64);
  EXPECT_EQ(t.num_hidden_layers, 4);
  EXPECT_EQ(t.intermediate_size, 192);
  EXPECT_EQ(t.num_attention_heads, 4);
  EXPECT_EQ(t.num_key_value_heads, 2);
  EXPECT_EQ(t.head_dim, 32);
  EXPECT_EQ(t.rotary_dim(), 8);
  EXPECT_EQ(t.linear_num_key_heads, 2);
  EXPECT_EQ(t.linear_num_value_heads, 4);
  EXPECT_EQ(t.linear_key_head_dim, 16);
  EXPECT_EQ(t.linear_value_head_dim, 16);
  EXPECT_EQ(t.linear_conv_kernel_dim, 4);
  EXPECT_EQ(t.linear_conv_dim(), 2 * 32 + 64);
  EXPECT_EQ(t.layer_types, (std::vector<LayerType>{LayerType::LinearAttention, LayerType::LinearAttention,
                                                   LayerType::LinearAttention, LayerType::FullAttention}));
  EXPECT_EQ(t.count(LayerType::FullAttention), 1);
  EXPECT_DOUBLE_EQ(t.rms_norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(t.rope_theta, 1e7);
  EXPECT_DOUBLE_EQ(t.partial_rotary_factor, 0.25);
  EXPECT_EQ(t.mrope_section, (std::vector<int64_t>{2, 1, 1}));
  EXPECT_TRUE(t.mrope_interleaved);
  EXPECT_EQ(t.vocab_size, 768);
  EXPECT_EQ(t.max_position_embeddings, 262144);
  EXPECT_TRUE(t.tie_word_embeddings);
  EXPECT_EQ(t.mtp_num_hidden_layers, 1);
  EXPECT_EQ(t.hidden_act, "silu");
  EXPECT_EQ(t.dtype, "bfloat16");
  EXPECT_EQ(t.eos_token_ids, (std::vector<int64_t>{756}));
  EXPECT_FALSE(t.output_gate_type.has_value());
}

TEST(HfConfig, FlatConfigWithOlderRopeKeys) {
  const ModelConfig cfg = parse_model_config(kFlatConfig, kConfigPath);
  EXPECT_FALSE(cfg.nested_text_config);
  const TextConfig& t = cfg.text;
  EXPECT_EQ(t.model_type, "qwen3_5_text");
  EXPECT_EQ(t.head_dim, 32);  // hidden / heads
  EXPECT_EQ(t.rotary_dim(), 16);
  EXPECT_DOUBLE_EQ(t.rope_theta, 5000.0);
  EXPECT_DOUBLE_EQ(t.partial_rotary_factor, 0.5);
  EXPECT_EQ(t.mrope_section, (std::vector<int64_t>{4, 2, 2}));
  EXPECT_TRUE(t.mrope_interleaved);
  EXPECT_DOUBLE_EQ(t.rms_norm_eps, 1e-5);
  EXPECT_EQ(t.full_attention_interval, 4);
  ASSERT_EQ(t.layer_types.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(t.layer_types[i], (i == 3 || i == 7) ? LayerType::FullAttention : LayerType::LinearAttention) << i;
  EXPECT_EQ(t.eos_token_ids, (std::vector<int64_t>{7, 8}));
  EXPECT_FALSE(t.tie_word_embeddings);
  EXPECT_EQ(t.dtype, "bfloat16");
  EXPECT_EQ(t.output_gate_type, "swish");
  EXPECT_EQ(t.linear_value_dim(), 48);
}

TEST(HfConfig, DerivedLayerTypesFollowTheInterval) {
  Json j = tiny_config();
  j["text_config"].erase("layer_types");
  j["text_config"]["num_hidden_layers"] = 6;
  j["text_config"]["full_attention_interval"] = 3;
  const ModelConfig cfg = parse_model_config(j.dump(), kConfigPath);
  EXPECT_EQ(cfg.text.layer_types,
            (std::vector<LayerType>{LayerType::LinearAttention, LayerType::LinearAttention, LayerType::FullAttention,
                                    LayerType::LinearAttention, LayerType::LinearAttention, LayerType::FullAttention}));
}

TEST(HfConfig, TieWordEmbeddingsFallsBackToTheRoot) {
  Json j = tiny_config();
  j["text_config"].erase("tie_word_embeddings");
  j["tie_word_embeddings"] = true;
  EXPECT_TRUE(parse_model_config(j.dump(), kConfigPath).text.tie_word_embeddings);
  j.erase("tie_word_embeddings");
  EXPECT_FALSE(parse_model_config(j.dump(), kConfigPath).text.tie_word_embeddings);
  j["tie_word_embeddings"] = false;
  j["text_config"]["tie_word_embeddings"] = true;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.tie_word_embeddings", "disagrees"}));
}

TEST(HfConfig, FullAttentionOnlyNeedsNoLinearDims) {
  Json j = tiny_config();
  auto& t = j["text_config"];
  t["layer_types"] = {"full_attention", "full_attention", "full_attention", "full_attention"};
  for (const char* k : {"linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
                        "linear_value_head_dim", "linear_conv_kernel_dim"})
    t.erase(k);
  const ModelConfig cfg = parse_model_config(j.dump(), kConfigPath);
  EXPECT_EQ(cfg.text.count(LayerType::LinearAttention), 0);
  EXPECT_EQ(cfg.text.linear_num_key_heads, 0);
}

TEST(HfConfig, MlxQuantizationBlock) {
  Json j = tiny_config();
  j["quantization"] = {{"group_size", 64},
                       {"bits", 4},
                       {"mode", "affine"},
                       {"language_model.model.layers.0.mlp.gate_proj", {{"group_size", 32}, {"bits", 8}}},
                       {"language_model.model.layers.1.mlp.up_proj", {{"bits", 6}}},
                       {"language_model.model.embed_tokens", false},
                       {"language_model.model.norm", true}};
  const ModelConfig cfg = parse_model_config(j.dump(), kConfigPath);
  ASSERT_TRUE(cfg.quantization.has_value());
  const QuantizationConfig& q = *cfg.quantization;
  EXPECT_EQ(q.global, (QuantSpec{4, 64}));
  EXPECT_EQ(q.mode, "affine");
  EXPECT_EQ(q.spec_for("language_model.model.layers.0.mlp.gate_proj"), (QuantSpec{8, 32}));
  EXPECT_EQ(q.spec_for("language_model.model.layers.1.mlp.up_proj"), (QuantSpec{6, 64}));
  EXPECT_EQ(q.spec_for("language_model.model.layers.1.mlp.gate_proj"), (QuantSpec{4, 64}));
  EXPECT_EQ(q.unquantized, (std::vector<std::string>{"language_model.model.embed_tokens"}));
  EXPECT_EQ(q.overrides.size(), 2u);

  // quantization_config alone is read too.
  Json k = tiny_config();
  k["quantization_config"] = {{"group_size", 128}, {"bits", 8}};
  EXPECT_EQ(parse_model_config(k.dump(), kConfigPath).quantization->global, (QuantSpec{8, 128}));
}

TEST(HfConfig, QuantizationErrors) {
  Json j = tiny_config();
  j["quantization"] = {{"group_size", 32}, {"bits", 4}, {"mode", "mxfp4"}};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "quantization.mode", "unsupported quantization mode 'mxfp4'"}));
  j["quantization"] = {{"group_size", 64}, {"bits", 7}};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "quantization.bits", "unsupported value 7"}));
  j["quantization"] = {{"group_size", 16}, {"bits", 4}};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "quantization.group_size", "unsupported value 16"}));
  j["quantization"] = {{"bits", 4}};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "quantization.group_size", "missing"}));
  j["quantization"] = {{"group_size", 64}, {"bits", "4"}};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "quantization.bits", "expected an integer, got string"}));
  j["quantization"] = {{"group_size", 64}, {"bits", 4}, {"layers.0.mlp", {{"bits", 9}}}};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "quantization.layers.0.mlp.bits", "unsupported value 9"}));
  j["quantization"] = {{"group_size", 64}, {"bits", 4}, {"layers.0.mlp", {{"bits", 4}, {"mode", "nvfp4"}}}};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "quantization.layers.0.mlp.mode", "'nvfp4'"}));
  j["quantization"] = "q4";
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "quantization", "expected an object"}));
  Json k = tiny_config();
  k["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}};
  EXPECT_TRUE(contains_all(config_error(k), {kConfigPath, "quantization_config.quant_method", "'gptq'"}));
}

TEST(HfConfig, MissingAndWrongTypedKeys) {
  Json j = tiny_config();
  j["text_config"].erase("hidden_size");
  EXPECT_EQ(config_error(j), kConfigPath + ": text_config.hidden_size: missing (required)");

  for (const char* key : {"num_hidden_layers", "intermediate_size", "num_attention_heads", "num_key_value_heads",
                          "vocab_size", "linear_num_value_heads", "linear_conv_kernel_dim"}) {
    Json m = tiny_config();
    m["text_config"].erase(key);
    EXPECT_TRUE(contains_all(config_error(m), {kConfigPath, std::string("text_config.") + key, "missing"})) << key;
  }

  j = tiny_config();
  j["text_config"]["hidden_size"] = "64";
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.hidden_size", "expected an integer, got string"}));
  j = tiny_config();
  j["text_config"]["hidden_size"] = 64.5;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.hidden_size", "expected an integer"}));
  j = tiny_config();
  j["text_config"]["rms_norm_eps"] = "small";
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.rms_norm_eps", "expected a number"}));
  j = tiny_config();
  j["text_config"]["rope_parameters"]["rope_theta"] = {1, 2};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.rope_parameters.rope_theta", "expected a number"}));
  j = tiny_config();
  j["text_config"]["tie_word_embeddings"] = 1;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.tie_word_embeddings", "expected true or false"}));
  j = tiny_config();
  j["text_config"] = 5;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config", "expected an object"}));
  j = tiny_config();
  j["text_config"]["eos_token_id"] = "</s>";
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.eos_token_id", "token id"}));
  j = tiny_config();
  j["text_config"]["eos_token_id"] = {1, "x"};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.eos_token_id[1]", "expected an integer"}));
  j = tiny_config();
  j["architectures"] = "Qwen";
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "architectures", "expected a list"}));
}

TEST(HfConfig, AbsurdDimensions) {
  struct Case {
    const char* key;
    Json value;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"hidden_size", int64_t{1} << 21, "out of range"},
      {"hidden_size", 0, "out of range"},
      {"hidden_size", -64, "out of range"},
      {"num_hidden_layers", 5000, "out of range"},
      {"vocab_size", int64_t{1} << 25, "out of range"},
      {"num_attention_heads", 0, "out of range"},
      {"head_dim", 100000, "out of range"},
      {"intermediate_size", uint64_t{18446744073709551615u}, "out of range"},
      {"linear_conv_kernel_dim", 1000, "out of range"},
      {"full_attention_interval", 0, "out of range"},
      {"max_position_embeddings", -1, "out of range"},
  };
  for (const Case& c : cases) {
    Json j = tiny_config();
    j["text_config"][c.key] = c.value;
    EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, std::string("text_config.") + c.key, c.expect})) << c.key;
  }
}

TEST(HfConfig, InconsistentGeometry) {
  Json j = tiny_config();
  j["text_config"]["num_key_value_heads"] = 3;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.num_key_value_heads", "does not divide"}));
  j = tiny_config();
  j["text_config"]["linear_num_value_heads"] = 3;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.linear_num_value_heads", "not a multiple"}));
  j = tiny_config();
  j["text_config"].erase("head_dim");
  j["text_config"]["num_attention_heads"] = 3;
  j["text_config"]["num_key_value_heads"] = 1;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.num_attention_heads", "does not divide hidden_size"}));
  j = tiny_config();
  j["text_config"]["layer_types"] = {"linear_attention", "full_attention"};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.layer_types", "has 2 entries, num_hidden_layers is 4"}));
  j = tiny_config();
  j["text_config"]["layer_types"][1] = "sliding_attention";
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.layer_types[1]", "unknown layer type 'sliding_attention'"}));
  j = tiny_config();
  j["text_config"]["layer_types"] = "all";
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.layer_types", "expected a list"}));
}

TEST(HfConfig, RopeValidation) {
  Json j = tiny_config();
  j["text_config"]["rope_parameters"]["partial_rotary_factor"] = 1.5;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.rope_parameters.partial_rotary_factor", "outside (0, 1]"}));
  j["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.0;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "partial_rotary_factor", "outside (0, 1]"}));
  j["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.15625;  // 32 · 0.15625 = 5
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "partial_rotary_factor", "= 5 is odd"}));
  j = tiny_config();
  j["text_config"]["rope_parameters"]["mrope_section"] = {2, 2, 2};
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.rope_parameters.mrope_section", "sum to 6, expected rotary dim / 2 = 4"}));
  j = tiny_config();
  j["text_config"]["rope_parameters"]["rope_theta"] = -1;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "rope_theta", "must be positive"}));
  j = tiny_config();
  j["text_config"]["rope_parameters"]["rope_type"] = "yarn";
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.rope_parameters.rope_type", "unsupported rope type 'yarn'"}));
  j = tiny_config();
  j["text_config"]["rms_norm_eps"] = 0;
  EXPECT_TRUE(contains_all(config_error(j), {kConfigPath, "text_config.rms_norm_eps", "outside"}));
}

TEST(HfConfig, NotJsonOrNotAnObject) {
  EXPECT_TRUE(contains_all(config_error(std::string("{\"hidden_size\": ")), {kConfigPath, "invalid JSON"}));
  EXPECT_TRUE(contains_all(config_error(std::string("[1]")), {kConfigPath, "not a JSON object"}));
  EXPECT_TRUE(contains_all(config_error(std::string("")), {kConfigPath, "invalid JSON"}));
  EXPECT_TRUE(contains_all(error_message([] { load_model_config("/nonexistent/config.json"); }),
                           {"/nonexistent/config.json"}));
}

TEST(GenerationConfig, FixtureAndVariants) {
  const GenerationConfig g = load_generation_config(verdict::testing::fixture("qwen35-tiny/generation_config.json"));
  EXPECT_EQ(g.eos_token_ids, (std::vector<int64_t>{758, 756}));
  EXPECT_EQ(g.bos_token_id, 756);
  EXPECT_EQ(g.pad_token_id, 756);
  EXPECT_FALSE(g.temperature.has_value());

  const GenerationConfig h = parse_generation_config(
      R"({"eos_token_id": 5, "temperature": 0.6, "top_p": 0.95, "top_k": 20, "do_sample": true,
          "repetition_penalty": 1.05, "pad_token_id": null})",
      "gen.json");
  EXPECT_EQ(h.eos_token_ids, (std::vector<int64_t>{5}));
  EXPECT_DOUBLE_EQ(*h.temperature, 0.6);
  EXPECT_DOUBLE_EQ(*h.top_p, 0.95);
  EXPECT_EQ(h.top_k, 20);
  EXPECT_EQ(h.do_sample, true);
  EXPECT_DOUBLE_EQ(*h.repetition_penalty, 1.05);
  EXPECT_FALSE(h.pad_token_id.has_value());
  EXPECT_TRUE(parse_generation_config("{}", "gen.json").eos_token_ids.empty());
}

TEST(GenerationConfig, Errors) {
  auto gen_error = [](const std::string& text) {
    return error_message([&] { parse_generation_config(text, "gen.json"); });
  };
  EXPECT_TRUE(contains_all(gen_error(R"({"eos_token_id": "x"})"), {"gen.json: eos_token_id", "token id"}));
  EXPECT_TRUE(contains_all(gen_error(R"({"eos_token_id": [1, -2]})"), {"gen.json: eos_token_id[1]", "out of range"}));
  EXPECT_TRUE(contains_all(gen_error(R"({"temperature": "hot"})"), {"gen.json: temperature", "expected a number"}));
  EXPECT_TRUE(contains_all(gen_error(R"({"temperature": -1})"), {"gen.json: temperature", "negative"}));
  EXPECT_TRUE(contains_all(gen_error(R"({"top_p": 2})"), {"gen.json: top_p"}));
  EXPECT_TRUE(contains_all(gen_error(R"({"do_sample": "yes"})"), {"gen.json: do_sample", "expected true or false"}));
  EXPECT_TRUE(contains_all(gen_error(R"({"top_k": 1.5})"), {"gen.json: top_k", "expected an integer"}));
  EXPECT_TRUE(contains_all(gen_error("[]"), {"gen.json", "not a JSON object"}));
  EXPECT_TRUE(contains_all(gen_error("nope"), {"gen.json", "invalid JSON"}));
}

}  // namespace
}  // namespace verdict::formats
