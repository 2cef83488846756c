#include "formats/safetensors.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/json.h"

namespace verdict::formats {
namespace {

// A safetensors header is two levels deep (object → tensor entry → shape array); anything much deeper
// is hostile, and refusing it early keeps memory use bounded.
constexpr std::size_t kMaxHeaderDepth = 32;

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// Parses the header text. nlohmann keeps the last of two equal keys silently; a safetensors header with
// a key twice is malformed (two tensors of the same name), so a parse callback refuses duplicates.
Json parse_header_json(std::string_view text, const std::string& what) {
  // One entry per open container: the keys seen so far for an object, nullopt for an array.
  std::vector<std::optional<std::set<std::string>>> open;
  auto callback = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) -> bool {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (open.size() >= kMaxHeaderDepth)
          throw Error(what + ": header JSON nested deeper than " + std::to_string(kMaxHeaderDepth) +
                      " levels");
        if (event == Json::parse_event_t::object_start) open.emplace_back(std::set<std::string>{});
        else open.emplace_back(std::nullopt);
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!open.empty()) open.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!open.empty() && open.back().has_value() && parsed.is_string()) {
          const auto& key = parsed.get_ref<const std::string&>();
          if (!open.back()->insert(key).second) {
            if (open.size() == 1) throw Error(what + ": duplicate tensor name '" + key + "' in header");
            throw Error(what + ": duplicate key '" + key + "' in header");
          }
        }
        break;
      case Json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), callback);
  } catch (const Json::exception& e) {
    throw Error(what + ": header is not valid JSON: " + e.what());
  }
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A non-negative integer JSON value, or nullopt.
std::optional<uint64_t> as_count(const Json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i >= 0) return static_cast<uint64_t>(i);
  }
  return std::nullopt;
}

struct Entry {
  TensorView view;
  uint64_t begin = 0;
  uint64_t end = 0;
};

Entry parse_entry(const std::string& name, const Json& entry, const uint8_t* base, uint64_t data_size,
                  const std::string& what) {
  const std::string where = what + ": tensor '" + name + "'";
  if (!entry.is_object()) throw Error(where + ": header entry is not a JSON object");

  Entry out;
  out.view.name = name;
  out.view.file = what;

  const auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end()) throw Error(where + ": missing 'dtype'");
  if (!dtype_it->is_string()) throw Error(where + ": 'dtype' is not a string");
  const auto& dtype_name_str = dtype_it->get_ref<const std::string&>();
  const auto dtype = dtype_from_name(dtype_name_str);
  if (!dtype) throw Error(where + ": unknown dtype '" + dtype_name_str + "'");
  out.view.dtype = *dtype;

  const auto shape_it = entry.find("shape");
  if (shape_it == entry.end()) throw Error(where + ": missing 'shape'");
  if (!shape_it->is_array()) throw Error(where + ": 'shape' is not an array");
  uint64_t numel = 1;
  bool overflow = false;
  for (const Json& dim : *shape_it) {
    const auto d = as_count(dim);
    if (!d) {
      if (dim.is_number_integer()) throw Error(where + ": negative dimension " + dim.dump() + " in 'shape'");
      throw Error(where + ": dimension " + dim.dump() + " in 'shape' is not a non-negative integer");
    }
    if (*d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw Error(where + ": dimension " + std::to_string(*d) + " in 'shape' is too large");
    out.view.shape.push_back(static_cast<int64_t>(*d));
    uint64_t next = 0;
    if (__builtin_mul_overflow(numel, *d, &next)) overflow = true;
    numel = next;
  }
  // A zero dimension makes the product 0 however large the others are; only a non-zero product can
  // overflow.
  const bool empty = std::find(out.view.shape.begin(), out.view.shape.end(), 0) != out.view.shape.end();
  uint64_t nbytes = 0;
  if (!empty && (overflow || numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
                 __builtin_mul_overflow(numel, dtype_size(*dtype), &nbytes)))
    throw Error(where + ": shape " + shape_string(out.view.shape) + " overflows the element count");
  if (empty) nbytes = 0;

  const auto off_it = entry.find("data_offsets");
  if (off_it == entry.end()) throw Error(where + ": missing 'data_offsets'");
  if (!off_it->is_array() || off_it->size() != 2)
    throw Error(where + ": 'data_offsets' is not a [begin, end] pair");
  const auto begin = as_count((*off_it)[0]);
  const auto end = as_count((*off_it)[1]);
  if (!begin || !end) throw Error(where + ": 'data_offsets' " + off_it->dump() + " are not non-negative integers");
  if (*begin > *end)
    throw Error(where + ": data_offsets [" + std::to_string(*begin) + "," + std::to_string(*end) +
                "] end before they begin");
  if (*end > data_size)
    throw Error(where + ": data_offsets [" + std::to_string(*begin) + "," + std::to_string(*end) +
                "] exceed the data section (" + std::to_string(data_size) + " bytes; truncated file?)");
  if (*end - *begin != nbytes)
    throw Error(where + ": shape " + shape_string(out.view.shape) + " × " + std::string(dtype_name(*dtype)) +
                " needs " + std::to_string(nbytes) + " bytes but data_offsets span " +
                std::to_string(*end - *begin));
  out.begin = *begin;
  out.end = *end;
  out.view.data = base + *begin;
  out.view.nbytes = static_cast<std::size_t>(nbytes);
  return out;
}

