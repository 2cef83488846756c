// Test-only helpers: build safetensors images in memory, write files, and make scratch folders.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::formats::testing {

struct TensorSpec {
  std::string name;
  std::string dtype;             // safetensors spelling, written as is (unknown names allowed)
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;    // the stored data
};

// A well-formed safetensors image: the tensors' data back to back in the given order, offsets to match,
// the header padded with spaces to a multiple of 8 bytes.
std::vector<uint8_t> build_safetensors(const std::vector<TensorSpec>& tensors,
                                       const std::map<std::string, std::string>& metadata = {});

// An image with an arbitrary header text: 8-byte little-endian length (`claimed_length` if given, else
// the header's size), the header, then `data_bytes` bytes of data (0x5a).
std::vector<uint8_t> raw_safetensors(std::string_view header, std::size_t data_bytes,
                                     std::optional<uint64_t> claimed_length = std::nullopt);

std::vector<uint8_t> f32_bytes(const std::vector<float>& values);
std::vector<uint8_t> u16_bytes(const std::vector<uint16_t>& values);  // BF16 / F16 bit patterns
std::vector<uint8_t> u32_bytes(const std::vector<uint32_t>& values);
std::vector<uint8_t> f64_bytes(const std::vector<double>& values);

void write_file(const std::string& path, const std::vector<uint8_t>& bytes);
void write_text(const std::string& path, std::string_view text);

// A fresh folder under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// The message of the verdict::Error `f` throws, or "<no error>" when it returns normally. Any other
// exception escapes (and fails the test): parsers must only ever throw verdict::Error.
std::string error_message(const std::function<void()>& f);

// Passes when `message` contains every one of `parts`.
::testing::AssertionResult contains_all(const std::string& message, std::initializer_list<std::string_view> parts);

}  // namespace verdict::formats::testing
