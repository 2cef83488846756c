#include "registry/memory.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#include "decision/head.h"
#include "registry/model_source.h"

namespace verdict::registry {
namespace {

std::size_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0;
}

// What the joint head takes once loaded: its matrices as stored, its vectors and scalars in fp32; twice the
// file's size when its header cannot be read (the load will say why).
std::size_t head_bytes(const std::string& path) {
  try {
    return decision::JointHead::loaded_bytes(path);
  } catch (const Error&) {
    return 2 * file_size(path);
  }
}

}  // namespace

std::size_t parse_memory_size(std::string_view text) {
  const std::string s(text);
  const auto bad = [&] {
    return Error("'" + s + "' is not a memory size (examples: 8G, 512M, 1073741824, 60%)");
  };
  if (s.empty()) throw bad();
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) throw bad();
  const std::string number = s.substr(0, i);
  if (number.find('.') != number.rfind('.')) throw bad();
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value)) throw bad();
  std::string unit;
  for (char c : s.substr(i)) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double bytes = 0;
  if (unit == "%") {
    if (value <= 0 || value > 100) throw bad();
    const std::size_t ram = physical_memory_bytes();
    if (ram == 0) throw Error("--max-memory " + s + ": the machine's memory size is unknown; give bytes");
    bytes = static_cast<double>(ram) * value / 100.0;
  } else {
    double scale = 0;
    if (unit.empty() || unit == "b") scale = 1;
    else if (unit == "k" || unit == "kb" || unit == "kib") scale = 1024.0;
    else if (unit == "m" || unit == "mb" || unit == "mib") scale = 1024.0 * 1024;
    else if (unit == "g" || unit == "gb" || unit == "gib") scale = 1024.0 * 1024 * 1024;
    else if (unit == "t" || unit == "tb" || unit == "tib") scale = 1024.0 * 1024 * 1024 * 1024;
    else throw bad();
    bytes = value * scale;
  }
  if (bytes < 1 || bytes > 1e18) throw bad();
  return static_cast<std::size_t>(bytes);
}

std::string format_bytes(std::size_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

std::size_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

std::size_t default_memory_budget() {
  const std::size_t ram = physical_memory_bytes();
  return ram == 0 ? std::size_t{8} << 30 : ram / 4 * 3;
}

std::size_t state_pool_bytes(const models::qwen35::Config& c, int64_t slots, int64_t max_tokens) {
  const int64_t conv = std::max<int64_t>(c.conv_kernel - 1, 0) * c.conv_dim();
  const int64_t recurrent = c.nv * c.dk * c.dv;
  const int64_t kv = 2 * c.nkv * max_tokens * c.head_dim;
  const int64_t per_slot = c.deltanet_layers * (conv + recurrent) + c.attention_layers * kv;
  return static_cast<std::size_t>(slots * per_slot) * sizeof(float);
}

MemoryEstimate estimate_model_memory(const std::string& dir, const models::qwen35::Config& c, int64_t slots,
                                     int64_t max_tokens, int64_t max_batch_tokens, bool output_copy) {
  MemoryEstimate e;
  std::size_t stored = 0;  // the backbone's safetensors files as stored
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      if (!name.ends_with(".safetensors")) continue;
      const std::size_t size = file_size(dir + "/" + name);
      if (name == "joint_head.safetensors") {
        e.head += head_bytes(dir + "/" + name);
      } else {
        stored += size;
      }
    }
    ::closedir(d);
  }
  // The backbone's tensors as the loader holds them, packed copies included (model_source.h): a .gguf
  // file's, or a safetensors folder's (its files' size when they cannot be read: the load will say why).
  if (is_gguf_model(backbone_path(dir))) {
    e.weights = gguf_weight_bytes(dir, output_copy);
  } else {
    try {
      e.weights = safetensors_weight_bytes(dir, c.tied, output_copy);
    } catch (const Error&) {
      e.weights = stored;
    }
  }
  e.weights += e.weights / 32;  // a margin: alignment copies, allocator slack
  e.state = state_pool_bytes(c, slots, max_tokens);
  // One step: residual, normed and mixer rows (3·H), the MLP's gate/up/act (3·I), the mixers'
  // projections (2·max(q_proj rows, conv_dim + value_dim)).
  const int64_t mixer = std::max(c.q_proj_rows() + 2 * c.kv_dim(), c.conv_dim() + c.value_dim() + 2 * c.nv);
  const int64_t per_row = 3 * c.hidden + 3 * c.intermediate + 2 * mixer;
  e.activations = static_cast<std::size_t>(max_batch_tokens * per_row) * sizeof(float);
  return e;
}

}  // namespace verdict::registry
