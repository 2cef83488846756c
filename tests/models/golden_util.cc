#include "golden_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "support/fixtures.h"

namespace verdict::models::qwen35::testing {

std::string checkpoint_dir(const std::string& name) { return verdict::testing::fixture(name); }

const Backbone& load_cached(const std::string& name, HeadMapping mapping) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, HeadMapping>, std::unique_ptr<Backbone>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{name, mapping}];
  if (!slot) slot = Backbone::load(checkpoint_dir(name), LoadOptions{mapping});
  return *slot;
}

const Json& golden(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, Json> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, load_json_file(checkpoint_dir(name) + "/golden.json")).first;
  return it->second;
}

std::vector<float> to_floats(const Json& array) {
  std::vector<float> out;
  out.reserve(array.size());
  for (const Json& v : array) out.push_back(static_cast<float>(v.get<double>()));
  return out;
}

std::vector<int32_t> to_ids(const Json& array) {
  std::vector<int32_t> out;
  for (const Json& v : array) out.push_back(v.get<int32_t>());
  return out;
}

std::vector<int32_t> prompt_ids(const std::string& checkpoint, std::size_t prompt) {
  return to_ids(golden(checkpoint)["prompts"][prompt]["ids"]);
}

RowDiff row_diff(std::span<const float> got, std::span<const float> ref) {
  RowDiff d;
  EXPECT_EQ(got.size(), ref.size());
  for (std::size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    const double delta = std::fabs(static_cast<double>(got[i]) - ref[i]);
    d.max_abs = std::isnan(delta) ? INFINITY : std::max(d.max_abs, delta);
    d.max_ref = std::max(d.max_ref, std::fabs(static_cast<double>(ref[i])));
  }
  return d;
}

void expect_row_close(std::span<const float> got, std::span<const float> ref, const std::string& what) {
  const RowDiff d = row_diff(got, ref);
  EXPECT_LE(d.max_abs, kAbsTolerance) << what << ": max |Δ| " << d.max_abs << " (max |ref| " << d.max_ref << ")";
  EXPECT_LE(d.rel(), kRelTolerance) << what << ": max |Δ| / max |ref| = " << d.rel();
}

int64_t argmax(std::span<const float> v) {
  int64_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[static_cast<std::size_t>(best)]) best = static_cast<int64_t>(i);
  return best;
}

double top_margin(std::span<const float> v) {
  const int64_t best = argmax(v);
  double second = -INFINITY;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (static_cast<int64_t>(i) != best) second = std::max(second, static_cast<double>(v[i]));
  return v[static_cast<std::size_t>(best)] - second;
}

}  // namespace verdict::models::qwen35::testing
