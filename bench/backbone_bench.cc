// Qwen3.5 backbone throughput: prefill tokens/s on a 512-token prompt (one 512-token chunk) and decode
// tokens/s (one token per step, greedy, after a 512-token prompt), with the default packed products
// ($VERDICT_PACK=0: exact fp32 activations); one step over several records (BM_RecordsPerStep: what
// merging concurrent decisions saves per token); and one DeltaNet layer's delta rule alone (BM_DeltaRule,
// no model needed: --benchmark_filter=DeltaRule).
//
// Model: the checkpoint folder or GGUF file in $VERDICT_BENCH_MODEL, else `verdict make-model --preset qwen35-0.8b
// --seed 1` (BF16), generated on first use into <build>/bench-models/qwen35-0.8b-bf16-seed1
// (about 1.5 GB). Threads: $VERDICT_THREADS, default 2.
//
// Run: build/bench/backbone_bench            (or VERDICT_BENCH_MODEL=DIR VERDICT_THREADS=N ...)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/heap.h"
#include "kernels/thread_pool.h"
#include "kernels/float_mode.h"
#include "models/qwen35/backbone.h"
#include "models/qwen35/delta_rule.h"
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

// One forward step over `records` records of `tokens` tokens each, as the server's scheduler batches
// concurrent decisions (no logits: a decision reads the hidden rows). tokens/s against records = 1 is what
// merging records into one step saves per token (docs/performance.md, "8 at once, measured both ways round
// and per step").
// Args: records, tokens per record. Run with --benchmark_enable_random_interleaving=true
// --benchmark_repetitions=N so that host noise spreads over all the shapes alike.
void BM_RecordsPerStep(benchmark::State& state) {
  const Backbone& m = model();
  const int64_t records = state.range(0), tokens = state.range(1);
  std::vector<std::vector<int32_t>> ids;
  for (int64_t r = 0; r < records; ++r) {
    std::vector<int32_t> v = prompt_ids(tokens + r, m.config().vocab);
    ids.emplace_back(v.begin() + r, v.end());  // a different record each
  }
  SeqStatePool pool = m.make_pool(records, tokens);
  std::vector<SequenceInput> batch;
  for (int64_t r = 0; r < records; ++r) batch.push_back({pool.acquire(), ids[static_cast<std::size_t>(r)], {}});
  for (auto _ : state) {
    for (const SequenceInput& s : batch) pool.reset(s.slot);
    auto out = m.forward(pool, batch);
    benchmark::DoNotOptimize(out.hidden.data());
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(state.iterations() * records * tokens),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RecordsPerStep)
    ->ArgNames({"records", "tokens"})
    ->ArgsProduct({{1, 2, 4}, {342}})
    ->Args({1, 512})
    ->Args({1, 171})
    ->Args({2, 171})
    ->Args({1, 96})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

// One DeltaNet layer's delta rule on one thread, qwen35-0.8b's shape (16 value heads, dk = dv = 128), over
// `tokens` tokens: the chunked form for a prompt (tokens > 1), the recurrent one for a decode step.
// Args: tokens; forget: 0 for slowly forgetting heads (g ∈ [−0.075, −0.025] per token), 1 for fast ones
// (g ∈ [−3, −1.5]: within a chunk the decays e^(γ_t − γ_s) fall below fp32's normal range); flush: 1 runs
// under kernels::FlushSubnormals, as Backbone::forward does. Reports the multiply-adds the chunked form's
// products count (per chunk of c tokens and head: 2 c² dk for q·k and k·k, c² (dk + dv) / 2 for the
// substitution, 3 c dk dv for W S, (e^γ Q) S and the state update, c² dv for P V') per second.
void BM_DeltaRule(benchmark::State& state) {
  using verdict::models::qwen35::DeltaRuleHead;
  constexpr int64_t kHeads = 16, dk = 128, dv = 128;
  const int64_t n = state.range(0);
  const bool fast = state.range(1) != 0;
  std::optional<verdict::kernels::FlushSubnormals> flush;
  if (state.range(2) != 0) flush.emplace();
  std::vector<float> q(n * dk), k(n * dk), v(n * dv), beta(n), g(n), out(n * dv), S(kHeads * dk * dv);
  uint32_t x = 1;
  auto unit = [&] { return static_cast<float>((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f; };
  for (float& f : q) f = (unit() - 0.5f) * 0.1f;
  for (float& f : k) f = (unit() - 0.5f) * 0.1f;
  for (float& f : v) f = unit() - 0.5f;
  for (float& f : beta) f = 0.25f + unit() * 0.5f;
  for (float& f : g) f = fast ? -1.5f - 1.5f * unit() : -0.025f - 0.05f * unit();
  for (auto _ : state) {
    for (int64_t h = 0; h < kHeads; ++h) {
      DeltaRuleHead head;
      head.n = n;
      head.dk = dk;
      head.dv = dv;
      head.q = q.data();
      head.k = k.data();
      head.v = v.data();
      head.q_stride = head.k_stride = dk;
      head.v_stride = dv;
      head.beta = beta.data();
      head.g = g.data();
      head.gate_stride = 1;
      head.out = out.data();
      head.out_stride = dv;
      float* s = S.data() + h * dk * dv;
      if (n == 1) {
        verdict::models::qwen35::delta_rule_recurrent(head, s);
      } else {
        verdict::models::qwen35::delta_rule_chunked(head, s);
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  const double c = static_cast<double>(std::min<int64_t>(n, verdict::models::qwen35::kDeltaRuleChunk));
  const double per_chunk = 2 * c * c * dk + c * c * (dk + dv) / 2 + 3 * c * dk * dv + c * c * dv;
  const double macs = n == 1 ? 3.0 * dk * dv : per_chunk * static_cast<double>(n) / c;
  state.counters["GMACs"] = benchmark::Counter(macs * kHeads * static_cast<double>(state.iterations()) / 1e9,
                                               benchmark::Counter::kIsRate);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(n * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DeltaRule)->ArgsProduct({{1, 512}, {0, 1}, {0, 1}})->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_Prefill512)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(64);

}  // namespace

BENCHMARK_MAIN();
