// ops.h entry points: ISA selection and the threaded matrix product.
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/isa.h"
#include "kernels/ops.h"
#include "kernels/peak.h"
#include "kernels/thread_pool.h"

namespace verdict::kernels {
namespace {

bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

Isa isa_from_env() {
  const char* env = std::getenv("VERDICT_ISA");
  if (env == nullptr || *env == '\0') return best_isa();
  const std::string v = env;
  Isa isa;
  if (v == "scalar") {
    isa = Isa::Scalar;
  } else if (v == "avx2") {
    isa = Isa::Avx2;
  } else if (v == "avx512") {
    isa = Isa::Avx512;
  } else {
    throw Error("VERDICT_ISA must be scalar, avx2 or avx512, got '" + v + "'");
  }
  if (!isa_supported(isa)) throw Error("VERDICT_ISA=" + v + " is not supported by this CPU");
  return isa;
}

std::once_flag g_isa_once;
std::atomic<int> g_isa{static_cast<int>(Isa::Scalar)};
std::atomic<bool> g_isa_ready{false};  // after g_isa_once: active_isa() is called per kernel call

const cpu::KernelTable& table_for(Isa isa) {
  switch (isa) {
    case Isa::Avx512:
      return cpu::avx512_table();
    case Isa::Avx2:
      return cpu::avx2_table();
    case Isa::Scalar:
      break;
  }
  return cpu::generic_table();
}

const cpu::KernelTable& active_table() { return table_for(active_isa()); }

// The calling thread's scratch of at least `bytes` bytes, 64-byte aligned: the unpacked path's row panels,
// the Int8 tiles' unpacked strips (cpu::int8_scratch_bytes), the AMX tiles' records and scalars
// (cpu::amx_scratch_bytes). One matmul uses one of them at a time.
uint8_t* thread_scratch(int64_t bytes) {
  thread_local std::vector<uint8_t> scratch;
  if (static_cast<int64_t>(scratch.size()) < bytes + 64) scratch.resize(static_cast<std::size_t>(bytes + 64));
  const auto at = reinterpret_cast<std::uintptr_t>(scratch.data());
  return scratch.data() + (64 - at % 64) % 64;
}

float* panel_scratch(int64_t floats) { return reinterpret_cast<float*>(thread_scratch(floats * 4)); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// $VERDICT_AVX_VNNI=0 switches the AVX2 tiles' vpdpbusd off; anything else (or unset) leaves it on where supported.
std::atomic<bool> g_avx_vnni_on{[] {
  const char* env = std::getenv("VERDICT_AVX_VNNI");
  return env == nullptr || std::string(env) != "0";
}()};

// $VERDICT_AMX=0 switches the AMX tiles off; anything else (or unset) leaves them on where supported.
std::atomic<bool> g_amx_on{[] {
  const char* env = std::getenv("VERDICT_AMX");
  return env == nullptr || std::string(env) != "0";
}()};

// weight_streams(): Prefetch on Intel CPUs, Wide on the others, until set_weight_streams.
std::atomic<int> g_weight_streams{static_cast<int>(cpu::cpu_is_intel() ? WeightStreams::Prefetch
                                                                       : WeightStreams::Wide)};

// bf16_products(): $VERDICT_BF16, else the rates of vdpbf16ps and vfmadd231ps compared once (best of 9 short
// runs each, interleaved, so a busy core slows both alike); set_bf16_products overrides either.
constexpr int kBf16Unset = -1;
std::atomic<int> g_bf16_products{kBf16Unset};
std::once_flag g_bf16_once;

Bf16Products measured_bf16_products() {
  if (!cpu::cpu_has_avx512_bf16()) return Bf16Products::Fma;  // no vdpbf16ps (only its scalar twin)
  if (!cpu::cpu_has_avx512_vnni()) return Bf16Products::Dot;  // no peak loops (no such CPU is known)
  using Clock = std::chrono::steady_clock;
  constexpr int64_t kIters = 256;  // 6,144 instructions: a few microseconds
  double dot = 1e30, fma = 1e30;
  for (int run = 0; run < 9; ++run) {
    const auto t0 = Clock::now();
    vdpbf16ps_peak(kIters);
    const auto t1 = Clock::now();
    vfmadd_peak(kIters);
    const auto t2 = Clock::now();
    dot = std::min(dot, std::chrono::duration<double>(t1 - t0).count());
    fma = std::min(fma, std::chrono::duration<double>(t2 - t1).count());
  }
  // A vdpbf16ps is 32 multiply-adds, a vfmadd231ps 16.
  return 32.0 / dot >= 16.0 / fma ? Bf16Products::Dot : Bf16Products::Fma;
}

Bf16Products bf16_products_from_env() {
  const char* env = std::getenv("VERDICT_BF16");
  if (env == nullptr || *env == '\0') return measured_bf16_products();
  const std::string v = env;
  if (v == "dot") return Bf16Products::Dot;
  if (v == "fma") return Bf16Products::Fma;
  throw Error("VERDICT_BF16 must be dot or fma, got '" + v + "'");
}

// The Int8 / Bf16 tile functions of the active ISA (the AVX-512 VNNI / BF16 ones where the CPU has them, and
// for Int8 the AMX tiles in front of VNNI where they are enabled; under AVX2 the AVX-VNNI ones where enabled).
auto int8_tile_for(Isa isa) {
  // AVX-512 without VNNI (Skylake-X) runs the AVX2 kernel, which takes the same quantized activations.
  if (isa == Isa::Avx512) {
    if (!cpu::cpu_has_avx512_vnni()) return cpu::avx2_table().int8_tile;
    return amx_enabled() && cpu::cpu_has_amx_int8() ? cpu::int8_tile_amx : cpu::int8_tile_avx512vnni;
  }
  if (isa == Isa::Avx2 && avx_vnni_enabled()) return cpu::int8_tile_avx2_vnni;
  return table_for(isa).int8_tile;
}
auto bf16_tile_for(Isa isa) {
  if (isa != Isa::Avx512 || !cpu::cpu_has_avx512_bf16()) return table_for(isa).bf16_tile;
  return amx_enabled() && cpu::cpu_has_amx_bf16() ? cpu::bf16_tile_amx : cpu::bf16_tile_avx512bf16;
}

// Decode-sized products (n ≤ kDecodeTokens) stream every weight once and are bound by the memory bandwidth, of
// which one thread alone reads about half: a thread left without work while another finishes costs that
// much. So they go out in kDecodeChunks chunks per thread of any panel count (every tile takes any; the
// multiples only serve the prefill register tiles), and the threads finish together. With 4 chunks per thread
// of whole 3-panel tiles, a 2048-row matrix (128 panels) split 7 × 18 + 2: 2 threads read 2048 × 6144 Q8_0 at
// 86–87 % of the read loop, in 32 chunks of 4 panels at 94 % (BM_Gemv, AMX Xeon; decode +1–2 %).
// Where the one-token tiles go kGemvWidePanels panels at a time (WeightStreams::Wide: AMD), a chunk is a multiple
// of that: 16 chunks per thread had left a 1024-row matrix (64 panels) 2-panel chunks, which the wide tiles never
// ran, and a 3584-row one 7-panel chunks, 3 of them one panel at a time. On a Zen 5 EPYC (BM_Gemv, n = 1,
// 2 threads) 1024 × 3584 rose from 41–47 to 63–68 GB/s (Q8_0), 32–33 to 46–50 (Q4_0) and 35–36 to 48–52 (Q6_K);
// the one-panel BF16 tile gained from the longer chunks too (57–66 to 71–76), and so did 4 tokens (Q4_0 31–32
// to 35–37, BF16 47–49 to 60–63). qwen35-0.8b decode +12–13 % (docs/performance.md, "Decode chunks of whole
// wide tiles"). Intel CPUs keep chunks of any panel count (not measured there).
constexpr int64_t kDecodeTokens = 4;
constexpr int64_t kDecodeChunks = 16;

// Runs tile(t0, t1, p0, p1) over token blocks × chunks of panels (a multiple of `panel_multiple`, but for
// decode: of decode_multiple), on the pool when the product is large enough. The split never changes a result
// (each lane is independent).
template <typename Tile>
void run_packed(const PackedView& w, int64_t n, int64_t panel_multiple, const Tile& tile) {
  const double work = static_cast<double>(n) * static_cast<double>(w.rows) * static_cast<double>(w.cols);
  const int threads = num_threads();
  if (threads == 1 || work < kMinParallelWork) {
    tile(0, n, 0, w.panels);
    return;
  }
  constexpr int64_t kTokenBlock = 96;
  const int64_t token_blocks = ceil_div(n, kTokenBlock);
  const int64_t wanted_chunks = std::max<int64_t>(1, ceil_div(4 * threads, token_blocks));
  const int64_t decode_multiple = cpu::prefetch_weight_streams() ? 1 : cpu::kGemvWidePanels;
  const int64_t chunk_panels = n <= kDecodeTokens
                                   ? ceil_div(ceil_div(w.panels, kDecodeChunks * threads), decode_multiple) *
                                         decode_multiple
                                   : ceil_div(ceil_div(w.panels, wanted_chunks), panel_multiple) * panel_multiple;
  const int64_t panel_chunks = ceil_div(w.panels, chunk_panels);
  default_pool().run(token_blocks * panel_chunks, [&](int64_t task) {
    const int64_t t0 = (task / panel_chunks) * kTokenBlock;
    const int64_t p0 = (task % panel_chunks) * chunk_panels;
    tile(t0, std::min(n, t0 + kTokenBlock), p0, std::min(w.panels, p0 + chunk_panels));
  });
}

template <typename T>
T* thread_buffer(std::vector<T>& v, int64_t count) {
  if (static_cast<int64_t>(v.size()) < count) v.resize(static_cast<std::size_t>(count));
  return v.data();
}

// Q4_K/Q5_K and IQ4_XS products of more tokens than the decode sizes get their records' scales expanded to
// fp32 once per product (PackedView::expanded): 2 products per 32 weights, instead of the tiles' converting them
// again for every group of 4 tokens. The products are exact either way, so the results do not change.
constexpr int64_t kExpandFactorsFrom = 4;

const float* expand_factors(const PackedView& w, int64_t p0, int64_t p1, float* out) {
  for (int64_t p = p0; p < p1; ++p) {
    for (int64_t b = 0; b < w.blocks; ++b) {
      const float* ds =
          w.super_scales + (p * (w.blocks / cpu::kSuperBlocks) + b / cpu::kSuperBlocks) * cpu::kSuperFloats;
      const int8_t* f = w.factors + (p * w.blocks + b) * cpu::kFactorBytes;
      float* o = out + ((p - p0) * w.blocks + b) * 2 * cpu::kPackRows;
      for (int64_t i = 0; i < 2 * cpu::kPackRows; ++i) o[i] = ds[i] * static_cast<float>(f[i]);
    }
  }
  return out;
}

// Int8 products take each token's activations quantized per block (ops.h); two matrices with the same columns
// and activation format (same_activations) take the very same quantized rows.
bool same_activations(const PackedView& a, const PackedView& b) {
  return a.kind == PackKind::Int8 && b.kind == PackKind::Int8 && a.cols == b.cols &&
         (a.factors != nullptr) == (b.factors != nullptr) && a.q8_1_sums == b.q8_1_sums && a.sub16 == b.sub16 &&
         cpu::integer_super_sums(a) == cpu::integer_super_sums(b);
}

// x's n rows quantized as w's Int8 products take them, into this thread's buffers (valid until its next call).
cpu::QuantizedRows quantize_activations(const PackedView& w, const float* x, int64_t n) {
  const cpu::KernelTable& k = table_for(active_isa());
  thread_local std::vector<int8_t> q;
  thread_local std::vector<float> d, xsum;
  thread_local std::vector<int32_t> qsum, qsum16, pairs16;
  cpu::QuantizedRows a;
  a.cols = w.cols;
  a.blocks = w.blocks;
  int8_t* qp = thread_buffer(q, n * w.cols);
  float* dp = thread_buffer(d, n * w.blocks);
  int32_t* sp = thread_buffer(qsum, n * w.blocks);
  float* xp = thread_buffer(xsum, n * w.blocks);
  // K-quant and IQ4_XS weights (the ones with factors) take ggml's block_q8_K activations, the others
  // block_q8_0's. Sub16 weights (Q2_K, Q3_K, Q6_K: all K-quants) also take the Σq of each 16-column half, which
  // the integer sums of a record's two scales start from, computed in the same pass.
  int32_t* hp = w.sub16 ? thread_buffer(qsum16, 2 * n * w.blocks) : nullptr;
  if (w.factors != nullptr) {
    parallel_for(n, 4.0 * static_cast<double>(w.cols),
                 [&](int64_t t) { k.quantize_rows_super(x, t, t + 1, w.cols, qp, dp, sp, xp, hp); });
  } else {
    parallel_for(n, 4.0 * static_cast<double>(w.cols),
                 [&](int64_t t) { k.quantize_rows(x, t, t + 1, w.cols, qp, dp, sp, xp); });
  }
  if (w.q8_1_sums) {  // Q4_1, Q5_1: the mins multiply block_q8_1's rounded sums, not Σx
    parallel_for(n, static_cast<double>(w.cols), [&](int64_t t) {
      for (int64_t b = 0; b < w.blocks; ++b) {
        const float* xb = x + t * w.cols + b * cpu::kQBlock;
        // 8 running maxima (one chain of 32 dependent maxima was 15 % of a Q4_1 product's time); std::max skips
        // a NaN |x| in every lane as in one chain, and the maximum of the rest does not depend on the order.
        float m[8] = {};
        for (int64_t c = 0; c < cpu::kQBlock; c += 8)
          for (int i = 0; i < 8; ++i) m[i] = std::max(m[i], std::fabs(xb[c + i]));
        float amax = 0.0f;
        for (const float v : m) amax = std::max(amax, v);
        xp[t * w.blocks + b] = cpu::q8_1_sum(amax, sp[t * w.blocks + b]);
      }
    });
  }
  a.q = qp;
  a.d = dp;
  a.qsum = sp;
  a.xsum = xp;
  if (w.sub16) {  // the halves' Σq, also as the pairs of int16 the integer super-block sums multiply
    int32_t* pp = thread_buffer(pairs16, n * w.blocks);
    parallel_for(n, static_cast<double>(w.blocks), [&](int64_t t) {
      for (int64_t b = 0; b < w.blocks; ++b) {
        const auto lo = static_cast<uint32_t>(hp[t * 2 * w.blocks + 2 * b]) & 0xFFFFu;
        const auto hi = static_cast<uint32_t>(hp[t * 2 * w.blocks + 2 * b + 1]) << 16;
        pp[t * w.blocks + b] = static_cast<int32_t>(lo | hi);
      }
    });
    a.qsum16 = hp;
    a.pairs16 = pp;
  }
  return a;
}

// Where the tiles' integer sums start, into this thread's buffers, in one pass over the tokens' blocks:
//  * OFFSETS (the AVX-512 and AMX tiles, records with an offset): −w.offset · Σq of each block (sub16 weights: of
//    each block's halves), QuantizedRows::offset_sums;
//  * BIASED (the biased fold of the AVX-512 and AVX-VNNI prefill tiles, kernel_table.h; never sub16):
//    kSumBiasBits − w.offset · Σq and −kSumBias · d, biased_starts and bias_d; left unset if some −kSumBias · d is
//    not finite (max|x| above 3 · 10^33, or not a number): those products fold as before.
void add_start_sums(const PackedView& w, cpu::QuantizedRows& a, int64_t n, bool offsets, bool biased) {
  thread_local std::vector<int32_t> offset_buffer, starts;
  thread_local std::vector<float> bias;
  const int64_t count = n * w.blocks * (w.sub16 ? 2 : 1);
  const int32_t* qsum = w.sub16 ? a.qsum16 : a.qsum;
  int32_t* op = offsets ? thread_buffer(offset_buffer, count) : nullptr;
  int32_t* sp = biased ? thread_buffer(starts, count) : nullptr;
  float* bp = biased ? thread_buffer(bias, count) : nullptr;
  bool finite = true;
  for (int64_t i = 0; i < count; ++i) {
    const int32_t start = -w.offset * qsum[i];
    if (offsets) op[i] = start;
    if (biased) {
      sp[i] = cpu::kSumBiasBits + start;
      bp[i] = -cpu::kSumBias * a.d[i];
      finite &= std::isfinite(bp[i]);
    }
  }
  if (offsets) a.offset_sums = op;
  if (biased && finite) {
    a.biased_starts = sp;
    a.bias_d = bp;
  }
}

// y = x · wᵀ on Int8 records, from x's rows quantized by quantize_activations (for w or a matrix with the same
// activations).
void int8_product(const PackedView& w, const cpu::QuantizedRows& quantized, int64_t n, float* y) {
  const Isa isa = active_isa();
  const auto tile = int8_tile_for(isa);
  // Chunks of whole register tiles: the AVX-512 VNNI prefill tile is 3 panels wide (its GEMV tile 1, the AMX
  // tiles 1, in front of it), the AVX2 and scalar tiles 2.
  const int64_t panels = tile != cpu::int8_tile_avx512vnni && tile != cpu::int8_tile_amx ? 2 : 3;
  PackedView view = w;
  if (w.factors != nullptr && !cpu::integer_super_sums(w) && n > kExpandFactorsFrom) {
    thread_local std::vector<float> expanded;
    float* ep = thread_buffer(expanded, w.panels * w.blocks * 2 * cpu::kPackRows);
    parallel_for(w.panels, static_cast<double>(w.blocks * 2 * cpu::kPackRows),
                 [&](int64_t p) { expand_factors(w, p, p + 1, ep + p * w.blocks * 2 * cpu::kPackRows); });
    view.expanded = ep;
  }
  const bool avx512_tiles = tile == cpu::int8_tile_avx512vnni || tile == cpu::int8_tile_amx;
  cpu::QuantizedRows a = quantized;
  // Not the biased fold for decode-sized products (n ≤ kDecodeTokens): their GEMV tiles never take it, and where
  // the prefill tiles run them, those fold in the contract's order (the same bits).
  add_start_sums(w, a, n, avx512_tiles && w.offset != 0,
                 (avx512_tiles || tile == cpu::int8_tile_avx2_vnni) && cpu::biased_fold_applies(w) &&
                     n > kDecodeTokens);
  const int64_t scratch_bytes = tile == cpu::int8_tile_amx
                                    ? std::max(cpu::int8_scratch_bytes(w, true), cpu::amx_scratch_bytes(w))
                                    : cpu::int8_scratch_bytes(w, avx512_tiles);
  run_packed(w, n, panels, [&](int64_t t0, int64_t t1, int64_t p0, int64_t p1) {
    tile(view, a, t0, t1, p0, p1, y, scratch_bytes > 0 ? thread_scratch(scratch_bytes) : nullptr);
  });
}

void matmul_packed(const PackedView& w, const float* x, int64_t n, float* y) {
  const Isa isa = active_isa();
  const cpu::KernelTable& k = table_for(isa);
  if (w.kind == PackKind::Int8) {
    int8_product(w, quantize_activations(w, x, n), n, y);
    return;
  }
  if (w.kind == PackKind::F16 || w.kind == PackKind::Bf16Fma) {
    const auto tile = k.fma16_tile;
    run_packed(w, n, 1, [&](int64_t t0, int64_t t1, int64_t p0, int64_t p1) { tile(w, x, t0, t1, p0, p1, y); });
    return;
  }
  // Bf16 weights with fp32 activations (bf16_products()): AVX-512 CPUs without AVX-512 BF16, and those whose
  // vdpbf16ps is slower than two FMAs, the AMX-BF16 tiles not running.
  if (isa == Isa::Avx512 && !(amx_enabled() && cpu::cpu_has_amx_bf16()) && bf16_products() == Bf16Products::Fma) {
    run_packed(w, n, 2, [&](int64_t t0, int64_t t1, int64_t p0, int64_t p1) {
      cpu::bf16_fma_tile_avx512(w, x, t0, t1, p0, p1, y);
    });
    return;
  }
  // The AMX tiles read groups of 16 tokens: the rows past n up to the next multiple of 16 are zeros.
  const int64_t padded_n = ceil_div(n, 16) * 16;
  thread_local std::vector<uint16_t> xb;
  uint16_t* xbp = thread_buffer(xb, padded_n * w.cols_padded);
  parallel_for(n, static_cast<double>(w.cols),
               [&](int64_t t) { k.bf16_rows(x, t, t + 1, w.cols, w.cols_padded, xbp); });
  std::fill(xbp + n * w.cols_padded, xbp + padded_n * w.cols_padded, uint16_t{0});
  const auto tile = bf16_tile_for(isa);
  run_packed(w, n, 4, [&](int64_t t0, int64_t t1, int64_t p0, int64_t p1) { tile(w, xbp, t0, t1, p0, p1, y); });
}

}  // namespace

namespace cpu {

bool cpu_has_avx_vnni() {
  // CPUID leaf 7, sub-leaf 1, EAX bit 4 (read directly: clang 14's __builtin_cpu_supports has no "avxvnni"),
  // once: every AVX2 Int8 product asks, and CPUID traps to the hypervisor in a VM.
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!cpu_has_avx2() || __get_cpuid_count(7, 1, &a, &b, &c, &d) == 0) return false;
    return ((a >> 4) & 1u) != 0;
  }();
  return has;
}

bool cpu_has_avx512_vnni() {
  __builtin_cpu_init();
  return cpu_has_avx512() && __builtin_cpu_supports("avx512vnni");
}

bool cpu_has_avx512_bf16() {
  __builtin_cpu_init();
  return cpu_has_avx512() && __builtin_cpu_supports("avx512bf16");
}

namespace {

struct AmxFeatures {
  bool int8 = false, bf16 = false;
};

AmxFeatures amx_features() {
  AmxFeatures f;
  if (!cpu_has_avx512_vnni()) return f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return f;
  constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;  // CPUID.(7, 0):EDX
  if ((d & kAmxTile) == 0) return f;
  const unsigned features = d;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & (1u << 27)) == 0) return f;  // OSXSAVE: xgetbv works
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  constexpr unsigned kTileState = (1u << 17) | (1u << 18);  // XCR0: XTILECFG, XTILEDATA
  if ((lo & kTileState) != kTileState) return f;
  // Linux hands out the tile data (8 KiB more per thread's saved state) only on request, once per process.
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return f;
  f.int8 = (features & kAmxInt8) != 0;
  f.bf16 = (features & kAmxBf16) != 0 && cpu_has_avx512_bf16();
  return f;
}

