// The packed GEMMs (pack() + matmul): every ISA against the scalar twins of their numerical contracts
// (ref::matmul_int8, ref::matmul_bf16), the contracts against the fp32 product, and independence of
// each result from n, the batch and the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "kernels/ref/ref.h"
#include "kernels/thread_pool.h"
#include "test_util.h"

namespace verdict::kernels {
namespace {

using testing::IsaScope;
using testing::make_weight;
using testing::random_floats;
using testing::supported_isas;

constexpr double kEps = std::numeric_limits<float>::epsilon();

// matmul on the active ISA into a NaN-filled output.
std::vector<float> run(const WeightMatrix& w, const std::vector<float>& x, int64_t n) {
  std::vector<float> y(static_cast<std::size_t>(n * w.rows), std::numeric_limits<float>::quiet_NaN());
  matmul(w, x.data(), n, y.data());
  return y;
}

struct Int8Case {
  WeightType type;
  int bits, group_size;
  int64_t rows, cols, n;
};

std::string describe(const Int8Case& k) {
  return "type " + std::to_string(int(k.type)) + " bits " + std::to_string(k.bits) + "/g" +
         std::to_string(k.group_size) + " " + std::to_string(k.rows) + "x" + std::to_string(k.cols) + " n=" +
         std::to_string(k.n);
}

// Σ over the terms of the Int8 contract's sum of |term| (the fp32 rounding bound scales with it) and the
// quantization bound Σ_b d_b / 2 · Σ_c |scaled_c| of one (row, token).
struct Bounds {
  double magnitude = 0.0, quantization = 0.0;
};

Bounds int8_bounds(const WeightMatrix& w, const float* x, int64_t r) {
  Bounds out;
  int8_t q[32];
  for (int64_t b = 0; b < w.cols / 32; ++b) {
    float d = 0.0f;
    ref::quantize_block(x + b * 32, q, d);
    for (int64_t i = 0; i < 32; ++i) {
      double scaled = 0.0, min = 0.0;
      ref::int8_parts(w, r, b * 32 + i, scaled, min);
      out.magnitude += std::fabs(scaled * d * q[i]) + std::fabs(min * x[b * 32 + i]);
      out.quantization += std::fabs(scaled) * d / 2.0;
    }
  }
  return out;
}

const Int8Case kInt8Cases[] = {
    {WeightType::Q8_0, 0, 0, 1, 32, 1},      {WeightType::Q8_0, 0, 0, 17, 64, 7},
    {WeightType::Q8_0, 0, 0, 40, 96, 13},    {WeightType::Q8_0, 0, 0, 70, 160, 66},
    {WeightType::Q4_0, 0, 0, 5, 32, 3},      {WeightType::Q4_0, 0, 0, 33, 128, 8},
    {WeightType::Q4_0, 0, 0, 48, 64, 1},     {WeightType::Q4_K, 0, 0, 3, 256, 2},
    {WeightType::Q4_K, 0, 0, 31, 512, 11},   {WeightType::MlxAffine, 4, 32, 7, 64, 5},
    {WeightType::MlxAffine, 4, 64, 18, 128, 9}, {WeightType::MlxAffine, 4, 128, 35, 256, 6},
    {WeightType::MlxAffine, 8, 32, 9, 96, 4},  {WeightType::MlxAffine, 8, 64, 16, 64, 1},
    {WeightType::MlxAffine, 8, 128, 50, 384, 14}};

TEST(PackedInt8, MatchesTwinOnEveryIsaAndContractBoundsTheError) {
  std::mt19937 rng(21);
  for (const Int8Case& k : kInt8Cases) {
    auto w = make_weight(rng, k.type, k.rows, k.cols, k.bits, k.group_size);
    ASSERT_EQ(preferred_pack(w.view), PackKind::Int8) << describe(k);
    PackedWeight p = pack(w.view);
    ASSERT_NE(p.view(), nullptr);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    auto x = random_floats(rng, k.n * k.cols, -2.0f, 2.0f);
    if (k.n > 1) x[5] = 40.0f;  // an outlier in one block
    std::vector<float> twin(static_cast<std::size_t>(k.n * k.rows)), exact(twin.size());
    ref::matmul_int8(w.view, x.data(), k.n, twin.data());
    ref::matmul(w.view, x.data(), k.n, exact.data());
    for (int64_t t = 0; t < k.n; ++t)
      for (int64_t r = 0; r < k.rows; ++r) {
        const Bounds b = int8_bounds(w.view, x.data() + t * k.cols, r);
        const std::size_t at = static_cast<std::size_t>(t * k.rows + r);
        // The documented contract: |int8 − fp32| ≤ Σ_b d_b / 2 · Σ |scaled| (+ rounding).
        ASSERT_LE(std::fabs(double(twin[at]) - exact[at]), b.quantization * 1.0001 + 1e-5 * b.magnitude + 1e-30)
            << describe(k);
      }
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      const std::vector<float> y = run(packed, x, k.n);
      for (int64_t t = 0; t < k.n; ++t)
        for (int64_t r = 0; r < k.rows; ++r) {
          const Bounds b = int8_bounds(w.view, x.data() + t * k.cols, r);
          const double tol = 2.0 * double(k.cols / 32 + 8) * kEps * b.magnitude + 1e-30;
          const std::size_t at = static_cast<std::size_t>(t * k.rows + r);
          ASSERT_NEAR(y[at], twin[at], tol) << isa_name(isa) << " " << describe(k) << " row " << r << " t " << t;
        }
    }
  }
}

TEST(PackedBf16, MatchesTwinOnEveryIsa) {
  struct Case {
    int64_t rows, cols, n;
  };
  const Case cases[] = {{1, 2, 1}, {5, 37, 3}, {16, 64, 6}, {33, 130, 7}, {70, 96, 25}, {17, 1024, 13}};
  std::mt19937 rng(22);
  for (const Case& k : cases) {
    auto w = make_weight(rng, WeightType::BF16, k.rows, k.cols);
    PackedWeight p = pack(w.view, PackKind::Bf16);
    ASSERT_NE(p.view(), nullptr);
    WeightMatrix packed = w.view;
    packed.pack = p.view();
    auto x = random_floats(rng, k.n * k.cols);
    std::vector<float> twin(static_cast<std::size_t>(k.n * k.rows));
    ref::matmul_bf16(w.view, x.data(), k.n, twin.data());
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      const std::vector<float> y = run(packed, x, k.n);
      for (int64_t t = 0; t < k.n; ++t)
        for (int64_t r = 0; r < k.rows; ++r) {
          double magnitude = 0.0;
          for (int64_t c = 0; c < k.cols; ++c)
            magnitude += std::fabs(ref::weight_at(w.view, r, c) * bf16_to_f32(f32_to_bf16(x[t * k.cols + c])));
          const double tol = 2.0 * double(k.cols + 1) * kEps * magnitude + 1e-30;
          const std::size_t at = static_cast<std::size_t>(t * k.rows + r);
          ASSERT_NEAR(y[at], twin[at], tol) << isa_name(isa) << " " << k.rows << "x" << k.cols << " row " << r;
        }
    }
  }
}

