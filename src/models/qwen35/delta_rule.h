// The gated delta rule of one DeltaNet value head (spec §6.5, §6.6), in fp32 with an fp32 state.
//
// The recurrent form is the definition (used for decode); the chunked form is its exact rewrite over
// chunks of C tokens (used for prefill). Both read the same inputs, prepared once by the layer:
// L2-normalized q (times 1/sqrt(dk)) and k of the value head's key head, v, β = sigmoid(b) and
// g = −exp(A_log)·softplus(a + dt_bias) ≤ 0, and both update the same state S [dk, dv].
#pragma once
#include <cstdint>

namespace verdict::models::qwen35 {

inline constexpr int64_t kDeltaRuleChunk = 64;

// One value head over n tokens; rows are strided views into the layer's buffers.
struct DeltaRuleHead {
  int64_t n = 0, dk = 0, dv = 0;
  const float* q = nullptr;     // row t at q + t·q_stride, dk values
  int64_t q_stride = 0;
  const float* k = nullptr;     // row t at k + t·k_stride, dk values
  int64_t k_stride = 0;
  const float* v = nullptr;     // row t at v + t·v_stride, dv values
  int64_t v_stride = 0;
  const float* beta = nullptr;  // β_t at beta[t·gate_stride]
  const float* g = nullptr;     // g_t at g[t·gate_stride]
  int64_t gate_stride = 0;
  float* out = nullptr;         // o_t at out + t·out_stride, dv values
  int64_t out_stride = 0;
};

// Token by token: S ← e^g S; u = β (v − Sᵀk); S ← S + k uᵀ; o = Sᵀq.
void delta_rule_recurrent(const DeltaRuleHead& head, float* state);

// The same function, chunk by chunk (the last chunk may be shorter than `chunk`).
void delta_rule_chunked(const DeltaRuleHead& head, float* state, int64_t chunk = kDeltaRuleChunk);

}  // namespace verdict::models::qwen35