const AmxFeatures& amx() {
  static const AmxFeatures f = amx_features();
  return f;
}

}  // namespace

bool cpu_is_intel() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) == 0) return false;
  return b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu;  // "Genu" "ineI" "ntel"
}

bool cpu_has_amx_int8() { return amx().int8; }
bool cpu_has_amx_bf16() { return amx().bf16; }

}  // namespace cpu

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar:
      return "scalar";
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
  }
  return "?";
}

std::string_view bf16_products_name(Bf16Products p) { return p == Bf16Products::Dot ? "dot" : "fma"; }

Bf16Products bf16_products() {
  std::call_once(g_bf16_once, [] {
    int expected = kBf16Unset;
    g_bf16_products.compare_exchange_strong(expected, static_cast<int>(bf16_products_from_env()));
  });
  return static_cast<Bf16Products>(g_bf16_products.load(std::memory_order_relaxed));
}

void set_bf16_products(Bf16Products p) { g_bf16_products.store(static_cast<int>(p), std::memory_order_relaxed); }

WeightStreams weight_streams() { return static_cast<WeightStreams>(g_weight_streams.load(std::memory_order_relaxed)); }
void set_weight_streams(WeightStreams s) { g_weight_streams.store(static_cast<int>(s), std::memory_order_relaxed); }

