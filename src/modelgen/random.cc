#include "modelgen/random.h"

#include <cmath>

namespace verdict::modelgen {
namespace {
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kSeedSalt = 0x5EED5EED0DDBA11ull;
}  // namespace

uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

TensorRng::TensorRng(uint64_t seed, std::string_view tensor_name)
    : key_(mix64(mix64(seed ^ kSeedSalt) ^ fnv1a64(tensor_name))) {}

uint64_t TensorRng::bits(uint64_t index) const { return mix64(key_ + (index + 1) * kGolden); }

float TensorRng::uniform(uint64_t index) const {
  return static_cast<float>(bits(index) >> 40) * (1.0f / 16777216.0f);
}

float TensorRng::normal(uint64_t index) const {
  const uint64_t b = bits(index);
  // Four uniforms in (0, 1) from the four 16-bit lanes; their sum has mean 2 and variance 1/3.
  double sum = 0.0;
  for (int lane = 0; lane < 4; ++lane) sum += (static_cast<double>((b >> (16 * lane)) & 0xFFFFu) + 0.5) / 65536.0;
  return static_cast<float>((sum - 2.0) * 1.7320508075688772);
}

float Init::value(const TensorRng& rng, uint64_t index) const {
  switch (kind) {
    case InitKind::Normal:
      return a + b * rng.normal(index);
    case InitKind::Uniform:
      return a + (b - a) * rng.uniform(index);
    case InitKind::LogUniform:
      return std::log(a + (b - a) * rng.uniform(index));
    case InitKind::Constant:
      return a;
  }
  return a;
}

}  // namespace verdict::modelgen
