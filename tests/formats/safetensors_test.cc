#include "formats/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "safetensors_writer.h"
#include "support/fixtures.h"

namespace verdict::formats {
namespace {

using testing::build_safetensors;
using testing::contains_all;
using testing::error_message;
using testing::raw_safetensors;

const std::string kWhat = "bad.safetensors";

std::string parse_error(const std::vector<uint8_t>& bytes) {
  return error_message([&] { parse_safetensors(bytes.data(), bytes.size(), kWhat); });
}

// An image with the given header text and `data_bytes` bytes of data.
std::string header_error(const std::string& header, std::size_t data_bytes) {
  return parse_error(raw_safetensors(header, data_bytes));
}

TEST(Safetensors, ParsesViewsZeroCopyInOffsetOrder) {
  // Header keys are written sorted ("a" before "b"), data in the opposite order.
  const std::vector<uint8_t> b_data = testing::f32_bytes({1.0f, 2.0f, 3.0f});
  const std::vector<uint8_t> a_data = testing::u16_bytes({0x3f80, 0xc000});
  const auto image = build_safetensors({{"b", "F32", {3}, b_data}, {"a", "BF16", {1, 2}, a_data}},
                                       {{"format", "pt"}});
  const SafetensorsHeader h = parse_safetensors(image.data(), image.size(), "x.safetensors");
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "b");
  EXPECT_EQ(h.tensors[1].name, "a");
  EXPECT_EQ(h.metadata.at("format"), "pt");

  uint64_t header_len = 0;
  std::memcpy(&header_len, image.data(), 8);
  const uint8_t* data = image.data() + 8 + header_len;
  EXPECT_EQ(h.tensors[0].data, data);  // points into the buffer, no copy
  EXPECT_EQ(h.tensors[0].nbytes, 12u);
  EXPECT_EQ(h.tensors[0].dtype, DType::F32);
  EXPECT_EQ(h.tensors[0].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(h.tensors[0].numel(), 3);
  EXPECT_EQ(h.tensors[0].file, "x.safetensors");
  EXPECT_EQ(h.tensors[1].data, data + 12);
  EXPECT_EQ(h.tensors[1].dtype, DType::BF16);
  EXPECT_EQ(h.tensors[1].shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(std::memcmp(h.tensors[1].data, a_data.data(), 4), 0);
}

TEST(Safetensors, ScalarsEmptyTensorsAndEmptyHeader) {
  const auto image = build_safetensors({{"scalar", "F32", {}, testing::f32_bytes({5.0f})},
                                        {"empty", "BF16", {0, 4}, {}},
                                        {"flags", "BOOL", {2}, {1, 0}}});
  const SafetensorsHeader h = parse_safetensors(image.data(), image.size(), kWhat);
  ASSERT_EQ(h.tensors.size(), 3u);
  for (const TensorView& t : h.tensors) {
    if (t.name == "scalar") {
      EXPECT_EQ(t.numel(), 1);
    } else if (t.name == "empty") {
      EXPECT_EQ(t.numel(), 0);
      EXPECT_EQ(t.nbytes, 0u);
    }
  }
  const auto empty = raw_safetensors("{}", 0);
  EXPECT_TRUE(parse_safetensors(empty.data(), empty.size(), kWhat).tensors.empty());
  // Trailing spaces (the reference writer pads the header) are fine.
  const auto padded = raw_safetensors("{\"__metadata__\":{\"a\":\"b\"}}      ", 0);
  EXPECT_EQ(parse_safetensors(padded.data(), padded.size(), kWhat).metadata.at("a"), "b");
}

TEST(Safetensors, GapsBetweenTensorsAreAllowed) {
  const std::string header =
      R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}})";
  const auto image = raw_safetensors(header, 10);
  const SafetensorsHeader h = parse_safetensors(image.data(), image.size(), kWhat);
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[1].data - h.tensors[0].data, 6);
}

TEST(Safetensors, TruncatedFiles) {
  for (std::size_t n : {0u, 1u, 7u}) {
    const std::vector<uint8_t> bytes(n, 0);
    EXPECT_TRUE(contains_all(parse_error(bytes), {"bad.safetensors: truncated file"})) << n;
  }
  // Header length past the end of the file.
  EXPECT_TRUE(contains_all(parse_error(raw_safetensors("{}", 0, 100)),
                           {"bad.safetensors", "truncated file", "header length 100 past the end"}));
  // Data shorter than the offsets promise.
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})", 6),
                           {"bad.safetensors: tensor 'x'", "exceed the data section (6 bytes"}));
}

