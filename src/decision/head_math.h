// Building blocks of the joint head (clef-decision.md §6.3), templated on the compute type
// (float for the fp32 head, double for the fp64 head). Internal to the decision library.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/scratch.h"
#include "decision/head_weights.h"
#include "kernels/ops.h"
#include "kernels/thread_pool.h"

namespace verdict::decision::head_math {

// A row-major matrix. Its values live in the calling thread's current scratch arena (core/scratch.h; during
// JointHead::forward one lent from a pool): a record's matrices take megabytes (342 rows × 1024 floats each),
// which the heap of a server thread faulted in afresh on most decisions.
template <class T>
struct Mat {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<T, ScratchAllocator<T>> data;

  Mat() = default;
  Mat(std::size_t r, std::size_t c) : rows(r), cols(c), data(r * c, T(0)) {}
  T* row(std::size_t i) { return data.data() + i * cols; }
  const T* row(std::size_t i) const { return data.data() + i * cols; }
};

// Runs fn(begin, end) over [0, n) split into contiguous chunks, with kernels::parallel_for: on the kernel pool
// when the work (n × cost_per_item multiply-adds) is large enough to pay for it, else (and under
// kernels::InlineLoops) on the calling thread. Each item is computed by exactly one thread in a fixed order,
// so results do not depend on threading.
template <class Fn>
void parallel_for(std::size_t n, std::size_t cost_per_item, Fn&& fn) {
  if (n == 0) return;
  const std::size_t chunks = std::min<std::size_t>(n, 4 * static_cast<std::size_t>(kernels::num_threads()));
  const std::size_t chunk = (n + chunks - 1) / chunks;
  kernels::parallel_for(static_cast<int64_t>((n + chunk - 1) / chunk), static_cast<double>(chunk * cost_per_item),
                        [&](int64_t c) {
                          const std::size_t begin = static_cast<std::size_t>(c) * chunk;
                          fn(begin, std::min(n, begin + chunk));
                        });
}

// Σ a[k]·b[k] in T with eight independent partial sums.
template <class T, class U>
inline T dot(const T* a, const U* b, std::size_t n) {
  T acc[8] = {};
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    for (std::size_t l = 0; l < 8; ++l) acc[l] += a[k + l] * static_cast<T>(b[k + l]);
  }
  T s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; k < n; ++k) s += a[k] * static_cast<T>(b[k]);
  return s;
}

// y = x·Wᵀ + b for W = rows [row0, row0 + out) of `w` (as stored: F32, BF16 or F16, upcast exactly) and
// optional bias (nullptr). The fp32 head runs the product on the kernels (fp32 fused multiply-adds, the same
// ones whatever the stored type, whatever the split over threads), on the kernel pool or, under
// kernels::InlineLoops, on the calling thread alone: the server chooses (engine::run_beside_steps), since heads
// whose loops queued for the pool between an engine step's loops made 8 concurrent decisions slower (0.83× of
// 8 sequential ones). The fp64 head runs in plain loops.
template <class T>
Mat<T> linear(const Mat<T>& x, const HeadMatrix& w, std::size_t row0, std::size_t out, const float* b) {
  const std::size_t in = w.cols;
  Mat<T> y(x.rows, out);
  if constexpr (std::is_same_v<T, float>) {
    const kernels::WeightMatrix m = w.view(row0, out);
    kernels::matmul(m, x.data.data(), static_cast<int64_t>(x.rows), y.data.data());
    if (b != nullptr)
      for (std::size_t r = 0; r < x.rows; ++r)
        for (std::size_t o = 0; o < out; ++o) y.row(r)[o] += b[o];
    return y;
  }
  parallel_for(out, x.rows * in, [&](std::size_t o0, std::size_t o1) {
    std::vector<float> buf(in);
    for (std::size_t o = o0; o < o1; ++o) {
      const float* wr = w.row(row0 + o, buf.data());
      for (std::size_t r = 0; r < x.rows; ++r)
        y.row(r)[o] = dot(x.row(r), wr, in) + (b != nullptr ? static_cast<T>(b[o]) : T(0));
    }
  });
  return y;
}

template <class T>
Mat<T> linear(const Mat<T>& x, const LinearWeights& l) {
  return linear(x, l.weight, 0, l.out, l.bias.empty() ? nullptr : l.bias.data());
}

// LayerNorm over each row, biased variance, ε = 1e-5.
template <class T>
void layer_norm(Mat<T>& x, const LayerNormWeights& ln) {
  const std::size_t n = x.cols;
  parallel_for(x.rows, 4 * n, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      T* v = x.row(r);
      T sum = 0;
      for (std::size_t k = 0; k < n; ++k) sum += v[k];
      const T mean = sum / static_cast<T>(n);
      T sq = 0;
      for (std::size_t k = 0; k < n; ++k) sq += (v[k] - mean) * (v[k] - mean);
      const T inv = T(1) / std::sqrt(sq / static_cast<T>(n) + static_cast<T>(1e-5));
      for (std::size_t k = 0; k < n; ++k) {
        v[k] = (v[k] - mean) * inv * static_cast<T>(ln.weight[k]) + static_cast<T>(ln.bias[k]);
      }
    }
  });
}

