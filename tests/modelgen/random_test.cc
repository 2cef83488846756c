// The counter-based generator and the weight specs: determinism, independence, distributions, and the
// tensor sets of the fixture checkpoints.
#include "modelgen/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/tensor_store.h"
#include "modelgen/presets.h"
#include "modelgen/weight_specs.h"
#include "support/fixtures.h"

namespace verdict::modelgen {
namespace {

TEST(TensorRng, IsAPureFunctionOfSeedNameAndIndex) {
  const TensorRng a(1, "w"), b(1, "w"), other_name(1, "v"), other_seed(2, "w");
  int differ_name = 0, differ_seed = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(a.bits(i), b.bits(i));
    differ_name += a.bits(i) != other_name.bits(i);
    differ_seed += a.bits(i) != other_seed.bits(i);
  }
  EXPECT_EQ(differ_name, 1000);
  EXPECT_EQ(differ_seed, 1000);
  // Any element can be drawn on its own: element 123456 does not depend on the ones before it.
  EXPECT_EQ(TensorRng(9, "x").normal(123456), TensorRng(9, "x").normal(123456));
}

TEST(TensorRng, NormalAndUniformHaveTheirMoments) {
  const TensorRng rng(42, "moments");
  const int n = 200000;
  double sum = 0, sum2 = 0, usum = 0, max_abs = 0;
  for (int i = 0; i < n; ++i) {
    const double z = rng.normal(static_cast<uint64_t>(i));
    sum += z;
    sum2 += z * z;
    max_abs = std::max(max_abs, std::abs(z));
    const float u = rng.uniform(static_cast<uint64_t>(i));
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    usum += u;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum2 / n, 1.0, 0.02);
  EXPECT_LE(max_abs, 2 * std::sqrt(3.0) + 1e-6);
  EXPECT_GT(max_abs, 3.0);
  EXPECT_NEAR(usum / n, 0.5, 0.005);
}

TEST(Init, DrawsEachKindInItsRange) {
  const TensorRng rng(3, "init");
  for (uint64_t i = 0; i < 1000; ++i) {
    const float a_log = Init::log_uniform(1.0f, 16.0f).value(rng, i);
    EXPECT_GE(a_log, 0.0f);
    EXPECT_LT(a_log, std::log(16.0f));
    const float u = Init::uniform(-2.0f, 3.0f).value(rng, i);
    EXPECT_GE(u, -2.0f);
    EXPECT_LT(u, 3.0f);
  }
  EXPECT_EQ(Init::constant(-2.0f).value(rng, 5), -2.0f);
  EXPECT_NEAR(Init::normal(1.0f, 0.0f).value(rng, 5), 1.0f, 0.0f);
}

// name -> shape of the kept tensors of a fixture file.
std::map<std::string, std::vector<int64_t>> fixture_shapes(const std::vector<std::string>& files) {
  const auto store = formats::TensorStore::open_files(files);
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& [name, view] : store.tensors()) out[name] = view.shape;
  return out;
}

std::map<std::string, std::vector<int64_t>> spec_shapes(const std::vector<WeightSpec>& specs) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const WeightSpec& w : specs) out[w.name] = w.shape;
  return out;
}

TEST(WeightSpecs, BackboneHasTheTensorsOfTheFixtureCheckpoints) {
  EXPECT_EQ(spec_shapes(backbone_weights(find_preset("qwen35-tiny").backbone)),
            fixture_shapes({::verdict::testing::fixture("qwen35-tiny/model.safetensors")}));
  EXPECT_EQ(spec_shapes(backbone_weights(find_preset("qwen35-small").backbone)),
            fixture_shapes({::verdict::testing::fixture("qwen35-small/model.safetensors")}));
  EXPECT_EQ(spec_shapes(backbone_weights(find_preset("clef-tiny").backbone)),
            fixture_shapes({::verdict::testing::fixture("clef-tiny/bf16/model.safetensors")}));
}

TEST(WeightSpecs, HeadHasTheTensorsOfTheFixtureHead) {
  const Preset& p = find_preset("clef-tiny");
  ASSERT_TRUE(p.head.has_value());
  EXPECT_EQ(spec_shapes(head_weights(*p.head)),
            fixture_shapes({::verdict::testing::fixture("clef-tiny/bf16/joint_head.safetensors")}));
}

TEST(Presets, UnknownNamesAreUsageErrorsListingTheKnownOnes) {
  try {
    find_preset("qwen35-1t");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("qwen35-0.8b"), std::string::npos);
  }
  std::set<std::string> names;
  for (const Preset& p : presets()) EXPECT_TRUE(names.insert(p.name).second) << p.name;
  for (const char* n : {"qwen35-0.8b", "qwen35-2b", "qwen35-4b", "qwen35-9b", "qwen35-tiny", "qwen35-small",
                        "clef-tiny", "clef-flash-shape", "clef-0.8b", "qwen-demo"})
    EXPECT_TRUE(names.count(n)) << n;
}

}  // namespace
}  // namespace verdict::modelgen
