#include "models/qwen35/gated_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/activations.h"
#include "models/qwen35/norms.h"

namespace verdict::models::qwen35 {
namespace {

// Causal softmax attention of a block of query rows of one KV head over its cached positions, times the
// sigmoid output gate (spec §7.4): the `heads` query heads of the KV head's group, nb consecutive positions
// pos0 .. pos0 + nb − 1 each, gathered head by head into `rows` ([heads · nb, 2 · hd]: q, then the gate), so
// that the group's heads stream the keys and values once. kt holds the keys transposed, [hd, ldk]; the
// result goes to out ([heads · nb, hd]). The scores and the weighted sum are gemm_f32 products, whose
// elements do not depend on the block: a row's result is the same alone or in any block (positions past
// a row's own get probability exactly 0).
struct AttendScratch {
  std::vector<float> rows, scores, out;
};

void attend_block(const float* rows, const float* kt, int64_t ldk, const float* values, int64_t pos0, int64_t heads,
                  int64_t nb, int64_t hd, float scale, float* out, AttendScratch& s) {
  const int64_t nk = pos0 + nb;  // keys [0, nk) cover every row of the block
  const int64_t m = heads * nb;
  if (static_cast<int64_t>(s.scores.size()) < m * nk) s.scores.resize(static_cast<std::size_t>(m * nk));
  float* S = s.scores.data();
  std::fill_n(S, m * nk, 0.0f);
  kernels::gemm_f32(m, nk, hd, 1.0f, rows, 2 * hd, kt, ldk, S, nk);
  for (int64_t i = 0; i < m; ++i) {
    float* row = S + i * nk;
    const int64_t pos = pos0 + i % nb;
    kernels::softmax(pos + 1, scale, row);
    std::fill(row + pos + 1, row + nk, 0.0f);
  }
  std::fill_n(out, m * hd, 0.0f);
  kernels::gemm_f32(m, hd, nk, 1.0f, S, nk, values, hd, out, hd);
  for (int64_t i = 0; i < m; ++i) {
    const float* gate = rows + i * 2 * hd + hd;
    for (int64_t d = 0; d < hd; ++d) out[i * hd + d] *= sigmoid(gate[d]);
  }
}

}  // namespace

void rotary_angles(int64_t rotary_dim, const double* inv_freq, int64_t pos, double* cos_sin) {
  for (int64_t i = 0; i < rotary_dim / 2; ++i) {
    const double phi = static_cast<double>(pos) * inv_freq[i];
    cos_sin[2 * i] = std::cos(phi);
    cos_sin[2 * i + 1] = std::sin(phi);
  }
}

void apply_rotary_angles(float* x, int64_t rotary_dim, const double* cos_sin) {
  const int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
    const double a = x[i], b = x[i + half];
    x[i] = static_cast<float>(a * c - b * s);
    x[i + half] = static_cast<float>(b * c + a * s);
  }
}

