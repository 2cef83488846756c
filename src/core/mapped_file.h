// A read-only memory map of a whole file (RAII). Tensors point into it without copies.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace verdict {

class MappedFile {
 public:
  MappedFile() = default;
  // Maps `path`; throws verdict::Error naming the file when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Whether [p, p + bytes) lies inside the mapping.
  bool contains(const void* p, std::size_t bytes) const;
  // Tells the kernel the whole pages of [p, p + bytes) (inside the mapping, else nothing happens) are not
  // needed now: they leave the process's resident memory and are read from the file again if touched.
  void drop_pages(const void* p, std::size_t bytes) const;

 private:
  void release();
  const uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::string path_;
};

// Reads a whole (small) file into a string; throws verdict::Error naming the file.
std::string read_text_file(const std::string& path);

bool file_exists(const std::string& path);

}  // namespace verdict
