// The Gated DeltaNet mixer (spec §6): projections, causal depthwise conv with state, per-head
// quantities, the delta rule (chunked for prefill, recurrent for single-token decode), gated RMSNorm
// and out_proj.
#pragma once
#include <cstdint>

#include "models/qwen35/batch.h"
#include "models/qwen35/weights.h"

namespace verdict::models::qwen35 {

// out[rows, H] = DeltaNet(xn[rows, H]) for DeltaNet layer number `index` (among DeltaNet layers);
// updates the conv and recurrent states of every segment's slot.
void deltanet_forward(const StepContext& step, const DeltaNetWeights& w, int64_t index, const float* xn,
                      float* out);

}  // namespace verdict::models::qwen35
