// verdict forward: one prefill of the Qwen3.5 backbone, printed as JSON (how external checks drive
// the engine): {"hidden": [[...], ...], "logits": [...]}.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/error.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/backbone.h"

namespace verdict::cli {
namespace {

void print_floats(std::span<const float> values) {
  std::fputc('[', stdout);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) std::fputc(',', stdout);
    if (std::isfinite(values[i])) {
      std::printf("%.9g", static_cast<double>(values[i]));
    } else {
      std::fputs("null", stdout);
    }
  }
  std::fputc(']', stdout);
}

}  // namespace

int run_forward(Args& args) {
  const std::string model_dir = args.required("model");
  const std::vector<int32_t> tokens = args.token_ids("tokens");
  const bool all_rows = args.flag("all-rows");
  const auto chunk = args.integer("chunk", 1, int64_t{1} << 30).value_or(models::qwen35::kDefaultPrefillChunk);
  if (const auto threads = args.integer("threads", 1, 1024)) kernels::set_num_threads(static_cast<int>(*threads));
  args.finish();

  const auto model = models::qwen35::Backbone::load(model_dir);
  const auto n = static_cast<int64_t>(tokens.size());
  models::qwen35::SeqStatePool pool = model->make_pool(1, n);
  const int64_t last = n - 1;
  const auto out = model->prefill(pool, pool.acquire(), tokens, std::span<const int64_t>(&last, 1), chunk);

  std::fputs("{\"hidden\":[", stdout);
  for (int64_t t = all_rows ? 0 : last; t < n; ++t) {
    print_floats(out.hidden_row(0, t));
    if (t + 1 < n) std::fputc(',', stdout);
  }
  std::fputs("],\"logits\":", stdout);
  print_floats(out.logits_row(0, 0));
  std::fputs("}\n", stdout);
  if (std::fflush(stdout) != 0) throw Error("cannot write the output");
  return 0;
}

}  // namespace verdict::cli
