// The JointSchemaHead parameters (internal to the decision library). The matrices keep the precision they
// are stored in (a release head's BF16), the vectors are fp32.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/heap.h"
#include "decision/head_config.h"
#include "kernels/ops.h"

namespace verdict::decision {

// A [rows, cols] row-major weight matrix as stored: fp32 values, or BF16 or F16 bit patterns, whose fp32
// values are exact. Products upcast inside the kernels (the same fused multiply-adds in the same order as on
// an fp32 copy), so the head computes in fp32 exactly as if the matrix were upcast at load (clef-decision.md
// §7), in half the memory for a BF16 head.
struct HeadMatrix {
  kernels::WeightType type = kernels::WeightType::F32;  // F32, BF16 or F16
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> f32;         // F32
  WeightArray<uint16_t> halves;   // BF16, F16 (weight memory: no zero-fill before the load's copy)

  // Rows [row0, row0 + n) as a kernels view (no packing).
  kernels::WeightMatrix view(std::size_t row0, std::size_t n) const {
    kernels::WeightMatrix m;
    m.type = type;
    m.rows = static_cast<int64_t>(n);
    m.cols = static_cast<int64_t>(cols);
    if (type == kernels::WeightType::F32) {
      m.f32 = f32.data() + row0 * cols;
    } else if (type == kernels::WeightType::BF16) {
      m.bf16 = halves.data() + row0 * cols;
    } else {
      m.blocks = reinterpret_cast<const uint8_t*>(halves.data() + row0 * cols);
    }
    return m;
  }
  // Row r as fp32: a pointer into the fp32 values, or `buf` (cols floats) holding the row's exact upcast.
  const float* row(std::size_t r, float* buf) const {
    if (type == kernels::WeightType::F32) return f32.data() + r * cols;
    kernels::dequantize_row(view(r, 1), 0, buf);
    return buf;
  }
  // Rows [row0, row0 + n) as fp32: a pointer into the fp32 values, or into `buf` holding their exact upcast.
  const float* rows_f32(std::size_t row0, std::size_t n, std::vector<float>& buf) const {
    if (type == kernels::WeightType::F32) return f32.data() + row0 * cols;
    buf.resize(n * cols);
    const kernels::WeightMatrix m = view(row0, n);
    for (std::size_t r = 0; r < n; ++r) kernels::dequantize_row(m, static_cast<int64_t>(r), buf.data() + r * cols);
    return buf.data();
  }
  std::size_t bytes() const { return f32.size() * sizeof(float) + halves.size() * sizeof(uint16_t); }
};

struct LayerNormWeights {
  std::vector<float> weight, bias;  // [n]
};

// y = x·Wᵀ + b with W [out, in] row-major; bias empty when the layer has none.
struct LinearWeights {
  HeadMatrix weight;
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
