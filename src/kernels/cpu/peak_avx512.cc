// The peak loops of kernels/peak.h: 24 independent accumulator chains (zmm8–zmm31, more than latency ×
// throughput of these instructions on current x86 cores) of one instruction, `iters` · 24 instructions, no
// memory traffic. Written in inline asm: GCC 12 adds register moves to the same loop written with intrinsics
// (60 moves per 24 vpdpbusd), which halves the measured rate.
// Compiled with AVX-512 flags; called only when the CPU has AVX-512 VNNI and BF16.
#include "kernels/peak.h"

namespace verdict::kernels {

#define VERDICT_EACH_ACC(F, I) F(I, 8) F(I, 9) F(I, 10) F(I, 11) F(I, 12) F(I, 13) F(I, 14) F(I, 15) \
  F(I, 16) F(I, 17) F(I, 18) F(I, 19) F(I, 20) F(I, 21) F(I, 22) F(I, 23) \
  F(I, 24) F(I, 25) F(I, 26) F(I, 27) F(I, 28) F(I, 29) F(I, 30) F(I, 31)
#define VERDICT_ZERO(I, N) "vpxord %%zmm" #N ", %%zmm" #N ", %%zmm" #N "\n\t"
#define VERDICT_OP(I, N) I " %%zmm1, %%zmm0, %%zmm" #N "\n\t"
// zmm0 = broadcast a, zmm1 = broadcast b, 24 accumulators zeroed, then `iters` rounds of 24 instructions.
#define VERDICT_PEAK(NAME, INSTR, A, B)                                                                   \
  void NAME(int64_t iters) {                                                                             \
    if (iters <= 0) return;                                                                              \
    const uint32_t a = A, b = B;                                                                         \
    __asm__ volatile("vpbroadcastd %[a], %%zmm0\n\t"                                                     \
                     "vpbroadcastd %[b], %%zmm1\n\t" VERDICT_EACH_ACC(VERDICT_ZERO, INSTR) "1:\n\t"      \
                         VERDICT_EACH_ACC(VERDICT_OP, INSTR) "dec %[n]\n\t"                               \
                                                             "jnz 1b\n\t"                                 \
                     : [n] "+r"(iters)                                                                   \
                     : [a] "r"(a), [b] "r"(b)                                                            \
                     : "xmm0", "xmm1", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",                   \
                       "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22",        \
                       "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "cc");   \
  }

VERDICT_PEAK(vpdpbusd_peak, "vpdpbusd", 0x03030303u, 0xFBFBFBFBu)     // u8 3 × s8 −5
VERDICT_PEAK(vdpbf16ps_peak, "vdpbf16ps", 0x3F803F80u, 0x3C003C00u)   // bf16 1 × 2^−7
VERDICT_PEAK(vfmadd_peak, "vfmadd231ps", 0x3F800000u, 0x33D6BF95u)    // 1 × 1e−7

#undef VERDICT_PEAK
#undef VERDICT_OP
#undef VERDICT_ZERO
#undef VERDICT_EACH_ACC

}  // namespace verdict::kernels
