// Every ISA's matmul and dequantization against the scalar twins in kernels/ref.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/ref/ref.h"
#include "kernels/thread_pool.h"
#include "test_util.h"

namespace verdict::kernels {
namespace {

using testing::expect_matmul_close;
using testing::IsaScope;
using testing::make_weight;
using testing::random_floats;
using testing::supported_isas;

struct Shape {
  int64_t rows, cols, n;
};

const Shape kShapes[] = {{1, 1, 1},   {3, 5, 2},    {5, 17, 3},   {4, 16, 4},   {8, 31, 5},
                         {33, 100, 7}, {7, 129, 9},  {64, 64, 1},  {130, 257, 66}, {260, 96, 130}};

TEST(Matmul, F32MatchesReferenceOnEveryIsa) {
  std::mt19937 rng(1);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (const Shape& s : kShapes) {
      auto w = make_weight(rng, WeightType::F32, s.rows, s.cols);
      auto x = random_floats(rng, s.n * s.cols);
      expect_matmul_close(w.view, x, s.n, std::string(isa_name(isa)) + " f32 " + std::to_string(s.rows) + "x" +
                                              std::to_string(s.cols) + " n=" + std::to_string(s.n));
    }
  }
}

TEST(Matmul, Bf16MatchesReferenceOnEveryIsa) {
  std::mt19937 rng(2);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (const Shape& s : kShapes) {
      auto w = make_weight(rng, WeightType::BF16, s.rows, s.cols);
      auto x = random_floats(rng, s.n * s.cols);
      expect_matmul_close(w.view, x, s.n, std::string(isa_name(isa)) + " bf16 " + std::to_string(s.rows) + "x" +
                                              std::to_string(s.cols) + " n=" + std::to_string(s.n));
    }
  }
}

// The AVX2 tile keeps two 8-lane accumulators per (row, token) and sums them as _mm512_reduce_add_ps sums
// the AVX-512 tile's 16 lanes, so the unpacked products agree bit for bit (and so does a whole exact-mode
// forward pass): every shape above, including column tails of 1–15 past a multiple of 16.
TEST(Matmul, Avx2AndAvx512AgreeBitForBit) {
  if (!isa_supported(Isa::Avx2) || !isa_supported(Isa::Avx512)) GTEST_SKIP() << "needs AVX2 and AVX-512";
  std::mt19937 rng(3);
  for (WeightType type : {WeightType::F32, WeightType::BF16})
    for (const Shape& s : kShapes) {
      auto w = make_weight(rng, type, s.rows, s.cols);
      auto x = random_floats(rng, s.n * s.cols);
      std::vector<float> y[2];
      for (int i = 0; i < 2; ++i) {
        IsaScope scope(i == 0 ? Isa::Avx2 : Isa::Avx512);
        y[i].assign(static_cast<std::size_t>(s.n * s.rows), 0.0f);
        matmul(w.view, x.data(), s.n, y[i].data());
      }
      ASSERT_EQ(0, std::memcmp(y[0].data(), y[1].data(), y[0].size() * sizeof(float)))
          << "type " << int(type) << " " << s.rows << "x" << s.cols << " n=" << s.n;
    }
}

struct QuantCase {
  int bits, group_size;
  int64_t rows, cols, n;
};

const QuantCase kQuantCases[] = {{4, 64, 1, 64, 1},   {4, 64, 7, 128, 3},  {4, 32, 9, 96, 5},
                                 {4, 128, 66, 256, 9}, {8, 64, 5, 64, 2},   {8, 32, 13, 160, 7},
                                 {8, 128, 130, 384, 65}, {3, 32, 5, 96, 3},  {6, 64, 3, 128, 4},
                                 {2, 64, 4, 64, 2},    {5, 32, 3, 32, 3}};

