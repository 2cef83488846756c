// Writing safetensors files, byte for byte as the Python `safetensors` library lays them out: the header
// is compact JSON (`{"__metadata__":{...},"name":{"dtype":"BF16","shape":[..],"data_offsets":[b,e]},...}`),
// tensors sorted by name with their data back to back in that order, and the header padded with spaces
// to a multiple of 8 bytes so the data section starts 8-byte aligned.
//
// Two ways to write: serialize_safetensors() / write_safetensors() for tensors held in memory, and
// SafetensorsStreamWriter, which takes the layout up front (names, dtypes, shapes) and then the data
// in order, piece by piece, so that a checkpoint far larger than memory can be written.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"

namespace verdict::formats {

// One tensor of a file, without its data.
struct TensorEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // empty for a 0-dim scalar (one element)

  int64_t numel() const;
  std::size_t nbytes() const;
};

// `__metadata__` entries, written in this order (the Python library keeps insertion order).
using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

enum class TensorOrder {
  ByName,   // sorted by name: what the Python library writes
  AsGiven,  // data in the order given (the header lists the tensors in the same order)
};

// Where everything goes in a file. Throws verdict::Error for an empty or duplicate name, the name
// "__metadata__", or a negative dimension.
class SafetensorsLayout {
 public:
  SafetensorsLayout() : SafetensorsLayout(std::vector<TensorEntry>{}) {}
  explicit SafetensorsLayout(std::vector<TensorEntry> entries, SafetensorsMetadata metadata = {},
                             TensorOrder order = TensorOrder::ByName);

  // Tensors in data order.
  const std::vector<TensorEntry>& tensors() const { return tensors_; }
  // Data offsets [begin, end) of tensor i, relative to the start of the data section.
  uint64_t begin(std::size_t i) const { return offsets_[i]; }
  uint64_t end(std::size_t i) const { return offsets_[i + 1]; }
  // The header text as written, padding included.
  const std::string& header() const { return header_; }
  uint64_t data_bytes() const { return offsets_.back(); }
  // 8 (length prefix) + header + data.
  uint64_t file_bytes() const { return 8 + header_.size() + data_bytes(); }

 private:
  std::vector<TensorEntry> tensors_;
  std::vector<uint64_t> offsets_;  // size tensors_.size() + 1
  std::string header_;
};

// Streams one file: the header on open, then exactly data_bytes() bytes through write(), in layout
// order (a call may span tensors). finish() checks the count, flushes and closes; a writer destroyed
// without finish() leaves an incomplete file behind (callers write to a temporary name and rename).
// I/O failures throw verdict::Error naming the path.
class SafetensorsStreamWriter {
 public:
  SafetensorsStreamWriter(const std::string& path, SafetensorsLayout layout);
  ~SafetensorsStreamWriter();
  SafetensorsStreamWriter(const SafetensorsStreamWriter&) = delete;
  SafetensorsStreamWriter& operator=(const SafetensorsStreamWriter&) = delete;

  const SafetensorsLayout& layout() const { return layout_; }
  // Appends data; throws verdict::Error when it would pass the end of the data section.
  void write(const void* data, std::size_t n);
  uint64_t written() const { return written_; }
  void finish();

 private:
  std::string path_;
  SafetensorsLayout layout_;
  std::FILE* file_ = nullptr;
  uint64_t written_ = 0;
};

// A tensor with its data (data.size() must equal entry.nbytes()).
struct TensorData {
  TensorEntry entry;
  std::vector<uint8_t> data;
};

// The whole file image.
std::vector<uint8_t> serialize_safetensors(const std::vector<TensorData>& tensors,
                                           const SafetensorsMetadata& metadata = {},
                                           TensorOrder order = TensorOrder::ByName);
// Writes the file (through the stream writer).
void write_safetensors(const std::string& path, const std::vector<TensorData>& tensors,
                       const SafetensorsMetadata& metadata = {}, TensorOrder order = TensorOrder::ByName);

}  // namespace verdict::formats
