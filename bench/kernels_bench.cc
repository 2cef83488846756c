// Prefill GEMM throughput of every weight type at the qwen35-0.8b shapes (hidden 1024, intermediate 3584;
// DeltaNet in_proj_qkv 6144 × 1024) with n = 512 tokens, 1 and 2 threads, plus the machine's peaks:
// register-only loops of independent vpdpbusd / vdpbf16ps / vfmadd231ps chains (kernels/peak.h).
//
// Counters: GOPS = 2 · rows · cols · n / time (one multiply-add = 2 operations, whatever the type), and
// for the peaks the same count per instruction (vpdpbusd zmm = 64 int8 multiply-adds = 128 ops,
// vdpbf16ps zmm = 32 bf16 multiply-adds = 64 ops, vfmadd231ps zmm = 16 = 32 ops).
//
// BM_Gemm also measures its peak in the same loop: each iteration runs the product, then the peak loop
// of the instruction its kernel uses (vpdpbusd for the int8 types, vdpbf16ps for bf16, vfmadd231ps for
// the fp32-activation kernels) on the same number of threads through the kernels' pool. best_GOPS and
// peak_GOPS are the best iteration of each, pct_of_peak their ratio: on a machine shared with other work
// the best iterations are the ones that ran undisturbed, and pairing them in time keeps the ratio honest.
//
// Run: build/bench/kernels_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/heap.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/isa.h"
#include "kernels/ops.h"
#include "kernels/peak.h"
#include "kernels/thread_pool.h"

namespace verdict::bench {
using kernels::vdpbf16ps_peak;  // kernels/peak.h
using kernels::vfmadd_peak;
using kernels::vpdpbusd_peak;
void maddubs_madd_peak(int64_t iters);  // kernel_peak_avx2.cc
void maddubs_peak(int64_t iters);
void vfmadd_ymm_peak(int64_t iters);
void vpdpbusd_ymm_peak(int64_t iters);
void tdpbssd_peak(int64_t iters, int k_bytes);  // kernel_peak_amx.cc
void tdpbf16ps_peak(int64_t iters);
}  // namespace verdict::bench

namespace {

using namespace verdict;
using kernels::PackKind;
using kernels::WeightType;

bool has_vnni_bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bf16");
}

bool has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// One peak loop per thread (Google Benchmark's ->Threads(N) runs the body on N threads at once), in short
// bursts (2^14 · 24 instructions, ≈ 50 µs): GOPS is the mean rate, best_GOPS the best burst (the one that
// ran undisturbed on a shared machine).
template <typename F>
void peak(benchmark::State& state, F loop, double ops_per_instruction, bool supported = has_vnni_bf16(),
          const char* unsupported = "no AVX-512 VNNI / BF16") {
  if (!supported) {
    state.SkipWithError(unsupported);
    return;
  }
  constexpr int64_t kIters = 1 << 14;  // 24 instructions each
  const double ops = static_cast<double>(kIters) * 24 * ops_per_instruction;
  double best = 1e30;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    loop(kIters);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(seconds);
    best = std::min(best, seconds);
  }
  state.counters["GOPS"] = benchmark::Counter(static_cast<double>(state.iterations()) * ops / 1e9,
                                              benchmark::Counter::kIsRate);
  state.counters["best_GOPS"] = ops / best / 1e9;
}

void BM_PeakVpdpbusd(benchmark::State& state) { peak(state, verdict::bench::vpdpbusd_peak, 128); }
void BM_PeakVdpbf16ps(benchmark::State& state) { peak(state, verdict::bench::vdpbf16ps_peak, 64); }
void BM_PeakVfmadd(benchmark::State& state) { peak(state, verdict::bench::vfmadd_peak, 32); }
BENCHMARK(BM_PeakVpdpbusd)->Threads(1)->Threads(2)->UseManualTime();
BENCHMARK(BM_PeakVdpbf16ps)->Threads(1)->Threads(2)->UseManualTime();
BENCHMARK(BM_PeakVfmadd)->Threads(1)->Threads(2)->UseManualTime();

// The AMX tile instructions (kernel_peak_amx.cc; 4 instructions per loop round, so 6 rounds = 24): tdpbssd on
// full tiles (16 × 16 × 64 int8 multiply-adds = 32,768 ops), on the Int8 tiles' 32-column blocks (16,384 ops),
// and tdpbf16ps (16 × 16 × 32 bf16 multiply-adds = 16,384 flops).
void BM_PeakTdpbssd(benchmark::State& state) {
  peak(state, [](int64_t iters) { verdict::bench::tdpbssd_peak(iters * 6, 64); }, 32768, kernels::amx_supported(),
       "no AMX");
}
void BM_PeakTdpbssdK32(benchmark::State& state) {
  peak(state, [](int64_t iters) { verdict::bench::tdpbssd_peak(iters * 6, 32); }, 16384, kernels::amx_supported(),
       "no AMX");
}
void BM_PeakTdpbf16ps(benchmark::State& state) {
  peak(state, [](int64_t iters) { verdict::bench::tdpbf16ps_peak(iters * 6); }, 16384, kernels::amx_supported(),
       "no AMX");
}
BENCHMARK(BM_PeakTdpbssd)->Threads(1)->Threads(2)->UseManualTime();
BENCHMARK(BM_PeakTdpbssdK32)->Threads(1)->Threads(2)->UseManualTime();
BENCHMARK(BM_PeakTdpbf16ps)->Threads(1)->Threads(2)->UseManualTime();

