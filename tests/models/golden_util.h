// Shared helpers of the Qwen3.5 backbone tests: fixture checkpoints, their golden.json, and the
// tolerance checks of shared/fixtures/README.md.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/json.h"
#include "models/qwen35/backbone.h"

namespace verdict::models::qwen35::testing {

// The fixtures README's backbone tolerance, per row.
inline constexpr double kAbsTolerance = 5e-4;
inline constexpr double kRelTolerance = 1e-4;

// fixtures/<name>, and the backbone loaded from it (cached per name and head mapping).
std::string checkpoint_dir(const std::string& name);
const Backbone& load_cached(const std::string& name, HeadMapping mapping = HeadMapping::Grouped);
const Json& golden(const std::string& name);

std::vector<float> to_floats(const Json& array);
std::vector<int32_t> to_ids(const Json& array);
// The ids of golden.json's prompt number `prompt`.
std::vector<int32_t> prompt_ids(const std::string& checkpoint, std::size_t prompt);

struct RowDiff {
  double max_abs = 0.0;  // max |got − ref|
  double max_ref = 0.0;  // max |ref|
  double rel() const { return max_ref > 0.0 ? max_abs / max_ref : max_abs; }
};
RowDiff row_diff(std::span<const float> got, std::span<const float> ref);

// Fails the test unless got matches ref within the README tolerance (absolute and relative).
void expect_row_close(std::span<const float> got, std::span<const float> ref, const std::string& what);

// Index of the largest value (the first one on ties), and the gap to the runner-up.
int64_t argmax(std::span<const float> v);
double top_margin(std::span<const float> v);

}  // namespace verdict::models::qwen35::testing
