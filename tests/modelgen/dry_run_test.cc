// Plans of the real-shape presets (nothing written): parameter and tensor counts against spec
// qwen35.md §1.3 / §9.1 and clef-decision.md §6.1, byte totals, and the dry-run report.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "modelgen/generator.h"

namespace verdict::modelgen {
namespace {


// Spec §1.3 table row, and the text parameter count computed from it (§9.1 shapes, no MTP, no vision).
struct Released {
  const char* preset;
  int64_t H, L, I, nq, nkv, nv;
  bool tied;
};

int64_t expected_params(const Released& r) {
  const int64_t V = 248320, hd = 256, nk = 16, dk = 128, dv = 128, K = 4;
  const int64_t key_dim = nk * dk, value_dim = r.nv * dv, conv_dim = 2 * key_dim + value_dim;
  const int64_t deltanet = conv_dim * r.H + value_dim * r.H + 2 * r.nv * r.H + conv_dim * K + 2 * r.nv + dv +
                           r.H * value_dim;
  const int64_t attention = 2 * r.nq * hd * r.H + 2 * r.nkv * hd * r.H + r.H * r.nq * hd + 2 * hd;
  const int64_t per_layer = 3 * r.H * r.I + 2 * r.H;
  const int64_t attention_layers = r.L / 4;
  return V * r.H * (r.tied ? 1 : 2) + r.H + r.L * per_layer + (r.L - attention_layers) * deltanet +
         attention_layers * attention;
}

constexpr Released kReleased[] = {
    {"qwen35-0.8b", 1024, 24, 3584, 8, 2, 16, true},
    {"qwen35-2b", 2048, 24, 6144, 8, 2, 16, true},
    {"qwen35-4b", 2560, 32, 9216, 16, 4, 32, true},
    {"qwen35-9b", 4096, 32, 12288, 16, 4, 32, false},
};

GenerateOptions opts(const std::string& preset, bool f32 = false, Quantization q = Quantization::None) {
  GenerateOptions o;
  o.preset = preset;
  o.seed = 1;
  o.f32 = f32;
  o.quantization = q;
  return o;
}

TEST(DryRun, RealPresetsHaveTheReleasedParameterCounts) {
  for (const Released& r : kReleased) {
    const ModelPlan plan = plan_model(opts(r.preset));
    EXPECT_EQ(plan.backbone_params, expected_params(r)) << r.preset;
    // §9.1: 14 tensors per DeltaNet layer, 11 per attention layer, embed + final norm (+ lm_head).
    const int64_t tensors = (r.L - r.L / 4) * 14 + r.L / 4 * 11 + (r.tied ? 2 : 3);
    EXPECT_EQ(static_cast<int64_t>(plan.model.layout.tensors().size()), tensors) << r.preset;
    EXPECT_FALSE(plan.head.has_value());
    // BF16 except A_log and linear_attn.norm.weight (2 F32 tensors per DeltaNet layer).
    int64_t f32_tensors = 0;
    for (const auto& t : plan.model.layout.tensors()) f32_tensors += t.dtype == DType::F32;
    EXPECT_EQ(f32_tensors, 2 * (r.L - r.L / 4)) << r.preset;
  }
  // The spec's sanity check: Qwen3.5-9B has about 8.95 B parameters (llama.cpp: 8.95 B); 427 tensors.
  const ModelPlan nine = plan_model(opts("qwen35-9b"));
  EXPECT_NEAR(static_cast<double>(nine.backbone_params), 8.95e9, 0.005e9);
  EXPECT_EQ(nine.model.layout.tensors().size(), 427u);
  // 0.8B: 36 F32 tensors, as the spec says of the release.
  EXPECT_EQ(plan_model(opts("qwen35-0.8b")).model.layout.tensors().size(), 320u);
}

TEST(DryRun, ClefFlashHasThePublishedHead) {
  const ModelPlan plan = plan_model(opts("clef-flash-shape"));
  ASSERT_TRUE(plan.head.has_value());
  EXPECT_EQ(plan.head_params, 121762820);
  EXPECT_EQ(plan.head_params, 6146 * 4096 + 96588804);
  EXPECT_EQ(plan.head->layout.tensors().size(), 122u);
  EXPECT_EQ(plan.backbone_params, plan_model(opts("qwen35-9b")).backbone_params);
  for (const auto& t : plan.head->layout.tensors()) EXPECT_EQ(t.dtype, DType::BF16) << t.name;
  // BF16: two bytes per parameter, plus the headers.
  const uint64_t data = plan.head->layout.data_bytes();
  EXPECT_EQ(data, 2u * 121762820u);
}

TEST(DryRun, Clef08bIsTheFlashHeadOnTheSmallBackbone) {
  const ModelPlan plan = plan_model(opts("clef-0.8b"));
  ASSERT_TRUE(plan.head.has_value());
  // clef-flash's head with H 1024: the six H × W projections and hidden_norm shrink, the rest is equal.
  EXPECT_EQ(plan.head_params, 6146 * 1024 + 96588804);
  EXPECT_EQ(plan.head->layout.tensors().size(), 122u);
  // The 0.8B backbone, untied (the head reads lm_head rows): one [248320, 1024] matrix more.
  EXPECT_EQ(plan.backbone_params, plan_model(opts("qwen35-0.8b")).backbone_params + 248320 * 1024);
}

TEST(DryRun, BytesFollowTheStorage) {
  const ModelPlan bf16 = plan_model(opts("qwen35-9b"));
  const ModelPlan f32 = plan_model(opts("qwen35-9b", true));
  const ModelPlan q4 = plan_model(opts("qwen35-9b", false, Quantization::Mlx4));
  const ModelPlan q8 = plan_model(opts("qwen35-9b", false, Quantization::Mlx8));
  const int64_t params = bf16.backbone_params;
  const int64_t f32_vectors = 24 * (32 + 128);  // A_log and linear_attn.norm.weight stay F32 in BF16 files
  EXPECT_EQ(static_cast<int64_t>(bf16.model.layout.data_bytes()), 2 * params + 2 * f32_vectors);
  EXPECT_EQ(static_cast<int64_t>(f32.model.layout.data_bytes()), 4 * params);
  EXPECT_EQ(f32.backbone_params, params);
  EXPECT_EQ(q4.backbone_params, params);  // quantized matrices count unpacked
  EXPECT_LT(q4.model.layout.data_bytes(), q8.model.layout.data_bytes());
  EXPECT_LT(q8.model.layout.data_bytes(), bf16.model.layout.data_bytes());
  // Quantized modules: embed, lm_head and 7 per DeltaNet / 7 per attention layer (with the MLP),
  // three tensors each, plus every other tensor as is.
  const std::size_t modules = 2 + 24 * 8 + 8 * 7;
  EXPECT_EQ(q4.model.layout.tensors().size(), 427u + 2 * modules);
  EXPECT_EQ(bf16.model.layout.file_bytes(), 8 + bf16.model.layout.header().size() + bf16.model.layout.data_bytes());
}

TEST(DryRun, ReportListsEveryTensorAndTheTotals) {
  const ModelPlan plan = plan_model(opts("clef-flash-shape"));
  const std::string report = describe_plan(plan);
  EXPECT_NE(report.find("model.safetensors: 427 tensors"), std::string::npos);
  EXPECT_NE(report.find("joint_head.safetensors: 122 tensors"), std::string::npos);
  EXPECT_NE(report.find("backbone parameters: " + std::to_string(plan.backbone_params)), std::string::npos);
  EXPECT_NE(report.find("head parameters: 121762820"), std::string::npos);
  EXPECT_NE(report.find("[248320, 4096]"), std::string::npos);
  EXPECT_NE(report.find("total bytes: " + std::to_string(plan.tensor_bytes())), std::string::npos);
}

TEST(DryRun, RefusesF32WithMlxQuantization) {
  EXPECT_THROW(plan_model(opts("qwen35-tiny", true, Quantization::Mlx4)), UsageError);
  EXPECT_THROW(plan_model(opts("no-such-preset")), UsageError);
}

}  // namespace
}  // namespace verdict::modelgen
