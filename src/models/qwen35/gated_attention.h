// The gated full-attention mixer (spec §7): q_proj with query and gate interleaved per head, per-head
// q/k RMSNorm, partial rotary (rotate-half on the first rotary_dim dims), causal GQA attention over
// the KV cache, sigmoid output gate, o_proj.
#pragma once
#include <cstdint>

#include "models/qwen35/batch.h"
#include "models/qwen35/weights.h"

namespace verdict::models::qwen35 {

// out[rows, H] = Attention(xn[rows, H]) for attention layer number `index` (among attention layers);
// appends every segment's new keys and values to its slot's KV cache.
void attention_forward(const StepContext& step, const AttentionWeights& w, int64_t index, const float* xn,
                       float* out);

// Rotate-half rotary embedding of x[0, rotary_dim) at absolute position `pos` (spec §7.3), in two parts so
// that the heads of one position share the angles: rotary_angles writes cos(pos · inv_freq[i]) and
// sin(pos · inv_freq[i]) to cos_sin[2i], cos_sin[2i + 1] (rotary_dim / 2 pairs; inv_freq[i] = θ^(−2i/R); in
// double), apply_rotary_angles rotates x with them (in double, rounded once to float).
void rotary_angles(int64_t rotary_dim, const double* inv_freq, int64_t pos, double* cos_sin);
void apply_rotary_angles(float* x, int64_t rotary_dim, const double* cos_sin);

}  // namespace verdict::models::qwen35
