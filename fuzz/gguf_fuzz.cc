// libFuzzer target: raw bytes as a GGUF file. Parsing may only fail with verdict::Error; on success
// every metadata value is read back through its accessors and every tensor's first and last data bytes
// are touched (they must lie inside the input).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "formats/gguf.h"

namespace {

volatile uint64_t g_sink;

void exercise(const verdict::formats::GgufHeader& h) {
  uint64_t acc = 0;
  for (const auto& [key, value] : h.metadata) {
    acc += key.size() + value.to_string(4).size();
    if (value.as_int()) acc += static_cast<uint64_t>(*value.as_int());
    if (value.as_double()) acc += static_cast<uint64_t>(*value.as_double() != 0.0);
    if (value.is_array() && value.size() > 0) {
      acc += static_cast<uint64_t>(value.int_at(value.size() - 1).value_or(0));
      acc += static_cast<uint64_t>(value.double_at(0).value_or(0.0) != 0.0);
      if (const auto* s = value.strings()) acc += s->back().size();
    }
    acc += h.find(key) == &value;
  }
  for (const auto& t : h.tensors) {
    acc += static_cast<uint64_t>(t.rows()) + t.row_bytes() + (h.find_tensor(t.name) == &t);
    if (t.nbytes > 0) acc += t.data[0] + t.data[t.nbytes - 1];
  }
  g_sink = acc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    exercise(verdict::formats::parse_gguf(data, size, "fuzz.gguf"));
  } catch (const verdict::Error&) {
  }
  return 0;
}
