// verdict make-model: writes a random-weight checkpoint in the release layout (modelgen/generator.h), or
// with --dry-run prints the tensors and sizes it would write.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/error.h"
#include "modelgen/generator.h"

namespace verdict::cli {

int run_make_model(Args& args) {
  modelgen::GenerateOptions options;
  options.preset = args.required("preset");
  const auto seed = args.integer("seed", 0, (1LL << 62));
  if (!seed) throw UsageError("--seed is required");
  options.seed = static_cast<uint64_t>(*seed);
  const std::string dtype = args.value("dtype").value_or("bf16");
  if (dtype != "bf16" && dtype != "f32") throw UsageError("--dtype must be bf16 or f32, not '" + dtype + "'");
  options.f32 = dtype == "f32";
  if (const auto q = args.value("quantize")) {
    if (*q == "mlx4") options.quantization = modelgen::Quantization::Mlx4;
    else if (*q == "mlx6") options.quantization = modelgen::Quantization::Mlx6;
    else if (*q == "mlx8") options.quantization = modelgen::Quantization::Mlx8;
    else throw UsageError("--quantize must be mlx4, mlx6 or mlx8, not '" + *q + "'");
  }
  if (const auto threads = args.integer("threads", 1, 1024)) options.threads = static_cast<int>(*threads);
  const bool dry_run = args.flag("dry-run");
  const std::vector<std::string> positionals = args.positionals();
  args.finish();
  if (positionals.size() > 1) throw UsageError("expected one output folder, got " + std::to_string(positionals.size()));
  if (positionals.empty() && !dry_run) throw UsageError("missing the output folder OUT_DIR");

  const modelgen::ModelPlan plan = modelgen::plan_model(options);
  if (dry_run) {
    std::fputs(modelgen::describe_plan(plan).c_str(), stdout);
  } else {
    modelgen::write_model(plan, positionals[0]);
    std::printf("wrote %s: preset %s, seed %llu, %lld parameters, %llu bytes of tensors\n", positionals[0].c_str(),
                plan.preset->name.c_str(), static_cast<unsigned long long>(options.seed),
                static_cast<long long>(plan.backbone_params + plan.head_params),
                static_cast<unsigned long long>(plan.tensor_bytes()));
  }
  if (std::fflush(stdout) != 0) throw Error("cannot write the output");
  return 0;
}

}  // namespace verdict::cli