// Every packed type (MLX in both widths), for the tests of batch and thread independence.
struct PackCase {
  WeightType type;
  int bits, group_size;
  PackKind kind;
};
const PackCase kPackCases[] = {{WeightType::Q8_0, 0, 0, PackKind::Int8},
                               {WeightType::Q4_0, 0, 0, PackKind::Int8},
                               {WeightType::Q4_K, 0, 0, PackKind::Int8},
                               {WeightType::MlxAffine, 4, 64, PackKind::Int8},
                               {WeightType::MlxAffine, 8, 32, PackKind::Int8},
                               {WeightType::BF16, 0, 0, PackKind::Bf16}};

// A random matrix of a PackCase and its packed form (packed.pack set).
struct PackedSetup {
  testing::RandomWeight w;
  PackedWeight p;
  WeightMatrix packed;
};

PackedSetup packed_setup(std::mt19937& rng, const PackCase& k, int64_t rows, int64_t cols) {
  PackedSetup m{make_weight(rng, k.type, rows, cols, k.bits, k.group_size), {}, {}};
  m.p = pack(m.w.view, k.kind);
  m.packed = m.w.view;
  m.packed.pack = m.p.view();
  return m;
}

// Results of a row never depend on which other tokens share the call, nor on the thread count.
TEST(Packed, RowsAreIndependentOfBatchAndThreads) {
  std::mt19937 rng(23);
  const int saved_threads = num_threads();
  const int64_t rows = 203, cols = 512, n = 131;
  for (const PackCase& k : kPackCases) {
    const PackedSetup m = packed_setup(rng, k, rows, cols);
    const WeightMatrix& packed = m.packed;
    auto x = random_floats(rng, n * cols);
    for (Isa isa : supported_isas()) {
      IsaScope scope(isa);
      std::vector<float> all(static_cast<std::size_t>(n * rows));
      set_num_threads(3);
      matmul(packed, x.data(), n, all.data());
      set_num_threads(1);
      for (int64_t t0 : {int64_t{0}, int64_t{7}, int64_t{64}, int64_t{125}}) {
        const int64_t len = t0 == 7 ? 11 : 1;
        std::vector<float> part(static_cast<std::size_t>(len * rows));
        matmul(packed, x.data() + t0 * cols, len, part.data());
        ASSERT_EQ(0, std::memcmp(part.data(), all.data() + t0 * rows, part.size() * sizeof(float)))
            << isa_name(isa) << " type " << int(k.type) << " token " << t0;
      }
    }
  }
  set_num_threads(saved_threads);
}

