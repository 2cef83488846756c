// Private to kernels/: the per-ISA kernel entry points behind ops.h.
//
// The AVX2 and AVX-512 tables live in translation units compiled with their target flags. Those
// units include only this header, ops.h and <immintrin.h>: no standard-library templates, whose
// AVX-compiled instantiations the linker could otherwise pick for the whole program.
#pragma once
#include <cstdint>

#include "kernels/ops.h"

namespace verdict::kernels::cpu {

// Rows of a weight panel a matmul tile processes together; scratch holds kPanelRows · cols floats.
inline constexpr int64_t kPanelRows = 4;

struct KernelTable {
  // y[t, r] for t in [t0, t1), r in [r0, r1); x has `cols` columns, y has `rows` columns.
  void (*matmul_tile)(const WeightMatrix& w, const float* x, int64_t t0, int64_t t1, int64_t r0,
                      int64_t r1, float* y, float* scratch);
  void (*dequantize_row)(const WeightMatrix& w, int64_t r, float* out);
  float (*dot)(const float* a, const float* b, int64_t n);
  void (*axpy)(int64_t n, float a, const float* x, float* y);
  void (*scale)(int64_t n, float a, float* x);
};

const KernelTable& generic_table();
const KernelTable& avx2_table();
const KernelTable& avx512_table();

// Portable MLX dequantization of any bit width (used by every table for widths without SIMD code).
void mlx_dequantize_row_generic(const WeightMatrix& w, int64_t r, float* out);
// Portable dequantization of the ggml types (F16, Q8_0, Q4_0, Q4_K, Q6_K), bit-exact with ggml.
void ggml_dequantize_row_generic(const WeightMatrix& w, int64_t r, float* out);

}  // namespace verdict::kernels::cpu
