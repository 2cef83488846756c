// Register-only AVX2 peak loops for kernels_bench: the instructions of the AVX2 Int8 kernel
// (src/kernels/cpu/avx2.cc) without memory traffic, in inline asm (see src/kernels/cpu/peak_avx512.cc for why).
// Each round runs 24 independent groups; `iters` rounds.
//  * maddubs_madd_peak: vpmaddubsw (32 u8 × s8 products summed in pairs to int16) → vpmaddwd with ones
//    (pairs summed again to int32) → vpaddd into one of 6 accumulators: the 8-bit weights' sequence,
//    32 multiply-adds per group.
//  * maddubs_peak: vpmaddubsw alone into 12 registers: the 4-bit weights' bound (their int16 sums are
//    folded to int32 once per 32-column block), 32 multiply-adds per instruction.
//  * vfmadd_ymm_peak: vfmadd231ps ymm into 12 accumulators: the AVX2 F16 kernel's bound, 8 multiply-adds
//    per instruction (the fp32 values of the constants' bit patterns: products ≈ −1, no subnormals).
//  * vpdpbusd_ymm_peak: AVX-VNNI's vpdpbusd on ymm (VEX-encoded) into 12 accumulators: the bound of the AVX2
//    Int8 tiles on AVX-VNNI, 32 multiply-adds per instruction. Called only when the CPU has AVX-VNNI.
// Called only when the CPU has AVX2.
#include <cstdint>

