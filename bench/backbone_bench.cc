// Qwen3.5 backbone throughput: prefill tokens/s on a 512-token prompt (one 512-token chunk) and decode
// tokens/s (one token per step, greedy, after a 512-token prompt), fp32 activations.
//
// Model: the checkpoint folder in $VERDICT_BENCH_MODEL, else `verdict make-model --preset qwen35-0.8b
// --seed 1` (BF16), generated on first use into <build>/bench-models/qwen35-0.8b-bf16-seed1
// (about 1.5 GB). Threads: $VERDICT_THREADS, default 2.
//
// Run: build/bench/backbone_bench            (or VERDICT_BENCH_MODEL=DIR VERDICT_THREADS=N ...)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/heap.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/backbone.h"
#include "modelgen/generator.h"

namespace {

using verdict::models::qwen35::Backbone;
using verdict::models::qwen35::SequenceInput;
using verdict::models::qwen35::SeqStatePool;

// As `verdict` does at start-up (before benchmark's main creates any thread).
[[maybe_unused]] const bool kHeapTuned = (verdict::tune_heap_for_inference(), true);

constexpr int64_t kPromptTokens = 512;
constexpr int64_t kDecodeRoom = 512;  // decode steps before the state is rebuilt

std::string model_dir() {
  if (const char* env = std::getenv("VERDICT_BENCH_MODEL"); env != nullptr && *env != '\0') return env;
  const std::string dir = std::string(VERDICT_BENCH_CACHE_DIR) + "/qwen35-0.8b-bf16-seed1";
  verdict::modelgen::GenerateOptions options;
  options.preset = "qwen35-0.8b";
  options.seed = 1;
  verdict::modelgen::ensure_model(options, dir);
  return dir;
}

const Backbone& model() {
  static const std::unique_ptr<Backbone> backbone = [] {
    const char* env = std::getenv("VERDICT_THREADS");
    const int threads = env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 2;
    verdict::kernels::set_num_threads(threads);
    const std::string dir = model_dir();
    std::fprintf(stderr, "model %s, %d threads\n", dir.c_str(), verdict::kernels::num_threads());
    return Backbone::load(dir);
  }();
  return *backbone;
}

// A fixed prompt of ordinary token ids (the content does not change the work).
std::vector<int32_t> prompt_ids(int64_t n, int64_t vocab) {
  std::vector<int32_t> ids(static_cast<std::size_t>(n));
  const int64_t range = std::min<int64_t>(vocab, 248044);
  for (int64_t i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = static_cast<int32_t>((i * 7919 + 13) % range);
  return ids;
}

int32_t argmax(std::span<const float> logits) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<int32_t>(best);
}

void BM_Prefill512(benchmark::State& state) {
  const Backbone& m = model();
  const std::vector<int32_t> ids = prompt_ids(kPromptTokens, m.config().vocab);
  SeqStatePool pool = m.make_pool(1, kPromptTokens);
  const int64_t slot = pool.acquire();
  const int64_t last = kPromptTokens - 1;
  for (auto _ : state) {
    pool.reset(slot);
    auto out = m.prefill(pool, slot, ids, std::span<const int64_t>(&last, 1), kPromptTokens);
    benchmark::DoNotOptimize(out.logits.data());
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kPromptTokens), benchmark::Counter::kIsRate);
}

void BM_Decode(benchmark::State& state) {
  const Backbone& m = model();
  const std::vector<int32_t> ids = prompt_ids(kPromptTokens, m.config().vocab);
  SeqStatePool pool = m.make_pool(1, kPromptTokens + kDecodeRoom);
  const int64_t slot = pool.acquire();
  const int64_t last = kPromptTokens - 1, zero = 0;
  int32_t next = 0;
  auto restart = [&] {
    pool.reset(slot);
    next = argmax(m.prefill(pool, slot, ids, std::span<const int64_t>(&last, 1)).logits_row(0, 0));
  };
  restart();
  for (auto _ : state) {
    if (pool.length(slot) == kPromptTokens + kDecodeRoom) {
      state.PauseTiming();
      restart();
      state.ResumeTiming();
    }
    const SequenceInput step{slot, std::span<const int32_t>(&next, 1), std::span<const int64_t>(&zero, 1)};
    next = argmax(m.forward(pool, std::span<const SequenceInput>(&step, 1)).logits_row(0, 0));
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["context"] = static_cast<double>(pool.length(slot));
}

BENCHMARK(BM_Prefill512)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(64);

}  // namespace

BENCHMARK_MAIN();
