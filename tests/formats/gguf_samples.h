// A small, valid GGUF file built with the writer: one metadata entry of every value type and two
// tensors (F32 and Q8_0). The reader and malformed-input tests start from it.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "formats/gguf_value.h"

namespace verdict::formats::testing {

const std::vector<std::pair<std::string, GgufValue>>& sample_metadata();
std::vector<uint8_t> sample_gguf();

}  // namespace verdict::formats::testing
