// The joint schema head of one decision, as the server runs it after the backbone's prefill: pool:0 on the
// calling thread alone (kernels::InlineLoops: the server's choice while an engine step runs), pool:1 over the
// kernel pool ($VERDICT_THREADS threads, default all: its choice when no step runs, engine::run_beside_steps).
// The clef-flash head (W 1024, F 4096, R 2, Ld 4) on the 0.8B backbone's H 1024, over a 350-row record with 3
// questions of 4 options, its matrices kept as BF16 (as a release head is stored) and, for comparison
// (f32:1), the same values stored as F32. All four give bit-identical logits (tests/decision); the
// differences are the bytes each decision streams and the threads that stream them.
//
//   build/release/bench/head_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// VERDICT_BENCH_HEAD=DIR benchmarks the head in DIR (joint_head_config.json, joint_head.safetensors) instead.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/heap.h"
#include "decision/head.h"
#include "formats/safetensors_writer.h"
#include "kernels/thread_pool.h"
#include "modelgen/config_files.h"
#include "modelgen/presets.h"
#include "modelgen/stored_tensors.h"
#include "modelgen/weight_specs.h"

namespace {

using verdict::decision::EncodedQuestion;
using verdict::decision::HeadInput;
using verdict::decision::JointHead;

[[maybe_unused]] const bool kHeapTuned = (verdict::tune_heap_for_inference(), true);

constexpr std::size_t kRecordRows = 350;

// The clef-0.8b preset's head (make-model's values, seed 1) written as BF16 or F32 into the bench cache.
std::string write_head(bool f32) {
  namespace mg = verdict::modelgen;
  const mg::HeadShape& shape = *mg::find_preset("clef-0.8b").head;
  std::string dir = VERDICT_BENCH_CACHE_DIR;
  dir.append(f32 ? "/clef-0.8b-head-f32" : "/clef-0.8b-head-bf16");
  if (std::filesystem::exists(dir + "/joint_head.safetensors")) return dir;
  std::filesystem::create_directories(dir);
  std::vector<verdict::formats::TensorData> tensors;
  for (const mg::WeightSpec& w : mg::head_weights(shape)) {
    std::vector<float> v(static_cast<std::size_t>(w.numel()));
    mg::weight_values(w, 1, 0, w.rows(), v.data());
    verdict::formats::TensorData t;
    t.entry = {w.name, f32 ? verdict::DType::F32 : verdict::DType::BF16, w.shape};
    t.data.resize(t.entry.nbytes());
    for (std::size_t i = 0; i < v.size(); ++i) {
      const uint16_t b = verdict::f32_to_bf16(v[i]);
      if (f32) {
        const float x = verdict::bf16_to_f32(b);
        std::memcpy(t.data.data() + 4 * i, &x, 4);
      } else {
        std::memcpy(t.data.data() + 2 * i, &b, 2);
      }
    }
    tensors.push_back(std::move(t));
  }
  std::ofstream(dir + "/joint_head_config.json") << mg::head_config_json(shape);
  verdict::formats::write_safetensors(dir + "/joint_head.safetensors.tmp", tensors);
  std::filesystem::rename(dir + "/joint_head.safetensors.tmp", dir + "/joint_head.safetensors");
  return dir;
}

const JointHead& head(bool f32) {
  static std::map<bool, std::unique_ptr<JointHead>> heads;
  auto& h = heads[f32];
  if (!h) {
    const char* env = std::getenv("VERDICT_BENCH_HEAD");
    const std::string dir = env != nullptr && *env != '\0' ? std::string(env) : write_head(f32);
    h = std::make_unique<JointHead>(JointHead::load_dir(dir));
  }
  return *h;
}

void BM_JointHead(benchmark::State& state) {
  const JointHead& h = head(state.range(0) == 1);
  const std::size_t hs = h.config().hidden_size;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> hidden(kRecordRows * hs), lexical_table(64 * hs);
  for (float& v : hidden) v = normal(rng);
  for (float& v : lexical_table) v = normal(rng);
  std::vector<verdict::decision::TokenId> ids(kRecordRows);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<verdict::decision::TokenId>(i % 64);
  // 3 questions of 4 options, each question's text followed by its options' (spans of 4 tokens).
  std::vector<EncodedQuestion> questions(3);
  for (std::size_t q = 0; q < questions.size(); ++q) {
    const std::size_t at = 100 + 80 * q;
    questions[q].question_id = std::to_string(q);
    questions[q].type_id = static_cast<int>(q % 3);
    questions[q].question_span = {at, at + 12};
    for (std::size_t o = 0; o < 4; ++o) questions[q].option_spans.push_back({at + 16 + 6 * o, at + 20 + 6 * o});
  }
  HeadInput in;
  in.hidden = hidden;
  in.input_ids = ids;
  in.questions = questions;
  in.lexical = [&](verdict::decision::TokenId id, std::span<float> row) {
    std::copy_n(lexical_table.begin() + static_cast<std::ptrdiff_t>(id) * static_cast<std::ptrdiff_t>(hs), hs,
                row.begin());
  };
  if (state.range(1) == 1) {
    for (auto _ : state) benchmark::DoNotOptimize(h.forward(in));
  } else {
    const verdict::kernels::InlineLoops on_this_thread;
    for (auto _ : state) benchmark::DoNotOptimize(h.forward(in));
  }
  state.counters["weight_MB"] = static_cast<double>(h.weight_bytes()) / 1e6;
  state.counters["threads"] = state.range(1) == 1 ? verdict::kernels::num_threads() : 1;
}
BENCHMARK(BM_JointHead)
    ->ArgNames({"f32", "pool"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
