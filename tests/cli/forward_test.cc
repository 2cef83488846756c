// `verdict forward` and `verdict generate` as external checks drive them, against the float64 goldens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/json.h"
#include "support/fixtures.h"
#include "support/process.h"

namespace verdict {
namespace {

using testing::fixture;
using testing::id_list;
using testing::run_process;
using testing::verdict_bin;

// README tolerance per row: max|Δ| ≤ 5e-4 and max|Δ| / max|ref| ≤ 1e-4.
void expect_row_close(const Json& got, const Json& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double max_diff = 0, max_ref = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(got[i].get<double>() - want[i].get<double>()));
    max_ref = std::max(max_ref, std::abs(want[i].get<double>()));
  }
  EXPECT_LE(max_diff, 5e-4) << what;
  EXPECT_LE(max_diff / max_ref, 1e-4) << what;
}

TEST(Forward, MatchesTheGoldenHiddenRowsAndLogits) {
  for (const char* model : {"qwen35-tiny", "qwen35-small-mlx4"}) {
    const Json golden = load_json_file(fixture(std::string(model) + "/golden.json"));
    const Json& p = golden["prompts"][0];
    auto r = run_process(verdict_bin(), {"forward", "--model", fixture(model), "--tokens", id_list(p["ids"]),
                                         "--all-rows", "--chunk", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json out = parse_json(r.out, "forward output");
    ASSERT_EQ(out["hidden"].size(), p["ids"].size());
    for (const auto& [row, values] : p["hidden_rows"].items())
      expect_row_close(out["hidden"][std::stoul(row)], values, std::string(model) + " hidden row " + row);
    expect_row_close(out["logits"], p["logits_last"], std::string(model) + " logits");
  }
}

TEST(Generate, ReproducesGoldenGreedyIdsWhereMarginsAreClear) {
  int compared = 0;
  for (const char* model : {"qwen35-tiny", "qwen35-small"}) {
    const Json golden = load_json_file(fixture(std::string(model) + "/golden.json"));
    for (const auto& p : golden["prompts"]) {
      const Json& greedy = p["greedy"];
      // The README: compare free-running ids only where every step's margin is clear (> 1e-3).
      if (greedy["min_margin"].get<double>() <= 1e-3) continue;
      auto r = run_process(verdict_bin(), {"generate", "--model", fixture(model), "--tokens", id_list(p["ids"]),
                                           "--max-tokens", std::to_string(greedy["n"].get<int>())});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(parse_json(r.out, "generate output")["ids"], greedy["ids"]) << model << " " << p["name"];
      ++compared;
    }
  }
  EXPECT_GE(compared, 4);
}

TEST(Forward, BadTokenIdsAreErrors) {
  auto r = run_process(verdict_bin(), {"forward", "--model", fixture("qwen35-tiny"), "--tokens", "1,99999"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(r.err.empty());
  auto u = run_process(verdict_bin(), {"forward", "--model", fixture("qwen35-tiny"), "--tokens", "1,,2"});
  EXPECT_EQ(u.exit_code, 2);
}

}  // namespace
}  // namespace verdict
