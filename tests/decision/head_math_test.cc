// The head's attention: the few-queries form (no projection of the rows) against the projected one that
// torch.nn.MultiheadAttention computes, on random weights, in both compute types; and matrices kept as BF16
// or F16 against fp32 copies of the same values.
#include "decision/head_math.h"

#include <gtest/gtest.h>

#include <random>

#include "core/dtype.h"
#include "kernels/thread_pool.h"

namespace verdict::decision::head_math {
namespace {

std::vector<float> normal(std::size_t n, std::mt19937& rng, float sd) {
  std::normal_distribution<float> dist(0.0f, sd);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

HeadMatrix f32_matrix(std::vector<float> values, std::size_t rows, std::size_t cols) {
  HeadMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.f32 = std::move(values);
  return m;
}

AttentionWeights random_attention(std::size_t w, std::mt19937& rng) {
  const float sd = 1.0f / std::sqrt(static_cast<float>(w));
  AttentionWeights a;
  a.in_proj = {f32_matrix(normal(3 * w * w, rng, sd), 3 * w, w), normal(3 * w, rng, 0.5f), 3 * w, w};
  a.out_proj = {f32_matrix(normal(w * w, rng, sd), w, w), normal(w, rng, 0.5f), w, w};
  return a;
}

// `m` stored as `type` (BF16 or F16): its values rounded to that type, as `halves`, and as fp32 in `rounded`.
HeadMatrix stored_as(kernels::WeightType type, const HeadMatrix& m, HeadMatrix& rounded) {
  HeadMatrix h;
  h.type = type;
  h.rows = m.rows;
  h.cols = m.cols;
  rounded = f32_matrix({}, m.rows, m.cols);
  h.halves = WeightArray<uint16_t>(m.f32.size());
  for (std::size_t i = 0; i < m.f32.size(); ++i) {
    const float v = m.f32[i];
    const uint16_t bits = type == kernels::WeightType::BF16 ? f32_to_bf16(v) : f32_to_f16(v);
    h.halves[i] = bits;
    rounded.f32.push_back(type == kernels::WeightType::BF16 ? bf16_to_f32(bits) : f16_to_f32(bits));
  }
  return h;
}

void store_as(kernels::WeightType type, AttentionWeights& a, AttentionWeights& rounded) {
  rounded = a;
  a.in_proj.weight = stored_as(type, a.in_proj.weight, rounded.in_proj.weight);
  a.out_proj.weight = stored_as(type, a.out_proj.weight, rounded.out_proj.weight);
}

template <class T>
Mat<T> random_rows(std::size_t rows, std::size_t cols, std::mt19937& rng) {
  Mat<T> m(rows, cols);
  const std::vector<float> v = normal(rows * cols, rng, 1.0f);
  for (std::size_t i = 0; i < v.size(); ++i) m.data[i] = static_cast<T>(v[i]);
  return m;
}

// max |a − b| / max |b|
template <class T, class U>
double relative_gap(const Mat<T>& a, const Mat<U>& b) {
  double gap = 0, scale = 0;
  for (std::size_t i = 0; i < b.data.size(); ++i) {
    gap = std::max(gap, std::abs(static_cast<double>(a.data[i]) - static_cast<double>(b.data[i])));
    scale = std::max(scale, std::abs(static_cast<double>(b.data[i])));
  }
  return gap / scale;
}

struct Shape {
  std::size_t w, heads, queries, rows;
};

TEST(HeadAttention, FewQueriesFormIsTheProjectedOne) {
  std::mt19937 rng(11);
  // Widths and head counts of the fixtures' heads and the release's (w = 1024, 16 heads), queries and rows
  // of an evidence or field layer over a record.
  for (const Shape s : {Shape{16, 2, 1, 7}, Shape{16, 2, 3, 50}, Shape{64, 4, 5, 200}, Shape{1024, 16, 2, 342}}) {
    const AttentionWeights a = random_attention(s.w, rng);
    const Mat<double> q64 = random_rows<double>(s.queries, s.w, rng), kv64 = random_rows<double>(s.rows, s.w, rng);
    Mat<float> q32(s.queries, s.w), kv32(s.rows, s.w);
    for (std::size_t i = 0; i < q64.data.size(); ++i) q32.data[i] = static_cast<float>(q64.data[i]);
    for (std::size_t i = 0; i < kv64.data.size(); ++i) kv32.data[i] = static_cast<float>(kv64.data[i]);

    const Mat<double> projected = attention_projected(q64, kv64, a, s.heads);
    EXPECT_LT(relative_gap(attention_few_queries(q64, kv64, a, s.heads), projected), 1e-12) << s.w << " " << s.rows;
    EXPECT_LT(relative_gap(attention_few_queries(q32, kv32, a, s.heads), projected), 2e-5) << s.w << " " << s.rows;
    EXPECT_LT(relative_gap(attention_projected(q32, kv32, a, s.heads), projected), 2e-5) << s.w << " " << s.rows;
    // attention() takes one of the two; either way the same function.
    EXPECT_LT(relative_gap(attention(q64, kv64, a, s.heads), projected), 1e-12);
  }
}

TEST(HeadAttention, ManyQueriesKeepTheProjection) {
  // Self-attention among as many queries as rows: the projected form is the cheaper one, and attention()
  // returns exactly its result.
  std::mt19937 rng(12);
  const AttentionWeights a = random_attention(16, rng);
  const Mat<double> x = random_rows<double>(6, 16, rng);
  const Mat<double> got = attention(x, x, a, 2), projected = attention_projected(x, x, a, 2);
  EXPECT_EQ(got.data, projected.data);
  EXPECT_LT(relative_gap(attention_few_queries(x, x, a, 2), projected), 1e-12);
}

// A head matrix kept as BF16 or F16 computes exactly what an fp32 copy of its values computes (the upcast is
// exact, then the same operations): bit for bit, in both compute types and both attention forms, for shapes
// with tails past the kernels' 4-row panels and 16-lane vectors.
TEST(HeadMatrixStorage, HalvesComputeExactlyAsTheirFp32Copy) {
  std::mt19937 rng(13);
  for (const kernels::WeightType type : {kernels::WeightType::BF16, kernels::WeightType::F16}) {
    for (const Shape s : {Shape{16, 2, 3, 50}, Shape{72, 4, 5, 61}, Shape{1024, 16, 2, 37}}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(type)) + " w=" + std::to_string(s.w));
      AttentionWeights halves = random_attention(s.w, rng), f32;
      store_as(type, halves, f32);
      ASSERT_EQ(halves.in_proj.weight.f32.size(), 0u);
      EXPECT_EQ(halves.in_proj.weight.bytes() * 2, f32.in_proj.weight.bytes());
      const Mat<float> q32 = random_rows<float>(s.queries, s.w, rng), kv32 = random_rows<float>(s.rows, s.w, rng);
      const Mat<double> q64 = random_rows<double>(s.queries, s.w, rng), kv64 = random_rows<double>(s.rows, s.w, rng);
      EXPECT_EQ(attention_few_queries(q32, kv32, halves, s.heads).data,
                attention_few_queries(q32, kv32, f32, s.heads).data);
      EXPECT_EQ(attention_projected(q32, kv32, halves, s.heads).data,
                attention_projected(q32, kv32, f32, s.heads).data);
      EXPECT_EQ(attention_few_queries(q64, kv64, halves, s.heads).data,
                attention_few_queries(q64, kv64, f32, s.heads).data);
      EXPECT_EQ(attention_projected(q64, kv64, halves, s.heads).data,
                attention_projected(q64, kv64, f32, s.heads).data);
      // A plain product over a slice of the rows, without a bias.
      EXPECT_EQ(linear(kv32, halves.in_proj.weight, s.w + 3, s.w - 5, nullptr).data,
                linear(kv32, f32.in_proj.weight, s.w + 3, s.w - 5, nullptr).data);
      // And the values really are the rounded ones: the unrounded fp32 matrix gives another answer.
      AttentionWeights unrounded = halves;
      unrounded.in_proj.weight = f32_matrix({}, 3 * s.w, s.w);
      for (std::size_t i = 0; i < f32.in_proj.weight.f32.size(); ++i)
        unrounded.in_proj.weight.f32.push_back(std::nextafter(f32.in_proj.weight.f32[i], 1.0f));
      EXPECT_NE(attention_projected(q32, kv32, unrounded, s.heads).data,
                attention_projected(q32, kv32, halves, s.heads).data);
    }
  }
}

// The server runs a head over the kernel pool when no engine step runs and on its request thread alone beside
// one (engine::run_beside_steps): both give the same logits, bit for bit. The shapes are the release head's
// (w = 1024, 16 heads) with the queries of an evidence or field layer and the field layers' self-attention,
// large enough that every product is split over the pool's threads.
TEST(HeadThreads, PoolAndCallingThreadComputeTheSame) {
  const int saved_threads = kernels::num_threads();
  kernels::set_num_threads(3);
  std::mt19937 rng(14);
  for (const kernels::WeightType type : {kernels::WeightType::F32, kernels::WeightType::BF16}) {
    for (const Shape s : {Shape{1024, 16, 2, 342}, Shape{1024, 16, 13, 342}, Shape{256, 4, 40, 40}}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(type)) + " queries=" + std::to_string(s.queries));
      AttentionWeights a = random_attention(s.w, rng), rounded;
      if (type != kernels::WeightType::F32) store_as(type, a, rounded);
      const Mat<float> q = random_rows<float>(s.queries, s.w, rng), kv = random_rows<float>(s.rows, s.w, rng);
      const Mat<float> few = attention_few_queries(q, kv, a, s.heads), projected = attention_projected(q, kv, a, s.heads);
      const Mat<float> product = linear(kv, a.in_proj.weight, 0, 3 * s.w, a.in_proj.bias.data());
      const kernels::InlineLoops on_this_thread;
      EXPECT_EQ(attention_few_queries(q, kv, a, s.heads).data, few.data);
      EXPECT_EQ(attention_projected(q, kv, a, s.heads).data, projected.data);
      EXPECT_EQ(linear(kv, a.in_proj.weight, 0, 3 * s.w, a.in_proj.bias.data()).data, product.data);
    }
  }
  kernels::set_num_threads(saved_threads);
}

}  // namespace
}  // namespace verdict::decision::head_math
