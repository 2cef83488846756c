// Counter-based random numbers for generated checkpoints: every value is a pure function of
// (seed, tensor name, element index), so any tensor — or any slice of one — can be generated on its own,
// in any order and on any number of threads, with bit-identical results.
//
// The stream of a tensor is splitmix64 started at a key mixed from the seed and the FNV-1a hash of the
// name: element i takes mix64(key + (i + 1) · φ). uniform() uses the top 24 bits; normal() is the
// Irwin–Hall sum of four 16-bit uniforms, rescaled to mean 0 and variance 1 (bounded by ±2√3, which is
// what random weights want: no outliers).
#pragma once
#include <cstdint>
#include <string_view>

namespace verdict::modelgen {

// The splitmix64 finalizer.
uint64_t mix64(uint64_t x);
// FNV-1a, 64 bits.
uint64_t fnv1a64(std::string_view s);

class TensorRng {
 public:
  TensorRng(uint64_t seed, std::string_view tensor_name);

  uint64_t bits(uint64_t index) const;
  // Uniform in [0, 1), 24-bit resolution.
  float uniform(uint64_t index) const;
  // Approximately standard normal (Irwin–Hall, n = 4), in [−2√3, 2√3].
  float normal(uint64_t index) const;

 private:
  uint64_t key_;
};

enum class InitKind { Normal, Uniform, LogUniform, Constant };

// How a tensor's values are drawn.
struct Init {
  InitKind kind = InitKind::Constant;
  float a = 0.0f;  // Normal: mean; Uniform / LogUniform: low; Constant: the value
  float b = 0.0f;  // Normal: standard deviation; Uniform / LogUniform: high

  static Init normal(float mean, float std) { return {InitKind::Normal, mean, std}; }
  static Init uniform(float low, float high) { return {InitKind::Uniform, low, high}; }
  // log(u) with u uniform in [low, high) (the Gated DeltaNet A_log initialisation).
  static Init log_uniform(float low, float high) { return {InitKind::LogUniform, low, high}; }
  static Init constant(float value) { return {InitKind::Constant, value, 0.0f}; }

  float value(const TensorRng& rng, uint64_t index) const;
};

}  // namespace verdict::modelgen