TEST(Packed, MovingKeepsTheViewAndUnsupportedTypesStayUnpacked) {
  std::mt19937 rng(24);
  auto w = make_weight(rng, WeightType::Q8_0, 20, 64);
  PackedWeight a = pack(w.view);
  const PackedView* v = a.view();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->panels, 2);
  EXPECT_EQ(v->blocks, 2);
  PackedWeight b = std::move(a);
  EXPECT_EQ(b.view(), v);
  EXPECT_EQ(a.view(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  auto f32 = make_weight(rng, WeightType::F32, 4, 64);
  EXPECT_EQ(preferred_pack(f32.view), PackKind::None);
  EXPECT_EQ(pack(f32.view).view(), nullptr);
  auto q6 = make_weight(rng, WeightType::Q6_K, 4, 256);
  EXPECT_EQ(pack(q6.view).view(), nullptr);
  auto mlx3 = make_weight(rng, WeightType::MlxAffine, 4, 96, 3, 32);
  EXPECT_EQ(pack(mlx3.view).view(), nullptr);
}

// The decode sizes (n = 1 .. 5 tokens, the GEMV tiles) give bit for bit the rows of a 512-token product
// (the prefill tiles), at any thread count and for row counts that are not a multiple of a tile.
TEST(Packed, SmallBatchesMatchTheRowsOfALargeOne) {
  std::mt19937 rng(25);
  const int saved_threads = num_threads();
  // 1536 columns: above kMinParallelWork from n = 1 on with 203 rows, so the small products run threaded.
  const int64_t cols = 1536, n = 512;
  for (const PackCase& k : kPackCases)
    for (int64_t rows : {int64_t{203}, int64_t{37}, int64_t{1}}) {
      const PackedSetup m = packed_setup(rng, k, rows, cols);
      const WeightMatrix& packed = m.packed;
      auto x = random_floats(rng, n * cols);
      for (Isa isa : supported_isas()) {
        IsaScope scope(isa);
        set_num_threads(2);
        const std::vector<float> all = run(packed, x, n);
        for (int threads : {1, 2, 3}) {
          set_num_threads(threads);
          for (int64_t len = 1; len <= 5; ++len)
            for (int64_t t0 : {int64_t{0}, int64_t{250}, n - len}) {
              std::vector<float> part(static_cast<std::size_t>(len * rows));
              matmul(packed, x.data() + t0 * cols, len, part.data());
              ASSERT_EQ(0, std::memcmp(part.data(), all.data() + t0 * rows, part.size() * sizeof(float)))
                  << isa_name(isa) << " type " << int(k.type) << " bits " << k.bits << " rows " << rows << " n "
                  << len << " token " << t0 << " threads " << threads;
            }
        }
      }
    }
  set_num_threads(saved_threads);
}

}  // namespace
}  // namespace verdict::kernels
