#include "gguf_samples.h"

#include <cstring>

#include "formats/gguf_writer.h"

namespace verdict::formats::testing {
namespace {

template <typename T>
GgufValue scalar(GgufValueType type, T v) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  return GgufValue::scalar(type, bytes);
}

}  // namespace

const std::vector<std::pair<std::string, GgufValue>>& sample_metadata() {
  static const std::vector<std::pair<std::string, GgufValue>> kMetadata = [] {
    std::vector<std::pair<std::string, GgufValue>> m;
    m.emplace_back("general.architecture", GgufValue::string("sample"));
    m.emplace_back("u8", scalar<uint8_t>(GgufValueType::U8, 200));
    m.emplace_back("i8", scalar<int8_t>(GgufValueType::I8, -7));
    m.emplace_back("u16", scalar<uint16_t>(GgufValueType::U16, 60000));
    m.emplace_back("i16", scalar<int16_t>(GgufValueType::I16, -3000));
    m.emplace_back("u32", GgufValue::u32(4000000000u));
    m.emplace_back("i32", GgufValue::i32(-100000));
    m.emplace_back("f32", GgufValue::f32(1.5f));
    m.emplace_back("bool", GgufValue::boolean(true));
    m.emplace_back("str", GgufValue::string("h\xC3\xA9llo"));
    m.emplace_back("u64", GgufValue::u64(uint64_t{1} << 40));
    m.emplace_back("i64", scalar<int64_t>(GgufValueType::I64, -(int64_t{1} << 50)));
    m.emplace_back("f64", scalar<double>(GgufValueType::F64, 0.25));
    m.emplace_back("strs", GgufValue::string_array({"a", "", "\xE2\x82\xAC"}));
    m.emplace_back("i32s", GgufValue::i32_array({1, -2, 3}));
    m.emplace_back("u32s", GgufValue::u32_array({}));
    const int16_t shorts[2] = {5, -300};
    m.emplace_back("i16s", GgufValue::array(GgufValueType::I16, reinterpret_cast<const uint8_t*>(shorts), 2));
    const uint8_t bools[3] = {1, 0, 1};
    m.emplace_back("bools", GgufValue::array(GgufValueType::Bool, bools, 3));
    return m;
  }();
  return kMetadata;
}

std::vector<uint8_t> sample_gguf() {
  GgufLayout layout;
  for (const auto& [key, value] : sample_metadata()) layout.add_metadata(key, value);
  layout.add_tensor("matrix", GgmlType::F32, {32, 3});
  layout.add_tensor("quantized", GgmlType::Q8_0, {64});
  return serialize_gguf(layout, [](std::size_t index, std::span<uint8_t> out) {
    if (index == 0) {
      for (std::size_t i = 0; i < out.size() / 4; ++i) {
        const float v = 0.5f + static_cast<float>(i);
        std::memcpy(out.data() + 4 * i, &v, 4);
      }
    } else {
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 7);
    }
  });
}

}  // namespace verdict::formats::testing
