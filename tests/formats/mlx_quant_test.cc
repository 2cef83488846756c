#include "formats/mlx_quant.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/json.h"
#include "formats/hf_config.h"
#include "formats/tensor_store.h"
#include "safetensors_writer.h"
#include "support/fixtures.h"

namespace verdict::formats {
namespace {

using testing::contains_all;
using testing::error_message;

// Packs q values into per-row little-endian bit streams, one bit at a time (independent of the code
// under test).
std::vector<uint32_t> pack_rows(const std::vector<std::vector<uint32_t>>& rows, int bits) {
  std::vector<uint32_t> words;
  for (const auto& row : rows) {
    const std::size_t nwords = row.size() * static_cast<std::size_t>(bits) / 32;
    std::vector<uint32_t> w(nwords, 0);
    std::size_t bit = 0;
    for (uint32_t v : row) {
      for (int b = 0; b < bits; ++b, ++bit)
        if ((v >> b) & 1u) w[bit / 32] |= 1u << (bit % 32);
    }
    words.insert(words.end(), w.begin(), w.end());
  }
  return words;
}

// Owns the bytes behind three views (weight U32, scales and biases).
struct Synthetic {
  std::vector<uint8_t> weight_bytes, scale_bytes, bias_bytes;
  TensorView weight, scales, biases;
  Synthetic(const Synthetic&) = delete;  // the views point into the vectors above
  Synthetic& operator=(const Synthetic&) = delete;

