#include "safetensors_writer.h"

#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "core/error.h"
#include "core/json.h"

namespace verdict::formats::testing {

std::vector<uint8_t> raw_safetensors(std::string_view header, std::size_t data_bytes,
                                     std::optional<uint64_t> claimed_length) {
  const uint64_t n = claimed_length.value_or(header.size());
  std::vector<uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data_bytes, uint8_t{0x5a});
  return out;
}

std::vector<uint8_t> build_safetensors(const std::vector<TensorSpec>& tensors,
                                       const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<uint8_t> data;
  for (const TensorSpec& t : tensors) {
    const std::size_t begin = data.size();
    data.insert(data.end(), t.bytes.begin(), t.bytes.end());
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';
  std::vector<uint8_t> out = raw_safetensors(text, 0);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

namespace {
template <typename T>
std::vector<uint8_t> raw_bytes(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}
}  // namespace

std::vector<uint8_t> f32_bytes(const std::vector<float>& values) { return raw_bytes(values); }
std::vector<uint8_t> u16_bytes(const std::vector<uint16_t>& values) { return raw_bytes(values); }
std::vector<uint8_t> u32_bytes(const std::vector<uint32_t>& values) { return raw_bytes(values); }
std::vector<uint8_t> f64_bytes(const std::vector<double>& values) { return raw_bytes(values); }

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

void write_text(const std::string& path, std::string_view text) {
  write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

TempDir::TempDir() {
  const char* env = std::getenv("TMPDIR");
  std::string pattern = std::string(env != nullptr && *env != '\0' ? env : "/tmp") + "/verdict-formats-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const verdict::Error& e) {
    return e.what();
  }
  return "<no error>";
}

::testing::AssertionResult contains_all(const std::string& message, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts)
    if (message.find(p) == std::string::npos)
      return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << p << "\"";
  return ::testing::AssertionSuccess();
}

}  // namespace verdict::formats::testing