bool avx_vnni_supported() { return cpu::cpu_has_avx_vnni(); }
bool avx_vnni_enabled() { return g_avx_vnni_on.load(std::memory_order_relaxed) && avx_vnni_supported(); }
void set_avx_vnni_enabled(bool on) { g_avx_vnni_on.store(on, std::memory_order_relaxed); }

bool amx_supported() { return cpu::cpu_has_amx_int8() || cpu::cpu_has_amx_bf16(); }
bool amx_enabled() { return g_amx_on.load(std::memory_order_relaxed) && amx_supported(); }
void set_amx_enabled(bool on) { g_amx_on.store(on, std::memory_order_relaxed); }

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::Scalar:
      return true;
    case Isa::Avx2:
      return cpu_has_avx2();
    case Isa::Avx512:
      return cpu_has_avx512();
  }
  return false;
}

Isa best_isa() {
  if (isa_supported(Isa::Avx512)) return Isa::Avx512;
  if (isa_supported(Isa::Avx2)) return Isa::Avx2;
  return Isa::Scalar;
}

Isa active_isa() {
  if (!g_isa_ready.load(std::memory_order_acquire)) {
    std::call_once(g_isa_once, [] { g_isa.store(static_cast<int>(isa_from_env())); });
    g_isa_ready.store(true, std::memory_order_release);
  }
  return static_cast<Isa>(g_isa.load(std::memory_order_relaxed));
}