template <class T>
Mat<T> layer_normed(Mat<T> x, const LayerNormWeights& ln) {
  layer_norm(x, ln);
  return x;
}

// Exact GELU: 0.5·x·(1 + erf(x/√2)).
template <class T>
void gelu(Mat<T>& x) {
  const T inv_sqrt2 = static_cast<T>(0.70710678118654752440);
  // ≈ 16 multiply-adds per erf
  parallel_for(x.data.size(), 16, [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) x.data[i] = T(0.5) * x.data[i] * (T(1) + std::erf(x.data[i] * inv_sqrt2));
  });
}

template <class T>
void add_in_place(Mat<T>& a, const Mat<T>& b) {
  for (std::size_t i = 0; i < a.data.size(); ++i) a.data[i] += b.data[i];
}

// attention() below for a few queries over many rows (the evidence and field layers' queries over a record's
// hidden rows), without projecting the rows. For head h, with Wk_h, Wv_h its dh rows of the key and value
// projections: q_h · (Wk_h r + bk_h) = (Wk_hᵀ q_h) · r + q_h · bk_h, and the second term is the same for every
// row r, so the softmax drops it; and Σ_j p_j (Wv_h r_j + bv_h) = Wv_h (Σ_j p_j r_j) + bv_h, as Σ_j p_j = 1. The
// same function in another order of operations: 2·nq·(w² + heads·nk·w) multiply-adds against the projected
// form's 2·nk·(w² + nq·w) (a 342-row record, 2 queries, w = 1024, 16 heads: 27 M against 718 M).
template <class T>
Mat<T> attention_few_queries(const Mat<T>& q_in, const Mat<T>& kv, const AttentionWeights& a, std::size_t heads) {
  const std::size_t w = a.out_proj.out, dh = w / heads, nq = q_in.rows, nk = kv.rows, nh = nq * heads;
  const HeadMatrix& iw = a.in_proj.weight;  // rows q, k, v
  const float* bv = a.in_proj.bias.data() + 2 * w;
  const Mat<T> q = linear(q_in, iw, 0, w, a.in_proj.bias.data());
  // Row h · nq + i: query i taken back through head h's key projection, Wk_hᵀ q_h, times 1/√dh.
  const T scale = T(1) / std::sqrt(static_cast<T>(dh));
  Mat<T> qk(nh, w);
  std::vector<float> buf;
  if constexpr (std::is_same_v<T, float>) {
    // Per head, Q_h [nq, dh] · Wk_h [dh, w] on the kernels, the heads spread over the pool.
    kernels::parallel_for(static_cast<int64_t>(heads), static_cast<double>((nq + 1) * dh * w), [&](int64_t hi) {
      const auto h = static_cast<std::size_t>(hi);
      std::vector<float> upcast;  // Wk_h, when stored as BF16 or F16
      kernels::gemm_f32(static_cast<int64_t>(nq), static_cast<int64_t>(w), static_cast<int64_t>(dh), scale,
                        q.data.data() + h * dh, static_cast<int64_t>(w), iw.rows_f32(w + h * dh, dh, upcast),
                        static_cast<int64_t>(w), qk.row(h * nq), static_cast<int64_t>(w));
    });
  } else {
    buf.resize(w);
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t d = 0; d < dh; ++d) {
        const float* wr = iw.row(w + h * dh + d, buf.data());
        for (std::size_t i = 0; i < nq; ++i) {
          T* out = qk.row(h * nq + i);
          const T qd = q.row(i)[h * dh + d] * scale;
          for (std::size_t c = 0; c < w; ++c) out[c] += qd * static_cast<T>(wr[c]);
        }
      }
  }
  // Scores over the rows, softmax, and the weighted sum of the rows per (head, query).
  Mat<T> p(nh, nk), m(nh, w);
  Mat<T> ctx(nq, w);
  if constexpr (std::is_same_v<T, float>) {
    kernels::WeightMatrix rows;
    rows.type = kernels::WeightType::F32;
    rows.rows = static_cast<int64_t>(nk);
    rows.cols = static_cast<int64_t>(w);
    rows.f32 = kv.data.data();
    kernels::matmul(rows, qk.data.data(), static_cast<int64_t>(nh), p.data.data());
    // Per head: the softmax of its queries' scores, their weighted sums of the rows M_h = P_h · R [nq, w] (each
    // element's fp32 chain is the same whatever rows a gemm_f32 call holds), and head h's values of query i,
    // Wv_h (Σ_j p_j r_j) + bv_h, as M_h · Wv_hᵀ.
    kernels::parallel_for(static_cast<int64_t>(heads), static_cast<double>(nq * (nk + dh) * w), [&](int64_t hi) {
      const auto h = static_cast<std::size_t>(hi);
      for (std::size_t i = 0; i < nq; ++i) kernels::softmax(static_cast<int64_t>(nk), 1.0f, p.row(h * nq + i));
      kernels::gemm_f32(static_cast<int64_t>(nq), static_cast<int64_t>(w), static_cast<int64_t>(nk), 1.0f,
                        p.row(h * nq), static_cast<int64_t>(nk), kv.data.data(), static_cast<int64_t>(w),
                        m.row(h * nq), static_cast<int64_t>(w));
      Mat<float> vh(nq, dh);
      kernels::matmul(iw.view(2 * w + h * dh, dh), m.row(h * nq), static_cast<int64_t>(nq), vh.data.data());
      for (std::size_t i = 0; i < nq; ++i)
        for (std::size_t d = 0; d < dh; ++d) ctx.row(i)[h * dh + d] = vh.row(i)[d] + bv[h * dh + d];
    });
  } else {
    for (std::size_t r = 0; r < nh; ++r)
      for (std::size_t j = 0; j < nk; ++j) p.row(r)[j] = dot(qk.row(r), kv.row(j), w);
    for (std::size_t r = 0; r < nh; ++r) {
      T* pr = p.row(r);
      const T max = *std::max_element(pr, pr + nk);
      T sum = 0;
      for (std::size_t j = 0; j < nk; ++j) {
        pr[j] = std::exp(pr[j] - max);
        sum += pr[j];
      }
      for (std::size_t j = 0; j < nk; ++j) pr[j] /= sum;
    }
    for (std::size_t r = 0; r < nh; ++r)
      for (std::size_t j = 0; j < nk; ++j) {
        const T pj = p.row(r)[j];
        const T* kr = kv.row(j);
        for (std::size_t c = 0; c < w; ++c) m.row(r)[c] += pj * kr[c];
      }
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t d = 0; d < dh; ++d) {
        const float* wr = iw.row(2 * w + h * dh + d, buf.data());
        for (std::size_t i = 0; i < nq; ++i)
          ctx.row(i)[h * dh + d] = dot(m.row(h * nq + i), wr, w) + static_cast<T>(bv[h * dh + d]);
      }
  }
  return linear(ctx, a.out_proj);
}

