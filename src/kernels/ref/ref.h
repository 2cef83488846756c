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
float dot(const float* a, const float* b, int64_t n);
void axpy(int64_t n, float a, const float* x, float* y);
void scale(int64_t n, float a, float* x);

}  // namespace verdict::kernels::ref