void set_active_isa(Isa isa) {
  if (!isa_supported(isa))
    throw Error("instruction set " + std::string(isa_name(isa)) + " is not supported by this CPU");
  std::call_once(g_isa_once, [] {});
  g_isa.store(static_cast<int>(isa));
  g_isa_ready.store(true, std::memory_order_release);
}

void check_weight(const WeightMatrix& w, const char* what) {
  const std::string name = what;
  if (w.rows < 0 || w.cols < 0) throw Error(name + ": negative matrix shape");
  switch (w.type) {
    case WeightType::F32:
      if (w.f32 == nullptr) throw Error(name + ": missing F32 data");
      return;
    case WeightType::BF16:
      if (w.bf16 == nullptr) throw Error(name + ": missing BF16 data");
      return;
    case WeightType::MlxAffine:
      if (w.bits != 2 && w.bits != 3 && w.bits != 4 && w.bits != 5 && w.bits != 6 && w.bits != 8)
        throw Error(name + ": unsupported quantization width " + std::to_string(w.bits) + " bits");
      if (w.group_size <= 0 || w.cols % w.group_size != 0)
        throw Error(name + ": " + std::to_string(w.cols) + " columns are not a multiple of group size " +
                    std::to_string(w.group_size));
      if ((w.cols * w.bits) % 32 != 0)
        throw Error(name + ": " + std::to_string(w.cols) + " columns of " + std::to_string(w.bits) +
                    " bits do not fill whole 32-bit words");
      if (w.packed == nullptr || w.scales == nullptr || w.biases == nullptr)
        throw Error(name + ": missing quantized data, scales or biases");
      return;
    case WeightType::F16:
    case WeightType::Q8_0:
    case WeightType::Q4_0:
    case WeightType::Q4_1:
    case WeightType::Q5_0:
    case WeightType::Q5_1:
    case WeightType::Q2_K:
    case WeightType::Q3_K:
    case WeightType::Q4_K:
    case WeightType::Q5_K:
    case WeightType::Q6_K:
    case WeightType::IQ4_NL:
    case WeightType::IQ4_XS:
      if (w.cols % block_values(w.type) != 0)
        throw Error(name + ": " + std::to_string(w.cols) + " columns are not a multiple of the " +
                    std::to_string(block_values(w.type)) + "-value block");
      if (w.blocks == nullptr) throw Error(name + ": missing block data");
      return;
  }
  throw Error(name + ": unknown weight type");
}