// Random storage of one weight type.
struct Weight {
  std::vector<uint8_t> blocks;
  std::vector<uint16_t> bf16;
  std::vector<float> f32, scales, biases;
  std::vector<uint32_t> packed;
  kernels::WeightMatrix view;
  kernels::PackedWeight pack;
};

// kBf16Fp32Act: BF16 on the unpacked fp32 path (VERDICT_PACK=0); kBf16Fma: BF16 packed for fp32 FMAs (what
// machines without AVX512_BF16 run).
enum Kind {
  kF32, kBf16Fp32Act, kBf16, kQ8_0, kQ4_0, kQ4_K, kMlx4, kMlx8, kQ6_K, kF16, kBf16Fma, kMlx6, kQ5_K, kQ3_K,
  kIq4Nl, kIq4Xs, kQ4_1, kQ5_0, kQ5_1, kQ2_K
};

const char* kind_name(int k) {
  static const char* names[] = {"f32",      "bf16_f32act", "bf16", "q8_0", "q4_0", "q4_k",
                                "mlx4_g64", "mlx8_g64",    "q6_k", "f16", "bf16_fma", "mlx6_g64", "q5_k", "q3_k",
                                "iq4_nl",   "iq4_xs",      "q4_1", "q5_0", "q5_1", "q2_k"};
  return names[k];
}

// Kinds whose matmul runs fp32 fused multiply-adds (F16: packed, converted in the kernel), whose peak is vfmadd's.
// BF16 records on vfmadd231ps too where bf16_products() says so and the AMX tiles are off (isa.h).
bool fp32_kind(int kind) {
  if (kind == kBf16)
    return kernels::bf16_products() == kernels::Bf16Products::Fma && !kernels::amx_enabled();
  return kind == kF32 || kind == kBf16Fp32Act || kind == kF16 || kind == kBf16Fma;
}

// The packed form of a kind (None: kF32 and kBf16Fp32Act run on the unpacked rows).
PackKind pack_kind(int kind) {
  if (kind == kF32 || kind == kBf16Fp32Act) return PackKind::None;
  if (kind == kBf16) return PackKind::Bf16;
  if (kind == kBf16Fma) return PackKind::Bf16Fma;
  return kind == kF16 ? PackKind::F16 : PackKind::Int8;
}

std::unique_ptr<Weight> make(int kind, int64_t rows, int64_t cols) {
  auto w = std::make_unique<Weight>();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  kernels::WeightMatrix& v = w->view;
  v.rows = rows;
  v.cols = cols;
  switch (kind) {
    case kF32:
      v.type = WeightType::F32;
      w->f32.resize(static_cast<std::size_t>(rows * cols));
      for (float& f : w->f32) f = dist(rng);
      v.f32 = w->f32.data();
      break;
    case kBf16Fp32Act:
    case kBf16:
    case kBf16Fma:
      v.type = WeightType::BF16;
      w->bf16.resize(static_cast<std::size_t>(rows * cols));
      for (auto& h : w->bf16) h = f32_to_bf16(dist(rng));
      v.bf16 = w->bf16.data();
      break;
    case kMlx4:
    case kMlx6:
    case kMlx8:
      v.type = WeightType::MlxAffine;
      v.bits = kind == kMlx4 ? 4 : kind == kMlx6 ? 6 : 8;
      v.group_size = 64;
      w->packed.resize(static_cast<std::size_t>(rows * cols * v.bits / 32));
      for (auto& x : w->packed) x = static_cast<uint32_t>(rng());
      w->scales.resize(static_cast<std::size_t>(rows * cols / 64));
      w->biases.resize(w->scales.size());
      for (float& f : w->scales) f = 0.01f * dist(rng);
      for (float& f : w->biases) f = 0.1f * dist(rng);
      v.packed = w->packed.data();
      v.scales = w->scales.data();
      v.biases = w->biases.data();
      break;
    default: {
      v.type = kind == kQ8_0   ? WeightType::Q8_0
               : kind == kQ4_0 ? WeightType::Q4_0
               : kind == kQ4_K ? WeightType::Q4_K
               : kind == kQ6_K ? WeightType::Q6_K
               : kind == kQ5_K ? WeightType::Q5_K
               : kind == kQ3_K ? WeightType::Q3_K
               : kind == kIq4Nl ? WeightType::IQ4_NL
               : kind == kIq4Xs ? WeightType::IQ4_XS
               : kind == kQ4_1  ? WeightType::Q4_1
               : kind == kQ5_0  ? WeightType::Q5_0
               : kind == kQ5_1  ? WeightType::Q5_1
               : kind == kQ2_K  ? WeightType::Q2_K
                               : WeightType::F16;
      w->blocks.resize(static_cast<std::size_t>(rows * v.row_bytes()));
      for (auto& b : w->blocks) b = static_cast<uint8_t>(byte(rng));
      // Finite values: every F16 weight, and each block's scales (Q4_K, Q5_K: d and dmin first, Q6_K, Q3_K: d last)
      // as small halves.
      const auto bb = static_cast<std::size_t>(kernels::block_bytes(v.type));
      const auto put_half = [&](std::size_t at, float f) {
        const uint16_t half = f32_to_f16(f);
        w->blocks[at] = static_cast<uint8_t>(half & 0xFF);
        w->blocks[at + 1] = static_cast<uint8_t>(half >> 8);
      };
      for (std::size_t at = 0; at < w->blocks.size(); at += bb) {
        if (v.type == WeightType::F16) {
          put_half(at, dist(rng));
        } else if (v.type == WeightType::Q6_K || v.type == WeightType::Q3_K) {  // d last
          put_half(at + bb - 2, 0.01f * dist(rng));
        } else if (v.type == WeightType::Q2_K) {  // d and dmin last
          put_half(at + bb - 4, 0.01f * dist(rng));
          put_half(at + bb - 2, 0.01f * dist(rng));
        } else {
          const bool with_min = v.type == WeightType::Q4_K || v.type == WeightType::Q5_K ||
                                v.type == WeightType::Q4_1 || v.type == WeightType::Q5_1;
          for (std::size_t h = 0; h < (with_min ? 2u : 1u); ++h) put_half(at + 2 * h, 0.01f * dist(rng));
        }
      }
      v.blocks = w->blocks.data();
      break;
    }
  }
  if (pack_kind(kind) != PackKind::None) {
    w->pack = kernels::pack(v, pack_kind(kind));
    v.pack = w->pack.view();
  }
  return w;
}

