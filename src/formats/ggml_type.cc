#include "formats/ggml_type.h"

#include <array>
#include <cctype>
#include <iterator>
#include <string>

namespace verdict::formats {
namespace {

// Block geometry of the ggml types (ggml-common.h of llama.cpp 80fb11ac): the K-quants and most i-quants pack
// 256 values per block. Every type a GGUF file may hold is read (and named in errors and `verdict info`);
// the model loader computes with a subset (kernels::WeightType).
constexpr std::array<GgmlTypeInfo, 35> kTypes = {{
    {GgmlType::F32, "F32", 1, 4},
    {GgmlType::F16, "F16", 1, 2},
    {GgmlType::Q4_0, "Q4_0", 32, 18},
    {GgmlType::Q4_1, "Q4_1", 32, 20},
    {GgmlType::Q5_0, "Q5_0", 32, 22},
    {GgmlType::Q5_1, "Q5_1", 32, 24},
    {GgmlType::Q8_0, "Q8_0", 32, 34},
    {GgmlType::Q8_1, "Q8_1", 32, 36},
    {GgmlType::Q2_K, "Q2_K", 256, 84},
    {GgmlType::Q3_K, "Q3_K", 256, 110},
    {GgmlType::Q4_K, "Q4_K", 256, 144},
    {GgmlType::Q5_K, "Q5_K", 256, 176},
    {GgmlType::Q6_K, "Q6_K", 256, 210},
    {GgmlType::Q8_K, "Q8_K", 256, 292},
    {GgmlType::I8, "I8", 1, 1},
    {GgmlType::I16, "I16", 1, 2},
    {GgmlType::I32, "I32", 1, 4},
    {GgmlType::I64, "I64", 1, 8},
    {GgmlType::F64, "F64", 1, 8},
    {GgmlType::BF16, "BF16", 1, 2},
    {GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66},
    {GgmlType::IQ2_XS, "IQ2_XS", 256, 74},
    {GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98},
    {GgmlType::IQ1_S, "IQ1_S", 256, 50},
    {GgmlType::IQ4_NL, "IQ4_NL", 32, 18},
    {GgmlType::IQ3_S, "IQ3_S", 256, 110},
    {GgmlType::IQ2_S, "IQ2_S", 256, 82},
    {GgmlType::IQ4_XS, "IQ4_XS", 256, 136},
    {GgmlType::IQ1_M, "IQ1_M", 256, 56},
    {GgmlType::TQ1_0, "TQ1_0", 256, 54},
    {GgmlType::TQ2_0, "TQ2_0", 256, 66},
    {GgmlType::MXFP4, "MXFP4", 32, 17},
    {GgmlType::NVFP4, "NVFP4", 64, 36},
    {GgmlType::Q1_0, "Q1_0", 128, 18},
    {GgmlType::Q2_0, "Q2_0", 64, 18},
}};

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t id) {
  for (const GgmlTypeInfo& t : kTypes)
    if (static_cast<uint32_t>(t.type) == id) return t;
  return std::nullopt;
}

GgmlTypeInfo ggml_type_info(GgmlType type) { return *ggml_type_info(static_cast<uint32_t>(type)); }

std::string_view ggml_type_name(GgmlType type) { return ggml_type_info(type).name; }

std::string_view gguf_file_type_name(int64_t file_type) {
  // llama.h's llama_ftype: ids 4–6 and 33–35 were removed from GGUF files.
  static constexpr std::string_view kNames[] = {
      "F32",     "F16",    "Q4_0",    "Q4_1",   "",       "",       "",       "Q8_0",   "Q5_0",   "Q5_1",
      "Q2_K",    "Q3_K_S", "Q3_K_M",  "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K",   "IQ2_XXS",
      "IQ2_XS",  "Q2_K_S", "IQ3_XS",  "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S",  "IQ3_M",  "IQ2_S",  "IQ2_M",
      "IQ4_XS",  "IQ1_M",  "BF16",    "",       "",       "",       "TQ1_0",  "TQ2_0",  "MXFP4_MOE", "NVFP4",
      "Q1_0",    "Q2_0"};
  if (file_type < 0 || file_type >= static_cast<int64_t>(std::size(kNames))) return {};
  return kNames[file_type];
}

bool gguf_file_type_is_quantized(int64_t file_type) {
  return !gguf_file_type_name(file_type).empty() && file_type != 0 && file_type != 1 && file_type != 32;
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  std::string upper(name);
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (const GgmlTypeInfo& t : kTypes)
    if (t.name == upper) return t.type;
  return std::nullopt;
}

std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t values) {
  const GgmlTypeInfo info = ggml_type_info(type);
  const auto block = static_cast<uint64_t>(info.block_values);
  if (values % block != 0) return std::nullopt;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(values / block, static_cast<uint64_t>(info.block_bytes), &bytes)) return std::nullopt;
  return bytes;
}

}  // namespace verdict::formats
