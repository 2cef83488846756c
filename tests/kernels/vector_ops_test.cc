// dot / axpy / scale on every ISA against kernels/ref, odd lengths included.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/ref/ref.h"
#include "test_util.h"

namespace verdict::kernels {
namespace {

using testing::IsaScope;
using testing::random_floats;
using testing::supported_isas;

const int64_t kLengths[] = {0, 1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 128, 255, 1000};

TEST(VectorOps, DotMatchesReference) {
  std::mt19937 rng(11);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (int64_t n : kLengths) {
      auto a = random_floats(rng, n), b = random_floats(rng, n);
      double magnitude = 0.0;
      for (int64_t i = 0; i < n; ++i) magnitude += std::fabs(double(a[i]) * b[i]);
      const double tol = 2.0 * double(n + 1) * std::numeric_limits<float>::epsilon() * magnitude;
      EXPECT_NEAR(dot(a.data(), b.data(), n), ref::dot(a.data(), b.data(), n), tol) << isa_name(isa) << " n=" << n;
    }
  }
}

TEST(VectorOps, AxpyAndScaleMatchReference) {
  std::mt19937 rng(12);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (int64_t n : kLengths) {
      auto x = random_floats(rng, n), y = random_floats(rng, n);
      auto y_ref = y;
      // One guard element past the end must stay untouched.
      y.push_back(42.0f);
      axpy(n, 0.75f, x.data(), y.data());
      ref::axpy(n, 0.75f, x.data(), y_ref.data());
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], y_ref[i], 4e-7f) << isa_name(isa) << " n=" << n;
      EXPECT_EQ(y[n], 42.0f);
      scale(n, -1.5f, y.data());
      ref::scale(n, -1.5f, y_ref.data());
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], y_ref[i], 1e-6f) << isa_name(isa) << " n=" << n;
      EXPECT_EQ(y[n], 42.0f);
    }
  }
}

TEST(Isa, SelectionIsConsistent) {
  EXPECT_TRUE(isa_supported(Isa::Scalar));
  EXPECT_TRUE(isa_supported(best_isa()));
  EXPECT_EQ(isa_name(Isa::Avx512), "avx512");
}

}  // namespace
}  // namespace verdict::kernels
