// The production safetensors writer: the Python library's exact layout (checked byte for byte against
// fixture files written by it), streaming, and its refusals.
#include "formats/safetensors_writer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "formats/safetensors.h"
#include "scratch.h"
#include "support/fixtures.h"

namespace verdict::formats {
namespace {

using modelgen::testing::read_bytes;
using modelgen::testing::ScratchDir;

std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::string header_of(const std::vector<uint8_t>& file) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | file[static_cast<std::size_t>(i)];
  return std::string(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(n));
}

// Rebuilds a fixture file from its parsed tensors: the writer must give back the very same bytes.
void expect_rewrites_identically(const std::string& path) {
  const SafetensorsFile file(path);
  std::vector<TensorData> tensors;
  for (const TensorView& t : file.tensors())
    tensors.push_back({{t.name, t.dtype, t.shape}, std::vector<uint8_t>(t.data, t.data + t.nbytes)});
  const std::vector<uint8_t> original = read_bytes(path);
  // The metadata order of the file (the parser returns a map; the order is read from the header text).
  const std::string header = header_of(original);
  SafetensorsMetadata metadata;
  const auto ordered = nlohmann::ordered_json::parse(header)["__metadata__"];
  for (const auto& [k, v] : ordered.items()) metadata.emplace_back(k, v.get<std::string>());
  const std::vector<uint8_t> rewritten = serialize_safetensors(tensors, metadata);
  EXPECT_EQ(header_of(rewritten), header) << path;
  EXPECT_TRUE(rewritten == original) << path;
}

TEST(SafetensorsWriter, HeaderIsCompactSortedAndPaddedToEightBytes) {
  const std::vector<TensorData> tensors = {
      {{"b.weight", DType::BF16, {2}}, {1, 2, 3, 4}},
      {{"a", DType::F32, {}}, bytes_of({2.5f})},
  };
  const std::vector<uint8_t> file = serialize_safetensors(tensors, {{"format", "pt"}});
  const std::string header = header_of(file);
  const std::string expected =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
      R"("b.weight":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]}})";
  ASSERT_GE(header.size(), expected.size());
  EXPECT_EQ(header.substr(0, expected.size()), expected);
  EXPECT_EQ(header.find_first_not_of(' ', expected.size()), std::string::npos);
  EXPECT_EQ(header.size() % 8, 0u);
  EXPECT_EQ(file.size(), 8 + header.size() + 8);

  const SafetensorsHeader parsed = parse_safetensors(file.data(), file.size(), "test");
  ASSERT_EQ(parsed.tensors.size(), 2u);
  EXPECT_EQ(parsed.tensors[0].name, "a");
  EXPECT_TRUE(parsed.tensors[0].shape.empty());
  float a = 0;
  std::memcpy(&a, parsed.tensors[0].data, 4);
  EXPECT_EQ(a, 2.5f);
  EXPECT_EQ(parsed.metadata.at("format"), "pt");
}

TEST(SafetensorsWriter, ReproducesFilesWrittenByThePythonLibrary) {
  expect_rewrites_identically(::verdict::testing::fixture("qwen35-tiny/model.safetensors"));
  expect_rewrites_identically(::verdict::testing::fixture("qwen35-tiny-mlx4/model.safetensors"));
  expect_rewrites_identically(::verdict::testing::fixture("clef-tiny/bf16/joint_head.safetensors"));
}

TEST(SafetensorsWriter, AsGivenOrderKeepsTheCallersOrder) {
  const SafetensorsLayout layout({{"z", DType::U8, {3}}, {"a", DType::U8, {1}}}, {}, TensorOrder::AsGiven);
  EXPECT_EQ(layout.tensors()[0].name, "z");
  EXPECT_EQ(layout.begin(1), 3u);
  EXPECT_EQ(layout.header().rfind(R"({"z":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},)", 0), 0u);
}

TEST(SafetensorsWriter, StreamsDataInPiecesAndChecksTheCount) {
  ScratchDir dir;
  const SafetensorsLayout layout({{"x", DType::F32, {2, 2}}, {"y", DType::BF16, {3}}});
  {
    SafetensorsStreamWriter w(dir.file("ok.safetensors"), layout);
    const std::vector<uint8_t> data(22, 7);
    w.write(data.data(), 5);   // pieces may cross tensor boundaries
    w.write(data.data(), 17);
    EXPECT_THROW(w.write(data.data(), 1), Error);
    w.finish();
  }
  const SafetensorsFile file(dir.file("ok.safetensors"));
  ASSERT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.tensors()[1].name, "y");
  EXPECT_EQ(file.tensors()[1].data[0], 7);

  SafetensorsStreamWriter short_writer(dir.file("short.safetensors"), layout);
  const uint8_t one = 1;
  short_writer.write(&one, 1);
  EXPECT_THROW(short_writer.finish(), Error);
}

TEST(SafetensorsWriter, RefusesBadLayouts) {
  EXPECT_THROW(SafetensorsLayout({{"a", DType::F32, {1}}, {"a", DType::F32, {1}}}), Error);
  EXPECT_THROW(SafetensorsLayout({{"__metadata__", DType::F32, {1}}}), Error);
  EXPECT_THROW(SafetensorsLayout({{"", DType::F32, {1}}}), Error);
  EXPECT_THROW(SafetensorsLayout({{"a", DType::F32, {-1}}}), Error);
  EXPECT_THROW(serialize_safetensors({{{"a", DType::F32, {2}}, {1, 2, 3}}}), Error);
  ScratchDir dir;
  EXPECT_THROW(SafetensorsStreamWriter(dir.file("no/such/folder/x.safetensors"), SafetensorsLayout()), Error);
}

}  // namespace
}  // namespace verdict::formats