// torch.nn.MultiheadAttention (batch-first, no mask, no dropout) with keys = values = kv_in, as it computes it:
// the keys and values projected, then the softmax of the scaled scores per head.
template <class T>
Mat<T> attention_projected(const Mat<T>& q_in, const Mat<T>& kv_in, const AttentionWeights& a, std::size_t heads) {
  const std::size_t w = a.out_proj.out;
  const HeadMatrix& iw = a.in_proj.weight;
  const float* ib = a.in_proj.bias.data();
  const Mat<T> q = linear(q_in, iw, 0, w, ib);
  const Mat<T> k = linear(kv_in, iw, w, w, ib + w);
  const Mat<T> v = linear(kv_in, iw, 2 * w, w, ib + 2 * w);
  const std::size_t dh = w / heads;
  const T scale = T(1) / std::sqrt(static_cast<T>(dh));
  const std::size_t nk = kv_in.rows;
  Mat<T> ctx(q_in.rows, w);
  parallel_for(q_in.rows, 2 * nk * w, [&](std::size_t i0, std::size_t i1) {
    std::vector<T> p(nk);
    for (std::size_t i = i0; i < i1; ++i) {
      for (std::size_t h = 0; h < heads; ++h) {
        const T* qh = q.row(i) + h * dh;
        T max = -std::numeric_limits<T>::infinity();
        for (std::size_t j = 0; j < nk; ++j) {
          p[j] = dot(qh, k.row(j) + h * dh, dh) * scale;
          max = std::max(max, p[j]);
        }
        T sum = 0;
        for (std::size_t j = 0; j < nk; ++j) {
          p[j] = std::exp(p[j] - max);
          sum += p[j];
        }
        T* out = ctx.row(i) + h * dh;
        for (std::size_t j = 0; j < nk; ++j) {
          const T pj = p[j] / sum;
          const T* vj = v.row(j) + h * dh;
          for (std::size_t d = 0; d < dh; ++d) out[d] += pj * vj[d];
        }
      }
    }
  });
  return linear(ctx, a.out_proj);
}

// The head's attention: attention_projected, or attention_few_queries (the same function) where that costs
// fewer multiply-adds, as for a few queries over a record's rows.
template <class T>
Mat<T> attention(const Mat<T>& q_in, const Mat<T>& kv_in, const AttentionWeights& a, std::size_t heads) {
  const std::size_t w = a.out_proj.out, nq = q_in.rows, nk = kv_in.rows;
  if (nq * (w + heads * nk) < nk * (w + nq)) return attention_few_queries(q_in, kv_in, a, heads);
  return attention_projected(q_in, kv_in, a, heads);
}

// x / max(‖x‖₂, eps)
template <class T>
std::vector<T> normalized(const T* x, std::size_t n, T eps) {
  const T norm = std::sqrt(dot(x, x, n));
  const T d = std::max(norm, eps);
  std::vector<T> out(x, x + n);
  for (T& v : out) v /= d;
  return out;
}

}  // namespace verdict::decision::head_math
