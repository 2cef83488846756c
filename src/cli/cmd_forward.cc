// verdict forward: one prefill of the Qwen3.5 backbone, printed as JSON (how external checks drive
// the engine): {"hidden": [[...], ...], "logits": [...]}.
#include <algorithm>
#include <cerrno>
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

// "1,2,3" → ids (non-negative integers; range against the vocabulary is checked by the backbone).
std::vector<int32_t> parse_token_list(const std::string& text) {
  std::vector<int32_t> ids;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || end != item.c_str() + item.size() || errno != 0 || v < 0 || v > INT32_MAX)
      throw UsageError("--tokens: '" + item + "' is not a token id (expected a comma-separated list like 1,2,3)");
    ids.push_back(static_cast<int32_t>(v));
    pos = comma + 1;
  }
  return ids;
}

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
  const std::vector<int32_t> tokens = parse_token_list(args.required("tokens"));
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
