// The backbone against itself: chunked prefill equals one pass, prefill + decode equals a longer
// prefill, a batch of sequences equals running them alone, and the head mapping matters.
// Token ids come from the fixtures' prompts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "golden_util.h"
#include "support/scoped_env.h"

namespace verdict::models::qwen35 {
namespace {

using namespace testing;

constexpr double kConsistency = 1e-5;  // max |Δ| / max |ref| per row (issue #3)

ForwardOutput run_prefill(const Backbone& model, std::span<const int32_t> ids, int64_t chunk) {
  SeqStatePool pool = model.make_pool(1, static_cast<int64_t>(ids.size()));
  const int64_t last = static_cast<int64_t>(ids.size()) - 1;
  return model.prefill(pool, pool.acquire(), ids, std::span<const int64_t>(&last, 1), chunk);
}

void expect_rows_consistent(const ForwardOutput& got, const ForwardOutput& want, int64_t rows, const std::string& what) {
  for (int64_t t = 0; t < rows; ++t) {
    const RowDiff d = row_diff(got.hidden_row(0, t), want.hidden_row(0, t));
    ASSERT_LE(d.rel(), kConsistency) << what << " hidden row " << t;
  }
  EXPECT_LE(row_diff(got.logits_row(0, 0), want.logits_row(0, 0)).rel(), kConsistency) << what << " logits";
}

struct ChunkCase {
  std::string checkpoint;
  std::size_t prompt;  // index into golden prompts (0: p7, 1: p64, 2: p300)
  std::vector<int64_t> chunks;
};

TEST(Consistency, ChunkedPrefillEqualsOnePass) {
  const ChunkCase cases[] = {{"qwen35-tiny", 2, {1, 7, 64, 512}},
                             {"qwen35-small", 2, {7, 64, 512}},
                             {"qwen35-small", 1, {1}},
                             {"qwen35-small-mlx4", 1, {7, 64}}};
  for (const ChunkCase& cc : cases) {
    const Backbone& model = load_cached(cc.checkpoint);
    const std::vector<int32_t> ids = prompt_ids(cc.checkpoint, cc.prompt);
    const auto n = static_cast<int64_t>(ids.size());
    const ForwardOutput one = run_prefill(model, ids, n);
    for (int64_t chunk : cc.chunks)
      expect_rows_consistent(run_prefill(model, ids, chunk), one, n,
                             cc.checkpoint + " n=" + std::to_string(n) + " chunk " + std::to_string(chunk));
  }
}

// The prompt of one slot run as the given pieces (the last one takes what is left): every hidden
// row, then the logits of the last token.
std::vector<float> run_pieces(const Backbone& model, std::span<const int32_t> ids, std::vector<int64_t> pieces) {
  const auto n = static_cast<int64_t>(ids.size());
  SeqStatePool pool = model.make_pool(1, n);
  const int64_t slot = pool.acquire();
  std::vector<float> out;
  for (int64_t t0 = 0, i = 0; t0 < n; ++i) {
    const int64_t len = std::min(n - t0, pieces[static_cast<std::size_t>(i) % pieces.size()]);
    const int64_t last = len - 1;
    const bool final_piece = t0 + len == n;
    const SequenceInput in{slot, ids.subspan(static_cast<std::size_t>(t0), static_cast<std::size_t>(len)),
                           final_piece ? std::span<const int64_t>(&last, 1) : std::span<const int64_t>()};
    const ForwardOutput o = model.forward(pool, std::span<const SequenceInput>(&in, 1));
    out.insert(out.end(), o.hidden.begin(), o.hidden.end());
    if (final_piece) out.insert(out.end(), o.logits.begin(), o.logits.end());
    t0 += len;
  }
  return out;
}

// The engine cuts records and prompts only on the kPrefillAlignment grid (engine/batch_plan.h), so
// that a result never depends on what else shared the steps: pieces that start on the grid give one
// pass bit for bit, in the exact kernels and in the packed ones (whose int8 activations turn a
// last-bit difference into a visible one: cut every 100 tokens, qwen35-small-mlx4 p300 moves by 0.3).
TEST(Consistency, PrefillPiecesOnTheGridGiveOnePassBitForBit) {
  ASSERT_EQ(kPrefillAlignment % kDeltaRuleChunk, 0);
  const std::vector<std::vector<int64_t>> schedules = {{64}, {128}, {192}, {64, 192, 128}, {kPrefillAlignment * 4}};
  for (const bool packed : {false, true}) {
    const verdict::testing::ScopedEnv mode("VERDICT_PACK", packed ? nullptr : "0");
    for (const std::string checkpoint : {"qwen35-tiny", "qwen35-small", "qwen35-small-mlx4"}) {
      const auto model = Backbone::load(checkpoint_dir(checkpoint));
      const std::vector<int32_t> ids = prompt_ids(checkpoint, 2);
      const std::vector<float> one = run_pieces(*model, ids, {static_cast<int64_t>(ids.size())});
      for (const auto& pieces : schedules)
        EXPECT_EQ(run_pieces(*model, ids, pieces), one)
            << checkpoint << (packed ? " packed" : " exact") << ", first piece " << pieces[0];
    }
  }
}

// Conv and recurrent states carry over (spec §16.2): prefill n, decode 1 == prefill n + 1.
TEST(Consistency, PrefillThenDecodeEqualsLongerPrefill) {
  for (const std::string checkpoint : {"qwen35-tiny", "qwen35-small"}) {
    const Backbone& model = load_cached(checkpoint);
    const std::vector<int32_t> ids = prompt_ids(checkpoint, 2);
    for (int64_t n : {1, 2, 3, 4, 70}) {
      SeqStatePool pool = model.make_pool(1, n + 1);
      const int64_t slot = pool.acquire();
      const std::span<const int32_t> all(ids.data(), static_cast<std::size_t>(n + 1));
      model.prefill(pool, slot, all.first(static_cast<std::size_t>(n)), {});
      const int64_t zero = 0;
      const SequenceInput step{slot, all.subspan(static_cast<std::size_t>(n), 1), std::span<const int64_t>(&zero, 1)};
      const ForwardOutput decoded = model.forward(pool, std::span<const SequenceInput>(&step, 1));
      EXPECT_EQ(pool.length(slot), n + 1);
      const ForwardOutput whole = run_prefill(model, all, kDefaultPrefillChunk);
      const std::string what = checkpoint + " n=" + std::to_string(n);
      EXPECT_LE(row_diff(decoded.hidden_row(0, 0), whole.hidden_row(0, n)).rel(), kConsistency) << what;
      EXPECT_LE(row_diff(decoded.logits_row(0, 0), whole.logits_row(0, 0)).rel(), kConsistency) << what;
    }
  }
}

// Sequences of different lengths in one forward give exactly what each gives alone, for a prefill
// step and for a following decode step.
TEST(Consistency, BatchEqualsSingleRuns) {
  for (const std::string checkpoint : {"qwen35-small", "qwen35-tiny-mlx4"}) {
    const Backbone& model = load_cached(checkpoint);
    const std::vector<int32_t> ids = prompt_ids(checkpoint, 2);
    const std::vector<std::size_t> offsets{0, 11, 40, 90};
    const std::vector<std::size_t> lengths{5, 70, 1, 130};
    std::vector<std::span<const int32_t>> prompts;
    for (std::size_t i = 0; i < 4; ++i) prompts.push_back(std::span<const int32_t>(ids).subspan(offsets[i], lengths[i]));
    std::vector<int64_t> last;
    for (std::size_t len : lengths) last.push_back(static_cast<int64_t>(len) - 1);
    const int64_t zero = 0;

    SeqStatePool pool = model.make_pool(4, 140);
    std::vector<SequenceInput> batch;
    for (std::size_t i = 0; i < 4; ++i) batch.push_back({pool.acquire(), prompts[i], std::span<const int64_t>(&last[i], 1)});
    const ForwardOutput together = model.forward(pool, batch);
    std::vector<int32_t> next{ids[200], ids[201], ids[202], ids[203]};
    std::vector<SequenceInput> decode;
    for (std::size_t i = 0; i < 4; ++i)
      decode.push_back({batch[i].slot, std::span<const int32_t>(&next[i], 1), std::span<const int64_t>(&zero, 1)});
    const ForwardOutput together_decode = model.forward(pool, decode);

    for (std::size_t i = 0; i < 4; ++i) {
      SeqStatePool alone_pool = model.make_pool(1, 140);
      const int64_t slot = alone_pool.acquire();
      const SequenceInput in{slot, prompts[i], std::span<const int64_t>(&last[i], 1)};
      const ForwardOutput alone = model.forward(alone_pool, std::span<const SequenceInput>(&in, 1));
      const SequenceInput step{slot, std::span<const int32_t>(&next[i], 1), std::span<const int64_t>(&zero, 1)};
      const ForwardOutput alone_decode = model.forward(alone_pool, std::span<const SequenceInput>(&step, 1));
      const std::string what = checkpoint + " sequence " + std::to_string(i);
      for (int64_t t = 0; t < static_cast<int64_t>(lengths[i]); ++t) {
        const RowDiff d = row_diff(together.hidden_row(i, t), alone.hidden_row(0, t));
        ASSERT_EQ(d.max_abs, 0.0) << what << " hidden row " << t;
      }
      EXPECT_EQ(row_diff(together.logits_row(i, 0), alone.logits_row(0, 0)).max_abs, 0.0) << what;
      EXPECT_EQ(row_diff(together_decode.hidden_row(i, 0), alone_decode.hidden_row(0, 0)).max_abs, 0.0) << what;
      EXPECT_EQ(row_diff(together_decode.logits_row(i, 0), alone_decode.logits_row(0, 0)).max_abs, 0.0) << what;
    }
  }
}

// Spec §6.4 / §16.4: reading key head j mod nk instead of ⌊j/r⌋ (r = 2 in these checkpoints) must
// visibly break the output against the goldens, which the correct mapping matches.
TEST(HeadMapping, TiledMappingBreaksHuggingFaceWeights) {
  for (const std::string checkpoint : {"qwen35-tiny", "qwen35-small"}) {
    const Json& prompt = golden(checkpoint)["prompts"][1];
    const std::vector<int32_t> ids = to_ids(prompt["ids"]);
    const std::vector<float> ref = to_floats(prompt["logits_last"]);
    const Backbone& model = load_cached(checkpoint);
    ASSERT_GT(model.config().nv, model.config().nk);
    const double good = row_diff(run_prefill(model, ids, 64).logits_row(0, 0), ref).rel();
    const double bad = row_diff(run_prefill(load_cached(checkpoint, HeadMapping::Tiled), ids, 64).logits_row(0, 0), ref).rel();
    EXPECT_LE(good, kRelTolerance) << checkpoint;
    EXPECT_GT(bad, 1e-2) << checkpoint << ": the tiled mapping should break the logits";
  }
}

TEST(Forward, RefusesBadInputsWithoutTouchingState) {
  const Backbone& model = load_cached("qwen35-tiny");
  SeqStatePool pool = model.make_pool(2, 8);
  const int64_t slot = pool.acquire();
  const std::vector<int32_t> bad_id{1, 2, 768};
  const std::vector<int32_t> ok{1, 2, 3};
  const int64_t row5 = 5;
  EXPECT_THROW(model.prefill(pool, slot, bad_id, {}), Error);
  EXPECT_EQ(pool.length(slot), 0);
  EXPECT_THROW(model.prefill(pool, slot, ok, std::span<const int64_t>(&row5, 1)), Error);
  const std::vector<int32_t> long_prompt(9, 1);
  EXPECT_THROW(model.prefill(pool, slot, long_prompt, {}), Error);
  const SequenceInput twice[] = {{slot, ok, {}}, {slot, ok, {}}};
  EXPECT_THROW(model.forward(pool, twice), Error);
  const SequenceInput unacquired{1, ok, {}};
  EXPECT_THROW(model.forward(pool, std::span<const SequenceInput>(&unacquired, 1)), Error);
  EXPECT_EQ(pool.length(slot), 0);
  EXPECT_NO_THROW(model.prefill(pool, slot, ok, {}));
  EXPECT_EQ(pool.length(slot), 3);
}

}  // namespace
}  // namespace verdict::models::qwen35