TEST(Safetensors, AbsurdHeaderLengths) {
  EXPECT_TRUE(contains_all(parse_error(raw_safetensors("{}", 0, 9000000000000000000ull)),
                           {"bad.safetensors", "header length 9000000000000000000", "exceeds the limit"}));
  EXPECT_TRUE(contains_all(parse_error(raw_safetensors("{}", 0, ~uint64_t{0})), {"bad.safetensors", "exceeds the limit"}));
  EXPECT_TRUE(contains_all(parse_error(raw_safetensors("{}", 0, 100000001)),
                           {"bad.safetensors", "header length 100000001 exceeds the limit of 100000000"}));
}

TEST(Safetensors, OffsetsOverlapping) {
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  EXPECT_TRUE(contains_all(header_error(header, 12), {"bad.safetensors", "tensor 'b'", "overlap tensor 'a'"}));
  // A tensor nested inside a larger one.
  const std::string nested =
      R"({"big":{"dtype":"U8","shape":[16],"data_offsets":[0,16]},"c":{"dtype":"U8","shape":[2],"data_offsets":[14,16]},)"
      R"("d":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})";
  EXPECT_TRUE(contains_all(header_error(nested, 16), {"bad.safetensors", "overlap tensor 'big'"}));
  // Two empty tensors at the same offset occupy nothing.
  const std::string empties =
      R"({"e1":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},"e2":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
      R"("f":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  const auto image = raw_safetensors(empties, 4);
  EXPECT_EQ(parse_safetensors(image.data(), image.size(), kWhat).tensors.size(), 3u);
}

TEST(Safetensors, OffsetsExceedingTheData) {
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}})", 10),
                           {"bad.safetensors: tensor 'x'", "data_offsets [8,12] exceed the data section"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","shape":[0],"data_offsets":[8,4]}})", 10),
                           {"bad.safetensors: tensor 'x'", "end before they begin"}));
  EXPECT_TRUE(contains_all(
      header_error(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551615,18446744073709551615]}})", 4),
      {"bad.safetensors: tensor 'x'", "exceed the data section"}));
}

TEST(Safetensors, UnknownDtype) {
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}})", 1),
                           {"bad.safetensors: tensor 'x': unknown dtype 'Q7'"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":7,"shape":[1],"data_offsets":[0,1]}})", 1),
                           {"bad.safetensors: tensor 'x'", "'dtype' is not a string"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"shape":[1],"data_offsets":[0,1]}})", 1),
                           {"bad.safetensors: tensor 'x'", "missing 'dtype'"}));
}

TEST(Safetensors, ShapeTimesDtypeMustMatchTheByteSpan) {
  EXPECT_EQ(header_error(R"({"x":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,10]}})", 12),
            "bad.safetensors: tensor 'x': shape [2,3] × BF16 needs 12 bytes but data_offsets span 10");
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,4]}})", 4),
                           {"bad.safetensors: tensor 'x'", "overflows"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,4]}})", 4),
                           {"bad.safetensors: tensor 'x'", "overflows"}));
  // A zero dimension makes any other dimension harmless.
  const auto image = raw_safetensors(R"({"x":{"dtype":"F32","shape":[0,4611686018427387904],"data_offsets":[0,0]}})", 0);
  EXPECT_EQ(parse_safetensors(image.data(), image.size(), kWhat).tensors.at(0).nbytes, 0u);
}

TEST(Safetensors, BadShapes) {
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}})", 0),
                           {"bad.safetensors: tensor 'x'", "negative dimension -1"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})", 1),
                           {"bad.safetensors: tensor 'x'", "not a non-negative integer"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","shape":["2"],"data_offsets":[0,2]}})", 2),
                           {"bad.safetensors: tensor 'x'", "not a non-negative integer"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","shape":2,"data_offsets":[0,2]}})", 2),
                           {"bad.safetensors: tensor 'x'", "'shape' is not an array"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","data_offsets":[0,2]}})", 2),
                           {"bad.safetensors: tensor 'x'", "missing 'shape'"}));
}

TEST(Safetensors, BadOffsets) {
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0]}})", 2),
                           {"bad.safetensors: tensor 'x'", "not a [begin, end] pair"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[-2,0]}})", 2),
                           {"bad.safetensors: tensor 'x'", "not non-negative integers"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","shape":[2]}})", 2),
                           {"bad.safetensors: tensor 'x'", "missing 'data_offsets'"}));
}

