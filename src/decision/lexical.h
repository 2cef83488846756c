// The lexical table of the joint head (clef-decision.md §5, §6.4): rows of the untied output
// projection `lm_head.weight` [V, H], or of the embedding matrix when the checkpoint ties them.
#pragma once
#include "decision/head.h"
#include "formats/tensor_store.h"
#include "kernels/ops.h"

namespace verdict::decision {

// Row reader over a stored [V, H] table (F32, BF16 or F16), each row upcast exactly to fp32. The
// tensor (and the file it maps) must outlive the function. An id outside [0, V) or a row buffer of
// the wrong size throws verdict::Error. Quantized tables (MLX, GGUF) need the backbone's dequantizer
// instead.
LexicalRowFn lexical_rows(const formats::TensorView& table);

// Row reader over the backbone's loaded output projection (or tied embeddings) in any stored type: F32,
// BF16 and F16 rows upcast exactly, quantized rows (MLX, GGUF) dequantized as the backbone reads them
// (clef-decision.md §6.1). The matrix must outlive the function; a bad id or row size throws verdict::Error.
LexicalRowFn lexical_rows(const kernels::WeightMatrix& table);

// The checkpoint's lexical table: the embedding matrix when `tie_word_embeddings`, else the output
// projection. Accepts the Hugging Face names of Qwen3.5 checkpoints (`lm_head.weight`,
// `model.language_model.embed_tokens.weight`, `model.embed_tokens.weight`, and the MLX
// `language_model.` prefixes). Throws verdict::Error naming what is missing.
const formats::TensorView& find_lexical_table(const formats::TensorStore& store, bool tie_word_embeddings);

}  // namespace verdict::decision
