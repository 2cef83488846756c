// The ggml quantizers: byte-exact against ggml's own reference quantizers, and read back by the kernels
// within each format's rounding error.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/ggml_quant.h"
#include "kernels/ops.h"

namespace verdict::formats {
namespace {

// quantize_row_q8_0_ref / q4_0_ref / q3_K_ref / q4_K_ref / q5_K_ref / q6_K_ref of llama.cpp 80fb11ac (ggml-quants.c) on
// x[i] = sinf(i · 0.37) · (1 + i mod 7) · 0.01, i < 256, as hex.
constexpr const char* kQ8_0 =
    "7e10000d25415b69660a07f6d9b79781f0e8ed00224a7312232b2610ebbcf1ddcabf8110c4da020719314957564103f9"
    "e2c5a8948ff4f4011c3f637f111d1c0cedc499ee4c10dacdcee003340d2339494a3915fcebd1b6a19ba9fa0116355772"
    "7f0f1308efcb6310a481eddfdce8042d5c1125353a2e10e2f5e1c9b6aeb8d7010f28445d6a6409057810f3d6b49581f0"
    "e9ef04264e7612232a230ce6b6f1dccac0c6df08081a3349565384103c02f7e0c3a79492f5f5041f42657f111b1908e9"
    "c095eedcd1d3e608370d22366f104545330efbead1b8a5a1b1fb031836566f790e1106ecc9a281eee0deeb08315f6e10"
    "11253437290addf5e1c9b7b2bddd021129455c675f0803f0d3b19381f0eaf108";
constexpr const char* kQ4_0 =
    "75207889aadcfe9faeb9a89776437160574678a0fc9a988866452303736468789accfe9f43a0daebebda888577563413"
    "0374777899bb5a20726057363636588b9eb9caebfceb99866f209765337160574747688a8dafb9dadbda7ba06468799a"
    "ccfe9fafb9b9a876547260576620fcfc9b998877552302726368789abbed6620b9caebfbeb9986775635130374767889";
constexpr const char* kQ4_K =
    "a7086f14fefff8f9fef9effdee7dfde838587a7c8daebec8c8b775635130170606686a7c9fb9dafa8a99968367351464"
    "24037364677a87b9ea9bbbcac8b69563726050313636588a9cbedfe7f8f79583b775635130170607686a7c9fb9dafa8a"
    "988673573504645446485879ab8c9dadacbccbc9b89765836252333848699badbfdff9f9f89794725037160677787b9e";

constexpr const char* kQ5_K =
    "80048b14fefef8fbfff8f0fdef6cdedbe1c1c1c183870f0f1f1e1c3c7c78f8f0f0e1e1c1c383870f0f1f1e3e3c7878f8"
    "70a2f5f92c5e8ea2a17ffbe7b3703e1d0ed0d5fa2f73b5f615222e08cf7c19c85907e7c9cee51073d6386886817d3bd7"
    "f4d190726d7eb1153a6dafd0f0ef2c177efbd6a2603e0d0ed0d5fa3f72c4f514212d07be6b09c8a98c91b10366093b6a"
    "396986826f2dcaf7d494766f80c3173b6eafd2e2d12d19f4b06e2c0cfde1f62c";

constexpr const char* kQ6_K =
    "006359e0f6aaa912821d078e76219c4a2570975b200bb634b54c16c3b4ea4fd29f05b08277ae15b9794391dee8bf4791"
    "3c9303508950c700cc49c95d153fdaf47d751d55e09c1a8c211a64ee15892bc9ccfa3b461db427850cbd8d86bd25c081"
    "71ff52681f462abb33a33f085027117ca81872a98d201bc552c35802c0a4ca2032367a6b5b4b9f9ece8d898494a0a171"
    "bebaf9f8e4e59191454506171a1a6e6bb5b5f8e8d89d5d4d4a0a07172662b2b6b9faebe6e2939747461515195c6868bc"
    "7f906d83ba867a977bac80695e7a4c7b2701";

constexpr const char* kQ3_K =
    "d5e5e7e7e7b32b3b3b3b3a5a585cddd4effffededc9c989810101127a367efef683cf1e2c7db"
    "3f6cdc484392bd4854f32d70b3f1cccbb722df8f4d0235091e2678b3e2d5897cafdc8041120f"
    "0895217d77b5c3cdca322f1fcab87c333ac114380527b9abce481754083f700f7f91";

// quantize_iq4_nl / quantize_iq4_xs (no importance weights: what llama-quantize runs without --imatrix) of the
// same llama.cpp source on the same input.
constexpr const char* kIQ4_NL =
    "69106889bbddfe9fbfb9b8976532715046366490fd9b98876634120262536879aadcfe9f8590dbececea8884674524130374"
    "66789acb7f10725046352536588b9eb9dbecfceb99858a109765327150473646589b9dafc9dbebeb6290636879abddfe9fbf"
    "c9c9a875437150469610fdfd9c998766442302625257689accee7110b9dbecfceb9985774524130273657899";
constexpr const char* kIQ4_XS =
    "25813c0cf11ff0106889bbddfe9fbfb9b897653371504636fd9b98876634130262536879aaccfe9fdbececea888467452413"
    "037466789acb725046352536588b9eb9dbecfceb99859765327150473646589b9dafc9dbebeb636879abddfe9fbfc9c9a875"
    "43715046fdfd9c998766442302625257689acceeb9dbecfceb9985774524130273657899";

std::vector<float> fixed_input() {
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) x[static_cast<std::size_t>(i)] = std::sin(static_cast<float>(i) * 0.37f) * static_cast<float>(1 + i % 7) * 0.01f;
  return x;
}

// quantize_row_q2_K_ref of the same llama.cpp on the same input (libggml-base of the peer build,
// ../shared/tools/llamacpp-peer.sh).
constexpr const char* kQ2_K =
    "ee8adcdf56bccd8bff89dfdaa9dd87ed06064a4a5b7b6faefebdb9b9a4949141414506071b1a2e6e7abab9e4e5e55054b9f5f5e4e4"
    "9151414606072b2a6ebebabef9e8e9e590984445561a1a5e6b6fbf141aba1c";

// quantize_row_q4_1_ref / q5_0_ref / q5_1_ref of the same llama.cpp on the same input.
constexpr const char* kQ4_1 =
    "862075ac7889aaccfe9eaeb8a8977543716057468020f1ab0365677799badcfd8c9b9787653312601320c2aa24030315"
    "677a88a9caebfc8a8876653443205aac726057363647688b9eb9dbecfcfb99868f206fac8765337160474647688a8d9f"
    "b9cadada7420bcab9b9776553301605046465779ab8d9fa8952066acecfc9b9987664523027263676889bbdd402066ac"
    "b9dbecfceb9986785635140374767899";
constexpr const char* kQ5_0 =
    "751cff01fe03e0024598eb2d4d51512fdb77e3c09e8d789c07fc0ff0e825200fdd8a4705e5c8d0f12487db2e439c1fe0"
    "3fc095c6d6b41009de9c592707e9edf123765a1cc07f80fff4c09e7c6b7db0062c5295c7d7d6121c6f1c00ff01fe1edb"
    "76e2b09e8d9ec1151a3f6294b5b47b9cfe07f807d8d0f13488db2e5e616130fc98e3c09e661c0ff01fe0e9f926221fed"
    "9a4705e4c6cfd01367cb661c3fc07f805295c7d7c5110cefac692706e8dce012";
constexpr const char* kQ5_1 =
    "611c75acff01fe03e00255a9fc3e5d62512feb87e3c09e8d5b1cf1abf003f00f07dadfff2275b8fa1a272f0ecb7713c1"
    "e31bc2aae01fc01f49170729dee51052a5d8f80601fdbb67201c5aacc07f80fff5d0ae7d6c7eb1173d63a6d8f9e7232d"
    "691c6fac00ff01fe2edb76e2c09e8d9ec1151a3f6294b5b54f1cbcab01f803f0262ffdba6603c0a08d8dbff2670c3f51"
    "6f1c66ac0ff01fe0e9f926221fdd9a4704e4c6cfd01367cb1d1c66acbfc07f8073a6e8f8e7222cf0bd6a2707f8ecf123";

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::vector<uint8_t> quantize(GgmlType type, const std::vector<float>& x) {
  // No row size for a length that is not a whole number of blocks: the quantizer refuses it.
  std::vector<uint8_t> out(ggml_row_bytes(type, x.size()).value_or(0));
  ggml_quantize_row(type, x, out.data());
  return out;
}

std::vector<float> read_back(GgmlType type, const std::vector<uint8_t>& blocks, int64_t n) {
  kernels::WeightMatrix w;
  w.rows = 1;
  w.cols = n;
  w.blocks = blocks.data();
  switch (type) {
    case GgmlType::F16: w.type = kernels::WeightType::F16; break;
    case GgmlType::Q8_0: w.type = kernels::WeightType::Q8_0; break;
    case GgmlType::Q4_0: w.type = kernels::WeightType::Q4_0; break;
    case GgmlType::Q4_K: w.type = kernels::WeightType::Q4_K; break;
    case GgmlType::Q5_K: w.type = kernels::WeightType::Q5_K; break;
    case GgmlType::Q6_K: w.type = kernels::WeightType::Q6_K; break;
    case GgmlType::Q3_K: w.type = kernels::WeightType::Q3_K; break;
    case GgmlType::Q2_K: w.type = kernels::WeightType::Q2_K; break;
    case GgmlType::IQ4_NL: w.type = kernels::WeightType::IQ4_NL; break;
    case GgmlType::IQ4_XS: w.type = kernels::WeightType::IQ4_XS; break;
    case GgmlType::Q4_1: w.type = kernels::WeightType::Q4_1; break;
    case GgmlType::Q5_0: w.type = kernels::WeightType::Q5_0; break;
    case GgmlType::Q5_1: w.type = kernels::WeightType::Q5_1; break;
    default: ADD_FAILURE() << "type"; break;
  }
  std::vector<float> y(static_cast<std::size_t>(n));
  kernels::dequantize_row(w, 0, y.data());
  return y;
}

TEST(GgmlQuant, ByteExactWithGgmlReferenceQuantizers) {
  const std::vector<float> x = fixed_input();
  EXPECT_EQ(hex(quantize(GgmlType::Q8_0, x)), kQ8_0);
  EXPECT_EQ(hex(quantize(GgmlType::Q4_0, x)), kQ4_0);
  EXPECT_EQ(hex(quantize(GgmlType::Q4_K, x)), kQ4_K);
  EXPECT_EQ(hex(quantize(GgmlType::Q5_K, x)), kQ5_K);
  EXPECT_EQ(hex(quantize(GgmlType::Q6_K, x)), kQ6_K);
  EXPECT_EQ(hex(quantize(GgmlType::Q3_K, x)), kQ3_K);
  EXPECT_EQ(hex(quantize(GgmlType::IQ4_NL, x)), kIQ4_NL);
  EXPECT_EQ(hex(quantize(GgmlType::IQ4_XS, x)), kIQ4_XS);
  EXPECT_EQ(hex(quantize(GgmlType::Q4_1, x)), kQ4_1);
  EXPECT_EQ(hex(quantize(GgmlType::Q5_0, x)), kQ5_0);
  EXPECT_EQ(hex(quantize(GgmlType::Q5_1, x)), kQ5_1);
  EXPECT_EQ(hex(quantize(GgmlType::Q2_K, x)), kQ2_K);
}

TEST(GgmlQuant, KernelsReadBackWithinTheRoundingError) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> x(512);
    for (float& v : x) v = normal(rng) * (trial + 1) * 0.05f;
    double err2[12] = {}, ref2 = 0;
    const GgmlType types[12] = {GgmlType::Q8_0, GgmlType::Q4_0,   GgmlType::Q4_K,   GgmlType::Q6_K,
                                GgmlType::Q5_K, GgmlType::Q3_K,   GgmlType::IQ4_NL, GgmlType::IQ4_XS,
                                GgmlType::Q4_1, GgmlType::Q5_0,   GgmlType::Q5_1,   GgmlType::Q2_K};
    for (int k = 0; k < 12; ++k) {
      const std::vector<float> y = read_back(types[k], quantize(types[k], x), 512);
      for (std::size_t i = 0; i < x.size(); ++i) {
        err2[k] += (double(y[i]) - x[i]) * (double(y[i]) - x[i]);
        if (k == 0) ref2 += double(x[i]) * x[i];
      }
    }
    EXPECT_LT(std::sqrt(err2[0] / ref2), 0.006) << trial;  // 8-bit: about 0.4 %
    EXPECT_LT(std::sqrt(err2[1] / ref2), 0.10) << trial;   // 4-bit, one scale per 32
    EXPECT_LT(std::sqrt(err2[2] / ref2), 0.08) << trial;   // 4-bit with 6-bit sub-block scales and mins
    EXPECT_LT(std::sqrt(err2[3] / ref2), 0.025) << trial;  // 6-bit with 8-bit scales per 16 values
    EXPECT_LT(std::sqrt(err2[4] / ref2), 0.04) << trial;   // 5-bit with 6-bit sub-block scales and mins
    EXPECT_LT(std::sqrt(err2[5] / ref2), 0.20) << trial;   // 3-bit with 6-bit scales per 16 values
    EXPECT_LT(std::sqrt(err2[6] / ref2), 0.09) << trial;   // 4-bit non-linear values, one scale per 32
    EXPECT_LT(std::sqrt(err2[7] / ref2), 0.09) << trial;   // the same with 6-bit sub-block scales
    EXPECT_LT(std::sqrt(err2[8] / ref2), 0.09) << trial;   // 4-bit with a min, one scale per 32
    EXPECT_LT(std::sqrt(err2[9] / ref2), 0.05) << trial;   // 5-bit, one scale per 32
    EXPECT_LT(std::sqrt(err2[10] / ref2), 0.045) << trial;  // 5-bit with a min
    EXPECT_LT(std::sqrt(err2[11] / ref2), 0.40) << trial;   // 2-bit with 4-bit scales and mins per 16 values
  }
}

