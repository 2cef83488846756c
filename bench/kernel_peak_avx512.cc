// Register-only peak loops for kernels_bench: independent chains of one instruction, no memory traffic.
// Compiled with AVX-512 VNNI / BF16 flags; called only when the CPU has them.
#include <immintrin.h>

#include <cstdint>

namespace verdict::bench {

// 24 independent accumulator chains per iteration (more than latency × throughput of these instructions
// on current x86 cores; fewer chains measured lower), 4 times unrolled: `iters` · 96 instructions. Returns a value derived from the accumulators so nothing is
// optimized away.
#define VERDICT_PEAK_LOOP(TYPE, ZERO, OP)                                          \
  TYPE acc[24];                                                                    \
  for (int i = 0; i < 24; ++i) acc[i] = ZERO;                                      \
  for (int64_t it = 0; it < iters; ++it) {                                         \
    _Pragma("GCC unroll 4") for (int u = 0; u < 4; ++u) {                          \
      _Pragma("GCC unroll 24") for (int i = 0; i < 24; ++i) acc[i] = OP;           \
      __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), \
                       "+v"(acc[4]), "+v"(acc[5]), "+v"(acc[6]), "+v"(acc[7]),    \
                       "+v"(acc[8]), "+v"(acc[9]), "+v"(acc[10]), "+v"(acc[11])); \
      __asm__ volatile("" : "+v"(acc[12]), "+v"(acc[13]), "+v"(acc[14]), "+v"(acc[15]), \
                       "+v"(acc[16]), "+v"(acc[17]), "+v"(acc[18]), "+v"(acc[19]),    \
                       "+v"(acc[20]), "+v"(acc[21]), "+v"(acc[22]), "+v"(acc[23])); \
    }                                                                              \
  }

int64_t vpdpbusd_peak(int64_t iters) {
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-5);
  VERDICT_PEAK_LOOP(__m512i, _mm512_setzero_si512(), _mm512_dpbusd_epi32(acc[i], a, b))
  __m512i s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_epi32(s, acc[i]);
  return _mm512_reduce_add_epi32(s);
}

float vdpbf16ps_peak(int64_t iters) {
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3c00);
  VERDICT_PEAK_LOOP(__m512, _mm512_setzero_ps(), _mm512_dpbf16_ps(acc[i], a, b))
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

float vfmadd_peak(int64_t iters) {
  const __m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(1e-7f);
  VERDICT_PEAK_LOOP(__m512, _mm512_setzero_ps(), _mm512_fmadd_ps(a, b, acc[i]))
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

#undef VERDICT_PEAK_LOOP

}  // namespace verdict::bench