void parse_metadata(const Json& meta, std::map<std::string, std::string>& out, const std::string& what) {
  if (!meta.is_object()) throw Error(what + ": '__metadata__' is not a JSON object");
  for (auto it = meta.begin(); it != meta.end(); ++it) {
    if (!it.value().is_string())
      throw Error(what + ": '__metadata__' value '" + it.key() + "' is not a string");
    out.emplace(it.key(), it.value().get<std::string>());
  }
}

}  // namespace

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsHeader parse_safetensors(const uint8_t* data, std::size_t size, const std::string& what) {
  if (size < 8)
    throw Error(what + ": truncated file: " + std::to_string(size) +
                " bytes, shorter than the 8-byte header length");
  if (data == nullptr) throw Error(what + ": no data");
  const uint64_t header_len = read_u64_le(data);
  if (header_len > kMaxSafetensorsHeader)
    throw Error(what + ": header length " + std::to_string(header_len) + " exceeds the limit of " +
                std::to_string(kMaxSafetensorsHeader) + " bytes");
  if (header_len > size - 8)
    throw Error(what + ": truncated file: header length " + std::to_string(header_len) +
                " past the end of the file (" + std::to_string(size) + " bytes)");

  const std::string_view text(reinterpret_cast<const char*>(data + 8), static_cast<std::size_t>(header_len));
  const Json root = parse_header_json(text, what);
  if (!root.is_object()) throw Error(what + ": header is not a JSON object");

  const uint8_t* base = data + 8 + header_len;
  const uint64_t data_size = size - 8 - header_len;

  SafetensorsHeader header;
  std::vector<Entry> entries;
  entries.reserve(root.size());
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() == "__metadata__") {
      parse_metadata(it.value(), header.metadata, what);
      continue;
    }
    entries.push_back(parse_entry(it.key(), it.value(), base, data_size, what));
  }

  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end < b.end;
    return a.view.name < b.view.name;
  });
  // Sorted by begin, a tensor overlaps an earlier one iff it begins before the furthest end so far.
  // Empty tensors occupy no bytes and overlap nothing.
  const Entry* furthest = nullptr;
  for (const Entry& e : entries) {
    if (e.begin == e.end) continue;
    if (furthest != nullptr && e.begin < furthest->end)
      throw Error(what + ": tensor '" + e.view.name + "' data_offsets [" + std::to_string(e.begin) + "," +
                  std::to_string(e.end) + "] overlap tensor '" + furthest->view.name + "' [" +
                  std::to_string(furthest->begin) + "," + std::to_string(furthest->end) + "]");
    if (furthest == nullptr || e.end > furthest->end) furthest = &e;
  }

  header.tensors.reserve(entries.size());
  for (Entry& e : entries) header.tensors.push_back(std::move(e.view));
  return header;
}

SafetensorsFile::SafetensorsFile(const std::string& path)
    : file_(path), header_(parse_safetensors(file_.data(), file_.size(), path)) {}

}  // namespace verdict::formats