// Seconds for `threads` threads to run the peak loop of `kind`'s instruction (`iters` iterations each);
// `ops` receives the operation count.
double run_peak(int kind, int threads, double& ops) {
  constexpr int64_t kIters = 1 << 13, kTasksPerThread = 4;  // small tasks: a late worker still gets its share
  const auto start = std::chrono::steady_clock::now();
  kernels::default_pool().run(threads * kTasksPerThread, [&](int64_t) {
    if (fp32_kind(kind)) {
      verdict::bench::vfmadd_peak(kIters);
    } else if (kind == kBf16) {
      verdict::bench::vdpbf16ps_peak(kIters);
    } else {
      verdict::bench::vpdpbusd_peak(kIters);
    }
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double per_instruction = fp32_kind(kind) ? 32 : kind == kBf16 ? 64 : 128;
  ops = static_cast<double>(threads * kTasksPerThread) * kIters * 24 * per_instruction;
  return seconds;
}

// Guard against a kernel that skips work: a few outputs of y = W·x (n tokens) against a double-precision
// dot product of the dequantized row (the int8 contract allows ≈ 1 % of Σ|w·x| here; 5 % is far from a
// missing term).
bool plausible(const kernels::WeightMatrix& w, const std::vector<float>& x, const std::vector<float>& y,
               int64_t n) {
  const int64_t rows = w.rows, cols = w.cols;
  std::vector<float> row(static_cast<std::size_t>(cols));
  for (int64_t probe = 0; probe < 16; ++probe) {
    const int64_t r = (probe * 977) % rows, t = (probe * 131) % n;
    kernels::dequantize_row(w, r, row.data());
    double dot = 0.0, magnitude = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      dot += double(row[static_cast<std::size_t>(c)]) * x[static_cast<std::size_t>(t * cols + c)];
      magnitude += std::abs(double(row[static_cast<std::size_t>(c)]) * x[static_cast<std::size_t>(t * cols + c)]);
    }
    if (std::abs(y[static_cast<std::size_t>(t * rows + r)] - dot) > 0.05 * magnitude) return false;
  }
  return true;
}

// The Bf16 layout (kind 2) has kernels for AVX-512 only (vdpbf16ps, or FMAs where bf16_products() says so and
// on CPUs without AVX512_BF16): elsewhere it would time the portable loop, and BF16 files run as kind 10
// (Bf16Fma).
bool skip_without_kernel(benchmark::State& state, int kind) {
  __builtin_cpu_init();
  if (kind != kBf16 || __builtin_cpu_supports("avx512f")) return false;
  state.SkipWithError("no AVX-512 (this CPU runs BF16 as kind 10)");
  return true;
}

// Args: kind, rows, cols, threads; n = 512 tokens.
void BM_Gemm(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  if (skip_without_kernel(state, kind)) return;
  const int64_t rows = state.range(1), cols = state.range(2), n = 512;
  kernels::set_num_threads(static_cast<int>(state.range(3)));
  const auto w = make(kind, rows, cols);
  std::vector<float> x(static_cast<std::size_t>(n * cols)), y(static_cast<std::size_t>(n * rows));
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& f : x) f = dist(rng);
  const int threads = static_cast<int>(state.range(3));
  double best_gemm = 1e30, best_peak = 1e30, peak_ops = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    kernels::matmul(w->view, x.data(), n, y.data());
    benchmark::DoNotOptimize(y.data());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(seconds);
    best_gemm = std::min(best_gemm, seconds);
    if (has_vnni_bf16()) best_peak = std::min(best_peak, run_peak(kind, threads, peak_ops));
  }
  if (!plausible(w->view, x, y, n)) {
    state.SkipWithError("wrong result");
    return;
  }
  const double ops = 2.0 * static_cast<double>(rows * cols * n);
  state.counters["best_GOPS"] = ops / best_gemm / 1e9;
  if (peak_ops > 0.0) {
    state.counters["peak_GOPS"] = peak_ops / best_peak / 1e9;
    state.counters["pct_of_peak"] = 100.0 * (ops / best_gemm) / (peak_ops / best_peak);
  }
  state.SetLabel(std::string(kind_name(kind)) + " " + std::to_string(rows) + "x" + std::to_string(cols) +
                 " n=512 threads=" + std::to_string(state.range(3)));
  state.counters["GOPS"] =
      benchmark::Counter(2.0 * static_cast<double>(rows * cols * n) * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

void gemm_args(benchmark::internal::Benchmark* b) {
  for (int kind :
       {kQ8_0, kQ4_0, kQ4_K, kMlx4, kMlx8, kBf16, kBf16Fp32Act, kF32, kQ6_K, kF16, kBf16Fma, kMlx6, kQ5_K, kQ3_K,
        kIq4Nl, kIq4Xs, kQ4_1, kQ5_0, kQ5_1, kQ2_K})
    for (int threads : {1, 2})
      for (auto shape : {std::pair<int64_t, int64_t>{3584, 1024}, {1024, 3584}, {6144, 1024}, {6144, 2048}, {2048, 6144}})
        b->Args({kind, shape.first, shape.second, threads});
}
BENCHMARK(BM_Gemm)->Apply(gemm_args)->UseManualTime()->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------------------------------------------
// Decode (GEMV): n = 1 and n = 4 tokens against the packed weights, in GB/s of packed weight bytes.
//
// Decoding a token streams every matrix of the model from memory once (the model is far larger than the
// caches), so BM_Gemv rotates through enough packed copies of its matrix (≥ kColdBytes together) that
// each call reads its weights from DRAM, not from L3. Each iteration then times a plain load loop (AVX-512,
// or AVX2 on CPUs without it: the widest loads the kernels use) over the same number of bytes on the same
// threads (each a contiguous share, from its own rotating buffer): best_GBs / read_GBs = pct_of_bw, the
// best iterations of each paired as in BM_Gemm. BM_ReadBandwidth is that read loop alone.
//
// Run: build/bench/kernels_bench --benchmark_filter='Gemv|ReadBandwidth'

constexpr int64_t kColdBytes = int64_t{256} << 20;  // 8 × this machine's 32 MiB L3

bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

// Σ of the 64-bit words of `bytes` bytes at p (64-byte aligned; bytes a multiple of 256).
__attribute__((target("avx512f"))) uint64_t read_avx512(const uint8_t* p, int64_t bytes) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (int64_t i = 0; i < bytes; i += 256) {
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(p + i));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(p + i + 64));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(p + i + 128));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(p + i + 192));
  }
  alignas(64) uint64_t lanes[8];  // not _mm512_reduce_add_epi64: GCC 12 warns inside it (-Wuninitialized)
  _mm512_store_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
  uint64_t sum = 0;
  for (uint64_t v : lanes) sum += v;
  return sum;
}

