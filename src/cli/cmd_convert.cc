// verdict convert: a Hugging Face or MLX Qwen3.5 checkpoint folder → a llama.cpp `qwen35` GGUF file
// (models/qwen35/gguf_export.h).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/error.h"
#include "formats/ggml_type.h"
#include "models/qwen35/gguf_export.h"

namespace verdict::cli {

int run_convert(Args& args) {
  models::qwen35::GgufExportOptions options;
  const std::string type = args.value("type").value_or("f32");
  options.k_m = type == "q4_k_m" || type == "q5_k_m";
  const auto parsed = formats::ggml_type_from_name(type == "q4_k_m" ? "q4_k" : type == "q5_k_m" ? "q5_k" : type);
  const bool plain = type == "f32" || type == "f16" || type == "bf16" || type == "q8_0" || type == "q4_0" ||
                     type == "q4_1" || type == "q5_0" || type == "q5_1" || type == "q2_k" || type == "q3_k" ||
                     type == "q4_k" || type == "q5_k" || type == "q6_k" || type == "iq4_nl" || type == "iq4_xs";
  if (!parsed || (!plain && !options.k_m))
    throw UsageError(
        "--type must be f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, "
        "iq4_xs, q4_k_m or q5_k_m, not '" +
        type + "'");
  options.type = *parsed;
  options.name = args.value("name").value_or("");
  const std::vector<std::string> pos = args.positionals();
  args.finish();
  if (pos.size() != 2) throw UsageError("expected IN_DIR and OUT.gguf");
  const auto summary = models::qwen35::export_gguf(pos[0], pos[1], options);
  std::string types;
  for (const auto& [name, count] : summary.tensors_by_type)
    types += (types.empty() ? "" : ", ") + std::to_string(count) + " " + name;
  std::printf("wrote %s: %lld tensors (%s), %llu bytes\n", pos[1].c_str(), static_cast<long long>(summary.tensors),
              types.c_str(), static_cast<unsigned long long>(summary.file_bytes));
  if (std::fflush(stdout) != 0) throw Error("cannot write the output");
  return 0;
}

}  // namespace verdict::cli