  Synthetic(const std::vector<uint32_t>& words, int64_t rows, int64_t packed_cols, DType param_dtype,
            const std::vector<uint8_t>& scale_data, const std::vector<uint8_t>& bias_data, int64_t groups)
      : weight_bytes(testing::u32_bytes(words)), scale_bytes(scale_data), bias_bytes(bias_data) {
    weight = {"m.weight", DType::U32, {rows, packed_cols}, weight_bytes.data(), weight_bytes.size(), "syn"};
    scales = {"m.scales", param_dtype, {rows, groups}, scale_bytes.data(), scale_bytes.size(), "syn"};
    biases = {"m.biases", param_dtype, {rows, groups}, bias_bytes.data(), bias_bytes.size(), "syn"};
  }
};

// BF16 scales/biases of 1 and 0 for `rows` × `groups`.
Synthetic identity_quant(const std::vector<uint32_t>& words, int64_t rows, int64_t packed_cols, int64_t groups) {
  const std::vector<uint16_t> ones(static_cast<std::size_t>(rows * groups), 0x3f80);
  const std::vector<uint16_t> zeros(static_cast<std::size_t>(rows * groups), 0);
  return Synthetic(words, rows, packed_cols, DType::BF16, testing::u16_bytes(ones), testing::u16_bytes(zeros), groups);
}

TEST(MlxQuant, SpecForPrefersThePerModuleEntry) {
  QuantizationConfig cfg;
  cfg.global = {4, 64};
  cfg.overrides["language_model.model.layers.0.mlp.gate_proj"] = {8, 32};
  cfg.unquantized.push_back("language_model.model.layers.0.mlp.up_proj");
  EXPECT_EQ(cfg.spec_for("language_model.model.layers.0.mlp.gate_proj"), (QuantSpec{8, 32}));
  EXPECT_EQ(cfg.spec_for("language_model.model.layers.1.mlp.gate_proj"), (QuantSpec{4, 64}));
  EXPECT_TRUE(cfg.is_unquantized("language_model.model.layers.0.mlp.up_proj"));
  EXPECT_FALSE(cfg.is_unquantized("language_model.model.layers.0.mlp.gate_proj"));
  EXPECT_EQ(quantized_module_name("a.b.weight"), "a.b");
  EXPECT_EQ(quantized_module_name("a.b.scales"), "a.b");
  EXPECT_EQ(quantized_module_name("a.b.biases"), "a.b");
  EXPECT_EQ(quantized_module_name("a.b.A_log"), "a.b.A_log");
}

// Hand-packed words (computed outside the code under test): q[i] = (7i + 3) mod 2^bits for 32 values.
TEST(MlxQuant, UnpacksHandPackedStreamsAcrossWordBoundaries) {
  struct Case {
    int bits;
    std::vector<uint32_t> words;
  };
  const std::vector<Case> cases = {
      {3, {0x53977053, 0x70539770, 0x97705397}},
      {5, {0x4dfc4543, 0x78245ba3, 0x0753617d, 0x4b276cf4, 0xe55c7066}},
      {6, {0x9f611283, 0x90bbd2d9, 0xb2579740, 0x8f201eb3, 0x9cab91d5, 0x71538703}},
  };
  for (const Case& c : cases) {
    Synthetic s = identity_quant(c.words, 1, static_cast<int64_t>(c.words.size()), 1);
    const QuantizedTensor q = make_quantized(s.weight, s.scales, s.biases, {c.bits, 32});
    ASSERT_EQ(q.cols, 32);
    std::vector<float> row(32);
    mlx_dequantize_row(q, 0, row);
    for (int i = 0; i < 32; ++i) {
      const uint32_t expected = static_cast<uint32_t>((7 * i + 3) % (1 << c.bits));
      EXPECT_EQ(mlx_unpack(q, 0, i), expected) << "bits " << c.bits << " col " << i;
      EXPECT_EQ(row[static_cast<std::size_t>(i)], static_cast<float>(expected)) << "bits " << c.bits << " col " << i;
    }
  }
}

TEST(MlxQuant, UnpacksEveryWidthRowByRow) {
  for (int bits : {2, 3, 4, 5, 6, 8}) {
    const int64_t rows = 3, cols = 128, gs = 64;
    std::vector<std::vector<uint32_t>> q(rows, std::vector<uint32_t>(cols));
    uint32_t state = 12345u + static_cast<uint32_t>(bits);
    for (auto& row : q)
      for (auto& v : row) {
        state = state * 1664525u + 1013904223u;
        v = (state >> 13) & ((1u << bits) - 1u);
      }
    const auto words = pack_rows(q, bits);
    const int64_t packed_cols = cols * bits / 32;
    Synthetic s = identity_quant(words, rows, packed_cols, cols / gs);
    const QuantizedTensor qt = make_quantized(s.weight, s.scales, s.biases, {bits, static_cast<int>(gs)});
    EXPECT_EQ(qt.rows, rows);
    EXPECT_EQ(qt.cols, cols);
    const std::vector<float> all = mlx_dequantize(qt);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        ASSERT_EQ(mlx_unpack(qt, r, c), q[r][c]) << "bits " << bits << " at " << r << "," << c;
        ASSERT_EQ(all[static_cast<std::size_t>(r * cols + c)], static_cast<float>(q[r][c]));
      }
  }
}

TEST(MlxQuant, DequantizesWithGroupScalesAndBiases) {
  // One row of 64 4-bit values in two groups of 32: group 0 scale -0.375 bias 2.5; group 1 scale 0.125
  // bias -1 (BF16 0xbec0, 0x4020, 0x3e00, 0xbf80). Every s·q + b below is exact in fp32.
  std::vector<std::vector<uint32_t>> q(1, std::vector<uint32_t>(64));
  for (int i = 0; i < 64; ++i) q[0][static_cast<std::size_t>(i)] = static_cast<uint32_t>((i * 5) % 16);
  Synthetic s(pack_rows(q, 4), 1, 8, DType::BF16, testing::u16_bytes({0xbec0, 0x3e00}),
              testing::u16_bytes({0x4020, 0xbf80}), 2);
  const QuantizedTensor qt = make_quantized(s.weight, s.scales, s.biases, {4, 32});
  std::vector<float> row(64);
  mlx_dequantize_row(qt, 0, row);
  for (int i = 0; i < 64; ++i) {
    const double qv = q[0][static_cast<std::size_t>(i)];
    const double expected = i < 32 ? -0.375 * qv + 2.5 : 0.125 * qv - 1.0;
    EXPECT_EQ(row[static_cast<std::size_t>(i)], static_cast<float>(expected)) << i;
  }

  // F16 and F32 scales work the same way (F16 0xb600 = -0.375, 0x4100 = 2.5).
  Synthetic h(pack_rows(q, 4), 1, 8, DType::F16, testing::u16_bytes({0xb600, 0xb600}),
              testing::u16_bytes({0x4100, 0x4100}), 2);
  const QuantizedTensor qh = make_quantized(h.weight, h.scales, h.biases, {4, 32});
  Synthetic f(pack_rows(q, 4), 1, 8, DType::F32, testing::f32_bytes({-0.375f, -0.375f}),
              testing::f32_bytes({2.5f, 2.5f}), 2);
  const QuantizedTensor qf = make_quantized(f.weight, f.scales, f.biases, {4, 32});
  const auto from_h = mlx_dequantize(qh);
  const auto from_f = mlx_dequantize(qf);
  for (int i = 0; i < 64; ++i) {
    const float expected = static_cast<float>(-0.375 * q[0][static_cast<std::size_t>(i)] + 2.5);
    EXPECT_EQ(from_h[static_cast<std::size_t>(i)], expected);
    EXPECT_EQ(from_f[static_cast<std::size_t>(i)], expected);
  }
}

TEST(MlxQuant, MakeQuantizedValidates) {
  const std::vector<uint32_t> words(2 * 8, 0);
  Synthetic s = identity_quant(words, 2, 8, 1);  // 4-bit, 64 columns, group 64
  EXPECT_NO_THROW(make_quantized(s.weight, s.scales, s.biases, {4, 64}));
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(s.weight, s.scales, s.biases, {7, 64}); }),
                           {"quantized module 'm'", "unsupported bits 7"}));
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(s.weight, s.scales, s.biases, {4, 48}); }),
                           {"quantized module 'm'", "unsupported group size 48"}));
  // 8 bits would need 16 packed words per row for 64 columns.
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(s.weight, s.scales, s.biases, {8, 64}); }),
                           {"syn: quantized module 'm'", "imply 64 columns"}));
  // Group size 32 makes the scales imply 32 columns.
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(s.weight, s.scales, s.biases, {4, 32}); }),
                           {"quantized module 'm'", "imply 32 columns"}));

  TensorView wrong = s.weight;
  wrong.dtype = DType::F32;
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(wrong, s.scales, s.biases, {4, 64}); }),
                           {"quantized module 'm'", "weight dtype F32, expected U32"}));
  TensorView int_scales = s.scales;
  int_scales.dtype = DType::I16;
  TensorView int_biases = s.biases;
  int_biases.dtype = DType::I16;
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(s.weight, int_scales, int_biases, {4, 64}); }),
                           {"scales dtype I16"}));
  TensorView f16_biases = s.biases;
  f16_biases.dtype = DType::F16;
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(s.weight, s.scales, f16_biases, {4, 64}); }),
                           {"biases dtype F16 differs from scales dtype BF16"}));
  TensorView short_scales = s.scales;
  short_scales.shape = {1, 2};
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(s.weight, short_scales, short_scales, {4, 64}); }),
                           {"scales shape [1, 2] has 1 rows"}));
  TensorView flat = s.weight;
  flat.shape = {16};
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(flat, s.scales, s.biases, {4, 64}); }),
                           {"not 2-D"}));
  TensorView lying = s.weight;
  lying.shape = {4, 8};  // claims more bytes than it has
  EXPECT_TRUE(contains_all(error_message([&] { make_quantized(lying, s.scales, s.biases, {4, 64}); }),
                           {"weight holds 64 bytes"}));

  const QuantizedTensor q = make_quantized(s.weight, s.scales, s.biases, {4, 64});
  EXPECT_TRUE(contains_all(error_message([&] { mlx_unpack(q, 2, 0); }), {"row 2 out of range"}));
  EXPECT_TRUE(contains_all(error_message([&] { mlx_unpack(q, 0, 64); }), {"column 64 out of range"}));
  std::vector<float> small(10);
  EXPECT_TRUE(contains_all(error_message([&] { mlx_dequantize_row(q, 0, small); }), {"holds 10 values, need 64"}));
}

