// dot / axpy / scale / scale_to / transpose_scaled / silu_mul / conv_silu / sum_squares on every ISA against
// kernels/ref (or the plain loop), odd lengths included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

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

// silu(x) · m within 4 float ulps (or 1e-30 absolute, where e^−x overflows) of the double reference, with
// and without m, in place, across the range where e^−x over- and underflows; the tail stays untouched.
TEST(VectorOps, SiluMulMatchesReference) {
  std::mt19937 rng(13);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (int64_t n : kLengths) {
      auto x = random_floats(rng, n, -12.0f, 12.0f), m = random_floats(rng, n);
      for (int64_t i = 0; i < n; i += 5) x[i] = (i % 2 ? 1.0f : -1.0f) * static_cast<float>(i % 200);  // ±0 .. ±199
      std::vector<float> want(x.size()), want_plain(x.size());
      ref::silu_mul(n, x.data(), m.data(), want.data());
      ref::silu_mul(n, x.data(), nullptr, want_plain.data());
      std::vector<float> got(x.size() + 1, 42.0f), plain(x.size() + 1, 42.0f);
      silu_mul(n, x.data(), m.data(), got.data());
      silu_mul(n, x.data(), nullptr, plain.data());
      auto in_place = x;
      silu_mul(n, in_place.data(), m.data(), in_place.data());
      for (int64_t i = 0; i < n; ++i) {
        const auto at = static_cast<std::size_t>(i);
        const float tol = 4.0f * std::numeric_limits<float>::epsilon() * std::fabs(want[at]) + 1e-30f;
        const float tol_plain = 4.0f * std::numeric_limits<float>::epsilon() * std::fabs(want_plain[at]) + 1e-30f;
        ASSERT_NEAR(got[at], want[at], tol) << isa_name(isa) << " x=" << x[at];
        ASSERT_NEAR(plain[at], want_plain[at], tol_plain) << isa_name(isa) << " x=" << x[at];
        ASSERT_EQ(in_place[at], got[at]) << isa_name(isa);
      }
      EXPECT_EQ(got[static_cast<std::size_t>(n)], 42.0f);
      EXPECT_EQ(plain[static_cast<std::size_t>(n)], 42.0f);
    }
  }
}

TEST(VectorOps, SumSquaresMatchesReference) {
  std::mt19937 rng(14);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (int64_t n : kLengths) {
      const auto x = random_floats(rng, n, -30.0f, 30.0f);
      const double want = ref::sum_squares(x.data(), n);
      EXPECT_NEAR(sum_squares(x.data(), n), want, 1e-14 * want) << isa_name(isa) << " n=" << n;
    }
  }
}

// softmax(scale · x) within 8 float ulps of the double reference (2-ulp exp, one rounding of 1/sum and
// of each product), with a far-below-max tail that underflows to 0; sums to 1.
TEST(VectorOps, SoftmaxMatchesReference) {
  std::mt19937 rng(15);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (int64_t n : kLengths) {
      if (n == 0) continue;
      auto x = random_floats(rng, n, -20.0f, 20.0f);
      if (n > 3) x[2] = -4000.0f;  // e^(scale · −4000 − max) underflows
      auto want = x;
      ref::softmax(n, 0.0625f, want.data());
      x.push_back(42.0f);
      softmax(n, 0.0625f, x.data());
      double total = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const auto at = static_cast<std::size_t>(i);
        ASSERT_NEAR(x[at], want[at], 8.0f * std::numeric_limits<float>::epsilon() * want[at] + 1e-38f)
            << isa_name(isa) << " n=" << n << " i=" << i;
        total += x[at];
      }
      EXPECT_NEAR(total, 1.0, 1e-5) << isa_name(isa);
      EXPECT_EQ(x[static_cast<std::size_t>(n)], 42.0f);
    }
  }
}

// The convolution's sums are rounded products summed in order from 0 on every ISA, so each ISA's conv_silu
// is bit for bit its own silu_mul of the twin's sums (one pass over the inputs instead of taps + 1), and
// within silu_mul's tolerance of the reference; the tail past n stays untouched. Taps 1, 3 and 4 (Qwen3.5's
// conv kernel).
TEST(VectorOps, ConvSiluIsSiluOfTheSumsBitForBit) {
  std::mt19937 rng(16);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (int64_t taps : {1, 3, 4})
      for (int64_t n : kLengths) {
        const auto w = random_floats(rng, taps * n, -2.0f, 2.0f);
        std::vector<std::vector<float>> rows;
        std::vector<const float*> x;
        for (int64_t j = 0; j < taps; ++j) rows.push_back(random_floats(rng, n, -4.0f, 4.0f));
        for (const auto& r : rows) x.push_back(r.data());
        std::vector<float> sums(static_cast<std::size_t>(n), 0.0f);
        for (int64_t j = 0; j < taps; ++j)
          for (int64_t i = 0; i < n; ++i) {
            const float p = w[static_cast<std::size_t>(j * n + i)] * x[static_cast<std::size_t>(j)][i];
            sums[static_cast<std::size_t>(i)] += p;
          }
        std::vector<float> want(sums.size()), want_ref(sums.size());
        silu_mul(n, sums.data(), nullptr, want.data());
        ref::conv_silu(n, taps, w.data(), x.data(), want_ref.data());
        std::vector<float> got(static_cast<std::size_t>(n) + 1, 42.0f);
        conv_silu(n, taps, w.data(), x.data(), got.data());
        for (int64_t i = 0; i < n; ++i) {
          const auto at = static_cast<std::size_t>(i);
          ASSERT_EQ(got[at], want[at]) << isa_name(isa) << " taps=" << taps << " n=" << n << " i=" << i;
          const float tol = 4.0f * std::numeric_limits<float>::epsilon() * std::fabs(want_ref[at]) + 1e-30f;
          ASSERT_NEAR(got[at], want_ref[at], tol) << isa_name(isa) << " taps=" << taps << " n=" << n << " i=" << i;
        }
        EXPECT_EQ(got[static_cast<std::size_t>(n)], 42.0f);
      }
  }
}

