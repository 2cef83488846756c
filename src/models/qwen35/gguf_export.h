// `verdict convert`: a Hugging Face or MLX Qwen3.5 checkpoint folder written as a llama.cpp `qwen35`
// GGUF file, with the tensors and metadata llama.cpp's convert_hf_to_gguf.py writes (run with
// --no-mtp: the MTP block is not exported): its names, the `+1` folded into the zero-centred norms,
// ssm_a = −exp(A_log), conv1d squeezed to [C, K], the value heads reordered to llama.cpp's tiled
// order (spec §9.4), the qwen35.* dimension keys and the tokenizer block (formats/gguf_tokenizer.h).
// Tensors are written in the order of their Hugging Face names, as the converter does.
//
// Tensor types: every 1-D tensor, every `*_norm.weight`, `ssm_conv1d`, `ssm_a` and `ssm_dt.bias` stay
// F32 (as llama.cpp keeps them); the other matrices take the requested type, quantized with ggml's
// reference quantizers (formats/ggml_quant.h). A matrix whose rows are not a whole number of blocks
// falls back to Q8_0 (Q4_K), then to F16, as llama.cpp falls back. MLX matrices are dequantized
// exactly first.
//
// The Q4_K_M and Q5_K_M recipes are llama-quantize's for qwen35 (llama_tensor_get_type): Q4_K (Q5_K), but
// Q6_K for the output matrix (the embeddings when tied) and, in the layers `use_more_bits` picks (the first
// and last eighth and every third in between), for attn_v / attn_qkv and ffn_down.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "formats/ggml_type.h"

namespace verdict::models::qwen35 {

struct GgufExportOptions {
  formats::GgmlType type = formats::GgmlType::F32;  // F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K or Q6_K
  std::string name;                                  // general.name; default: the folder's name
  bool k_m = false;  // llama-quantize's Q4_K_M (type Q4_K) or Q5_K_M (type Q5_K) mix
};

// Whether llama-quantize gives layer i of n more bits in its _M recipes (llama-quant.cpp's use_more_bits).
constexpr bool use_more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

struct GgufExportSummary {
  int64_t tensors = 0;
  std::map<std::string, int64_t> tensors_by_type;  // "F32" -> count
  uint64_t file_bytes = 0;
};

// Throws verdict::Error naming the file and the problem.
GgufExportSummary export_gguf(const std::string& in_dir, const std::string& out_path, const GgufExportOptions& options);

}  // namespace verdict::models::qwen35
