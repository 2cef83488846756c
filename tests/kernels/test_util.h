// Helpers shared by the kernel tests: random weights of every type and an ISA sweep.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "kernels/isa.h"
#include "kernels/ops.h"
#include "kernels/ref/ref.h"

namespace verdict::kernels::testing {

// Every ISA this machine supports (always includes Scalar).
// ggml's kvalues_iq4nl, the value of each IQ4_NL / IQ4_XS nibble, written out here from ggml-common.h (not
// taken from the code under test).
inline constexpr int kGgmlIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

inline std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

// Sets one of the kernels' process-wide switches for a scope and restores the previous value at its exit.
template <class T, T (*Get)(), void (*Set)(T)>
class SwitchScope {
 public:
  explicit SwitchScope(T value) : saved_(Get()) { Set(value); }
  ~SwitchScope() { Set(saved_); }
  SwitchScope(const SwitchScope&) = delete;
  SwitchScope& operator=(const SwitchScope&) = delete;

 private:
  T saved_;
};

// What set_amx_enabled(saved) restores: on where the tiles are unsupported (switching them on does nothing).
inline bool amx_setting() { return amx_enabled() || !amx_supported(); }

// What set_avx_vnni_enabled(saved) restores, likewise.
inline bool avx_vnni_setting() { return avx_vnni_enabled() || !avx_vnni_supported(); }

using IsaScope = SwitchScope<Isa, active_isa, set_active_isa>;
using AmxScope = SwitchScope<bool, amx_setting, set_amx_enabled>;
using AvxVnniScope = SwitchScope<bool, avx_vnni_setting, set_avx_vnni_enabled>;
using Bf16ProductsScope = SwitchScope<Bf16Products, bf16_products, set_bf16_products>;
using WeightStreamsScope = SwitchScope<WeightStreams, weight_streams, set_weight_streams>;

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
  std::vector<uint8_t> blocks;
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
    default: {
      // Random bytes, then finite half-precision scales (of both signs) where the format keeps them.
      std::uniform_int_distribution<int> byte(0, 255);
      w.blocks.resize(static_cast<std::size_t>(rows * w.view.row_bytes()));
      for (auto& b : w.blocks) b = static_cast<uint8_t>(byte(rng));
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      auto put_half = [&](std::size_t at, float v) {
        const uint16_t h = f32_to_f16(v);
        w.blocks[at] = static_cast<uint8_t>(h & 0xFF);
        w.blocks[at + 1] = static_cast<uint8_t>(h >> 8);
      };
      const int64_t bb = block_bytes(type);
      for (std::size_t at = 0; at < w.blocks.size(); at += static_cast<std::size_t>(bb)) {
        switch (type) {
          case WeightType::F16:
            put_half(at, dist(rng));
            break;
          case WeightType::Q8_0:
            put_half(at, dist(rng) * 0.01f);
            break;
          case WeightType::Q4_0:
          case WeightType::Q5_0:
            put_half(at, dist(rng) * 0.1f);
            break;
          case WeightType::Q4_1:
          case WeightType::Q5_1:  // d and m
            put_half(at, dist(rng) * 0.1f);
            put_half(at + 2, dist(rng) * 0.5f);
            break;
          case WeightType::IQ4_NL:
          case WeightType::IQ4_XS:  // every 6-bit sub-block scale: its random bytes
            put_half(at, dist(rng) * 0.001f);
            break;
          case WeightType::Q4_K:
          case WeightType::Q5_K:
            put_half(at, dist(rng) * 0.01f);
            put_half(at + 2, dist(rng) * 0.01f);
            break;
          case WeightType::Q6_K:
            put_half(at + 208, dist(rng) * 0.001f);
            break;
          case WeightType::Q3_K:
            put_half(at + 108, dist(rng) * 0.001f);
            break;
          case WeightType::Q2_K:  // d and dmin; the scale bytes keep their random nibbles
            put_half(at + 80, dist(rng) * 0.01f);
            put_half(at + 82, dist(rng) * 0.01f);
            break;
          default:
            break;
        }
      }
      w.view.blocks = w.blocks.data();
      break;
    }
  }
  return w;
}

// Tolerance of an fp32 dot product of `cols` terms: a multiple of eps · Σ|w·x| (an error bound for
// any summation order), so a wrong or missing term is always caught.
inline void expect_matmul_close(const WeightMatrix& w, const std::vector<float>& x, int64_t n, const std::string& what) {
  std::vector<float> y(static_cast<std::size_t>(n * w.rows), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> want(y.size());
  matmul(w, x.data(), n, y.data());
  ref::matmul(w, x.data(), n, want.data());
  std::vector<float> row(static_cast<std::size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    ref::dequantize_row(w, r, row.data());
    for (int64_t t = 0; t < n; ++t) {
      double magnitude = 0.0;
      for (int64_t c = 0; c < w.cols; ++c) magnitude += std::fabs(double(row[c]) * x[t * w.cols + c]);
      const double tol = 2.0 * double(w.cols + 1) * std::numeric_limits<float>::epsilon() * magnitude + 1e-30;
      const double got = y[t * w.rows + r];
      ASSERT_NEAR(got, want[t * w.rows + r], tol) << what << " row " << r << " token " << t;
    }
  }
}

}  // namespace verdict::kernels::testing