TEST(Safetensors, HeaderNotJsonOrNotAnObject) {
  EXPECT_TRUE(contains_all(header_error("{\"x\": ", 0), {"bad.safetensors", "header is not valid JSON"}));
  EXPECT_TRUE(contains_all(header_error("", 0), {"bad.safetensors", "header is not valid JSON"}));
  EXPECT_TRUE(contains_all(header_error("\xff\xfe{}", 0), {"bad.safetensors", "header is not valid JSON"}));
  EXPECT_TRUE(contains_all(header_error("[1,2,3]", 0), {"bad.safetensors: header is not a JSON object"}));
  EXPECT_TRUE(contains_all(header_error("\"text\"", 0), {"bad.safetensors: header is not a JSON object"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":[1,2]})", 0), {"bad.safetensors: tensor 'x'", "not a JSON object"}));
  EXPECT_TRUE(contains_all(header_error(std::string(100000, '[') + std::string(100000, ']'), 0),
                           {"bad.safetensors", "nested deeper"}));
}

TEST(Safetensors, DuplicateNamesAndBadMetadata) {
  const std::string dup =
      R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"x":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  EXPECT_TRUE(contains_all(header_error(dup, 2), {"bad.safetensors", "duplicate tensor name 'x'"}));
  EXPECT_TRUE(contains_all(header_error(R"({"x":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1),
                           {"bad.safetensors", "duplicate key 'dtype'"}));
  EXPECT_TRUE(contains_all(header_error(R"({"__metadata__":{"a":1}})", 0),
                           {"bad.safetensors", "'__metadata__' value 'a' is not a string"}));
  EXPECT_TRUE(contains_all(header_error(R"({"__metadata__":["a"]})", 0),
                           {"bad.safetensors", "'__metadata__' is not a JSON object"}));
}

TEST(SafetensorsFile, MapsAFile) {
  testing::TempDir dir;
  const std::string path = dir.file("m.safetensors");
  testing::write_file(path, build_safetensors({{"w", "F32", {2}, testing::f32_bytes({1.5f, -2.0f})}}));
  const SafetensorsFile f(path);
  EXPECT_EQ(f.path(), path);
  ASSERT_EQ(f.tensors().size(), 1u);
  EXPECT_EQ(f.tensors()[0].file, path);
  float v[2];
  std::memcpy(v, f.tensors()[0].data, sizeof v);
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(f.file_size(), build_safetensors({{"w", "F32", {2}, testing::f32_bytes({1.5f, -2.0f})}}).size());
}

TEST(SafetensorsFile, ErrorsNameThePath) {
  testing::TempDir dir;
  EXPECT_TRUE(contains_all(error_message([&] { SafetensorsFile f(dir.file("absent.safetensors")); }),
                           {dir.file("absent.safetensors")}));
  testing::write_file(dir.file("empty.safetensors"), {});
  EXPECT_TRUE(contains_all(error_message([&] { SafetensorsFile f(dir.file("empty.safetensors")); }),
                           {dir.file("empty.safetensors") + ": truncated file"}));
  auto image = build_safetensors({{"w", "F32", {4}, testing::f32_bytes({1, 2, 3, 4})}});
  image.resize(image.size() - 3);
  testing::write_file(dir.file("cut.safetensors"), image);
  EXPECT_TRUE(contains_all(error_message([&] { SafetensorsFile f(dir.file("cut.safetensors")); }),
                           {dir.file("cut.safetensors") + ": tensor 'w'", "exceed the data section"}));
}

TEST(SafetensorsFile, FixtureHeaderMatchesItsTable) {
  // qwen35-tiny/model.safetensors: the first tensor in data order is the embedding, BF16 [768, 64] at 0.
  const SafetensorsFile f(verdict::testing::fixture("qwen35-tiny/model.safetensors"));
  ASSERT_FALSE(f.tensors().empty());
  EXPECT_EQ(f.tensors().front().name, "model.language_model.embed_tokens.weight");
  EXPECT_EQ(f.tensors().front().shape, (std::vector<int64_t>{768, 64}));
  EXPECT_EQ(f.tensors().size(), 74u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  for (std::size_t i = 1; i < f.tensors().size(); ++i) EXPECT_LT(f.tensors()[i - 1].data, f.tensors()[i].data);
}

}  // namespace
}  // namespace verdict::formats
