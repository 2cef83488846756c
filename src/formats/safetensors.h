// Safetensors: one file = 8-byte little-endian header length N, N bytes of JSON header, then the data.
// The header maps tensor names to {dtype, shape, data_offsets:[begin,end)} (offsets relative to the
// data section) plus an optional "__metadata__" object of strings.
//
// Parsing is strict: every malformed header is rejected with a verdict::Error naming the file and the
// problem (truncated file, header length past the end, header over 100 MB, unknown dtype,
// shape × dtype size ≠ byte size, offsets past the data or overlapping, non-JSON header, a key given
// twice, ...). Gaps between tensors and trailing bytes after the last one are allowed.
//
// Tensor data sits at arbitrary byte offsets and may be misaligned for its dtype: read it with memcpy
// (as formats/convert.h does), never through a reinterpret_cast'ed typed pointer.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/mapped_file.h"

namespace verdict::formats {

// Largest header accepted (the reference implementation uses 100 MB; we refuse anything larger).
inline constexpr std::uint64_t kMaxSafetensorsHeader = 100u * 1000u * 1000u;

// One tensor as stored: a zero-copy view into the mapped file.
struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;   // PyTorch order ([out, in])
  const uint8_t* data = nullptr;
  std::size_t nbytes = 0;
  std::string file;             // the file it lives in (for error messages)

  int64_t numel() const;
};

// The parsed header of one safetensors buffer; views point into `data` (which must outlive them).
struct SafetensorsHeader {
  std::vector<TensorView> tensors;               // in data-offset order
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

// Parses a whole safetensors buffer (header + data). `what` names it in errors (usually the path).
// Pure function over memory: this is what the fuzz target drives.
SafetensorsHeader parse_safetensors(const uint8_t* data, std::size_t size, const std::string& what);

// A memory-mapped safetensors file.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  const std::vector<TensorView>& tensors() const { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  const std::string& path() const { return file_.path(); }
  std::size_t file_size() const { return file_.size(); }
  const MappedFile& mapping() const { return file_; }

 private:
  MappedFile file_;
  SafetensorsHeader header_;
};

}  // namespace verdict::formats
