// The GGUF reader and writer: the llama.cpp-written fixture file, a writer round trip over every value
// type, and the zero-copy tensor views.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/ggml_type.h"
#include "formats/gguf.h"
#include "formats/gguf_writer.h"
#include "gguf_samples.h"
#include "support/fixtures.h"

namespace verdict::formats {
namespace {

TEST(Gguf, ReadsTheLlamaCppFixtureFile) {
  const GgufFile f(verdict::testing::fixture("qwen35-tiny/model-f32.gguf"));
  const GgufHeader& h = f.header();
  EXPECT_EQ(h.version, 3u);
  EXPECT_EQ(h.alignment, 32u);
  EXPECT_EQ(h.metadata.size(), 33u);
  EXPECT_EQ(h.tensors.size(), 55u);
  EXPECT_EQ(f.get_string("general.architecture"), "qwen35");
  EXPECT_EQ(f.get_int("qwen35.embedding_length"), 64);
  EXPECT_FLOAT_EQ(static_cast<float>(f.get_double("qwen35.rope.freq_base")), 1e7f);
  const GgufValue& sections = f.get_array("qwen35.rope.dimension_sections");
  ASSERT_EQ(sections.size(), 4u);
  EXPECT_EQ(sections.element_type(), GgufValueType::I32);
  EXPECT_EQ(*sections.int_at(0), 2);
  EXPECT_EQ(*sections.int_at(3), 0);
  const GgufValue& tokens = f.get_array("tokenizer.ggml.tokens");
  ASSERT_NE(tokens.strings(), nullptr);
  EXPECT_EQ(tokens.strings()->at(758), "<|im_end|>");
  EXPECT_EQ(*f.find("tokenizer.ggml.add_bos_token")->as_bool(), false);

  const GgufTensor* embd = f.find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->type, GgmlType::F32);
  EXPECT_EQ(embd->ne, (std::vector<int64_t>{64, 768}));
  EXPECT_EQ(embd->rows(), 768);
  EXPECT_EQ(embd->nbytes, 64u * 768u * 4u);
  EXPECT_EQ(embd->data, f.header().tensors.front().data);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(embd->data) % 32, 0u);  // zero-copy, aligned in the mapping
  EXPECT_EQ(f.find_tensor("blk.0.ssm_a")->ne, (std::vector<int64_t>{4}));
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
}

TEST(Gguf, TypedLookupsNameFileAndKey) {
  const GgufFile f(verdict::testing::fixture("qwen35-tiny/model-f32.gguf"));
  try {
    (void)f.get_int("general.architecture");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model-f32.gguf: metadata key 'general.architecture' is a string"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)f.get_string("qwen35.block_count"), Error);
  EXPECT_THROW((void)f.get_array("missing.key"), Error);
  EXPECT_FALSE(f.find_int("missing.key").has_value());
}

TEST(Gguf, WriterRoundTripsEveryValueType) {
  const std::vector<uint8_t> bytes = testing::sample_gguf();
  const GgufHeader h = parse_gguf(bytes.data(), bytes.size(), "sample.gguf");
  EXPECT_EQ(h.version, 3u);
  ASSERT_EQ(h.metadata.size(), testing::sample_metadata().size());
  for (std::size_t i = 0; i < h.metadata.size(); ++i) {
    const auto& [key, value] = h.metadata[i];
    const auto& [want_key, want] = testing::sample_metadata()[i];
    EXPECT_EQ(key, want_key);
    EXPECT_EQ(value.type(), want.type()) << key;
    EXPECT_EQ(value.element_type(), want.element_type()) << key;
    EXPECT_EQ(value.size(), want.size()) << key;
    EXPECT_EQ(value.raw(), want.raw()) << key;
    EXPECT_EQ(value.to_string(100), want.to_string(100)) << key;
  }
  EXPECT_EQ(*h.find("u64")->as_int(), int64_t{1} << 40);
  EXPECT_EQ(*h.find("i8")->as_int(), -7);
  EXPECT_DOUBLE_EQ(*h.find("f64")->as_double(), 0.25);
  EXPECT_EQ(*h.find("str")->as_string(), "héllo");
  EXPECT_EQ(h.find("strs")->strings()->at(1), "");
  EXPECT_EQ(*h.find("i16s")->int_at(1), -300);
  EXPECT_FALSE(h.find("i16s")->int_at(9).has_value());

  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "matrix");
  EXPECT_EQ(h.tensors[0].ne, (std::vector<int64_t>{32, 3}));
  EXPECT_EQ(h.tensors[1].type, GgmlType::Q8_0);
  EXPECT_EQ(h.tensors[1].nbytes, 2u * 34u);
  EXPECT_EQ(h.tensors[1].offset % 32, 0u);
  float first = 0;
  std::memcpy(&first, h.tensors[0].data, 4);
  EXPECT_EQ(first, 0.5f);
  EXPECT_EQ(bytes.size() % 32, 0u);
}

TEST(Gguf, WriterRefusesInconsistentLayouts) {
  GgufLayout layout;
  EXPECT_THROW(layout.add_metadata("", GgufValue::u32(1)), Error);
  layout.add_metadata("a", GgufValue::u32(1));
  EXPECT_THROW(layout.add_metadata("a", GgufValue::u32(2)), Error);
  EXPECT_THROW(layout.add_metadata("general.alignment", GgufValue::u32(24)), Error);
  EXPECT_THROW(layout.add_tensor("t", GgmlType::Q8_0, {31}), Error);
  EXPECT_THROW(layout.add_tensor("t", GgmlType::F32, {}), Error);
  EXPECT_THROW(layout.add_tensor("t", GgmlType::F32, {1, 1, 1, 1, 1}), Error);
  EXPECT_THROW(layout.add_tensor("t", GgmlType::F32, {-1}), Error);
  layout.add_tensor("t", GgmlType::F32, {3});
  EXPECT_THROW(layout.add_tensor("t", GgmlType::F32, {3}), Error);
}

