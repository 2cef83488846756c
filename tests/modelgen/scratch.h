// Scratch folders for the modelgen tests, and generated checkpoints shared by the tests of one run.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "modelgen/generator.h"

namespace verdict::modelgen::testing {

// A fresh folder under $TMPDIR (or /tmp), removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The checkpoint `options` describe, generated once per test run (into a folder removed at exit).
const std::string& generated(const GenerateOptions& options);
GenerateOptions options(const std::string& preset, uint64_t seed = 7, bool f32 = false,
                        Quantization quantization = Quantization::None);

std::vector<uint8_t> read_bytes(const std::string& path);

}  // namespace verdict::modelgen::testing