TEST(GgmlQuant, Q8_0BlocksHoldTheScaleAndRoundedValues) {
  std::vector<float> x(32, 0.0f);
  x[0] = 1.27f;
  x[1] = -0.5f;
  x[2] = 0.004f;
  const std::vector<uint8_t> b = quantize(GgmlType::Q8_0, x);
  const std::vector<float> y = read_back(GgmlType::Q8_0, b, 32);
  EXPECT_EQ(static_cast<int8_t>(b[2]), 127);
  EXPECT_EQ(static_cast<int8_t>(b[3]), -50);
  EXPECT_EQ(static_cast<int8_t>(b[4]), 0);
  EXPECT_NEAR(y[0], 1.27f, 1e-3);
  EXPECT_NEAR(y[1], -0.5f, 1e-3);
  // An all-zero block has scale 0 and reads back as zeros.
  const std::vector<uint8_t> z = quantize(GgmlType::Q8_0, std::vector<float>(32, 0.0f));
  for (float v : read_back(GgmlType::Q8_0, z, 32)) EXPECT_EQ(v, 0.0f);
}

TEST(GgmlQuant, FloatTypesAndBadInput) {
  const std::vector<float> x = {1.0f, -2.5f, 65504.0f, 1e-8f};
  EXPECT_EQ(read_back(GgmlType::F16, quantize(GgmlType::F16, x), 4), (std::vector<float>{1.0f, -2.5f, 65504.0f, 0.0f}));
  EXPECT_EQ(quantize(GgmlType::BF16, {1.0f, -2.0f}), (std::vector<uint8_t>{0x80, 0x3f, 0x00, 0xc0}));
  EXPECT_THROW(quantize(GgmlType::Q8_0, std::vector<float>(31)), Error);
  EXPECT_THROW(quantize(GgmlType::Q6_K, std::vector<float>(128)), Error);
  EXPECT_THROW(quantize(GgmlType::Q5_K, std::vector<float>(128)), Error);
  EXPECT_THROW(quantize(GgmlType::Q5_0, std::vector<float>(48)), Error);
  EXPECT_THROW(quantize(GgmlType::IQ2_XXS, std::vector<float>(256)), Error);  // a type verdict does not write
  // Non-finite weights must not crash (the result is meaningless but defined).
  std::vector<float> bad(256, 1.0f);
  bad[3] = std::numeric_limits<float>::quiet_NaN();
  bad[9] = std::numeric_limits<float>::infinity();
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q4_K,
                     GgmlType::Q5_K, GgmlType::Q6_K})
    EXPECT_NO_THROW(quantize(t, bad));
}

}  // namespace
}  // namespace verdict::formats
