// The JointSchemaHead parameters in fp32 (internal to the decision library).
#pragma once
#include <cstddef>
#include <vector>

#include "decision/head_config.h"

namespace verdict::decision {

struct LayerNormWeights {
  std::vector<float> weight, bias;  // [n]
};

// y = x·Wᵀ + b with W [out, in] row-major; bias empty when the layer has none.
struct LinearWeights {
  std::vector<float> weight;
  std::vector<float> bias;
  std::size_t out = 0;
  std::size_t in = 0;
};

// torch.nn.MultiheadAttention with packed in-projections (rows q, k, v of in_proj).
struct AttentionWeights {
  LinearWeights in_proj;   // [3W, W] + [3W]
  LinearWeights out_proj;  // [W, W] + [W]
};

struct EvidenceLayerWeights {
  LayerNormWeights query_norm, memory_norm, feedforward_norm;
  AttentionWeights attention;
  LinearWeights feedforward0, feedforward3;  // [F, W], [W, F]
};

struct FieldLayerWeights {
  AttentionWeights self_attn, multihead_attn;
  LinearWeights linear1, linear2;  // [F, W], [W, F]
  LayerNormWeights norm1, norm2, norm3;
};

struct HeadWeights {
  LayerNormWeights hidden_norm;
  LinearWeights memory_projection, question_projection, option_question_projection, global_projection,
      option_context_projection, option_lexical_projection;  // [W, H], no bias
  std::vector<float> type_embedding;                         // [3, W]
  std::vector<EvidenceLayerWeights> evidence_layers;
  LayerNormWeights option_summary_norm;
  std::vector<FieldLayerWeights> layers;
  LayerNormWeights field_norm, option_norm;
  LinearWeights residual_scorer0;  // [W, 4W]
  LinearWeights residual_scorer3;  // [1, W]
  float prior_logit_scale = 0;
  float joint_logit_scale = 0;
  float residual_gate = 0;
};

}  // namespace verdict::decision