// The same with 32-byte loads, for AVX2-only CPUs.
__attribute__((target("avx2"))) uint64_t read_avx2(const uint8_t* p, int64_t bytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (int64_t i = 0; i < bytes; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(_mm256_add_epi64(a0, a1),
                                                                         _mm256_add_epi64(a2, a3)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// Reads `bytes` (rounded up to 256) per call from a buffer of max(kColdBytes, bytes), at a rotating offset; the
// buffer is allocated as packed weights are (allocate_weight_memory: 2 MiB pages where the kernel grants them).
class ColdReader {
 public:
  explicit ColdReader(int64_t bytes)
      : chunk_((bytes + 255) / 256 * 256), size_(std::max(kColdBytes, chunk_)),
        data_(verdict::allocate_weight_memory(size_), Free{size_}) {
    std::memset(data_.get(), 1, static_cast<std::size_t>(size_));
  }
  // Seconds for `threads` threads to read the next chunk, each a contiguous share.
  double read(int threads) {
    if (offset_ + chunk_ > size_) offset_ = 0;
    const uint8_t* base = data_.get() + offset_;
    offset_ += chunk_;
    const int64_t share = (chunk_ / 256 + threads - 1) / threads * 256;
    std::atomic<uint64_t> sum{0};
    const bool wide = has_avx512();
    const auto start = std::chrono::steady_clock::now();
    kernels::default_pool().run(threads, [&](int64_t i) {
      const int64_t from = std::min(chunk_, i * share), to = std::min(chunk_, from + share);
      sum += wide ? read_avx512(base + from, to - from) : read_avx2(base + from, to - from);
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    benchmark::DoNotOptimize(sum.load());
    return seconds;
  }
  int64_t bytes() const { return chunk_; }

 private:
  int64_t chunk_, size_, offset_ = 0;
  struct Free {
    int64_t bytes;
    void operator()(uint8_t* p) const { verdict::free_weight_memory(p, bytes); }
  };
  std::unique_ptr<uint8_t, Free> data_;  // memory of the packed weights' kind (huge pages)
};

// Args: MiB, threads.
void BM_ReadBandwidth(benchmark::State& state) {
  if (!has_avx2()) {
    state.SkipWithError("no AVX2");
    return;
  }
  const int threads = static_cast<int>(state.range(1));
  kernels::set_num_threads(threads);
  ColdReader reader(state.range(0) << 20);
  double best = 1e30;
  for (auto _ : state) {
    const double seconds = reader.read(threads);
    state.SetIterationTime(seconds);
    best = std::min(best, seconds);
  }
  const double bytes = static_cast<double>(reader.bytes());
  state.counters["GBs"] = benchmark::Counter(bytes * static_cast<double>(state.iterations()) / 1e9,
                                             benchmark::Counter::kIsRate);
  state.counters["best_GBs"] = bytes / best / 1e9;
}
BENCHMARK(BM_ReadBandwidth)
    ->ArgsProduct({{2, 8, 32, 128, 512}, {1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// The packed copies of one matrix a BM_Gemv rotates through; kept between benchmarks of the same matrix
// (building the 248320-row lm_head takes seconds).
struct GemvWeights {
  int kind = -1;
  int64_t rows = 0, cols = 0, bytes = 0;
  std::unique_ptr<Weight> w;
  std::vector<kernels::PackedWeight> copies;
  std::vector<kernels::WeightMatrix> views;
};

const GemvWeights& gemv_weights(int kind, int64_t rows, int64_t cols) {
  static GemvWeights g;
  if (g.kind == kind && g.rows == rows && g.cols == cols) return g;
  g = GemvWeights{};  // free the previous matrix first
  g.kind = kind;
  g.rows = rows;
  g.cols = cols;
  g.w = make(kind, rows, cols);
  g.bytes = g.w->pack.bytes();
  g.views.push_back(g.w->view);
  const int64_t copies = std::max<int64_t>(1, (kColdBytes + g.bytes - 1) / g.bytes);
  for (int64_t i = 1; i < copies; ++i) {
    g.copies.push_back(kernels::pack(g.w->view, pack_kind(kind)));
    kernels::WeightMatrix v = g.w->view;
    v.pack = g.copies.back().view();
    g.views.push_back(v);
  }
  return g;
}

// Args: kind, rows, cols, n, threads.
void BM_Gemv(benchmark::State& state) {
  if (!has_avx2()) {
    state.SkipWithError("no AVX2");
    return;
  }
  const int kind = static_cast<int>(state.range(0));
  if (skip_without_kernel(state, kind)) return;
  const int64_t rows = state.range(1), cols = state.range(2), n = state.range(3);
  const int threads = static_cast<int>(state.range(4));
  kernels::set_num_threads(threads);
  const GemvWeights& g = gemv_weights(kind, rows, cols);
  ColdReader reader(g.bytes);
  std::vector<float> x(static_cast<std::size_t>(n * cols)), y(static_cast<std::size_t>(n * rows));
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& f : x) f = dist(rng);
  double best = 1e30, best_read = 1e30;
  std::size_t next = 0;
  for (auto _ : state) {
    const kernels::WeightMatrix& view = g.views[next];
    next = (next + 1) % g.views.size();
    const auto start = std::chrono::steady_clock::now();
    kernels::matmul(view, x.data(), n, y.data());
    benchmark::DoNotOptimize(y.data());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(seconds);
    best = std::min(best, seconds);
    best_read = std::min(best_read, reader.read(threads));
  }
  if (!plausible(g.views[0], x, y, n)) {
    state.SkipWithError("wrong result");
    return;
  }
  const double bytes = static_cast<double>(g.bytes);
  state.counters["GBs"] = benchmark::Counter(bytes * static_cast<double>(state.iterations()) / 1e9,
                                             benchmark::Counter::kIsRate);
  state.counters["best_GBs"] = bytes / best / 1e9;
  state.counters["read_GBs"] = static_cast<double>(reader.bytes()) / best_read / 1e9;
  state.counters["pct_of_bw"] = 100.0 * (bytes / best) / (static_cast<double>(reader.bytes()) / best_read);
  state.SetLabel(std::string(kind_name(kind)) + " " + std::to_string(rows) + "x" + std::to_string(cols) +
                 " n=" + std::to_string(n) + " threads=" + std::to_string(threads) + " " +
                 std::to_string(g.bytes >> 20) + " MiB");
}

void gemv_args(benchmark::internal::Benchmark* b) {
  // qwen35-0.8b (hidden 1024: MLP, DeltaNet in_proj_qkv, lm_head), qwen35-2b (hidden 2048) and qwen35-9b (hidden
  // 4096, clef-flash's backbone: the MLP's 12288 rows) shapes. 1 to 4 tokens: decoding (the GEMV tiles); 8 to 96:
  // batches of decoding sequences and short prompts on the prefill tiles (where the 4-bit strips start to pay).
  const std::pair<int64_t, int64_t> shapes[] = {{3584, 1024}, {1024, 3584},   {6144, 1024},  {6144, 2048},
                                                {2048, 6144}, {248320, 1024}, {12288, 4096}, {4096, 12288}};
  for (int kind : {kQ8_0, kQ4_0, kQ4_K, kQ6_K, kMlx4, kMlx6, kBf16, kF16, kBf16Fma, kQ5_K, kQ3_K, kIq4Nl, kIq4Xs,
                   kQ4_1, kQ5_0, kQ5_1, kQ2_K})
    for (auto shape : shapes)
      for (auto [n, threads] : {std::pair<int, int>{1, 1}, {1, 2}, {2, 2}, {3, 2}, {4, 2}, {8, 2}, {16, 2}, {32, 2},
                                {48, 2}, {64, 2}, {96, 2}})
        b->Args({kind, shape.first, shape.second, n, threads});
}
BENCHMARK(BM_Gemv)->Apply(gemv_args)->UseManualTime()->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------------
// The AVX2 Int8 kernel (vpmaddubsw + vpmaddwd; on CPUs with AVX-VNNI, unless $VERDICT_AVX_VNNI=0, its vpdpbusd
// form), selected explicitly whatever $VERDICT_ISA says, and its peaks (kernel_peak_avx2.cc, timed as the AVX-512 ones; 24 groups per round, 32 multiply-adds = 64 ops per
// group):
// BM_PeakMaddubsAvx2 the 8-bit weights' sequence vpmaddubsw → vpmaddwd (ones) → vpaddd, BM_PeakMaddubsOnlyAvx2
// vpmaddubsw alone (the 4-bit weights fold their int16 sums once per 32-column block); BM_PeakVfmaddAvx2
// vfmadd231ps on ymm registers (the AVX2 F16 kernel, 16 ops each); BM_PeakVpdpbusdAvx2 AVX-VNNI's vpdpbusd on
// ymm registers (the tiles where the CPU has AVX-VNNI, 64 ops each).

void BM_PeakMaddubsAvx2(benchmark::State& state) {
  peak(state, verdict::bench::maddubs_madd_peak, 64, has_avx2(), "no AVX2");
}
void BM_PeakMaddubsOnlyAvx2(benchmark::State& state) {
  peak(state, verdict::bench::maddubs_peak, 64, has_avx2(), "no AVX2");
}
void BM_PeakVfmaddAvx2(benchmark::State& state) {
  peak(state, verdict::bench::vfmadd_ymm_peak, 16, has_avx2(), "no AVX2");
}
BENCHMARK(BM_PeakMaddubsAvx2)->Threads(1)->Threads(2)->UseManualTime();
BENCHMARK(BM_PeakMaddubsOnlyAvx2)->Threads(1)->Threads(2)->UseManualTime();
void BM_PeakVpdpbusdAvx2(benchmark::State& state) {
  peak(state, verdict::bench::vpdpbusd_ymm_peak, 64, kernels::avx_vnni_supported(), "no AVX-VNNI");
}
BENCHMARK(BM_PeakVfmaddAvx2)->Threads(1)->Threads(2)->UseManualTime();
BENCHMARK(BM_PeakVpdpbusdAvx2)->Threads(1)->Threads(2)->UseManualTime();

// n standard normal values (seeded).
std::vector<float> normal_floats(int64_t n, unsigned seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& f : v) f = normal(rng);
  return v;
}

// Seconds of one y = W·x of n tokens.
double timed_matmul(const kernels::WeightMatrix& w, const std::vector<float>& x, int64_t n, std::vector<float>& y) {
  const auto start = std::chrono::steady_clock::now();
  kernels::matmul(w, x.data(), n, y.data());
  benchmark::DoNotOptimize(y.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Seconds for `threads` threads of the pool to run the AVX2 Int8 tiles' peak loop (vpdpbusd_ymm_peak where they
// run on AVX-VNNI, else maddubs_madd_peak); `ops` receives the operation count.
double run_peak_avx2(int threads, double& ops) {
  constexpr int64_t kRounds = 1 << 13, kTasksPerThread = 4;
  const bool vnni = kernels::avx_vnni_enabled();
  const auto start = std::chrono::steady_clock::now();
  kernels::default_pool().run(threads * kTasksPerThread, [&](int64_t) {
    if (vnni) {
      verdict::bench::vpdpbusd_ymm_peak(kRounds);
    } else {
      verdict::bench::maddubs_madd_peak(kRounds);
    }
  });
  ops = static_cast<double>(threads * kTasksPerThread) * kRounds * 24 * 64;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Args: kind (an Int8 one), rows, cols, threads, n (512: prefill, 1: decode). Counters as BM_Gemm's, the
// peak being run_peak_avx2's, plus best_GOPS_per_core; the peak runs after every iteration for n ≥ 64,
// after every 32nd for small n (whose iterations last microseconds).
void BM_GemmAvx2(benchmark::State& state) {
  if (!has_avx2()) {
    state.SkipWithError("no AVX2");
    return;
  }
  const int kind = static_cast<int>(state.range(0)), threads = static_cast<int>(state.range(3));
  const int64_t rows = state.range(1), cols = state.range(2), n = state.range(4);
  const kernels::Isa saved = kernels::active_isa();
  kernels::set_active_isa(kernels::Isa::Avx2);
  kernels::set_num_threads(threads);
  const auto w = make(kind, rows, cols);
  const std::vector<float> x = normal_floats(n * cols, 5);
  std::vector<float> y(static_cast<std::size_t>(n * rows));
  double best_gemm = 1e30, best_peak = 1e30, peak_ops = 0.0;
  const int64_t peak_every = n >= 64 ? 1 : 32;
  int64_t iteration = 0;
  for (auto _ : state) {
    const double seconds = timed_matmul(w->view, x, n, y);
    state.SetIterationTime(seconds);
    best_gemm = std::min(best_gemm, seconds);
    if (iteration++ % peak_every == 0) best_peak = std::min(best_peak, run_peak_avx2(threads, peak_ops));
  }
  kernels::set_active_isa(saved);
  if (!plausible(w->view, x, y, n)) {
    state.SkipWithError("wrong result");
    return;
  }
  const double ops = 2.0 * static_cast<double>(rows * cols * n);
  state.counters["best_GOPS"] = ops / best_gemm / 1e9;
  state.counters["best_GOPS_per_core"] = ops / best_gemm / 1e9 / threads;
  state.counters["peak_GOPS"] = peak_ops / best_peak / 1e9;
  state.counters["pct_of_peak"] = 100.0 * (ops / best_gemm) / (peak_ops / best_peak);
  state.counters["GOPS"] = benchmark::Counter(ops * static_cast<double>(state.iterations()) / 1e9,
                                              benchmark::Counter::kIsRate);
  state.SetLabel(std::string(kernels::avx_vnni_enabled() ? "avx2+vnni " : "avx2 ") + kind_name(kind) + " " + std::to_string(rows) + "x" + std::to_string(cols) +
                 " n=" + std::to_string(n) + " threads=" + std::to_string(threads));
}

void gemm_avx2_args(benchmark::internal::Benchmark* b) {
  for (int64_t n : {512, 1})
    for (int kind :
         {kQ8_0, kQ4_0, kQ4_K, kQ6_K, kMlx4, kMlx6, kMlx8, kQ5_K, kQ3_K, kIq4Nl, kIq4Xs, kQ4_1, kQ5_0, kQ5_1, kQ2_K})
      for (int threads : {1, 2}) b->Args({kind, 3584, 1024, threads, n});
}
BENCHMARK(BM_GemmAvx2)->Apply(gemm_avx2_args)->UseManualTime()->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------------
// kernels::gemm_f32 (single-threaded, the active ISA) at the shapes the qwen35-0.8b layers call it with: the
// chunked DeltaNet rule's products of one 64-token chunk of a 128 × 128 head (m, n, k = 64, 64, 128 for
// q·k and k·k; 64, 128, 128 for W S, with alpha −1, and (e^γ Q) S; 64, 128, 64 for P V'; 128, 128, 64 for
// the state update), and gated attention's per 32-query block at 512 and 4,096 keys (scores: 32, nk, 256;
// weighted sum: 32, 256, nk), and the size of a Clef head's projections of a 342-token record's rows (342, 1024,
// 1024; the head itself runs them on matmul's fp32 rows). Args: m, n, k, alpha (1 or −1). GFLOPS = 2 · m · n · k / time; peak_GFLOPS
// is vfmadd_peak on one thread, measured after every iteration (best of each, as BM_Gemm).
void BM_GemmF32(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const float alpha = static_cast<float>(state.range(3));
  const std::vector<float> a = normal_floats(m * k, 1), b = normal_floats(k * n, 2);
  std::vector<float> c(static_cast<std::size_t>(m * n));
  double best = 1e30, best_peak = 1e30;
  constexpr int64_t kPeakIters = 1 << 10;  // 24 vfmadd231ps each
  for (auto _ : state) {
    std::fill(c.begin(), c.end(), 0.0f);
    const auto start = std::chrono::steady_clock::now();
    kernels::gemm_f32(m, n, k, alpha, a.data(), k, b.data(), n, c.data(), n);
    benchmark::DoNotOptimize(c.data());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(seconds);
    best = std::min(best, seconds);
    if (has_vnni_bf16()) {
      const auto peak_start = std::chrono::steady_clock::now();
      verdict::bench::vfmadd_peak(kPeakIters);
      const auto peak_end = std::chrono::steady_clock::now();
      best_peak = std::min(best_peak, std::chrono::duration<double>(peak_end - peak_start).count());
    }
  }
  const double flops = 2.0 * static_cast<double>(m * n * k);
  state.counters["best_GFLOPS"] = flops / best / 1e9;
  if (has_vnni_bf16()) {
    const double peak = static_cast<double>(kPeakIters) * 24 * 32 / best_peak / 1e9;
    state.counters["peak_GFLOPS"] = peak;
    state.counters["pct_of_peak"] = 100.0 * flops / best / 1e9 / peak;
  }
}
BENCHMARK(BM_GemmF32)
    ->Args({64, 64, 128, 1})
    ->Args({64, 128, 128, -1})
    ->Args({64, 128, 128, 1})
    ->Args({64, 128, 64, 1})
    ->Args({128, 128, 64, 1})
    ->Args({32, 512, 256, 1})
    ->Args({32, 256, 512, 1})
    ->Args({32, 4096, 256, 1})
    ->Args({32, 256, 4096, 1})
    ->Args({342, 1024, 1024, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------------
// The activations' quantization before an Int8 product, one thread, of a 342-token record's rows at the qwen35-0.8b
// widths (1,024: the layers' inputs; 3,584: the MLP's down projection; 2,048 the attention output). Args: ISA (0
// scalar, 1 AVX2, 2 AVX-512), cols, format (0: block_q8_0's q, d, Σq, Σx per 32 columns, for Q8_0/Q4_0/...; 1:
// block_q8_K's per 256 columns with each 16-column half's Σq, for the sub16 K-quants). GB_per_s counts the fp32 rows
// read.
void BM_QuantizeRows(benchmark::State& state) {
  const auto isa = static_cast<kernels::Isa>(state.range(0));
  const int64_t cols = state.range(1), n = 342, blocks = cols / kernels::cpu::kQBlock;
  const bool super = state.range(2) == 1;
  if (!kernels::isa_supported(isa)) {
    state.SkipWithError("ISA not supported here");
    return;
  }
  const kernels::cpu::KernelTable& table = isa == kernels::Isa::Avx512 ? kernels::cpu::avx512_table()
                                           : isa == kernels::Isa::Avx2 ? kernels::cpu::avx2_table()
                                                                       : kernels::cpu::generic_table();
  const std::vector<float> x = normal_floats(n * cols, 7);
  std::vector<int8_t> q(static_cast<std::size_t>(n * cols));
  std::vector<float> d(static_cast<std::size_t>(n * blocks)), xsum(d.size());
  std::vector<int32_t> qsum(d.size()), qsum16(2 * d.size());
  for (auto _ : state) {
    if (super) {
      table.quantize_rows_super(x.data(), 0, n, cols, q.data(), d.data(), qsum.data(), xsum.data(), qsum16.data());
    } else {
      table.quantize_rows(x.data(), 0, n, cols, q.data(), d.data(), qsum.data(), xsum.data());
    }
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(xsum.data());
  }
  state.counters["GB_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()) * 4.0 *
                                                      static_cast<double>(n * cols) / 1e9,
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_QuantizeRows)
    ->ArgsProduct({{0, 1, 2}, {1024, 2048, 3584}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// Packing at load (kernels::pack): the time a model's matrices take to become the kernels' panels, a 6144 × 2048
// matrix of each type (qwen35-2b's MLP). Args: kind, threads. GB_per_s counts the file's bytes read (the source
// matrix), packed_GB_per_s the panels written.
void BM_Pack(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  kernels::set_num_threads(static_cast<int>(state.range(1)));
  const std::unique_ptr<Weight> w = make(kind, 6144, 2048);
  const double source = static_cast<double>(w->view.rows * w->view.row_bytes());
  double packed = 0.0;
  for (auto _ : state) {
    const kernels::PackedWeight p = kernels::pack(w->view, pack_kind(kind));
    packed = static_cast<double>(p.bytes());
    benchmark::DoNotOptimize(p.view());
  }
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["GB_per_s"] = benchmark::Counter(iterations * source / 1e9, benchmark::Counter::kIsRate);
  state.counters["packed_GB_per_s"] = benchmark::Counter(iterations * packed / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(kind_name(kind));
}
BENCHMARK(BM_Pack)
    ->ArgsProduct({{kQ8_0, kQ4_0, kQ4_K, kQ5_K, kQ6_K, kQ3_K, kQ2_K, kIq4Xs, kQ4_1, kQ5_0, kMlx4, kMlx6, kBf16, kF16,
                    kBf16Fma},
                   {1, 2}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
