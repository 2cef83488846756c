#include "formats/gguf.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "core/error.h"
#include "core/utf8.h"

namespace verdict::formats {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
// Longest key or tensor name accepted (llama.cpp's own names are short; GGML_MAX_NAME is 64).
constexpr uint64_t kMaxNameBytes = 65535;
constexpr uint64_t kMaxAlignment = uint64_t{1} << 30;

// A bounds-checked little-endian cursor over the buffer; every read failure is a truncation error.
class Cursor {
 public:
  Cursor(const uint8_t* data, std::size_t size, const std::string& what) : data_(data), size_(size), what_(what) {}

  std::size_t pos() const { return pos_; }
  std::size_t left() const { return size_ - pos_; }

  [[noreturn]] void fail(const std::string& problem) const { throw Error(what_ + ": " + problem); }

  const uint8_t* take(uint64_t n, const char* reading) {
    if (n > left())
      fail("truncated file: " + std::string(reading) + " at byte " + std::to_string(pos_) + " needs " +
           std::to_string(n) + " bytes, " + std::to_string(left()) + " left");
    const uint8_t* p = data_ + pos_;
    pos_ += static_cast<std::size_t>(n);
    return p;
  }

  uint32_t u32(const char* reading) { return static_cast<uint32_t>(le(take(4, reading), 4)); }
  uint64_t u64(const char* reading) { return le(take(8, reading), 8); }

  std::string string(const char* reading) {
    const uint64_t n = u64(reading);
    if (n > left())
      fail("truncated file: " + std::string(reading) + " of " + std::to_string(n) + " bytes at byte " +
           std::to_string(pos_) + ", " + std::to_string(left()) + " left");
    const uint8_t* p = take(n, reading);
    return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
  }