// One token of the delta rule on every ISA: bit for bit the sequence of that ISA's own scale and axpy calls
// that ops.h defines it as (so the recurrent rule did not change), on column counts with and without a
// partial vector and one block or several; S's guard element past the end stays untouched. And within
// fp32 rounding of the same sequence on the scalar twins (double-precision sums).
TEST(VectorOps, DeltaRuleTokenIsTheScaleAndAxpySequenceBitForBit) {
  std::mt19937 rng(17);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (int64_t dk : {1, 5, 128})
      for (int64_t dv : {1, 7, 16, 33, 64, 100, 128, 130}) {
        const auto q = random_floats(rng, dk), k = random_floats(rng, dk), v = random_floats(rng, dv);
        const float decay = 0.9f, beta = 0.6f;
        auto S = random_floats(rng, dk * dv);
        auto want_S = S, twin_S = S;
        std::vector<float> m(static_cast<std::size_t>(dv), 0.0f), want_o(static_cast<std::size_t>(dv), 0.0f);
        std::vector<float> twin_m = m, twin_o = want_o;
        for (int64_t i = 0; i < dk; ++i) {
          scale(dv, decay, want_S.data() + i * dv);
          axpy(dv, k[i], want_S.data() + i * dv, m.data());
          ref::scale(dv, decay, twin_S.data() + i * dv);
          ref::axpy(dv, k[i], twin_S.data() + i * dv, twin_m.data());
        }
        for (int64_t e = 0; e < dv; ++e) {
          m[e] = beta * (v[e] - m[e]);
          twin_m[e] = beta * (v[e] - twin_m[e]);
        }
        for (int64_t i = 0; i < dk; ++i) {
          axpy(dv, k[i], m.data(), want_S.data() + i * dv);
          axpy(dv, q[i], want_S.data() + i * dv, want_o.data());
          ref::axpy(dv, k[i], twin_m.data(), twin_S.data() + i * dv);
          ref::axpy(dv, q[i], twin_S.data() + i * dv, twin_o.data());
        }
        std::vector<float> o(static_cast<std::size_t>(dv) + 1, 42.0f);
        S.push_back(42.0f);
        delta_rule_token(dk, dv, decay, beta, q.data(), k.data(), v.data(), S.data(), o.data());
        const std::string what = std::string(isa_name(isa)) + " dk=" + std::to_string(dk) + " dv=" + std::to_string(dv);
        for (int64_t i = 0; i < dk * dv; ++i) {
          ASSERT_EQ(S[i], want_S[i]) << what << " S[" << i << "]";
          ASSERT_NEAR(S[i], twin_S[i], 1e-5f) << what;
        }
        for (int64_t e = 0; e < dv; ++e) {
          ASSERT_EQ(o[e], want_o[e]) << what << " o[" << e << "]";
          ASSERT_NEAR(o[e], twin_o[e], 1e-4f) << what;
        }
        EXPECT_EQ(S[dk * dv], 42.0f) << what;
        EXPECT_EQ(o[dv], 42.0f) << what;
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

// y = a · x and the scaled transpose: one rounded product per element, so every ISA must give the plain loop's
// values exactly, and leave every element it does not own (tails, the gaps of wide strides) untouched.
TEST(VectorOps, ScaleToAndTransposeScaledAreThePlainProductsBitForBit) {
  std::mt19937 rng(17);
  constexpr float kGuard = 42.0f;
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (int64_t n : kLengths) {
      auto x = random_floats(rng, n);
      std::vector<float> y(static_cast<std::size_t>(n) + 1, kGuard);
      scale_to(n, -0.3f, x.data(), y.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], -0.3f * x[i]) << isa_name(isa) << " n=" << n;
      EXPECT_EQ(y[n], kGuard);
      scale_to(n, 1.7f, y.data(), y.data());  // in place
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 1.7f * (-0.3f * x[i])) << isa_name(isa) << " n=" << n;
    }
    const int64_t shapes[][2] = {{1, 1}, {1, 17}, {17, 1}, {16, 16}, {8, 8}, {64, 128}, {37, 23},
                                 {15, 33}, {33, 15}, {7, 9}, {48, 130}, {5, 64}};
    for (const auto& shape : shapes) {
      for (int scaled = 0; scaled < 2; ++scaled) {
        const int64_t rows = shape[0], cols = shape[1], ldx = cols + 3, ldy = rows + 5;
        auto x = random_floats(rng, rows * ldx);
        auto f = random_floats(rng, rows);
        std::vector<float> y(static_cast<std::size_t>(cols * ldy), kGuard);
        transpose_scaled(rows, cols, x.data(), ldx, scaled ? f.data() : nullptr, y.data(), ldy);
        for (int64_t c = 0; c < cols; ++c)
          for (int64_t r = 0; r < ldy; ++r) {
            const float want = r >= rows ? kGuard : scaled ? f[r] * x[r * ldx + c] : x[r * ldx + c];
            ASSERT_EQ(y[c * ldy + r], want) << isa_name(isa) << " " << rows << "x" << cols << " scaled=" << scaled
                                            << " at column " << c << ", row " << r;
          }
      }
    }
  }
}

