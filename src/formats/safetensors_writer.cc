#include "formats/safetensors_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "core/error.h"
#include "core/json.h"

namespace verdict::formats {
namespace {

// A JSON string literal (escaped as nlohmann does: UTF-8 kept, control characters escaped).
std::string json_string(const std::string& s) { return Json(s).dump(); }

std::string entry_json(const TensorEntry& t, uint64_t begin, uint64_t end) {
  std::string s = json_string(t.name) + ":{\"dtype\":" + json_string(std::string(dtype_name(t.dtype))) + ",\"shape\":[";
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(t.shape[i]);
  }
  s += "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
  return s;
}

std::string io_error(const std::string& what, const std::string& path) {
  return path + ": " + what + ": " + std::strerror(errno);
}

}  // namespace

int64_t TensorEntry::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::size_t TensorEntry::nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }

SafetensorsLayout::SafetensorsLayout(std::vector<TensorEntry> entries, SafetensorsMetadata metadata,
                                     TensorOrder order)
    : tensors_(std::move(entries)) {
  std::set<std::string> names;
  for (const TensorEntry& t : tensors_) {
    if (t.name.empty()) throw Error("safetensors writer: empty tensor name");
    if (t.name == "__metadata__") throw Error("safetensors writer: '__metadata__' is not a tensor name");
    if (!names.insert(t.name).second) throw Error("safetensors writer: duplicate tensor name '" + t.name + "'");
    for (int64_t d : t.shape)
      if (d < 0) throw Error("safetensors writer: negative dimension in '" + t.name + "'");
  }
  if (order == TensorOrder::ByName)
    std::sort(tensors_.begin(), tensors_.end(),
              [](const TensorEntry& a, const TensorEntry& b) { return a.name < b.name; });
  offsets_.assign(1, 0);
  for (const TensorEntry& t : tensors_) offsets_.push_back(offsets_.back() + t.nbytes());

  header_ = "{";
  bool first = true;
  if (!metadata.empty()) {
    header_ += "\"__metadata__\":{";
    for (std::size_t i = 0; i < metadata.size(); ++i) {
      if (i > 0) header_ += ',';
      header_ += json_string(metadata[i].first) + ":" + json_string(metadata[i].second);
    }
    header_ += '}';
    first = false;
  }
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    if (!first) header_ += ',';
    header_ += entry_json(tensors_[i], offsets_[i], offsets_[i + 1]);
    first = false;
  }
  header_ += '}';
  while ((8 + header_.size()) % 8 != 0) header_ += ' ';
}

SafetensorsStreamWriter::SafetensorsStreamWriter(const std::string& path, SafetensorsLayout layout)
    : path_(path), layout_(std::move(layout)) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw Error(io_error("cannot create", path));
  uint8_t prefix[8];
  const uint64_t n = layout_.header().size();
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<uint8_t>(n >> (8 * i));
  if (std::fwrite(prefix, 1, 8, file_) != 8 ||
      std::fwrite(layout_.header().data(), 1, layout_.header().size(), file_) != layout_.header().size())
    throw Error(io_error("cannot write", path_));
}

SafetensorsStreamWriter::~SafetensorsStreamWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void SafetensorsStreamWriter::write(const void* data, std::size_t n) {
  if (file_ == nullptr) throw Error(path_ + ": write after finish");
  if (n > layout_.data_bytes() - written_)
    throw Error(path_ + ": " + std::to_string(written_ + n) + " data bytes written, the layout holds " +
                std::to_string(layout_.data_bytes()));
  if (n > 0 && std::fwrite(data, 1, n, file_) != n) throw Error(io_error("cannot write", path_));
  written_ += n;
}

void SafetensorsStreamWriter::finish() {
  if (file_ == nullptr) return;
  if (written_ != layout_.data_bytes())
    throw Error(path_ + ": " + std::to_string(written_) + " data bytes written, the layout needs " +
                std::to_string(layout_.data_bytes()));
  std::FILE* f = file_;
  file_ = nullptr;
  const bool flushed = std::fflush(f) == 0;
  if (std::fclose(f) != 0 || !flushed) throw Error(io_error("cannot write", path_));
}

namespace {

SafetensorsLayout layout_of(const std::vector<TensorData>& tensors, const SafetensorsMetadata& metadata,
                            TensorOrder order) {
  std::vector<TensorEntry> entries;
  entries.reserve(tensors.size());
  for (const TensorData& t : tensors) {
    if (t.data.size() != t.entry.nbytes())
      throw Error("safetensors writer: '" + t.entry.name + "' has " + std::to_string(t.data.size()) +
                  " bytes, its dtype and shape need " + std::to_string(t.entry.nbytes()));
    entries.push_back(t.entry);
  }
  return SafetensorsLayout(std::move(entries), metadata, order);
}

// The tensors' data in layout order.
std::vector<const TensorData*> in_layout_order(const std::vector<TensorData>& tensors,
                                               const SafetensorsLayout& layout) {
  std::map<std::string, const TensorData*> by_name;
  for (const TensorData& t : tensors) by_name[t.entry.name] = &t;
  std::vector<const TensorData*> out;
  for (const TensorEntry& e : layout.tensors()) out.push_back(by_name.at(e.name));
  return out;
}

}  // namespace

std::vector<uint8_t> serialize_safetensors(const std::vector<TensorData>& tensors,
                                           const SafetensorsMetadata& metadata, TensorOrder order) {
  const SafetensorsLayout layout = layout_of(tensors, metadata, order);
  std::vector<uint8_t> out;
  out.reserve(layout.file_bytes());
  const uint64_t n = layout.header().size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
  out.insert(out.end(), layout.header().begin(), layout.header().end());
  for (const TensorData* t : in_layout_order(tensors, layout)) out.insert(out.end(), t->data.begin(), t->data.end());
  return out;
}

void write_safetensors(const std::string& path, const std::vector<TensorData>& tensors,
                       const SafetensorsMetadata& metadata, TensorOrder order) {
  SafetensorsLayout layout = layout_of(tensors, metadata, order);
  const std::vector<const TensorData*> data = in_layout_order(tensors, layout);
  SafetensorsStreamWriter writer(path, std::move(layout));
  for (const TensorData* t : data) writer.write(t->data.data(), t->data.size());
  writer.finish();
}

}  // namespace verdict::formats
