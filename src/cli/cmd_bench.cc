// verdict bench: prefill and decode speed of a model, measured as llama.cpp's llama-bench measures
// them (`llama-bench -p 512 -n 128`): prefill = one forward of --n-prompt tokens in an empty sequence
// (logits of the last position only); decode = --n-gen single-token steps from an empty sequence,
// each with its logits. Token ids are random (fixed seed) below the vocabulary size. One warm-up run
// of each, then --repetitions timed runs; the medians are reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/error.h"
#include "core/json.h"
#include "kernels/isa.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/backbone.h"

namespace verdict::cli {
namespace {

using Clock = std::chrono::steady_clock;
using models::qwen35::Backbone;
using models::qwen35::SeqStatePool;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The kernel choices that set the speed (isa.h): the ISA, AVX-VNNI under AVX2, the AMX tiles, how BF16 weights
// multiply.
std::string kernels_text() {
  const kernels::Isa isa = kernels::active_isa();
  std::string text(kernels::isa_name(isa));
  if (isa == kernels::Isa::Avx2 && kernels::avx_vnni_supported())
    text += kernels::avx_vnni_enabled() ? ", AVX-VNNI on" : ", AVX-VNNI off";
  if (isa != kernels::Isa::Avx512) return text;  // the tiles and both BF16 products run under AVX-512
  if (kernels::amx_supported()) text += kernels::amx_enabled() ? ", AMX tiles on" : ", AMX tiles off";
  if (!kernels::amx_enabled())
    text += ", BF16 products " + std::string(kernels::bf16_products_name(kernels::bf16_products()));
  return text;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<int32_t> random_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(vocab - 1));
  std::vector<int32_t> ids(static_cast<std::size_t>(n));
  for (auto& id : ids) id = pick(rng);
  return ids;
}

// Seconds of one prefill of `tokens` in a fresh slot.
double time_prefill(const Backbone& model, SeqStatePool& pool, const std::vector<int32_t>& tokens, int64_t chunk) {
  pool.reset(0);
  const int64_t last = static_cast<int64_t>(tokens.size()) - 1;
  const auto t0 = Clock::now();
  (void)model.prefill(pool, 0, tokens, std::span<const int64_t>(&last, 1), chunk);
  return seconds_since(t0);
}

// Seconds of `tokens.size()` single-token steps from a fresh slot.
double time_decode(const Backbone& model, SeqStatePool& pool, const std::vector<int32_t>& tokens) {
  pool.reset(0);
  const int64_t zero = 0;
  const auto t0 = Clock::now();
  for (const int32_t& id : tokens) {
    const models::qwen35::SequenceInput step{0, std::span<const int32_t>(&id, 1), std::span<const int64_t>(&zero, 1)};
    (void)model.forward(pool, std::span<const models::qwen35::SequenceInput>(&step, 1));
  }
  return seconds_since(t0);
}

std::string runs_text(const std::vector<double>& runs) {
  std::string s;
  for (double v : runs) s += (s.empty() ? "" : ", ") + std::to_string(static_cast<long long>(v + 0.5));
  return s;
}

}  // namespace

extern const char kBenchUsage[] =
    "usage: verdict bench --model PATH [--n-prompt N] [--n-gen N] [--threads N] [--repetitions N]\n"
    "                     [--chunk N] [--json]\n"
    "\n"
    "Measures prefill and decode speed as llama.cpp's `llama-bench -p N -n N` does: prefill is one\n"
    "forward pass over --n-prompt random tokens in an empty sequence (logits of the last position);\n"
    "decode is --n-gen single-token steps from an empty sequence, each computing its logits. After one\n"
    "warm-up of each, --repetitions timed runs; the medians are reported. The text output also gives the\n"
    "model's load time (reading the file and repacking its matrices).\n"
    "\n"
    "options:\n"
    "  --model PATH       checkpoint folder or qwen35 .gguf file\n"
    "  --n-prompt N       prompt tokens (default 512; 0 skips the prefill test)\n"
    "  --n-gen N          generated tokens (default 128; 0 skips the decode test)\n"
    "  --threads N        compute threads (default: $VERDICT_THREADS or every hardware thread)\n"
    "  --repetitions N    timed runs of each test (default 3)\n"
    "  --chunk N          prefill chunk in tokens (default: the whole prompt in one step)\n"
    "  --json             print {\"prompt_tokens_per_s\": ..., \"gen_tokens_per_s\": ...} (medians)\n"
    "\n"
    "example:\n"
    "  verdict bench --model qwen35-0.8b-q8_0.gguf --n-prompt 512 --n-gen 128 --threads 2 --json\n";

int run_bench(Args& args) {
  const std::string path = args.required("model");
  const int64_t n_prompt = args.integer("n-prompt", 0, 1 << 20).value_or(512);
  const int64_t n_gen = args.integer("n-gen", 0, 1 << 20).value_or(128);
  const int reps = static_cast<int>(args.integer("repetitions", 1, 1000).value_or(3));
  const auto chunk_flag = args.integer("chunk", 1, 1 << 20);
  const bool json = args.flag("json");
  if (const auto threads = args.integer("threads", 1, 1024)) kernels::set_num_threads(static_cast<int>(*threads));
  args.finish();
  if (n_prompt == 0 && n_gen == 0) throw UsageError("nothing to measure: --n-prompt and --n-gen are both 0");

  const auto load_start = std::chrono::steady_clock::now();
  const auto model = Backbone::load(path);
  const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  const int64_t vocab = model->config().vocab;
  SeqStatePool pool = model->make_pool(1, std::max<int64_t>(n_prompt, n_gen) + 1);
  pool.acquire();
  const int64_t chunk = chunk_flag.value_or(std::max<int64_t>(n_prompt, 1));

  Json out = Json::object();
  std::vector<double> prefill, decode;
  if (n_prompt > 0) {
    const auto tokens = random_tokens(n_prompt, vocab, 1);
    (void)time_prefill(*model, pool, tokens, chunk);  // warm-up
    for (int r = 0; r < reps; ++r) prefill.push_back(static_cast<double>(n_prompt) / time_prefill(*model, pool, tokens, chunk));
    out["prompt_tokens_per_s"] = median(prefill);
  }
  if (n_gen > 0) {
    const auto tokens = random_tokens(n_gen, vocab, 2);
    (void)time_decode(*model, pool, tokens);
    for (int r = 0; r < reps; ++r) decode.push_back(static_cast<double>(n_gen) / time_decode(*model, pool, tokens));
    out["gen_tokens_per_s"] = median(decode);
  }
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  const int threads = kernels::default_pool().size();
  std::printf("model: %s (threads %d, %d repetitions, medians)\n", path.c_str(), threads, reps);
  std::printf("kernels: %s\n", kernels_text().c_str());
  std::printf("load: %.1f ms (reading the file, repacking its matrices for the kernels)\n", 1e3 * load_seconds);
  if (n_prompt > 0)
    std::printf("  pp%-6lld %10.2f tokens/s   (runs: %s)\n", static_cast<long long>(n_prompt), median(prefill),
                runs_text(prefill).c_str());
  if (n_gen > 0)
    std::printf("  tg%-6lld %10.2f tokens/s   (runs: %s)\n", static_cast<long long>(n_gen), median(decode),
                runs_text(decode).c_str());
  return 0;
}

}  // namespace verdict::cli