void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y) {
  if (n <= 0 || w.rows <= 0) return;
  if (w.pack != nullptr && w.pack->kind != PackKind::None) {
    matmul_packed(*w.pack, x, n, y);
    return;
  }
  const cpu::KernelTable& k = active_table();
  const int64_t scratch_floats = w.type == WeightType::F32 ? 0 : cpu::kPanelRows * w.cols;
  const double work = static_cast<double>(n) * static_cast<double>(w.rows) * static_cast<double>(w.cols);
  const int threads = num_threads();
  if (threads == 1 || work < kMinParallelWork) {
    k.matmul_tile(w, x, 0, n, 0, w.rows, y, panel_scratch(scratch_floats));
    return;
  }
  // Tasks: token blocks (weights stay in cache across a block) × chunks of output rows.
  constexpr int64_t kTokenBlock = 64;
  const int64_t token_blocks = ceil_div(n, kTokenBlock);
  const int64_t wanted_chunks = std::max<int64_t>(1, ceil_div(4 * threads, token_blocks));
  const int64_t chunk_rows =
      ceil_div(ceil_div(w.rows, wanted_chunks), cpu::kPanelRows) * cpu::kPanelRows;
  const int64_t row_chunks = ceil_div(w.rows, chunk_rows);
  default_pool().run(token_blocks * row_chunks, [&](int64_t task) {
    const int64_t t0 = (task / row_chunks) * kTokenBlock;
    const int64_t r0 = (task % row_chunks) * chunk_rows;
    k.matmul_tile(w, x, t0, std::min(n, t0 + kTokenBlock), r0, std::min(w.rows, r0 + chunk_rows), y,
                  panel_scratch(scratch_floats));
  });
}

