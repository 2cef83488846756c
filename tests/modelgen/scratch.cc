#include "scratch.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <tuple>

namespace verdict::modelgen::testing {

ScratchDir::ScratchDir() {
  const char* env = std::getenv("TMPDIR");
  std::string pattern = std::string(env != nullptr && *env != '\0' ? env : "/tmp") + "/verdict-modelgen-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

GenerateOptions options(const std::string& preset, uint64_t seed, bool f32, Quantization quantization) {
  GenerateOptions o;
  o.preset = preset;
  o.seed = seed;
  o.f32 = f32;
  o.quantization = quantization;
  o.threads = 2;
  return o;
}

const std::string& generated(const GenerateOptions& o) {
  static ScratchDir root;
  static std::map<std::tuple<std::string, uint64_t, bool, int>, std::string> dirs;
  const auto key = std::make_tuple(o.preset, o.seed, o.f32, quantization_bits(o.quantization));
  auto it = dirs.find(key);
  if (it != dirs.end()) return it->second;
  const std::string dir = root.file(o.preset + "-s" + std::to_string(o.seed) + (o.f32 ? "-f32" : "-bf16") + "-q" +
                                    std::to_string(quantization_bits(o.quantization)));
  write_model(plan_model(o), dir);
  return dirs.emplace(key, dir).first->second;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace verdict::modelgen::testing