TEST(Gguf, HonoursACustomAlignment) {
  GgufLayout layout;
  layout.add_metadata("general.alignment", GgufValue::u32(64));
  layout.add_tensor("a", GgmlType::F32, {3});
  layout.add_tensor("b", GgmlType::F16, {5});
  const auto bytes = serialize_gguf(layout, [](std::size_t, std::span<uint8_t> out) {
    for (auto& b : out) b = 0xAB;
  });
  const GgufHeader h = parse_gguf(bytes.data(), bytes.size(), "aligned.gguf");
  EXPECT_EQ(h.alignment, 64u);
  EXPECT_EQ(h.data_offset % 64, 0u);
  EXPECT_EQ(h.tensors[1].offset, 64u);
  EXPECT_EQ(h.tensors[1].data[9], 0xAB);
}

// Every tensor type a GGUF file may hold is read, with ggml's block geometry (the sizes below are those of
// ggml-common.h's static_asserts, e.g. block_iq4_xs = half + uint16 + QK_K/64 + QK_K/2 bytes per 256
// values), so files with types the loader cannot compute with still open and name their types.
TEST(Gguf, ReadsEveryGgmlTypesGeometry) {
  struct Want {
    GgmlType type;
    const char* name;
    uint64_t values, bytes;
  };
  const Want want[] = {{GgmlType::Q4_1, "Q4_1", 32, 20},     {GgmlType::Q5_0, "Q5_0", 32, 22},
                       {GgmlType::Q5_1, "Q5_1", 32, 24},     {GgmlType::Q2_K, "Q2_K", 256, 84},
                       {GgmlType::Q3_K, "Q3_K", 256, 110},   {GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66},
                       {GgmlType::IQ2_XS, "IQ2_XS", 256, 74}, {GgmlType::IQ2_S, "IQ2_S", 256, 82},
                       {GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98}, {GgmlType::IQ3_S, "IQ3_S", 256, 110},
                       {GgmlType::IQ1_S, "IQ1_S", 256, 50},  {GgmlType::IQ1_M, "IQ1_M", 256, 56},
                       {GgmlType::IQ4_NL, "IQ4_NL", 32, 18}, {GgmlType::IQ4_XS, "IQ4_XS", 256, 136},
                       {GgmlType::TQ1_0, "TQ1_0", 256, 54},  {GgmlType::TQ2_0, "TQ2_0", 256, 66},
                       {GgmlType::MXFP4, "MXFP4", 32, 17},   {GgmlType::NVFP4, "NVFP4", 64, 36},
                       {GgmlType::Q1_0, "Q1_0", 128, 18},    {GgmlType::Q2_0, "Q2_0", 64, 18}};
  GgufLayout layout;
  for (const Want& w : want) layout.add_tensor(w.name, w.type, {static_cast<int64_t>(2 * w.values), 3});
  const std::vector<uint8_t> bytes = serialize_gguf(layout, [](std::size_t, std::span<uint8_t> out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i);
  });
  const GgufHeader h = parse_gguf(bytes.data(), bytes.size(), "types.gguf");
  ASSERT_EQ(h.tensors.size(), std::size(want));
  for (std::size_t i = 0; i < std::size(want); ++i) {
    EXPECT_EQ(h.tensors[i].type, want[i].type) << want[i].name;
    EXPECT_EQ(ggml_type_name(h.tensors[i].type), want[i].name);
    EXPECT_EQ(h.tensors[i].nbytes, 3 * 2 * want[i].bytes) << want[i].name;
    EXPECT_EQ(ggml_type_from_name(want[i].name), want[i].type);
  }
}

// llama.h's llama_ftype ids, as llama-quantize writes them to general.file_type (the llama.cpp fixture file
// is 0, an F32 conversion).
TEST(Gguf, FileTypeNamesAreLlamaCpps) {
  EXPECT_EQ(GgufFile(verdict::testing::fixture("qwen35-tiny/model-f32.gguf")).get_int("general.file_type"), 0);
  EXPECT_EQ(gguf_file_type_name(0), "F32");
  EXPECT_EQ(gguf_file_type_name(7), "Q8_0");
  EXPECT_EQ(gguf_file_type_name(15), "Q4_K_M");
  EXPECT_EQ(gguf_file_type_name(17), "Q5_K_M");
  EXPECT_EQ(gguf_file_type_name(18), "Q6_K");
  EXPECT_EQ(gguf_file_type_name(30), "IQ4_XS");
  EXPECT_EQ(gguf_file_type_name(32), "BF16");
  for (int64_t removed : {-1, 4, 5, 6, 33, 34, 35, 42, 1024}) EXPECT_EQ(gguf_file_type_name(removed), "") << removed;
  EXPECT_FALSE(gguf_file_type_is_quantized(0));
  EXPECT_FALSE(gguf_file_type_is_quantized(1));
  EXPECT_FALSE(gguf_file_type_is_quantized(32));
  EXPECT_FALSE(gguf_file_type_is_quantized(4));
  EXPECT_TRUE(gguf_file_type_is_quantized(2));
  EXPECT_TRUE(gguf_file_type_is_quantized(15));
}

TEST(Gguf, GgufPathsAreRecognizedByExtension) {
  EXPECT_TRUE(is_gguf_path("/m/model-Q8_0.gguf"));
  EXPECT_FALSE(is_gguf_path("/m/qwen"));
  EXPECT_FALSE(is_gguf_path(".gguf"));
}

}  // namespace
}  // namespace verdict::formats
