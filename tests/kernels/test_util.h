// Helpers shared by the kernel tests: random weights of every type and an ISA sweep.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "kernels/isa.h"
#include "kernels/ops.h"

namespace verdict::kernels::testing {

// Every ISA this machine supports (always includes Scalar).
inline std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

// Restores the active ISA at scope exit.
class IsaScope {
 public:
  explicit IsaScope(Isa isa) : saved_(active_isa()) { set_active_isa(isa); }
  ~IsaScope() { set_active_isa(saved_); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  Isa saved_;
};

inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

// Storage behind a WeightMatrix of any type.
struct RandomWeight {
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
  std::vector<uint32_t> packed;
  std::vector<float> scales, biases;
  WeightMatrix view;
};

inline RandomWeight make_weight(std::mt19937& rng, WeightType type, int64_t rows, int64_t cols, int bits = 0,
                                int group_size = 0) {
  RandomWeight w;
  w.view.type = type;
  w.view.rows = rows;
  w.view.cols = cols;
  switch (type) {
    case WeightType::F32:
      w.f32 = random_floats(rng, rows * cols);
      w.view.f32 = w.f32.data();
      break;
    case WeightType::BF16: {
      for (float f : random_floats(rng, rows * cols)) w.bf16.push_back(f32_to_bf16(f));
      w.view.bf16 = w.bf16.data();
      break;
    }
    case WeightType::MlxAffine: {
      w.view.bits = bits;
      w.view.group_size = group_size;
      std::uniform_int_distribution<uint32_t> words;
      w.packed.resize(static_cast<std::size_t>(rows * cols * bits / 32));
      for (auto& x : w.packed) x = words(rng);
      // Scales of both signs, as MLX writes them.
      w.scales = random_floats(rng, rows * (cols / group_size), -0.1f, 0.1f);
      w.biases = random_floats(rng, rows * (cols / group_size), -0.5f, 0.5f);
      w.view.packed = w.packed.data();
      w.view.scales = w.scales.data();
      w.view.biases = w.biases.data();
      break;
    }
  }
  return w;
}

}  // namespace verdict::kernels::testing