void matmul_shared_input(std::span<const MatmulOutput> products, const float* x, int64_t n) {
  if (n <= 0) return;
  const PackedView* held = nullptr;  // the matrix whose activations `a` holds (this thread's buffers)
  cpu::QuantizedRows a;
  for (const MatmulOutput& p : products) {
    const WeightMatrix& w = *p.w;
    if (w.rows <= 0) continue;
    if (w.pack == nullptr || w.pack->kind != PackKind::Int8) {
      matmul(w, x, n, p.y);
      held = nullptr;
      continue;
    }
    if (held == nullptr || !same_activations(*held, *w.pack)) {
      a = quantize_activations(*w.pack, x, n);
      held = w.pack;
    }
    int8_product(*w.pack, a, n, p.y);
  }
}

void dequantize_row(const WeightMatrix& w, int64_t r, float* out) { active_table().dequantize_row(w, r, out); }
float dot(const float* a, const float* b, int64_t n) { return active_table().dot(a, b, n); }
void axpy(int64_t n, float a, const float* x, float* y) { active_table().axpy(n, a, x, y); }
void scale(int64_t n, float a, float* x) { active_table().scale(n, a, x); }
void scale_to(int64_t n, float a, const float* x, float* y) { active_table().scale_to(n, a, x, y); }
void transpose_scaled(int64_t rows, int64_t cols, const float* x, int64_t ldx, const float* f, float* y,
                      int64_t ldy) {
  if (rows > 0 && cols > 0) active_table().transpose_scaled(rows, cols, x, ldx, f, y, ldy);
}
void silu_mul(int64_t n, const float* x, const float* m, float* y) { active_table().silu_mul(n, x, m, y); }
double sum_squares(const float* x, int64_t n) { return active_table().sum_squares(x, n); }
void conv_silu(int64_t n, int64_t taps, const float* w, const float* const* x, float* y) {
  active_table().conv_silu(n, taps, w, x, y);
}
void delta_rule_token(int64_t dk, int64_t dv, float decay, float beta, const float* q, const float* k,
                      const float* v, float* S, float* o) {
  active_table().delta_rule_token(dk, dv, decay, beta, q, k, v, S, o);
}
void softmax(int64_t n, float scale, float* x) {
  if (n > 0) active_table().softmax(n, scale, x);
}
void exp_shifted(int64_t n, float shift, float* x) { active_table().exp_shifted(n, shift, x); }
void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda, const float* B,
              int64_t ldb, float* C, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (alpha != 1.0f && alpha != -1.0f) {  // the table takes ±1: alpha · A rounded once, as in every product
    thread_local std::vector<float> scaled;
    scaled.resize(static_cast<std::size_t>(m * k));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) scaled[static_cast<std::size_t>(i * k + p)] = alpha * A[i * lda + p];
    A = scaled.data();
    lda = k;
    alpha = 1.0f;
  }
  active_table().gemm_f32(m, n, k, alpha, A, lda, B, ldb, C, ldc);
}

}  // namespace verdict::kernels
