// The head's attention: the few-queries form (no projection of the rows) against the projected one that
// torch.nn.MultiheadAttention computes, on random weights, in both compute types.
#include "decision/head_math.h"

#include <gtest/gtest.h>

#include <random>

namespace verdict::decision::head_math {
namespace {

std::vector<float> normal(std::size_t n, std::mt19937& rng, float sd) {
  std::normal_distribution<float> dist(0.0f, sd);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

AttentionWeights random_attention(std::size_t w, std::mt19937& rng) {
  const float sd = 1.0f / std::sqrt(static_cast<float>(w));
  AttentionWeights a;
  a.in_proj = {normal(3 * w * w, rng, sd), normal(3 * w, rng, 0.5f), 3 * w, w};
  a.out_proj = {normal(w * w, rng, sd), normal(w, rng, 0.5f), w, w};
  return a;
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

}  // namespace
}  // namespace verdict::decision::head_math
