// TensorStore: every tensor of a checkpoint directory, by name, whether the weights are one
// `model.safetensors` or shards listed in `model.safetensors.index.json`. Memory-mapped, zero-copy.
//
// Tensors under `model.visual.*`, `visual.*`, `vision_tower.*`, `model.vision_tower.*` (vision tower) and
// `mtp.*`, `model.mtp.*`, `language_model.mtp.*` (multi-token prediction head) are skipped unless the
// options ask for them.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/safetensors.h"

namespace verdict::formats {

struct TensorStoreOptions {
  bool include_vision = false;
  bool include_mtp = false;
};

class TensorStore {
 public:
  // Opens `dir`: `model.safetensors.index.json` if present (every shard it names must exist and hold
  // exactly the tensors the index assigns to it: a listed tensor missing from its shard, or a shard
  // tensor the index does not assign to that shard, is an error), else `model.safetensors`, else every
  // `*.safetensors` file in the folder except the Clef head (`joint_head.safetensors`). A tensor name
  // found in two files is an error. Throws verdict::Error naming file and problem.
  static TensorStore open_dir(const std::string& dir, const TensorStoreOptions& options = {});
  // Opens explicit files (e.g. `joint_head.safetensors`).
  static TensorStore open_files(const std::vector<std::string>& files,
                                const TensorStoreOptions& options = {});

  // nullptr when absent.
  const TensorView* find(const std::string& name) const;
  // Throws verdict::Error("<dir>: missing tensor <name>") when absent.
  const TensorView& get(const std::string& name) const;
  bool contains(const std::string& name) const { return find(name) != nullptr; }

  // All kept tensors, sorted by name.
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  // Names that were skipped (vision / MTP).
  const std::vector<std::string>& skipped() const { return skipped_; }
  // The files backing the store.
  std::vector<std::string> files() const;
  // Bytes of the kept tensors as stored.
  std::size_t stored_bytes() const;
  // MappedFile::drop_pages on the file holding [p, p + bytes) (nothing when no file does).
  void drop_pages(const void* p, std::size_t bytes) const;

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, TensorView> tensors_;
  std::vector<std::string> skipped_;
  std::map<std::string, std::string> skipped_files_;  // skipped name -> its file (duplicate checks)
  std::string origin_;  // the directory (or file list) the store was opened from, for messages
  void add_file(std::unique_ptr<SafetensorsFile> file, const TensorStoreOptions& options);
};

// True for names the text model never reads (vision tower / MTP), given the options.
bool is_skipped_tensor(const std::string& name, const TensorStoreOptions& options);

}  // namespace verdict::formats
