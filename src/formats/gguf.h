// GGUF (llama.cpp's model file), versions 2 and 3, read in place from memory:
//
//   "GGUF" | u32 version | u64 tensor count | u64 metadata count
//   metadata: key (u64 length + UTF-8 bytes) | u32 value type | value          (gguf_value.h)
//   tensor infos: name | u32 n_dims | n_dims × u64 ne (ne[0] = fastest, the row length) | u32 ggml type |
//                 u64 offset (relative to the data section, a multiple of the alignment)
//   padding to `general.alignment` (default 32) | data section
//
// Parsing is strict: every malformed input is one verdict::Error naming the file and the problem
// (bad magic, big-endian or unsupported version, truncation anywhere, counts larger than the file can
// hold, a key or tensor name that is empty, not UTF-8 or given twice, unknown value or tensor types,
// nested arrays, a non-power-of-two alignment, 0 or more than 4 dimensions, a row that is not a whole
// number of blocks, element counts that overflow, offsets that are misaligned, past the data or
// overlapping). Nothing is allocated before the bytes it describes are known to be in the file, so a
// forged count cannot make the reader allocate more than a small multiple of the file size.
// Tensor data is not copied: views point into the buffer (memory-mapped for GgufFile).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "formats/ggml_type.h"
#include "formats/gguf_value.h"

namespace verdict::formats {

inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufMaxDims = 4;

struct GgufTensor {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> ne;       // ggml order: ne[0] is the row length (PyTorch shape reversed)
  uint64_t offset = 0;           // within the data section
  const uint8_t* data = nullptr; // into the parsed buffer
  std::size_t nbytes = 0;

  int64_t numel() const;
  int64_t rows() const { return ne.empty() || ne[0] == 0 ? 0 : numel() / ne[0]; }  // product of ne[1..]
  std::size_t row_bytes() const;
};

struct GgufHeader {
  uint32_t version = 0;
  uint32_t alignment = kGgufDefaultAlignment;
  std::vector<std::pair<std::string, GgufValue>> metadata;  // in file order
  std::vector<GgufTensor> tensors;                          // in file order
  uint64_t data_offset = 0;                                 // where the data section starts

  const GgufValue* find(const std::string& key) const;
  const GgufTensor* find_tensor(const std::string& name) const;

 private:
  friend GgufHeader parse_gguf(const uint8_t*, std::size_t, const std::string&);
  std::map<std::string, std::size_t> key_index_, tensor_index_;
};

// Parses a whole GGUF buffer. `what` names it in errors (usually the path). Pure function over
// memory: this is what the fuzz target drives.
GgufHeader parse_gguf(const uint8_t* data, std::size_t size, const std::string& what);

// A memory-mapped GGUF file with typed metadata lookups whose errors name the file and the key.
class GgufFile {
 public:
  explicit GgufFile(const std::string& path);

  const GgufHeader& header() const { return header_; }
  const std::string& path() const { return file_.path(); }
  std::size_t file_size() const { return file_.size(); }
  const std::vector<GgufTensor>& tensors() const { return header_.tensors; }
  const GgufValue* find(const std::string& key) const { return header_.find(key); }
  const GgufTensor* find_tensor(const std::string& name) const { return header_.find_tensor(name); }

  // Required values; throw verdict::Error("<file>: metadata key '<key>' ...") when missing or mistyped.
  int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
  const GgufValue& get_array(const std::string& key) const;
  std::optional<int64_t> find_int(const std::string& key) const;  // nullopt when absent
  const MappedFile& mapping() const { return file_; }

 private:
  MappedFile file_;
  GgufHeader header_;
};

// True when `path` looks like a GGUF file (ends in ".gguf").
bool is_gguf_path(const std::string& path);

}  // namespace verdict::formats
