// Run-time selection of the instruction set the optimized kernels use.
#pragma once
#include <string_view>

namespace verdict::kernels {

enum class Isa { Scalar, Avx2, Avx512 };

std::string_view isa_name(Isa isa);
// Whether this CPU (and this build) can run the kernels of `isa`. Scalar is always supported.
bool isa_supported(Isa isa);
// The best supported ISA.
Isa best_isa();
// The ISA in use: $VERDICT_ISA ("scalar", "avx2", "avx512") when set, else best_isa().
Isa active_isa();
// Switches the ISA (tests, benchmarks). Throws verdict::Error when it is not supported.
void set_active_isa(Isa isa);

// AVX-VNNI under the AVX2 ISA (Intel's AVX2 client cores since Alder Lake, AMD's since Zen 5): the AVX2 Int8
// products sum each block's int8 products with vpdpbusd on ymm registers instead of vpmaddubsw and vpmaddwd, with
// the same results bit for bit (the same integer sums and fp32 steps). $VERDICT_AVX_VNNI=0 switches it off at start,
// set_avx_vnni_enabled at any time (tests, benchmarks); on where it is not supported does nothing.
bool avx_vnni_supported();
bool avx_vnni_enabled();
void set_avx_vnni_enabled(bool on);

// Intel AMX tiles under the AVX-512 ISA. AMX-INT8: the Int8 prefill products run groups of 16 tokens on them,
// with the VNNI results bit for bit (same integer sums, same fp32 steps; ops.h). AMX-BF16: every Bf16 product
// runs on them (its pair sums round in another order than vdpbf16ps's, within the same contract).
// Supported when the CPU has them, the OS enables their state and grants this process the tile data.
bool amx_supported();
// Supported and not switched off: $VERDICT_AMX=0 switches them off at start, set_amx_enabled at any time.
bool amx_enabled();
// Switches the tiles on or off (tests, benchmarks); on where they are not supported does nothing.
void set_amx_enabled(bool on);

// How the decode tiles (products of a few tokens, which read every weight once: the memory bandwidth bounds them)
// stream their weights. Prefetch: each tile's lines kGemvPrefetchBytes ahead by software prefetch into L2, and the
// AVX-512 Int8 GEMV tile one panel at a time (Intel CPUs, where the prefetch gained 6–31 % of decode). Wide: the
// hardware prefetcher alone, and one token of AVX-512 Int8 records (but Q2_K and Q3_K) 4 panels at a time, 4
// streams per thread (2 to 4 tokens too, for 8-bit records or long panels), as one token of the AVX2 tiles' 8-bit
// and 4-bit records when their panels are long (other CPUs: on AMD Zen 4 and 5 the prefetch gained nothing or
// cost, and one panel at a time read 55–80 % of the read bandwidth; kernels/cpu/kernel_table.h, gemm_avx512.cc,
// int8_avx2.h). Either way the results are the same bit for bit. Chosen by the CPU's vendor at start;
// set_weight_streams switches it (tests, benchmarks).
enum class WeightStreams { Prefetch, Wide };
WeightStreams weight_streams();
void set_weight_streams(WeightStreams s);

// How Bf16 products multiply under the AVX-512 ISA where the AMX-BF16 tiles do not run them. Dot rounds the
// activations to bf16 and sums each column pair with vdpbf16ps (the Bf16 contract, ops.h; on CPUs without
// AVX-512 BF16 its scalar twin); Fma keeps the activations in fp32 and runs one fused multiply-add per column on
// the stored bf16 weights (the F16 / Bf16Fma contract: ref::matmul_fma bit for bit). Either way the weights
// stay in the Bf16 layout.
enum class Bf16Products { Dot, Fma };
std::string_view bf16_products_name(Bf16Products p);
// $VERDICT_BF16 ("dot", "fma") when set, else measured once per process: Dot where vdpbf16ps does at least as
// many multiply-adds per second as vfmadd231ps (AMD Zen 4 and 5: twice as many), Fma where it does fewer
// (Intel's AVX-512 BF16 cores: half as many — what runs there when AMX is off, hidden by a VM or not granted
// by a kernel older than 5.16) and on AVX-512 CPUs without BF16 (Skylake-SP to Ice Lake).
Bf16Products bf16_products();
// Switches the choice (tests, benchmarks).
void set_bf16_products(Bf16Products p);

}  // namespace verdict::kernels
