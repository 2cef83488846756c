// The backbone against the float64 reference goldens of shared/fixtures/qwen35-* (README
// tolerances): final-norm hidden rows, their L2 norms, last-row logits, every row's logit norm, and
// greedy decoding by teacher forcing.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "golden_util.h"
#include "kernels/isa.h"

namespace verdict::models::qwen35 {
namespace {

using namespace testing;

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, ConfigMatchesFixture) {
  const Backbone& model = load_cached(GetParam());
  const Json& cfg = golden(GetParam())["config"];
  const Config& c = model.config();
  EXPECT_EQ(c.hidden, cfg["hidden_size"].get<int64_t>());
  EXPECT_EQ(c.layers, cfg["num_hidden_layers"].get<int64_t>());
  EXPECT_EQ(c.vocab, cfg["vocab_size"].get<int64_t>());
  EXPECT_EQ(c.tied, cfg["tie_word_embeddings"].get<bool>());
  EXPECT_EQ(c.rotary_dim, cfg["rotary_dim"].get<int64_t>());
  EXPECT_EQ(c.nv, cfg["linear_num_value_heads"].get<int64_t>());
  EXPECT_EQ(model.weights().norms_folded, cfg["norms_have_plus_one_folded"].get<bool>());
  EXPECT_EQ(model.weights().quantized, !cfg["quantization"].is_null());
}

TEST_P(Golden, PrefillMatchesHiddenRowsAndLogits) {
  const Backbone& model = load_cached(GetParam());
  for (const Json& prompt : golden(GetParam())["prompts"]) {
    const std::string name = GetParam() + " " + prompt["name"].get<std::string>();
    const std::vector<int32_t> ids = to_ids(prompt["ids"]);
    const auto n = static_cast<int64_t>(ids.size());
    std::vector<int64_t> all_rows(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) all_rows[static_cast<std::size_t>(i)] = i;
    SeqStatePool pool = model.make_pool(1, n);
    const int64_t slot = pool.acquire();
    const ForwardOutput out = model.prefill(pool, slot, ids, all_rows);

    for (const auto& [row, values] : prompt["hidden_rows"].items())
      expect_row_close(out.hidden_row(0, std::stoll(row)), to_floats(values), name + " hidden row " + row);
    const std::vector<float> l2 = to_floats(prompt["hidden_row_l2"]);
    const std::vector<float> logit_l2 = to_floats(prompt["logits_row_l2"]);
    const std::vector<int32_t> argmax_rows = to_ids(prompt["argmax_rows"]);
    for (int64_t t = 0; t < n; ++t) {
      double h2 = 0.0, z2 = 0.0;
      for (float v : out.hidden_row(0, t)) h2 += double(v) * v;
      for (float v : out.logits_row(0, t)) z2 += double(v) * v;
      const auto i = static_cast<std::size_t>(t);
      EXPECT_NEAR(std::sqrt(h2), l2[i], kRelTolerance * l2[i]) << name << " hidden_row_l2 " << t;
      EXPECT_NEAR(std::sqrt(z2), logit_l2[i], kRelTolerance * logit_l2[i]) << name << " logits_row_l2 " << t;
      // Argmax where our own top-2 gap is clear of the tolerance.
      if (top_margin(out.logits_row(0, t)) > 1e-3) {
        EXPECT_EQ(argmax(out.logits_row(0, t)), argmax_rows[i]) << name << " argmax row " << t;
      }
    }
    expect_row_close(out.logits_row(0, n - 1), to_floats(prompt["logits_last"]), name + " logits_last");
  }
}

// Teacher forcing (README): prefill the prompt, then feed the golden ids one by one through the
// decode path; step i's logits are those after prompt + ids[0, i).
TEST_P(Golden, GreedyByTeacherForcing) {
  const Backbone& model = load_cached(GetParam());
  for (const Json& prompt : golden(GetParam())["prompts"]) {
    const std::string name = GetParam() + " " + prompt["name"].get<std::string>();
    const std::vector<int32_t> ids = to_ids(prompt["ids"]);
    const Json& greedy = prompt["greedy"];
    const std::vector<int32_t> golden_ids = to_ids(greedy["ids"]);
    const auto n = static_cast<int64_t>(ids.size());
    SeqStatePool pool = model.make_pool(1, n + static_cast<int64_t>(golden_ids.size()));
    const int64_t slot = pool.acquire();
    const int64_t last_row = n - 1;
    ForwardOutput out = model.prefill(pool, slot, ids, std::span<const int64_t>(&last_row, 1));
    const int64_t zero = 0;
    for (std::size_t step = 0; step < golden_ids.size(); ++step) {
      if (step > 0) {
        const SequenceInput in{slot, std::span<const int32_t>(&golden_ids[step - 1], 1),
                               std::span<const int64_t>(&zero, 1)};
        out = model.forward(pool, std::span<const SequenceInput>(&in, 1));
      }
      const std::span<const float> logits = out.logits_row(0, 0);
      const Json& s = greedy["steps"][step];
      const std::string what = name + " greedy step " + std::to_string(step);
      std::vector<float> got, want;
      for (const Json& entry : s["top5"]) {
        got.push_back(logits[entry[0].get<std::size_t>()]);
        want.push_back(static_cast<float>(entry[1].get<double>()));
      }
      expect_row_close(got, want, what + " top5");
      if (s["margin"].get<double>() > 1e-3) {
        EXPECT_EQ(argmax(logits), s["id"].get<int64_t>()) << what;
      }
      if (step + 1 == golden_ids.size()) {
        expect_row_close(logits, to_floats(greedy["last_step_logits"]), what + " full logits");
      }
    }
  }
}

// Every instruction set the machine supports (AVX-512, AVX2, portable scalar) meets the goldens.
TEST(GoldenIsa, EveryIsaMatchesFixture) {
  const kernels::Isa saved = kernels::active_isa();
  for (kernels::Isa isa : {kernels::Isa::Scalar, kernels::Isa::Avx2, kernels::Isa::Avx512}) {
    if (!kernels::isa_supported(isa)) continue;
    kernels::set_active_isa(isa);
    for (const std::string checkpoint : {"qwen35-tiny", "qwen35-tiny-mlx4"}) {
      const Backbone& model = load_cached(checkpoint);
      const Json& prompt = golden(checkpoint)["prompts"][1];
      const std::vector<int32_t> ids = to_ids(prompt["ids"]);
      SeqStatePool pool = model.make_pool(1, static_cast<int64_t>(ids.size()));
      const int64_t last = static_cast<int64_t>(ids.size()) - 1;
      const ForwardOutput out = model.prefill(pool, pool.acquire(), ids, std::span<const int64_t>(&last, 1));
      const std::string what = checkpoint + " " + std::string(kernels::isa_name(isa));
      expect_row_close(out.hidden_row(0, last), to_floats(prompt["hidden_rows"][std::to_string(last)]), what);
      expect_row_close(out.logits_row(0, 0), to_floats(prompt["logits_last"]), what + " logits");
    }
  }
  kernels::set_active_isa(saved);
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, Golden,
                         ::testing::Values("qwen35-tiny", "qwen35-tiny-f32", "qwen35-small", "qwen35-tiny-mlx4",
                                           "qwen35-tiny-mlx8", "qwen35-small-mlx4"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string s = param.param;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace verdict::models::qwen35