TEST(Isa, SelectionIsConsistent) {
  EXPECT_TRUE(isa_supported(Isa::Scalar));
  EXPECT_TRUE(isa_supported(best_isa()));
  EXPECT_EQ(isa_name(Isa::Avx512), "avx512");
}

// gemm_f32 against the double reference, and bit for bit the same on every ISA (ops.h promises one
// sequence of fused operations per element), with strides wider than the rows, partial tiles (every row
// count up to two full tiles and the balanced pairs after them), k past the kernels' blocks of p, and
// alpha 1 and −1 (the tiles' own cases) besides any other (rounded into a copy of A first).
TEST(GemmF32, MatchesReferenceAndIsIdenticalOnEveryIsa) {
  std::mt19937 rng(12);
  const int64_t ms[] = {1, 5, 6, 7, 8, 10, 11, 12, 13, 32, 64};
  const int64_t ns[] = {1, 15, 16, 17, 63, 64, 65, 128, 130};
  const int64_t ks[] = {0, 1, 7, 64, 128, 300};
  const float alphas[] = {-0.75f, 1.0f, -1.0f};
  int64_t case_index = 0;
  for (int64_t m : ms)
    for (int64_t n : ns)
      for (int64_t k : ks) {
        const int64_t lda = k + 3, ldb = n + 5, ldc = n + 2;
        auto A = random_floats(rng, m * lda), B = random_floats(rng, std::max<int64_t>(1, k) * ldb);
        auto C0 = random_floats(rng, m * ldc);
        const float alpha = alphas[case_index++ % 3];
        std::vector<float> want = C0;
        ref::gemm_f32(m, n, k, alpha, A.data(), lda, B.data(), ldb, want.data(), ldc);
        std::vector<float> first;
        for (Isa isa : supported_isas()) {
          IsaScope scope(isa);
          std::vector<float> got = C0;
          gemm_f32(m, n, k, alpha, A.data(), lda, B.data(), ldb, got.data(), ldc);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
              const auto at = static_cast<std::size_t>(i * ldc + j);
              if (j >= n) {
                ASSERT_EQ(got[at], C0[at]) << "column past n written";
                continue;
              }
              double magnitude = std::fabs(double(C0[at]));
              for (int64_t p = 0; p < k; ++p) magnitude += std::fabs(double(A[i * lda + p]) * B[p * ldb + j]);
              const double tol = 2.0 * double(k + 2) * std::numeric_limits<float>::epsilon() * magnitude;
              ASSERT_NEAR(got[at], want[at], tol) << isa_name(isa) << " " << m << "x" << n << "x" << k;
            }
          if (first.empty()) first = got;
          ASSERT_EQ(0, std::memcmp(first.data(), got.data(), got.size() * sizeof(float)))
              << isa_name(isa) << " differs from scalar, " << m << "x" << n << "x" << k;
        }
      }
}

// exp_shifted within 2 ulp (relative 2.5e-7) of e^(x − shift) in double, flushing to 0 only where the
// exact value is below the smallest normal float, over [−120, 88] plus odd lengths for the tails.
TEST(VectorOps, ExpShiftedIsAccurate) {
  std::vector<float> xs;
  for (float v = -120.0f; v <= 88.0f; v += 0.0173f) xs.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-8f, -1e-8f, 88.7f, -87.3f, -87.4f, -103.9f}) xs.push_back(v);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (int64_t n : {int64_t(xs.size()), int64_t(7), int64_t(17)}) {
      std::vector<float> got(xs.begin(), xs.begin() + n);
      exp_shifted(n, 0.5f, got.data());
      for (int64_t i = 0; i < n; ++i) {
        const double want = std::exp(double(xs[i] - 0.5f));
        if (want < 1.0001 * std::numeric_limits<float>::min()) {
          ASSERT_LE(got[i], std::numeric_limits<float>::min()) << isa_name(isa) << " x=" << xs[i];
          continue;
        }
        ASSERT_NEAR(got[i], want, 2.5e-7 * want) << isa_name(isa) << " x=" << xs[i];
      }
    }
  }
}

}  // namespace
}  // namespace verdict::kernels
