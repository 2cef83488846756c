// Seams (SequenceInput::seams): where a sequence's DeltaNet chunk grid restarts. A decision record has
// two, the end of its constant prefix and the end of its state, and the prefix cache resumes records
// there. What must hold, bit for bit, in the exact and the packed kernels:
//   * pieces that start on the seams' grid (0 and each seam, each followed by every 64 positions) give
//     one pass with the same seams;
//   * a state saved at a seam and restored into another pool, then the rest of the sequence, gives
//     the rows of running it whole;
//   * a prompt's last one-token piece runs like the rest of the prompt.
// Seams change results only within fp32 rounding.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "golden_util.h"
#include "support/scoped_env.h"

namespace verdict::models::qwen35 {
namespace {

using namespace testing;

// Runs ids[from, to) in one step; appends its hidden rows (and, when `last`, the last row's logits).
void step(const Backbone& model, SeqStatePool& pool, int64_t slot, std::span<const int32_t> ids, int64_t from,
          int64_t to, std::span<const int64_t> seams, bool last, std::vector<float>& out) {
  const int64_t row = to - from - 1;
  SequenceInput in{slot, ids.subspan(static_cast<std::size_t>(from), static_cast<std::size_t>(to - from)),
                   last ? std::span<const int64_t>(&row, 1) : std::span<const int64_t>()};
  in.seams = seams;
  in.prompt_piece = true;
  const ForwardOutput o = model.forward(pool, std::span<const SequenceInput>(&in, 1));
  out.insert(out.end(), o.hidden.begin(), o.hidden.end());
  if (last) out.insert(out.end(), o.logits.begin(), o.logits.end());
}

// The whole sequence cut at `cuts` (ascending, inside it): every hidden row, then the last logits.
std::vector<float> run_cut(const Backbone& model, std::span<const int32_t> ids, std::span<const int64_t> seams,
                           const std::vector<int64_t>& cuts) {
  const auto n = static_cast<int64_t>(ids.size());
  SeqStatePool pool = model.make_pool(1, n);
  const int64_t slot = pool.acquire();
  std::vector<float> out;
  int64_t from = 0;
  for (int64_t cut : cuts) {
    step(model, pool, slot, ids, from, cut, seams, false, out);
    from = cut;
  }
  step(model, pool, slot, ids, from, n, seams, true, out);
  return out;
}

TEST(Seams, PiecesOnTheSeamsGridGiveOnePassBitForBit) {
  for (const bool packed : {false, true}) {
    const verdict::testing::ScopedEnv mode("VERDICT_PACK", packed ? nullptr : "0");
    for (const std::string checkpoint : {"qwen35-tiny", "qwen35-small-mlx4"}) {
      const auto model = Backbone::load(checkpoint_dir(checkpoint));
      const std::vector<int32_t> ids = prompt_ids(checkpoint, 2);
      ASSERT_EQ(ids.size(), 300u);
      const std::vector<int64_t> seams = {36, 107};
      const std::vector<float> one = run_cut(*model, ids, seams, {});
      const std::string what = checkpoint + (packed ? " packed" : " exact");
      // At the seams; on the grid after them (36 + 64; 107 + 64, + 128); the last piece a single token
      // (299 = 107 + 3 · 64: a prompt piece, chunked like the rest).
      for (const std::vector<int64_t>& cuts :
           std::vector<std::vector<int64_t>>{{36}, {107}, {36, 107}, {100}, {36, 100, 107, 171, 235}, {299}})
        EXPECT_EQ(run_cut(*model, ids, seams, cuts), one) << what << ", first cut " << cuts[0];
      const auto n = static_cast<int64_t>(ids.size());
      // prefill() with seams, in pieces of 64 and 512: the same rows.
      for (const int64_t chunk : {64, 512}) {
        SeqStatePool pool = model->make_pool(1, n);
        const int64_t last = n - 1;
        const ForwardOutput o =
            model->prefill(pool, pool.acquire(), ids, std::span<const int64_t>(&last, 1), chunk, seams);
        std::vector<float> got = o.hidden;
        got.insert(got.end(), o.logits.begin(), o.logits.end());
        EXPECT_EQ(got, one) << what << ", prefill chunk " << chunk;
      }
    }
  }
}

TEST(Seams, ChangeRowsOnlyWithinRounding) {
  const verdict::testing::ScopedEnv mode("VERDICT_PACK", "0");
  const Backbone& model = load_cached("qwen35-small");
  const std::vector<int32_t> ids = prompt_ids("qwen35-small", 2);
  const std::vector<int64_t> seams = {36, 107};
  const std::vector<float> with = run_cut(model, ids, seams, {});
  const std::vector<float> without = run_cut(model, ids, {}, {});
  ASSERT_EQ(with.size(), without.size());
  EXPECT_NE(with, without);  // the grid differs: so do the last bits
  const auto H = static_cast<std::size_t>(model.config().hidden);
  for (std::size_t r = 0; r < ids.size(); ++r) {
    const std::span<const float> a(with.data() + r * H, H), b(without.data() + r * H, H);
    ASSERT_LE(row_diff(a, b).rel(), 1e-5) << "row " << r;
  }
}

TEST(Seams, ASavedStateResumesBitForBit) {
  const verdict::testing::ScopedEnv packed("VERDICT_PACK", nullptr);
  const Backbone& model = load_cached("qwen35-tiny");
  const std::vector<int32_t> ids = prompt_ids("qwen35-tiny", 2);
  const auto n = static_cast<int64_t>(ids.size());
  const std::vector<int64_t> seams = {36, 107};
  const std::vector<float> whole = run_cut(model, ids, seams, {});
  for (const int64_t seam : seams) {
    SeqStatePool first = model.make_pool(2, n);
    const int64_t slot = first.acquire();
    std::vector<float> rows;
    step(model, first, slot, ids, 0, seam, seams, false, rows);
    const SeqSnapshot saved = first.save(slot);
    EXPECT_EQ(saved.length, seam);
    EXPECT_EQ(saved.bytes(), snapshot_bytes(model.config(), seam));
    // Into another pool of another size, in a slot that held something else.
    SeqStatePool second = model.make_pool(3, n + 5);
    (void)second.acquire();
    const int64_t other = second.acquire();
    std::vector<float> scratch;
    step(model, second, other, ids, 0, 50, seams, false, scratch);
    second.restore(saved, other);
    EXPECT_EQ(second.length(other), seam);
    step(model, second, other, ids, seam, n, seams, true, rows);
    EXPECT_EQ(rows, whole) << "resumed at " << seam;
  }
}

// A state saved in passing (SequenceInput::save_at) is the state a step ending there leaves.
TEST(Seams, AStateSavedInPassingIsTheStateAtThatSeam) {
  const verdict::testing::ScopedEnv packed("VERDICT_PACK", nullptr);
  const Backbone& model = load_cached("qwen35-tiny");
  const std::vector<int32_t> ids = prompt_ids("qwen35-tiny", 2);
  const auto n = static_cast<int64_t>(ids.size());
  const std::vector<int64_t> seams = {36, 107}, save_at = {36, 107};
  SeqStatePool pool = model.make_pool(1, n);
  const int64_t slot = pool.acquire();
  SequenceInput in{slot, std::span<const int32_t>(ids).first(200), {}};
  in.seams = seams;
  in.save_at = save_at;
  const ForwardOutput passing = model.forward(pool, std::span<const SequenceInput>(&in, 1));
  ASSERT_EQ(passing.saved.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    SeqStatePool split = model.make_pool(1, n);
    const int64_t s = split.acquire();
    std::vector<float> rows;
    step(model, split, s, ids, 0, save_at[k], seams, false, rows);
    const SeqSnapshot want = split.save(s);
    EXPECT_EQ(passing.saved[k].length, want.length);
    EXPECT_EQ(passing.saved[k].conv, want.conv) << save_at[k];
    EXPECT_EQ(passing.saved[k].recurrent, want.recurrent) << save_at[k];
    EXPECT_EQ(passing.saved[k].keys, want.keys) << save_at[k];
    EXPECT_EQ(passing.saved[k].values, want.values) << save_at[k];
  }
  // At the step's end, too; elsewhere than a seam or the end, refused.
  const std::vector<int64_t> at_end = {260};
  SequenceInput rest{slot, std::span<const int32_t>(ids).subspan(200, 60), {}};
  rest.seams = seams;
  rest.save_at = at_end;
  const ForwardOutput end = model.forward(pool, std::span<const SequenceInput>(&rest, 1));
  ASSERT_EQ(end.saved.size(), 1u);
  EXPECT_EQ(end.saved[0].recurrent, pool.save(slot).recurrent);
  for (const std::vector<int64_t>& bad : std::vector<std::vector<int64_t>>{{270}, {265}, {260, 260}, {300}}) {
    SequenceInput more{slot, std::span<const int32_t>(ids).subspan(260, 20), {}};
    more.seams = seams;
    more.save_at = bad;
    EXPECT_THROW(model.forward(pool, std::span<const SequenceInput>(&more, 1)), Error) << bad[0];
    EXPECT_EQ(pool.length(slot), 260);
  }
}

TEST(Seams, BadSeamsAndSnapshotsAreRefused) {
  const Backbone& model = load_cached("qwen35-tiny");
  const std::vector<int32_t> ids = prompt_ids("qwen35-tiny", 1);
  SeqStatePool pool = model.make_pool(1, 100);
  const int64_t slot = pool.acquire();
  for (const std::vector<int64_t>& bad : std::vector<std::vector<int64_t>>{{0}, {-3}, {20, 10}, {10, 10}}) {
    SequenceInput in{slot, ids, {}};
    in.seams = bad;
    EXPECT_THROW(model.forward(pool, std::span<const SequenceInput>(&in, 1)), Error);
    EXPECT_EQ(pool.length(slot), 0);
  }
  SeqStatePool longer = model.make_pool(1, 200);
  const int64_t s = longer.acquire();
  std::vector<float> rows;
  step(model, longer, s, ids, 0, static_cast<int64_t>(ids.size()), {}, false, rows);
  SeqSnapshot too_long = longer.save(s);
  too_long.length = 150;  // more tokens than `pool` holds, and KV rows that do not match
  EXPECT_THROW(pool.restore(too_long, slot), Error);
  SeqSnapshot torn = longer.save(s);
  torn.recurrent.pop_back();
  EXPECT_THROW(pool.restore(torn, slot), Error);
}

}  // namespace
}  // namespace verdict::models::qwen35
