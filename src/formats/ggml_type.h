// ggml tensor element types as GGUF files store them: the numeric ids, names and block geometry
// (how many values one block holds and how many bytes it takes). Only the types listed here are
// accepted by the GGUF reader; any other id is refused as unknown.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace verdict::formats {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
  Q2_0 = 42,
};

struct GgmlTypeInfo {
  GgmlType type;
  std::string_view name;     // "F32", "Q8_0", "Q4_K", ...
  int64_t block_values = 1;  // values per block
  int64_t block_bytes = 0;   // bytes per block
};

// The geometry of a type id; nullopt for ids this reader does not know.
std::optional<GgmlTypeInfo> ggml_type_info(uint32_t id);
GgmlTypeInfo ggml_type_info(GgmlType type);
std::string_view ggml_type_name(GgmlType type);
// Parses "q8_0", "Q4_K", ... (case-insensitive); nullopt if unknown.
std::optional<GgmlType> ggml_type_from_name(std::string_view name);

// The name llama-quantize gives a GGUF file's `general.file_type` (llama.cpp's llama_ftype): "Q4_K_M" for
// 15, "F16" for 1, ...; empty for an id it does not define.
std::string_view gguf_file_type_name(int64_t file_type);
// Whether that file type is a quantization (not F32, F16 or BF16).
bool gguf_file_type_is_quantized(int64_t file_type);

// Bytes of one row of `values` values; nullopt when `values` is not a whole number of blocks or the
// size overflows.
std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t values);

}  // namespace verdict::formats
