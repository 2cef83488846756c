// verdict generate: greedy decoding with the Qwen3.5 backbone, printed as {"ids": [...]}.
// Exactly --max-tokens ids unless --stop-at-eos (the goldens' greedy runs never stop early).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/hf_config.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/backbone.h"

namespace verdict::cli {
namespace {

// The first index of the largest logit.
int32_t argmax(std::span<const float> logits) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<int32_t>(best);
}

}  // namespace

int run_generate(Args& args) {
  const std::string model_dir = args.required("model");
  const std::vector<int32_t> prompt = args.token_ids("tokens");
  const auto max_tokens_arg = args.integer("max-tokens", 0, int64_t{1} << 24);
  if (!max_tokens_arg) throw UsageError("missing required option --max-tokens");
  const auto max_tokens = static_cast<int64_t>(*max_tokens_arg);
  const bool stop_at_eos = args.flag("stop-at-eos");
  const auto chunk = args.integer("chunk", 1, int64_t{1} << 30).value_or(models::qwen35::kDefaultPrefillChunk);
  if (const auto threads = args.integer("threads", 1, 1024)) kernels::set_num_threads(static_cast<int>(*threads));
  args.finish();

  const auto model = models::qwen35::Backbone::load(model_dir);
  // Stop ids: generation_config.json's (Qwen3.5 stops on both <|im_end|> and <|endoftext|>), else
  // the model config's eos_token_id.
  std::vector<int64_t> eos = model->config().eos_token_ids;
  if (stop_at_eos && file_exists(model_dir + "/generation_config.json")) {
    const auto gen = formats::load_generation_config(model_dir + "/generation_config.json");
    if (!gen.eos_token_ids.empty()) eos = gen.eos_token_ids;
  }
  const auto n = static_cast<int64_t>(prompt.size());
  models::qwen35::SeqStatePool pool = model->make_pool(1, n + max_tokens);
  const int64_t slot = pool.acquire();
  std::vector<int32_t> ids;
  const int64_t last = n - 1;
  auto out = model->prefill(pool, slot, prompt, std::span<const int64_t>(&last, 1), chunk);
  const int64_t zero = 0;
  if (max_tokens > 0) {
    for (;;) {
      const int32_t next = argmax(out.logits_row(0, 0));
      ids.push_back(next);
      if (static_cast<int64_t>(ids.size()) == max_tokens) break;
      if (stop_at_eos && std::find(eos.begin(), eos.end(), next) != eos.end()) break;
      const models::qwen35::SequenceInput step{slot, std::span<const int32_t>(&ids.back(), 1),
                                               std::span<const int64_t>(&zero, 1)};
      out = model->forward(pool, std::span<const models::qwen35::SequenceInput>(&step, 1));
    }
  }
  std::fputs("{\"ids\":[", stdout);
  for (std::size_t i = 0; i < ids.size(); ++i) std::printf(i ? ",%d" : "%d", ids[i]);
  std::fputs("]}\n", stdout);
  if (std::fflush(stdout) != 0) throw Error("cannot write the output");
  return 0;
}

}  // namespace verdict::cli
