// Writing GGUF version 3 files: metadata in the order added, tensor infos in the order added, then each
// tensor's data at the next multiple of the alignment (32 unless `general.alignment` says otherwise),
// the layout llama.cpp's gguf-py writer produces. The data is produced tensor by tensor through a
// callback, so a file larger than memory can be written.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "formats/ggml_type.h"
#include "formats/gguf_value.h"

namespace verdict::formats {

class GgufLayout {
 public:
  // Throws verdict::Error for an empty or duplicate key, or a bad general.alignment.
  void add_metadata(std::string key, GgufValue value);
  // ne in ggml order (ne[0] = row length). Throws verdict::Error for an empty or duplicate name,
  // 0 or more than 4 dimensions, negative sizes, or a row that is not a whole number of blocks.
  void add_tensor(std::string name, GgmlType type, std::vector<int64_t> ne);

  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> ne;
    uint64_t offset = 0;  // within the data section
    uint64_t nbytes = 0;
  };
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  uint32_t alignment() const { return alignment_; }

  // Everything before the data section, padding included.
  std::vector<uint8_t> header() const;

 private:
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
  uint32_t alignment_ = 32;
  uint64_t data_end_ = 0;
};

// Fills the bytes of tensor `index` (exactly tensors()[index].nbytes of them).
using GgufTensorFiller = std::function<void(std::size_t index, std::span<uint8_t> out)>;

// The whole file in memory.
std::vector<uint8_t> serialize_gguf(const GgufLayout& layout, const GgufTensorFiller& fill);
// Writes the file to `path` (through a temporary file renamed at the end). Throws verdict::Error.
void write_gguf(const std::string& path, const GgufLayout& layout, const GgufTensorFiller& fill);

}  // namespace verdict::formats
