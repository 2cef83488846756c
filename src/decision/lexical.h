// The lexical table of the joint head (clef-decision.md §5, §6.4): rows of the untied output
// projection `lm_head.weight` [V, H], or of the embedding matrix when the checkpoint ties them.
#pragma once
#include "decision/head.h"
#include "kernels/ops.h"

namespace verdict::decision {

// Row reader over the backbone's loaded output projection (or tied embeddings) in any stored type: F32,
// BF16 and F16 rows upcast exactly, quantized rows (MLX, GGUF) dequantized as the backbone reads them
// (clef-decision.md §6.1). The matrix must outlive the function; a bad id or row size throws verdict::Error.
LexicalRowFn lexical_rows(const kernels::WeightMatrix& table);

}  // namespace verdict::decision
