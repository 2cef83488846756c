// The public op table of verdict's compute kernels.
//
// Every op here dispatches at run time to the best implementation this CPU supports (AVX-512, AVX2,
// or portable scalar code; see isa.h) and, for the large ones, spreads the work over the kernel
// thread pool (thread_pool.h). Each optimized op has a plain scalar twin in kernels/ref/ref.h, the
// definition of correct, and a test comparing the two.
//
// Conventions: activations are fp32 and row-major; a weight matrix is [rows, cols] = PyTorch
// [out, in], applied as y = W·x; accumulation is fp32 (never lower).
#pragma once
#include <cstdint>

namespace verdict::kernels {

enum class WeightType : uint8_t {
  F32,        // fp32 values
  BF16,       // bfloat16 values, upcast exactly inside the kernel
  MlxAffine,  // MLX affine quantization: W[r, c] = scale[r, c/gs] · q[r, c] + bias[r, c/gs]
};

// A non-owning view of a weight matrix. Exactly the pointers of its type are set.
struct WeightMatrix {
  WeightType type = WeightType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const float* f32 = nullptr;        // F32: rows · cols
  const uint16_t* bf16 = nullptr;    // BF16: rows · cols (bit patterns)
  const uint32_t* packed = nullptr;  // MlxAffine: rows · (cols · bits / 32) words, LSB first
  const float* scales = nullptr;     // MlxAffine: rows · (cols / group_size)
  const float* biases = nullptr;     // MlxAffine: rows · (cols / group_size)
  int bits = 0;                      // MlxAffine: 2, 3, 4, 5, 6 or 8
  int group_size = 0;                // MlxAffine: cols is a multiple of it

  int64_t packed_row_words() const { return cols * bits / 32; }
  int64_t groups_per_row() const { return group_size > 0 ? cols / group_size : 0; }
};

// Throws verdict::Error when the view is inconsistent (null pointers, bad bits/group size, ...).
void check_weight(const WeightMatrix& w, const char* what);

// y[t, r] = Σ_c W[r, c] · x[t, c] for t < n; x is n × cols, y is n × rows (row-major).
// The result of each (t, r) does not depend on n, on the other rows of x, or on the thread count,
// so batching sequences together never changes their results.
void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y);

// Row r of W as fp32 (exact for F32/BF16; for MLX one fp32 multiply then one fp32 add per value).
void dequantize_row(const WeightMatrix& w, int64_t r, float* out);

// Vector primitives (single-threaded; used inside per-head loops).
float dot(const float* a, const float* b, int64_t n);          // Σ a_i b_i
void axpy(int64_t n, float a, const float* x, float* y);       // y += a · x
void scale(int64_t n, float a, float* x);                      // x *= a

}  // namespace verdict::kernels
