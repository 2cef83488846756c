#include "fake_backbone.h"

namespace verdict::decision::testing {

uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

ByteTokenizer byte_special_tokenizer() {
  return ByteTokenizer({{"<|endoftext|>", 256},
                        {"<|im_start|>", 257},
                        {"<|im_end|>", 258},
                        {"<think>", 259},
                        {"</think>", 260},
                        {"<|vision_start|>", 261},
                        {"<|vision_end|>", 262},
                        {"<|image_pad|>", 263},
                        {"<|video_pad|>", 264}});
}

namespace {

float hidden_value(uint32_t h, std::size_t k) {
  const uint32_t m = mix32(h + static_cast<uint32_t>(k) * 0x85EBCA6Bu);
  return static_cast<float>(static_cast<int>(m % 33u) - 16) / 16.0f;
}

}  // namespace

HiddenRows hash_backbone(std::span<const TokenId> ids, std::size_t hidden_size, uint32_t seed) {
  HiddenRows out;
  out.rows = ids.size();
  out.cols = hidden_size;
  out.data.resize(out.rows * out.cols);
  uint32_t h = seed;
  for (std::size_t p = 0; p < ids.size(); ++p) {
    h = mix32((h ^ static_cast<uint32_t>(ids[p])) + 0x9E3779B9u);
    for (std::size_t k = 0; k < hidden_size; ++k) out.data[p * hidden_size + k] = hidden_value(h, k);
  }
  return out;
}

HiddenRows const_backbone(std::size_t rows, std::size_t hidden_size, uint32_t seed) {
  HiddenRows out;
  out.rows = rows;
  out.cols = hidden_size;
  out.data.resize(rows * hidden_size);
  for (std::size_t p = 0; p < rows; ++p) {
    for (std::size_t k = 0; k < hidden_size; ++k) out.data[p * hidden_size + k] = hidden_value(seed, k);
  }
  return out;
}

float hash_lexical(TokenId v, std::size_t k) {
  const uint32_t m =
      mix32(static_cast<uint32_t>(v) * 0x9E3779B1u + static_cast<uint32_t>(k) * 0x85EBCA6Bu + 0x01234567u);
  return static_cast<float>(static_cast<int>(m % 65u) - 32) / 64.0f;
}

}  // namespace verdict::decision::testing
