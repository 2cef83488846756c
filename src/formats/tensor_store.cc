#include "formats/tensor_store.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/error.h"
#include "core/json.h"
#include "core/mapped_file.h"

namespace verdict::formats {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kIndexFile = "model.safetensors.index.json";
constexpr std::string_view kSingleFile = "model.safetensors";
constexpr std::string_view kClefHeadFile = "joint_head.safetensors";

constexpr std::array<std::string_view, 4> kVisionPrefixes = {"model.visual.", "visual.", "vision_tower.",
                                                              "model.vision_tower."};
constexpr std::array<std::string_view, 3> kMtpPrefixes = {"mtp.", "model.mtp.", "language_model.mtp."};

std::string join_path(const std::string& dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return dir + std::string(name);
  return dir + "/" + std::string(name);
}

bool has_prefix(const std::string& name, std::string_view prefix) {
  return name.size() >= prefix.size() && name.compare(0, prefix.size(), prefix) == 0;
}

// A shard named by the index must stay inside the checkpoint folder.
bool is_safe_relative_path(const std::string& name) {
  if (name.empty() || name.front() == '/') return false;
  const fs::path p(name);
  for (const auto& part : p)
    if (part == "..") return false;
  return true;
}

struct IndexEntry {
  std::string shard;
  std::set<std::string> names;  // the tensors the index assigns to the shard
};

// Reads model.safetensors.index.json: shard file -> tensor names, in shard-name order.
std::vector<IndexEntry> read_index(const std::string& index_path) {
  const Json index = load_json_file(index_path);
  if (!index.is_object()) throw Error(index_path + ": not a JSON object");
  if (!index.contains("weight_map")) throw Error(index_path + ": missing 'weight_map'");
  const Json& weight_map = index["weight_map"];
  if (!weight_map.is_object()) throw Error(index_path + ": 'weight_map' is not a JSON object");
  std::map<std::string, std::set<std::string>> by_shard;
  for (auto it = weight_map.begin(); it != weight_map.end(); ++it) {
    if (!it.value().is_string())
      throw Error(index_path + ": weight_map entry for tensor '" + it.key() + "' is not a string");
    const auto& shard = it.value().get_ref<const std::string&>();
    if (!is_safe_relative_path(shard))
      throw Error(index_path + ": shard '" + shard + "' (tensor '" + it.key() +
                  "') is not a file inside the checkpoint folder");
    by_shard[shard].insert(it.key());
  }
  if (by_shard.empty()) throw Error(index_path + ": 'weight_map' lists no tensors");
  std::vector<IndexEntry> out;
  for (auto& [shard, names] : by_shard) out.push_back({shard, std::move(names)});
  return out;
}

}  // namespace

bool is_skipped_tensor(const std::string& name, const TensorStoreOptions& options) {
  if (!options.include_vision)
    for (auto p : kVisionPrefixes)
      if (has_prefix(name, p)) return true;
  if (!options.include_mtp)
    for (auto p : kMtpPrefixes)
      if (has_prefix(name, p)) return true;
  return false;
}

void TensorStore::add_file(std::unique_ptr<SafetensorsFile> file, const TensorStoreOptions& options) {
  for (const TensorView& t : file->tensors()) {
    if (const auto it = tensors_.find(t.name); it != tensors_.end())
      throw Error(origin_ + ": tensor '" + t.name + "' appears in both " + it->second.file + " and " + file->path());
    if (const auto it = skipped_files_.find(t.name); it != skipped_files_.end())
      throw Error(origin_ + ": tensor '" + t.name + "' appears in both " + it->second + " and " + file->path());
    if (is_skipped_tensor(t.name, options)) {
      skipped_.push_back(t.name);
      skipped_files_.emplace(t.name, file->path());
      continue;
    }
    tensors_.emplace(t.name, t);
  }
  files_.push_back(std::move(file));
}

TensorStore TensorStore::open_dir(const std::string& dir, const TensorStoreOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": not a directory");

  TensorStore store;
  store.origin_ = dir;
  const std::string index_path = join_path(dir, kIndexFile);
  const std::string single_path = join_path(dir, kSingleFile);
  if (file_exists(index_path)) {
    const std::vector<IndexEntry> index = read_index(index_path);
    // Check every shard exists before mapping any of them.
    for (const IndexEntry& e : index)
      if (!file_exists(join_path(dir, e.shard)))
        throw Error(index_path + ": shard '" + e.shard + "' (holding tensor '" + *e.names.begin() +
                    "') not found in " + dir);
    for (const IndexEntry& e : index) {
      auto file = std::make_unique<SafetensorsFile>(join_path(dir, e.shard));
      std::set<std::string> held;
      for (const TensorView& t : file->tensors()) {
        if (!e.names.contains(t.name))
          throw Error(file->path() + ": holds tensor '" + t.name + "' that " + index_path +
                      " does not assign to shard '" + e.shard + "'");
        held.insert(t.name);
      }
      for (const std::string& name : e.names)
        if (!held.contains(name))
          throw Error(index_path + ": tensor '" + name + "' is assigned to shard '" + e.shard + "' but " +
                      file->path() + " does not hold it");
      store.add_file(std::move(file), options);
    }
  } else if (file_exists(single_path)) {
    store.add_file(std::make_unique<SafetensorsFile>(single_path), options);
  } else {
    std::vector<std::string> names;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      // Hidden files (e.g. macOS "._x.safetensors") are not tensors; the Clef head is opened separately.
      if (name.empty() || name.front() == '.' || name == kClefHeadFile) continue;
      if (it->path().extension() != ".safetensors") continue;
      std::error_code type_ec;
      if (!it->is_regular_file(type_ec)) continue;
      names.push_back(name);
    }
    if (ec) throw Error(dir + ": cannot list: " + ec.message());
    if (names.empty())
      throw Error(dir + ": no " + std::string(kIndexFile) + ", " + std::string(kSingleFile) +
                  " or other *.safetensors file");
    std::sort(names.begin(), names.end());
    for (const std::string& name : names)
      store.add_file(std::make_unique<SafetensorsFile>(join_path(dir, name)), options);
  }
  std::sort(store.skipped_.begin(), store.skipped_.end());
  return store;
}

TensorStore TensorStore::open_files(const std::vector<std::string>& files, const TensorStoreOptions& options) {
  if (files.empty()) throw Error("TensorStore: no safetensors files given");
  TensorStore store;
  for (std::size_t i = 0; i < files.size(); ++i) store.origin_ += (i > 0 ? ", " : "") + files[i];
  for (const std::string& path : files) store.add_file(std::make_unique<SafetensorsFile>(path), options);
  std::sort(store.skipped_.begin(), store.skipped_.end());
  return store;
}

const TensorView* TensorStore::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it != tensors_.end() ? &it->second : nullptr;
}

const TensorView& TensorStore::get(const std::string& name) const {
  if (const TensorView* t = find(name)) return *t;
  throw Error(origin_ + ": missing tensor '" + name + "'");
}

std::vector<std::string> TensorStore::files() const {
  std::vector<std::string> out;
  out.reserve(files_.size());
  for (const auto& f : files_) out.push_back(f->path());
  return out;
}

std::size_t TensorStore::stored_bytes() const {
  std::size_t total = 0;
  for (const auto& [name, t] : tensors_) total += t.nbytes;
  return total;
}

void TensorStore::drop_pages(const void* p, std::size_t bytes) const {
  for (const auto& f : files_) f->mapping().drop_pages(p, bytes);
}

}  // namespace verdict::formats