// dequant_rows.json: rows "0" and the last row of every quantized tensor (float64, exact in fp32) and
// the Frobenius norm of the whole dequantized tensor.
class MlxFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(MlxFixture, DequantizationMatchesTheReferenceBitForBit) {
  const std::string dir = verdict::testing::fixture(GetParam());
  const Json ref = load_json_file(dir + "/dequant_rows.json");
  const QuantSpec spec{ref.at("bits").get<int>(), ref.at("group_size").get<int>()};
  const ModelConfig cfg = load_model_config(dir + "/config.json");
  ASSERT_TRUE(cfg.quantization.has_value());
  const TensorStore store = TensorStore::open_dir(dir);

  const Json& tensors = ref.at("tensors");
  ASSERT_GT(tensors.size(), 20u);
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    const std::string& name = it.key();
    const Json& t = it.value();
    SCOPED_TRACE(name);
    const std::string module = name.substr(0, name.size() - std::string(".weight").size());
    ASSERT_EQ(cfg.quantization->spec_for(module), spec);
    const QuantizedTensor q = make_quantized(store.get(module + ".weight"), store.get(module + ".scales"),
                                             store.get(module + ".biases"), spec);
    ASSERT_EQ(q.rows, t.at("shape")[0].get<int64_t>());
    ASSERT_EQ(q.cols, t.at("shape")[1].get<int64_t>());
    ASSERT_TRUE(t.at("exact_in_f32").get<bool>());

    const std::vector<float> all = mlx_dequantize(q);
    const Json& rows = t.at("rows");
    ASSERT_EQ(rows.size(), 2u);
    for (auto r = rows.begin(); r != rows.end(); ++r) {
      const int64_t row = r.key() == "LAST" ? q.rows - 1 : std::stoll(r.key());
      ASSERT_TRUE(row == 0 || row == q.rows - 1) << r.key();
      const Json& values = r.value();
      ASSERT_EQ(static_cast<int64_t>(values.size()), q.cols);
      std::vector<float> one(static_cast<std::size_t>(q.cols));
      mlx_dequantize_row(q, row, one);
      for (int64_t c = 0; c < q.cols; ++c) {
        const double expected = values[static_cast<std::size_t>(c)].get<double>();
        const float expected_f = static_cast<float>(expected);
        ASSERT_EQ(static_cast<double>(expected_f), expected) << "not exact in f32 at " << row << "," << c;
        ASSERT_EQ(std::bit_cast<uint32_t>(one[static_cast<std::size_t>(c)]), std::bit_cast<uint32_t>(expected_f)) << "row " << row << " col " << c;
        ASSERT_EQ(std::bit_cast<uint32_t>(all[static_cast<std::size_t>(row * q.cols + c)]), std::bit_cast<uint32_t>(expected_f));
      }
    }
    double sum = 0;
    for (float v : all) sum += static_cast<double>(v) * static_cast<double>(v);
    const double l2 = t.at("l2").get<double>();
    EXPECT_NEAR(std::sqrt(sum), l2, 1e-6 * l2);
  }
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, MlxFixture,
                         ::testing::Values("qwen35-tiny-mlx4", "qwen35-tiny-mlx8", "qwen35-small-mlx4"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace verdict::formats
