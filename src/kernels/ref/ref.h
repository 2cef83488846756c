// Scalar twins of the ops in kernels/ops.h: plain loops, double accumulation, one thread.
// They define what the optimized kernels compute; tests compare every ISA against them.
#pragma once
#include <cstdint>

#include "kernels/ops.h"

namespace verdict::kernels::ref {

// Element (r, c) of W in fp32 (MLX: fp32 multiply, then fp32 add; the bit stream is LSB first).
float weight_at(const WeightMatrix& w, int64_t r, int64_t c);
void dequantize_row(const WeightMatrix& w, int64_t r, float* out);
void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y);

// The Int8 contract of matmul with packed weights (ops.h): activations quantized per token and 32-column
// block (quantize_block), or for Q4_K, Q5_K and Q6_K weights per 256-column super-block
// (quantize_super_block); weights split per block into W = scaled + min (scaled = s_b · q, the integer
// part; min = m_b, multiplied with the exact Σx of the block, for the K-quants with Σ d · q, for Q4_1 and
// Q5_1 with q8_1_block_sum); sums in double.
void quantize_block(const float* x, int8_t* q, float& d);        // 32 values; d in fp16 precision (ops.h)
void quantize_super_block(const float* x, int8_t* q, float& d);  // 256 values; d = 1 / (127 / max|x|)
bool super_block_activations(const WeightMatrix& w);             // Q2_K–Q6_K, IQ4_XS
// The sum of ggml's block_q8_1 over 32 values x quantized to integers summing to qsum: (max|x| / 127) · qsum in
// fp32, rounded to 11 significant bits; what the mins of Q4_1 and Q5_1 multiply.
double q8_1_block_sum(const float* x, int32_t qsum);
void int8_parts(const WeightMatrix& w, int64_t r, int64_t c, double& scaled, double& min);
void matmul_int8(const WeightMatrix& w, const float* x, int64_t n, float* y);
// The Bf16 contract: activations rounded to bf16, weights exact, sums in double.
void matmul_bf16(const WeightMatrix& w, const float* x, int64_t n, float* y);
// The F16 / Bf16Fma contract (any exactly upcast weight type): one fp32 fused multiply-add per column, in
// column order from 0 (std::fma); the packed kernels give these results bit for bit.
void matmul_fma(const WeightMatrix& w, const float* x, int64_t n, float* y);

void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda, const float* B,
              int64_t ldb, float* C, int64_t ldc);  // sums in double
float dot(const float* a, const float* b, int64_t n);
void axpy(int64_t n, float a, const float* x, float* y);
void scale(int64_t n, float a, float* x);
void silu_mul(int64_t n, const float* x, const float* m, float* y);  // in double
double sum_squares(const float* x, int64_t n);                       // in long double
void softmax(int64_t n, float scale, float* x);                      // in double
void conv_silu(int64_t n, int64_t taps, const float* w, const float* const* x, float* y);  // fp32 sums, silu in double

}  // namespace verdict::kernels::ref
