// Register-only loops of one AVX-512 instruction (24 independent chains, `iters` · 24 instructions, no memory
// traffic): how many of them a core issues per second. kernels_bench measures the peaks of docs/performance.md
// with them, and bf16_products() (isa.h) compares vdpbf16ps with vfmadd231ps once per process. Call them only
// where the CPU has AVX-512 VNNI and BF16.
#pragma once
#include <cstdint>

namespace verdict::kernels {

void vpdpbusd_peak(int64_t iters);   // 64 multiply-adds per instruction (u8 × s8)
void vdpbf16ps_peak(int64_t iters);  // 32 (bf16 pairs into fp32)
void vfmadd_peak(int64_t iters);     // 16 (fp32)

}  // namespace verdict::kernels