void attention_forward(const StepContext& step, const AttentionWeights& w, int64_t index, const float* xn,
                       float* out) {
  const Config& c = step.config;
  const int64_t rows = step.rows, hd = c.head_dim, QG = c.q_proj_rows(), KV = c.kv_dim();
  const int64_t T = step.pool.max_tokens();

  Activations qg(rows * QG), k(rows * KV), v(rows * KV);
  const kernels::MatmulOutput projections[] = {
      {&w.q_proj.view, qg.data()}, {&w.k_proj.view, k.data()}, {&w.v_proj.view, v.data()}};
  kernels::matmul_shared_input(projections, xn, rows);

  // inv_freq[i] = θ^(−2i/R). For text, the interleaved M-RoPE sections all carry the token position,
  // which makes it exactly this 1-D rotary embedding (spec §7.3).
  std::vector<double> inv_freq(static_cast<std::size_t>(c.rotary_dim / 2));
  for (std::size_t i = 0; i < inv_freq.size(); ++i)
    inv_freq[i] = std::pow(c.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(c.rotary_dim));

  // q/k norms and rotary per row (the position's sines and cosines once, for all its heads); the new keys
  // and values go to the cache (spec §7.2, §7.3, §7.5).
  for (const Segment& seg : step.segments) {
    float* keys = step.pool.keys(seg.slot, index);
    float* values = step.pool.values(seg.slot, index);
    kernels::parallel_for(seg.n, static_cast<double>(4 * (c.nq + c.nkv) * hd), [&](int64_t t) {
      const int64_t r = seg.row0 + t, pos = seg.start + t;
      thread_local std::vector<double> cos_sin;
      cos_sin.resize(static_cast<std::size_t>(c.rotary_dim));
      rotary_angles(c.rotary_dim, inv_freq.data(), pos, cos_sin.data());
      for (int64_t h = 0; h < c.nq; ++h) {
        float* q = qg.data() + r * QG + h * 2 * hd;
        rms_norm(q, w.q_norm.data(), hd, c.eps, q);
        apply_rotary_angles(q, c.rotary_dim, cos_sin.data());
      }
      for (int64_t h = 0; h < c.nkv; ++h) {
        float* kh = k.data() + r * KV + h * hd;
        rms_norm(kh, w.k_norm.data(), hd, c.eps, kh);
        apply_rotary_angles(kh, c.rotary_dim, cos_sin.data());
        std::copy_n(kh, hd, keys + (h * T + pos) * hd);
        std::copy_n(v.data() + r * KV + h * hd, hd, values + (h * T + pos) * hd);
      }
    });
  }

  // Attention per (sequence, KV head, block of queries), each task the whole GQA group of query heads
  // (contiguous: h' = ⌊h / (nq/nkv)⌋). Each (sequence, KV head)'s keys [0, end) are transposed once first:
  // kt[p, j] = key j, component p.
  Activations attn(rows * c.attn_dim());
  const int64_t group = c.nq / c.nkv;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  const auto n_segments = static_cast<int64_t>(step.segments.size());
  std::vector<int64_t> kt_at(static_cast<std::size_t>(n_segments) + 1, 0);
  for (int64_t i = 0; i < n_segments; ++i) {
    const Segment& seg = step.segments[static_cast<std::size_t>(i)];
    kt_at[static_cast<std::size_t>(i) + 1] = kt_at[static_cast<std::size_t>(i)] + c.nkv * hd * (seg.start + seg.n);
  }
  Activations kts(std::max<int64_t>(1, kt_at.back()));
  const double per_transpose = double(kt_at.back()) / double(std::max<int64_t>(1, n_segments * c.nkv));
  kernels::parallel_for(n_segments * c.nkv, per_transpose, [&](int64_t task) {
    const Segment& seg = step.segments[static_cast<std::size_t>(task / c.nkv)];
    const int64_t kvh = task % c.nkv, end = seg.start + seg.n;
    const float* keys = step.pool.keys(seg.slot, index) + kvh * T * hd;
    float* kt = kts.data() + kt_at[static_cast<std::size_t>(task / c.nkv)] + kvh * hd * end;
    for (int64_t j = 0; j < end; ++j)
      for (int64_t p = 0; p < hd; ++p) kt[p * end + j] = keys[j * hd + p];
  });

  // Blocks of about 64 rows (queries × the group's heads): the keys and values stream once per block, the
  // scores ([rows, keys]) stay in L2. Tasks run most keys first (the pool claims them in order).
  const int64_t queries = std::max<int64_t>(1, 64 / group);
  struct Block {
    int64_t segment, kvh, t0;
  };
  std::vector<Block> blocks;
  double work = 0.0;  // ≈ multiply-adds of the scores and the weighted sum, over all blocks
  for (int64_t i = 0; i < n_segments; ++i) {
    const Segment& seg = step.segments[static_cast<std::size_t>(i)];
    for (int64_t t0 = 0; t0 < seg.n; t0 += queries) {
      for (int64_t kvh = 0; kvh < c.nkv; ++kvh) blocks.push_back({i, kvh, t0});
      work += 2.0 * double(std::min(queries, seg.n - t0)) * double(seg.start + t0 + queries) * double(hd * c.nq);
    }
  }
  const auto keys_of = [&](const Block& blk) {
    return step.segments[static_cast<std::size_t>(blk.segment)].start + blk.t0;
  };
  std::stable_sort(blocks.begin(), blocks.end(),
                   [&](const Block& x, const Block& y) { return keys_of(x) > keys_of(y); });
  const auto n_blocks = static_cast<int64_t>(blocks.size());
  kernels::parallel_for(n_blocks, work / double(std::max<int64_t>(1, n_blocks)), [&](int64_t task) {
    thread_local AttendScratch scratch;
    const Block& blk = blocks[static_cast<std::size_t>(task)];
    const Segment& seg = step.segments[static_cast<std::size_t>(blk.segment)];
    const int64_t nb = std::min(queries, seg.n - blk.t0), r = seg.row0 + blk.t0, end = seg.start + seg.n;
    const float* kt = kts.data() + kt_at[static_cast<std::size_t>(blk.segment)] + blk.kvh * hd * end;
    const float* values = step.pool.values(seg.slot, index) + blk.kvh * T * hd;
    if (static_cast<int64_t>(scratch.rows.size()) < group * nb * 2 * hd) {
      scratch.rows.resize(static_cast<std::size_t>(group * nb * 2 * hd));
      scratch.out.resize(static_cast<std::size_t>(group * nb * hd));
    }
    for (int64_t g = 0; g < group; ++g)  // query heads kvh · group + g: q and gate, rows t of the block
      for (int64_t t = 0; t < nb; ++t)
        std::copy_n(qg.data() + (r + t) * QG + (blk.kvh * group + g) * 2 * hd, 2 * hd,
                    scratch.rows.data() + (g * nb + t) * 2 * hd);
    attend_block(scratch.rows.data(), kt, end, values, seg.start + blk.t0, group, nb, hd, scale, scratch.out.data(),
                 scratch);
    for (int64_t g = 0; g < group; ++g)
      for (int64_t t = 0; t < nb; ++t)
        std::copy_n(scratch.out.data() + (g * nb + t) * hd, hd,
                    attn.data() + (r + t) * c.attn_dim() + (blk.kvh * group + g) * hd);
  });

  kernels::matmul(w.o_proj.view, attn.data(), rows, out);
}

}  // namespace verdict::models::qwen35
