// What a generated checkpoint holds, tensor by tensor, in the Hugging Face layout: names and shapes of
// spec qwen35.md §9.1 (backbone) and clef-decision.md §6.2 (joint head), and how each tensor's values
// are drawn.
//
// Scaling, so that activations stay finite and O(1) through every layer of a random model:
//  * projections ~ N(0, 1/fan_in); the three projections that write into the residual stream
//    (o_proj, linear_attn.out_proj, mlp.down_proj) are further scaled by 1/√(2L), so the residual grows
//    to O(1) over the 2L sub-blocks instead of √(2L);
//  * embeddings and lm_head ~ N(0, 1/H): logits of a unit-RMS final row have standard deviation ≈ 1;
//  * zero-centred norm weights (x̂·(1+w)) ~ N(0, 0.05²); the DeltaNet gated norm (plain weight) ~ N(1, 0.05²);
//  * conv1d taps ~ N(0, 1/K); A_log = log(u), u ~ U[1, 16) (decay rates 1…16, as the reference initialiser);
//    dt_bias ~ N(0, 0.1²);
//  * joint head: Linear weights ~ N(0, 1/fan_in), biases ~ N(0, 0.02²), LayerNorm γ ~ N(1, 0.05²),
//    β ~ N(0, 0.02²), type embeddings ~ N(0, 0.5²); scalars prior_logit_scale = joint_logit_scale =
//    bf16(ln 10) = 2.296875, residual_gate = −2.
//
// Every value is rounded to bf16 once, except the two tensors the release stores in F32 (A_log and
// linear_attn.norm.weight): an F32 checkpoint therefore holds the exact upcast of the BF16 one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "modelgen/presets.h"
#include "modelgen/random.h"

namespace verdict::modelgen {

enum class WeightRole {
  Linear,           // a Linear weight [out, in] (MLX quantizes it when in % group_size == 0)
  Embedding,        // embed_tokens (quantized like a Linear)
  ZeroCentredNorm,  // x̂·(1 + w): MLX folds the +1 in
  Conv,             // linear_attn.conv1d.weight [C, 1, K]: MLX stores [C, K, 1]
  Other,            // vectors and scalars kept as they are (A_log, dt_bias, gated norm, head vectors)
};

struct WeightSpec {
  std::string name;            // Hugging Face name; also the key of its random stream
  std::vector<int64_t> shape;  // Hugging Face shape
  Init init;
  WeightRole role = WeightRole::Other;
  bool f32_in_release = false;  // stored F32 even in a BF16 checkpoint (values not rounded to bf16)

  int64_t numel() const;
  // Rows as generated and streamed: shape[0] for tensors of rank ≥ 2, else 1.
  int64_t rows() const;
  int64_t cols() const { return rows() > 0 ? numel() / rows() : 0; }
};

// The Qwen3.5 text tensors of §9.1 (prefix `model.language_model.`, `lm_head.weight` when untied),
// sorted by name.
std::vector<WeightSpec> backbone_weights(const BackboneShape& shape);
// The joint schema head tensors of §6.2, sorted by name.
std::vector<WeightSpec> head_weights(const HeadShape& shape);

int64_t count_params(const std::vector<WeightSpec>& weights);

}  // namespace verdict::modelgen
