#include "models/qwen35/mlp.h"

#include <vector>

#include "kernels/ops.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/activations.h"

namespace verdict::models::qwen35 {

void mlp_forward(const MlpWeights& w, const float* xn, int64_t rows, float* out) {
  const int64_t I = w.gate_proj.view.rows;
  Activations gate(rows * I), up(rows * I);
  const kernels::MatmulOutput projections[] = {{&w.gate_proj.view, gate.data()}, {&w.up_proj.view, up.data()}};
  kernels::matmul_shared_input(projections, xn, rows);
  kernels::parallel_for(rows, static_cast<double>(4 * I), [&](int64_t r) {
    float* g = gate.data() + r * I;
    kernels::silu_mul(I, g, up.data() + r * I, g);
  });
  kernels::matmul(w.down_proj.view, gate.data(), rows, out);
}

}  // namespace verdict::models::qwen35