namespace verdict::bench {

// ymm0 = u8 3s, ymm1 = s8 −5s, ymm2 = int16 ones; ymm3–ymm8 temporaries, ymm9–ymm14 accumulators.
#define VERDICT_GROUP(T, A)                                \
  "vpmaddubsw %%ymm1, %%ymm0, %%ymm" #T "\n\t"             \
  "vpmaddwd %%ymm2, %%ymm" #T ", %%ymm" #T "\n\t"          \
  "vpaddd %%ymm" #T ", %%ymm" #A ", %%ymm" #A "\n\t"
#define VERDICT_GROUPS_6                                                                            \
  VERDICT_GROUP(3, 9) VERDICT_GROUP(4, 10) VERDICT_GROUP(5, 11) VERDICT_GROUP(6, 12) VERDICT_GROUP(7, 13) \
  VERDICT_GROUP(8, 14)
#define VERDICT_MADDUBS(T) "vpmaddubsw %%ymm1, %%ymm0, %%ymm" #T "\n\t"
#define VERDICT_MADDUBS_12                                                                                    \
  VERDICT_MADDUBS(3) VERDICT_MADDUBS(4) VERDICT_MADDUBS(5) VERDICT_MADDUBS(6) VERDICT_MADDUBS(7) VERDICT_MADDUBS(8) \
  VERDICT_MADDUBS(9) VERDICT_MADDUBS(10) VERDICT_MADDUBS(11) VERDICT_MADDUBS(12) VERDICT_MADDUBS(13) VERDICT_MADDUBS(14)
#define VERDICT_ZERO_ACC                                                                                      \
  "vpxor %%ymm9, %%ymm9, %%ymm9\n\t" "vpxor %%ymm10, %%ymm10, %%ymm10\n\t" "vpxor %%ymm11, %%ymm11, %%ymm11\n\t" \
  "vpxor %%ymm12, %%ymm12, %%ymm12\n\t" "vpxor %%ymm13, %%ymm13, %%ymm13\n\t" "vpxor %%ymm14, %%ymm14, %%ymm14\n\t"
#define VERDICT_FMA(T) "vfmadd231ps %%ymm1, %%ymm0, %%ymm" #T "\n\t"
#define VERDICT_FMA_12                                                                                  \
  VERDICT_FMA(3) VERDICT_FMA(4) VERDICT_FMA(5) VERDICT_FMA(6) VERDICT_FMA(7) VERDICT_FMA(8) VERDICT_FMA(9) \
  VERDICT_FMA(10) VERDICT_FMA(11) VERDICT_FMA(12) VERDICT_FMA(13) VERDICT_FMA(14)
#define VERDICT_DPBUSD(T) "%{vex%} vpdpbusd %%ymm1, %%ymm0, %%ymm" #T "\n\t"
#define VERDICT_DPBUSD_12                                                                                   \
  VERDICT_DPBUSD(3) VERDICT_DPBUSD(4) VERDICT_DPBUSD(5) VERDICT_DPBUSD(6) VERDICT_DPBUSD(7) VERDICT_DPBUSD(8) \
  VERDICT_DPBUSD(9) VERDICT_DPBUSD(10) VERDICT_DPBUSD(11) VERDICT_DPBUSD(12) VERDICT_DPBUSD(13) VERDICT_DPBUSD(14)
#define VERDICT_ZERO_ALL                                                                                      \
  "vpxor %%ymm3, %%ymm3, %%ymm3\n\t" "vpxor %%ymm4, %%ymm4, %%ymm4\n\t" "vpxor %%ymm5, %%ymm5, %%ymm5\n\t"       \
  "vpxor %%ymm6, %%ymm6, %%ymm6\n\t" "vpxor %%ymm7, %%ymm7, %%ymm7\n\t" "vpxor %%ymm8, %%ymm8, %%ymm8\n\t" VERDICT_ZERO_ACC
// Broadcasts the constants, runs INIT, then `iters` rounds of BODY.
#define VERDICT_AVX2_PEAK(NAME, INIT, BODY)                                                                  \
  void NAME(int64_t iters) {                                                                                 \
    if (iters <= 0) return;                                                                                  \
    const uint32_t a = 0x03030303u, b = 0xFBFBFBFBu, one = 0x00010001u; /* u8 3, s8 −5, int16 1 */          \
    __asm__ volatile("vmovd %[a], %%xmm0\n\t"                                                               \
                     "vpbroadcastd %%xmm0, %%ymm0\n\t"                                                      \
                     "vmovd %[b], %%xmm1\n\t"                                                               \
                     "vpbroadcastd %%xmm1, %%ymm1\n\t"                                                      \
                     "vmovd %[one], %%xmm2\n\t"                                                             \
                     "vpbroadcastd %%xmm2, %%ymm2\n\t" INIT "1:\n\t" BODY "dec %[n]\n\t"                     \
                     "jnz 1b\n\t"                                                                           \
                     "vzeroupper\n\t"                                                                       \
                     : [n] "+r"(iters)                                                                      \
                     : [a] "r"(a), [b] "r"(b), [one] "r"(one)                                               \
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
                       "xmm11", "xmm12", "xmm13", "xmm14", "cc");                                           \
  }

VERDICT_AVX2_PEAK(maddubs_madd_peak, VERDICT_ZERO_ACC,
                  VERDICT_GROUPS_6 VERDICT_GROUPS_6 VERDICT_GROUPS_6 VERDICT_GROUPS_6)
VERDICT_AVX2_PEAK(maddubs_peak, "", VERDICT_MADDUBS_12 VERDICT_MADDUBS_12)
VERDICT_AVX2_PEAK(vfmadd_ymm_peak, VERDICT_ZERO_ALL, VERDICT_FMA_12 VERDICT_FMA_12)
VERDICT_AVX2_PEAK(vpdpbusd_ymm_peak, VERDICT_ZERO_ALL, VERDICT_DPBUSD_12 VERDICT_DPBUSD_12)

#undef VERDICT_AVX2_PEAK
#undef VERDICT_ZERO_ALL
#undef VERDICT_DPBUSD_12
#undef VERDICT_DPBUSD
#undef VERDICT_FMA_12
#undef VERDICT_FMA
#undef VERDICT_ZERO_ACC
#undef VERDICT_MADDUBS_12
#undef VERDICT_MADDUBS
#undef VERDICT_GROUPS_6
#undef VERDICT_GROUP

}  // namespace verdict::bench