 private:
  static uint64_t le(const uint8_t* p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  const uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  const std::string& what_;
};

std::string printable(const std::string& s) {
  std::string storage;
  std::string out(utf8::repair(s.size() > 80 ? std::string_view(s).substr(0, 80) : s, storage));
  return s.size() > 80 ? out + "..." : out;
}

// A key or tensor name: non-empty, bounded, valid UTF-8.
std::string read_name(Cursor& in, const char* what_name) {
  const std::size_t at = in.pos();
  const uint64_t n = in.u64(what_name);
  if (n == 0) in.fail(std::string("empty ") + what_name + " at byte " + std::to_string(at));
  if (n > kMaxNameBytes)
    in.fail(std::string(what_name) + " at byte " + std::to_string(at) + " is " + std::to_string(n) +
            " bytes long (limit " + std::to_string(kMaxNameBytes) + ")");
  const uint8_t* p = in.take(n, what_name);
  std::string s(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
  if (!utf8::is_valid(s)) in.fail(std::string(what_name) + " '" + printable(s) + "' is not valid UTF-8");
  return s;
}

GgufValueType value_type(Cursor& in, const std::string& key, bool element) {
  const uint32_t t = in.u32("value type");
  if (t > static_cast<uint32_t>(GgufValueType::F64))
    in.fail("metadata key '" + key + "': unknown " + (element ? "array element" : "value") + " type " +
            std::to_string(t));
  return static_cast<GgufValueType>(t);
}

void check_bool(Cursor& in, const std::string& key, const uint8_t* p, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i)
    if (p[i] > 1) in.fail("metadata key '" + key + "': bool value " + std::to_string(p[i]) + " is not 0 or 1");
}

GgufValue read_value(Cursor& in, const std::string& key) {
  const GgufValueType type = value_type(in, key, false);
  if (type == GgufValueType::String) return GgufValue::string(in.string("string value"));
  if (type != GgufValueType::Array) {
    const uint8_t* p = in.take(gguf_scalar_size(type), "metadata value");
    if (type == GgufValueType::Bool) check_bool(in, key, p, 1);
    return GgufValue::scalar(type, p);
  }
  const GgufValueType elem = value_type(in, key, true);
  if (elem == GgufValueType::Array) in.fail("metadata key '" + key + "': nested arrays are not supported");
  const uint64_t count = in.u64("array length");
  if (elem == GgufValueType::String) {
    // Each string takes at least its 8-byte length: refuse counts the rest of the file cannot hold.
    if (count > in.left() / 8)
      in.fail("metadata key '" + key + "': array of " + std::to_string(count) + " strings cannot fit in the " +
              std::to_string(in.left()) + " bytes left (truncated file?)");
    std::vector<std::string> items;
    items.reserve(static_cast<std::size_t>(count));
    for (uint64_t i = 0; i < count; ++i) items.push_back(in.string("array string"));
    return GgufValue::string_array(std::move(items));
  }
  const std::size_t size = gguf_scalar_size(elem);
  if (count > in.left() / size)
    in.fail("metadata key '" + key + "': array of " + std::to_string(count) + " " +
            std::string(gguf_value_type_name(elem)) + " values needs more than the " + std::to_string(in.left()) +
            " bytes left (truncated file?)");
  const uint8_t* p = in.take(count * size, "array values");
  if (elem == GgufValueType::Bool) check_bool(in, key, p, count);
  return GgufValue::array(elem, p, count);
}

std::string ne_string(const std::vector<int64_t>& ne) {
  std::string s = "[";
  for (std::size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

GgufTensor read_tensor_info(Cursor& in) {
  GgufTensor t;
  t.name = read_name(in, "tensor name");
  const std::string where = "tensor '" + printable(t.name) + "'";
  const uint32_t n_dims = in.u32("tensor dimension count");
  if (n_dims == 0 || n_dims > kGgufMaxDims)
    in.fail(where + ": " + std::to_string(n_dims) + " dimensions (expected 1 to " + std::to_string(kGgufMaxDims) + ")");
  uint64_t numel = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const uint64_t v = in.u64("tensor dimension");
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      in.fail(where + ": dimension " + std::to_string(v) + " is too large");
    t.ne.push_back(static_cast<int64_t>(v));
    if (__builtin_mul_overflow(numel, v, &numel) || numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      in.fail(where + ": dimensions " + ne_string(t.ne) + " overflow the element count");
  }
  const uint32_t type_id = in.u32("tensor type");
  const auto info = ggml_type_info(type_id);
  if (!info) in.fail(where + ": unknown or unsupported ggml type " + std::to_string(type_id));
  t.type = info->type;
  if (t.ne[0] % info->block_values != 0)
    in.fail(where + ": row length " + std::to_string(t.ne[0]) + " is not a multiple of the " +
            std::string(info->name) + " block size " + std::to_string(info->block_values));
  const auto row = ggml_row_bytes(t.type, static_cast<uint64_t>(t.ne[0]));
  if (!row) in.fail(where + ": " + ne_string(t.ne) + " × " + std::string(info->name) + " overflows the byte size");
  const uint64_t rows = t.ne[0] == 0 ? 0 : numel / static_cast<uint64_t>(t.ne[0]);
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(*row, rows, &nbytes) || nbytes > std::numeric_limits<std::size_t>::max())
    in.fail(where + ": " + ne_string(t.ne) + " × " + std::string(info->name) + " overflows the byte size");
  t.nbytes = static_cast<std::size_t>(nbytes);
  t.offset = in.u64("tensor offset");
  return t;
}

uint32_t read_alignment(const GgufValue& v, Cursor& in) {
  if (v.type() != GgufValueType::U32)
    in.fail("metadata key 'general.alignment' has type " + std::string(gguf_value_type_name(v.type())) +
            " (expected u32)");
  const int64_t a = *v.as_int();
  if (a <= 0 || (a & (a - 1)) != 0 || static_cast<uint64_t>(a) > kMaxAlignment)
    in.fail("general.alignment " + std::to_string(a) + " is not a power of two up to 2^30");
  return static_cast<uint32_t>(a);
}

}  // namespace

int64_t GgufTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

std::size_t GgufTensor::row_bytes() const { return ne.empty() ? 0 : static_cast<std::size_t>(*ggml_row_bytes(type, ne[0])); }

const GgufValue* GgufHeader::find(const std::string& key) const {
  const auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &metadata[it->second].second;
}

const GgufTensor* GgufHeader::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors[it->second];
}

GgufHeader parse_gguf(const uint8_t* data, std::size_t size, const std::string& what) {
  if (data == nullptr && size > 0) throw Error(what + ": no data");
  Cursor in(data, size, what);
  if (size < 4) in.fail("truncated file: " + std::to_string(size) + " bytes, no GGUF magic");
  const uint32_t magic = in.u32("magic");
  if (magic != kMagic) in.fail("not a GGUF file (bad magic)");
  GgufHeader h;
  h.version = in.u32("version");
  if (h.version == 1) in.fail("GGUF version 1 is not supported (only 2 and 3)");
  if (h.version != 2 && h.version != 3) {
    if ((h.version & 0xFFFFu) == 0) in.fail("big-endian GGUF files are not supported");
    in.fail("unsupported GGUF version " + std::to_string(h.version) + " (only 2 and 3)");
  }
  const uint64_t n_tensors = in.u64("tensor count");
  const uint64_t n_kv = in.u64("metadata count");
  // A metadata entry takes at least 8 (key length) + 1 + 4 + 1 bytes, a tensor info 8 + 1 + 4 + 8 + 4 + 8.
  if (n_kv > in.left() / 14)
    in.fail("metadata count " + std::to_string(n_kv) + " is more than the file can hold (truncated file?)");
  if (n_tensors > in.left() / 33)
    in.fail("tensor count " + std::to_string(n_tensors) + " is more than the file can hold (truncated file?)");

  h.metadata.reserve(static_cast<std::size_t>(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = read_name(in, "metadata key");
    if (h.key_index_.contains(key)) in.fail("metadata key '" + key + "' appears twice");
    GgufValue value = read_value(in, key);
    if (key == "general.alignment") h.alignment = read_alignment(value, in);
    h.key_index_.emplace(key, h.metadata.size());
    h.metadata.emplace_back(std::move(key), std::move(value));
  }

  h.tensors.reserve(static_cast<std::size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor t = read_tensor_info(in);
    if (h.tensor_index_.contains(t.name)) in.fail("tensor '" + printable(t.name) + "' appears twice");
    h.tensor_index_.emplace(t.name, h.tensors.size());
    h.tensors.push_back(std::move(t));
  }

  // The data section starts at the next multiple of the alignment (an empty file may end before it).
  const uint64_t a = h.alignment;
  const uint64_t start = (static_cast<uint64_t>(in.pos()) + a - 1) / a * a;
  h.data_offset = start;
  const uint64_t data_size = start <= size ? size - start : 0;
  if (start > size && !h.tensors.empty())
    in.fail("truncated file: the data section would start at byte " + std::to_string(start) + " past the end (" +
            std::to_string(size) + " bytes)");

  std::vector<const GgufTensor*> order;
  order.reserve(h.tensors.size());
  for (GgufTensor& t : h.tensors) {
    const std::string where = "tensor '" + printable(t.name) + "'";
    if (t.offset % a != 0)
      in.fail(where + ": offset " + std::to_string(t.offset) + " is not a multiple of the alignment " + std::to_string(a));
    if (t.offset > data_size || t.nbytes > data_size - t.offset)
      in.fail(where + ": data [" + std::to_string(t.offset) + ", +" + std::to_string(t.nbytes) +
              ") past the end of the data section (" + std::to_string(data_size) + " bytes; truncated file?)");
    t.data = data + start + t.offset;
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(), [](const GgufTensor* x, const GgufTensor* y) {
    return x->offset != y->offset ? x->offset < y->offset : x->nbytes < y->nbytes;
  });
  const GgufTensor* furthest = nullptr;
  for (const GgufTensor* t : order) {
    if (t->nbytes == 0) continue;
    if (furthest != nullptr && t->offset < furthest->offset + furthest->nbytes)
      in.fail("tensor '" + printable(t->name) + "' data at offset " + std::to_string(t->offset) + " overlaps tensor '" +
              printable(furthest->name) + "' [" + std::to_string(furthest->offset) + ", +" +
              std::to_string(furthest->nbytes) + ")");
    if (furthest == nullptr || t->offset + t->nbytes > furthest->offset + furthest->nbytes) furthest = t;
  }
  return h;
}

GgufFile::GgufFile(const std::string& path) : file_(path), header_(parse_gguf(file_.data(), file_.size(), path)) {}

namespace {

[[noreturn]] void key_error(const std::string& path, const std::string& key, const std::string& problem) {
  throw Error(path + ": metadata key '" + key + "' " + problem);
}

const GgufValue& require(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (v == nullptr) key_error(f.path(), key, "is missing");
  return *v;
}

}  // namespace

int64_t GgufFile::get_int(const std::string& key) const {
  const GgufValue& v = require(*this, key);
  const auto i = v.as_int();
  if (!i) key_error(path(), key, "is a " + std::string(gguf_value_type_name(v.type())) + ", expected an integer");
  return *i;
}

std::optional<int64_t> GgufFile::find_int(const std::string& key) const {
  if (find(key) == nullptr) return std::nullopt;
  return get_int(key);
}

double GgufFile::get_double(const std::string& key) const {
  const GgufValue& v = require(*this, key);
  const auto d = v.as_double();
  if (!d) key_error(path(), key, "is a " + std::string(gguf_value_type_name(v.type())) + ", expected a number");
  return *d;
}

const std::string& GgufFile::get_string(const std::string& key) const {
  const GgufValue& v = require(*this, key);
  const std::string* s = v.as_string();
  if (s == nullptr) key_error(path(), key, "is a " + std::string(gguf_value_type_name(v.type())) + ", expected a string");
  return *s;
}

const GgufValue& GgufFile::get_array(const std::string& key) const {
  const GgufValue& v = require(*this, key);
  if (!v.is_array()) key_error(path(), key, "is a " + std::string(gguf_value_type_name(v.type())) + ", expected an array");
  return v;
}

bool is_gguf_path(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0;
}

}  // namespace verdict::formats
