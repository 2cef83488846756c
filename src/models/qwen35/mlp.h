// The SwiGLU MLP (spec §5): down_proj(SiLU(gate_proj·u) ⊙ (up_proj·u)).
#pragma once
#include <cstdint>

#include "models/qwen35/weights.h"

namespace verdict::models::qwen35 {

// out[rows, H] = MLP(xn[rows, H]).
void mlp_forward(const MlpWeights& w, const float* xn, int64_t rows, float* out);

}  // namespace verdict::models::qwen35
