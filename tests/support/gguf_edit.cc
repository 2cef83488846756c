#include "support/gguf_edit.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

namespace verdict::testing {

uint32_t relabel_gguf_tensor(const std::string& path, const std::string& tensor, uint32_t type) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // The name as a GGUF string: its u64 length, then its bytes.
  std::string key(8, '\0');
  const uint64_t length = tensor.size();
  std::memcpy(key.data(), &length, 8);
  key += tensor;
  const std::size_t at = bytes.find(key);
  if (at == std::string::npos) {
    ADD_FAILURE() << path << ": no tensor " << tensor;
    return UINT32_MAX;
  }
  uint32_t dims = 0, old = 0;
  std::memcpy(&dims, bytes.data() + at + key.size(), 4);
  const std::size_t type_at = at + key.size() + 4 + 8 * static_cast<std::size_t>(dims);
  std::memcpy(&old, bytes.data() + type_at, 4);
  f.clear();
  f.seekp(static_cast<std::streamoff>(type_at));
  f.write(reinterpret_cast<const char*>(&type), 4);
  return old;
}

}  // namespace verdict::testing
