// Tokenizer throughput on a mixed multilingual corpus built from qwen3-tokenizer/cases.jsonl: the 3,000
// case texts joined by newlines and repeated to 1 MiB, then cut into 4 KiB documents (at character
// boundaries). Single thread. Run: build/bench/tokenizer_bench --benchmark_filter=Encode
#include <benchmark/benchmark.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/mapped_file.h"
#include "tokenizer/tokenizer.h"

namespace {

using verdict::tokenizer::StreamDecoder;
using verdict::tokenizer::Tokenizer;
using verdict::tokenizer::TokenId;

const std::string kFixtures = VERDICT_FIXTURES_DIR;

const Tokenizer& qwen3() {
  static const Tokenizer tok = Tokenizer::from_file(kFixtures + "/qwen3-tokenizer/tokenizer.json");
  return tok;
}

std::vector<std::string> case_texts() {
  std::vector<std::string> texts;
  std::istringstream in(verdict::read_text_file(kFixtures + "/qwen3-tokenizer/cases.jsonl"));
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) texts.push_back(verdict::Json::parse(line).at("text").get<std::string>());
  return texts;
}

// The corpus as 4 KiB documents, at least 1 MiB in all.
const std::vector<std::string>& documents() {
  static const std::vector<std::string> docs = [] {
    const std::vector<std::string> texts = case_texts();
    std::string corpus;
    while (corpus.size() < (1u << 20))
      for (const std::string& t : texts) corpus.append(t).push_back('\n');
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < corpus.size()) {
      std::size_t end = std::min(corpus.size(), i + 4096);
      while (end < corpus.size() && (static_cast<unsigned char>(corpus[end]) & 0xC0u) == 0x80u) --end;
      out.push_back(corpus.substr(i, end - i));
      i = end;
    }
    return out;
  }();
  return docs;
}

std::size_t total_bytes(const std::vector<std::string>& docs) {
  std::size_t n = 0;
  for (const std::string& d : docs) n += d.size();
  return n;
}

void BM_Load(benchmark::State& state) {
  const std::string text = verdict::read_text_file(kFixtures + "/qwen3-tokenizer/tokenizer.json");
  for (auto _ : state) {
    Tokenizer tok = Tokenizer::from_json(text, "tokenizer.json");
    benchmark::DoNotOptimize(tok.vocab_size());
  }
}
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Encode4KiB(benchmark::State& state) {
  const Tokenizer& tok = qwen3();
  const auto& docs = documents();
  std::size_t tokens = 0;
  for (auto _ : state) {
    for (const std::string& d : docs) {
      auto ids = tok.encode(d);
      tokens += ids.size();
      benchmark::DoNotOptimize(ids.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * total_bytes(docs)));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Encode4KiB)->Unit(benchmark::kMillisecond);

// The same documents, each pass with a freshly loaded tokenizer (empty word cache).
void BM_Encode4KiBColdCache(benchmark::State& state) {
  const std::string text = verdict::read_text_file(kFixtures + "/qwen3-tokenizer/tokenizer.json");
  const auto& docs = documents();
  for (auto _ : state) {
    state.PauseTiming();
    auto tok = std::make_unique<Tokenizer>(Tokenizer::from_json(text, "tokenizer.json"));
    state.ResumeTiming();
    for (const std::string& d : docs) benchmark::DoNotOptimize(tok->encode(d).data());
    state.PauseTiming();
    tok.reset();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * total_bytes(docs)));
}
BENCHMARK(BM_Encode4KiBColdCache)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_EncodeShortCases(benchmark::State& state) {
  const Tokenizer& tok = qwen3();
  static const std::vector<std::string> texts = case_texts();
  for (auto _ : state)
    for (const std::string& t : texts) benchmark::DoNotOptimize(tok.encode(t).data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * total_bytes(texts)));
}
BENCHMARK(BM_EncodeShortCases)->Unit(benchmark::kMillisecond);

void BM_Decode4KiB(benchmark::State& state) {
  const Tokenizer& tok = qwen3();
  std::vector<std::vector<TokenId>> encoded;
  for (const std::string& d : documents()) encoded.push_back(tok.encode(d));
  for (auto _ : state)
    for (const auto& ids : encoded) benchmark::DoNotOptimize(tok.decode(ids).data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * total_bytes(documents())));
}
BENCHMARK(BM_Decode4KiB)->Unit(benchmark::kMillisecond);

void BM_StreamDecode4KiB(benchmark::State& state) {
  const Tokenizer& tok = qwen3();
  std::vector<std::vector<TokenId>> encoded;
  for (const std::string& d : documents()) encoded.push_back(tok.encode(d));
  for (auto _ : state) {
    for (const auto& ids : encoded) {
      StreamDecoder stream(tok);
      std::size_t n = 0;
      for (TokenId id : ids) n += stream.push(id).size();
      n += stream.finish().size();
      benchmark::DoNotOptimize(n);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * total_bytes(documents())));
}
BENCHMARK(BM_StreamDecode4KiB)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