TEST(Matmul, MlxAffineMatchesReferenceOnEveryIsa) {
  std::mt19937 rng(3);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (const QuantCase& q : kQuantCases) {
      auto w = make_weight(rng, WeightType::MlxAffine, q.rows, q.cols, q.bits, q.group_size);
      ASSERT_NO_THROW(check_weight(w.view, "test"));
      auto x = random_floats(rng, q.n * q.cols);
      expect_matmul_close(w.view, x, q.n, std::string(isa_name(isa)) + " q" + std::to_string(q.bits) + "/g" +
                                              std::to_string(q.group_size) + " " + std::to_string(q.rows) +
                                              "x" + std::to_string(q.cols));
    }
  }
}

TEST(Dequantize, RowsAreBitExactOnEveryIsa) {
  std::mt19937 rng(4);
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (const QuantCase& q : kQuantCases) {
      auto w = make_weight(rng, WeightType::MlxAffine, q.rows, q.cols, q.bits, q.group_size);
      std::vector<float> got(static_cast<std::size_t>(q.cols)), want(got.size());
      for (int64_t r = 0; r < q.rows; ++r) {
        dequantize_row(w.view, r, got.data());
        ref::dequantize_row(w.view, r, want.data());
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
            << isa_name(isa) << " bits " << q.bits << " row " << r;
      }
    }
    for (WeightType type : {WeightType::F32, WeightType::BF16}) {
      auto w = make_weight(rng, type, 3, 37);
      std::vector<float> got(37), want(37);
      for (int64_t r = 0; r < 3; ++r) {
        dequantize_row(w.view, r, got.data());
        ref::dequantize_row(w.view, r, want.data());
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << isa_name(isa);
      }
    }
  }
}

TEST(Dequantize, KnownFourBitValues) {
  // Word 0x76543210: element i of the first 8 is i (LSB first); scale -0.5, bias 3 → 3 - i/2.
  std::vector<uint32_t> packed(8, 0x76543210u);
  std::vector<float> scales{-0.5f}, biases{3.0f};
  WeightMatrix w;
  w.type = WeightType::MlxAffine;
  w.rows = 1;
  w.cols = 64;
  w.bits = 4;
  w.group_size = 64;
  w.packed = packed.data();
  w.scales = scales.data();
  w.biases = biases.data();
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    std::vector<float> row(64);
    dequantize_row(w, 0, row.data());
    for (int c = 0; c < 64; ++c) ASSERT_EQ(row[c], 3.0f - 0.5f * float(c % 8)) << isa_name(isa) << " col " << c;
  }
}

// Results of a row never depend on which other rows share the call, nor on the thread count.
TEST(Matmul, RowsAreIndependentOfBatchAndThreads) {
  std::mt19937 rng(5);
  const int saved_threads = num_threads();
  for (Isa isa : supported_isas()) {
    IsaScope scope(isa);
    for (WeightType type : {WeightType::F32, WeightType::BF16, WeightType::MlxAffine}) {
      auto w = make_weight(rng, type, 203, 192, 4, 64);
      const int64_t n = 75;
      auto x = random_floats(rng, n * 192);
      std::vector<float> all(static_cast<std::size_t>(n * 203));
      set_num_threads(3);
      matmul(w.view, x.data(), n, all.data());
      set_num_threads(1);
      for (int64_t t = 0; t < n; t += 7) {
        std::vector<float> one(203);
        matmul(w.view, x.data() + t * 192, 1, one.data());
        ASSERT_EQ(0, std::memcmp(one.data(), all.data() + t * 203, sizeof(float) * 203))
            << isa_name(isa) << " token " << t;
      }
    }
  }
  set_num_threads(saved_threads);
}

TEST(CheckWeight, RefusesInconsistentViews) {
  WeightMatrix w;
  w.type = WeightType::MlxAffine;
  w.rows = 2;
  w.cols = 100;
  w.bits = 4;
  w.group_size = 64;
  EXPECT_THROW(check_weight(w, "m"), Error);
  w.cols = 64;
  w.bits = 7;
  EXPECT_THROW(check_weight(w, "m"), Error);
  w.bits = 4;
  EXPECT_THROW(check_weight(w, "m"), Error);  // null pointers
  WeightMatrix f;
  EXPECT_THROW(check_weight(f, "f"), Error);
}

}  // namespace
}  // namespace verdict::kernels
