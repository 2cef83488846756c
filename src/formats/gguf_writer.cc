#include "formats/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "core/error.h"

namespace verdict::formats {
namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put_u64(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

void put_value(std::vector<uint8_t>& out, const GgufValue& v) {
  put_u32(out, static_cast<uint32_t>(v.type()));
  if (v.type() == GgufValueType::String) {
    put_string(out, *v.as_string());
  } else if (v.is_array()) {
    put_u32(out, static_cast<uint32_t>(v.element_type()));
    put_u64(out, v.size());
    if (const auto* strings = v.strings())
      for (const std::string& s : *strings) put_string(out, s);
    else
      out.insert(out.end(), v.raw().begin(), v.raw().end());
  } else {
    out.insert(out.end(), v.raw().begin(), v.raw().end());
  }
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

void GgufLayout::add_metadata(std::string key, GgufValue value) {
  if (key.empty()) throw Error("GGUF writer: empty metadata key");
  for (const auto& [k, v] : metadata_)
    if (k == key) throw Error("GGUF writer: metadata key '" + key + "' added twice");
  if (key == "general.alignment") {
    const auto a = value.as_int();
    if (value.type() != GgufValueType::U32 || !a || *a <= 0 || (*a & (*a - 1)) != 0)
      throw Error("GGUF writer: general.alignment must be a u32 power of two");
    if (!tensors_.empty()) throw Error("GGUF writer: set general.alignment before adding tensors");
    alignment_ = static_cast<uint32_t>(*a);
  }
  metadata_.emplace_back(std::move(key), std::move(value));
}

void GgufLayout::add_tensor(std::string name, GgmlType type, std::vector<int64_t> ne) {
  if (name.empty()) throw Error("GGUF writer: empty tensor name");
  for (const Tensor& t : tensors_)
    if (t.name == name) throw Error("GGUF writer: tensor '" + name + "' added twice");
  if (ne.empty() || ne.size() > 4) throw Error("GGUF writer: tensor '" + name + "' needs 1 to 4 dimensions");
  uint64_t rows = 1;
  for (std::size_t i = 0; i < ne.size(); ++i) {
    if (ne[i] < 0) throw Error("GGUF writer: tensor '" + name + "' has a negative dimension");
    if (i > 0) rows *= static_cast<uint64_t>(ne[i]);
  }
  const auto row = ggml_row_bytes(type, static_cast<uint64_t>(ne[0]));
  if (!row)
    throw Error("GGUF writer: tensor '" + name + "': row length " + std::to_string(ne[0]) + " is not a multiple of the " +
                std::string(ggml_type_name(type)) + " block size");
  Tensor t{std::move(name), type, std::move(ne), align_up(data_end_, alignment_), *row * rows};
  data_end_ = t.offset + t.nbytes;
  tensors_.push_back(std::move(t));
}

std::vector<uint8_t> GgufLayout::header() const {
  std::vector<uint8_t> out;
  put_u32(out, 0x46554747);  // "GGUF"
  put_u32(out, 3);
  put_u64(out, tensors_.size());
  put_u64(out, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    put_string(out, key);
    put_value(out, value);
  }
  for (const Tensor& t : tensors_) {
    put_string(out, t.name);
    put_u32(out, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) put_u64(out, static_cast<uint64_t>(d));
    put_u32(out, static_cast<uint32_t>(t.type));
    put_u64(out, t.offset);
  }
  out.resize(align_up(out.size(), alignment_), 0);
  return out;
}

std::vector<uint8_t> serialize_gguf(const GgufLayout& layout, const GgufTensorFiller& fill) {
  std::vector<uint8_t> out = layout.header();
  const std::size_t base = out.size();
  for (std::size_t i = 0; i < layout.tensors().size(); ++i) {
    const auto& t = layout.tensors()[i];
    out.resize(base + t.offset, 0);
    out.resize(base + t.offset + t.nbytes, 0);
    fill(i, std::span<uint8_t>(out.data() + base + t.offset, t.nbytes));
  }
  // The data section ends padded to the alignment, as gguf-py writes it.
  out.resize(align_up(out.size(), layout.alignment()), 0);
  return out;
}

void write_gguf(const std::string& path, const GgufLayout& layout, const GgufTensorFiller& fill) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw Error(path + ": cannot create: " + std::strerror(errno));
  auto write = [&](const uint8_t* p, std::size_t n) {
    if (n > 0 && std::fwrite(p, 1, n, f) != n) {
      const std::string why = std::strerror(errno);
      std::fclose(f);
      std::remove(tmp.c_str());
      throw Error(path + ": write failed: " + why);
    }
  };
  try {
    const std::vector<uint8_t> header = layout.header();
    write(header.data(), header.size());
    uint64_t pos = 0;
    std::vector<uint8_t> buffer;
    const std::vector<uint8_t> zeros(layout.alignment(), 0);
    for (std::size_t i = 0; i < layout.tensors().size(); ++i) {
      const auto& t = layout.tensors()[i];
      write(zeros.data(), static_cast<std::size_t>(t.offset - pos));
      buffer.assign(t.nbytes, 0);
      fill(i, buffer);
      write(buffer.data(), buffer.size());
      pos = t.offset + t.nbytes;
    }
    write(zeros.data(), static_cast<std::size_t>(align_up(pos, layout.alignment()) - pos));
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": write failed: " + std::strerror(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename the written file: " + ec.message());
  }
}

}  // namespace verdict::formats
