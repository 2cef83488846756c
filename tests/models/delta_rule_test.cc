// The chunked delta rule against the recurrent definition on random inputs (spec §16.1): lengths
// around the chunk size, a non-zero initial state, and chunk-by-chunk continuation.
#include "models/qwen35/delta_rule.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/float_mode.h"

namespace verdict::models::qwen35 {
namespace {

struct Inputs {
  int64_t n, dk, dv;
  std::vector<float> q, k, v, beta, g, state;
};

void l2(float* x, int64_t n, double extra) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += double(x[i]) * x[i];
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] * extra / std::sqrt(s + 1e-6));
}

Inputs random_inputs(std::mt19937& rng, int64_t n, int64_t dk, int64_t dv) {
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  Inputs in{n, dk, dv, {}, {}, {}, {}, {}, {}};
  for (int64_t t = 0; t < n * dk; ++t) {
    in.q.push_back(normal(rng));
    in.k.push_back(normal(rng));
  }
  for (int64_t t = 0; t < n; ++t) {
    l2(in.q.data() + t * dk, dk, 1.0 / std::sqrt(double(dk)));
    l2(in.k.data() + t * dk, dk, 1.0);
    in.beta.push_back(unit(rng));
    in.g.push_back(-3.0f * unit(rng) * unit(rng));  // decays from ~1 down to e^−3
  }
  for (int64_t i = 0; i < n * dv; ++i) in.v.push_back(normal(rng));
  for (int64_t i = 0; i < dk * dv; ++i) in.state.push_back(0.5f * normal(rng));
  return in;
}

DeltaRuleHead head_of(const Inputs& in, std::vector<float>& out, int64_t t0, int64_t n) {
  DeltaRuleHead h;
  h.n = n;
  h.dk = in.dk;
  h.dv = in.dv;
  h.q = in.q.data() + t0 * in.dk;
  h.k = in.k.data() + t0 * in.dk;
  h.q_stride = h.k_stride = in.dk;
  h.v = in.v.data() + t0 * in.dv;
  h.v_stride = in.dv;
  h.beta = in.beta.data() + t0;
  h.g = in.g.data() + t0;
  h.gate_stride = 1;
  out.resize(static_cast<std::size_t>(in.n * in.dv));
  h.out = out.data() + t0 * in.dv;
  h.out_stride = in.dv;
  return h;
}

double max_rel(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::fabs(double(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(double(want[i])));
  }
  return diff / scale;
}

TEST(DeltaRule, ChunkedEqualsRecurrent) {
  std::mt19937 rng(7);
  for (int64_t n : {1, 63, 64, 65, 200}) {
    for (auto [dk, dv] : {std::pair<int64_t, int64_t>{16, 16}, {32, 24}, {128, 128}}) {
      const Inputs in = random_inputs(rng, n, dk, dv);
      std::vector<float> out_rec, out_chunk;
      std::vector<float> s_rec = in.state, s_chunk = in.state;
      delta_rule_recurrent(head_of(in, out_rec, 0, n), s_rec.data());
      delta_rule_chunked(head_of(in, out_chunk, 0, n), s_chunk.data());
      const std::string what = "n=" + std::to_string(n) + " dk=" + std::to_string(dk);
      EXPECT_LT(max_rel(out_chunk, out_rec), 1e-5) << what << " outputs";
      EXPECT_LT(max_rel(s_chunk, s_rec), 1e-5) << what << " final state";
    }
  }
}

TEST(DeltaRule, ChunkedPrefillThenRecurrentDecodeEqualsOnePass) {
  std::mt19937 rng(8);
  const Inputs in = random_inputs(rng, 150, 16, 16);
  std::vector<float> out_one, out_split;
  std::vector<float> s_one = in.state, s_split = in.state;
  delta_rule_chunked(head_of(in, out_one, 0, 150), s_one.data());
  delta_rule_chunked(head_of(in, out_split, 0, 97), s_split.data());
  for (int64_t t = 97; t < 150; ++t) delta_rule_recurrent(head_of(in, out_split, t, 1), s_split.data());
  EXPECT_LT(max_rel(out_split, out_one), 1e-5);
  EXPECT_LT(max_rel(s_split, s_one), 1e-5);
}

// Heads that forget fast (g from −3 to −1.5 per token: over a chunk the decays e^(γ_t − γ_s) fall far below
// fp32's normal range) with subnormals flushed, as Backbone::forward runs the rule, against the recurrent
// definition without: the flushed terms are below 2^−126 of the kept ones.
TEST(DeltaRule, ChunkedWithSubnormalsFlushedEqualsRecurrent) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int64_t n : {64, 200}) {
    Inputs in = random_inputs(rng, n, 128, 128);
    double gamma = 0.0;
    for (float& g : in.g) gamma += g = -1.5f - 1.5f * unit(rng);
    ASSERT_LT(std::exp(gamma * 64.0 / double(n)), double(FLT_MIN)) << "the decays must underflow within a chunk";
    std::vector<float> out_rec, out_chunk;
    std::vector<float> s_rec = in.state, s_chunk = in.state;
    ASSERT_FALSE(kernels::flushing_subnormals());
    delta_rule_recurrent(head_of(in, out_rec, 0, n), s_rec.data());
    {
      const kernels::FlushSubnormals flush;
      ASSERT_TRUE(kernels::flushing_subnormals());
      delta_rule_chunked(head_of(in, out_chunk, 0, n), s_chunk.data());
    }
    EXPECT_FALSE(kernels::flushing_subnormals());
    EXPECT_LT(max_rel(out_chunk, out_rec), 1e-5) << "n=" << n << " outputs";
    EXPECT_LT(max_rel(s_chunk, s_rec), 1e-5) << "n=" << n << " final state";
  }
}

// One token by hand: S ← e^g S; u = β (v − Sᵀk); S += k uᵀ; o = Sᵀq (dk = dv = 1).
TEST(DeltaRule, SingleTokenByHand) {
  const float q = 0.5f, k = 1.0f, v = 2.0f, beta = 0.25f, g = -0.5f;
  float state = 3.0f, out = 0.0f;
  DeltaRuleHead h;
  h.n = h.dk = h.dv = 1;
  h.q = &q;
  h.k = &k;
  h.v = &v;
  h.beta = &beta;
  h.g = &g;
  h.out = &out;
  delta_rule_recurrent(h, &state);
  const double decayed = 3.0 * std::exp(-0.5);
  const double s = decayed + 1.0 * 0.25 * (2.0 - decayed);
  EXPECT_NEAR(state, s, 1e-6);
  EXPECT_NEAR(out, 0.5 * s, 1e-6);
}

}  // namespace
}  // namespace verdict::models::qwen35
