#include "formats/tensor_store.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/json.h"
#include "formats/convert.h"
#include "safetensors_writer.h"

namespace verdict::formats {
namespace {

using testing::build_safetensors;
using testing::contains_all;
using testing::error_message;
using testing::TempDir;
using testing::TensorSpec;

TensorSpec f32(const std::string& name, std::vector<float> values) {
  return {name, "F32", {static_cast<int64_t>(values.size())}, testing::f32_bytes(values)};
}

void write_index(const TempDir& dir, const Json& weight_map) {
  const Json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}};
  testing::write_text(dir.file("model.safetensors.index.json"), index.dump(2));
}

// A two-shard checkpoint with an MTP tensor and a vision tensor listed in the index.
void write_sharded(const TempDir& dir) {
  testing::write_file(dir.file("model-00001-of-00002.safetensors"),
                      build_safetensors({f32("model.embed_tokens.weight", {1, 2}), f32("model.norm.weight", {3}),
                                         f32("model.visual.patch.weight", {9})}));
  testing::write_file(dir.file("model-00002-of-00002.safetensors"),
                      build_safetensors({f32("lm_head.weight", {4, 5, 6}), f32("mtp.fc.weight", {7})}));
  write_index(dir, {{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
                    {"model.norm.weight", "model-00001-of-00002.safetensors"},
                    {"model.visual.patch.weight", "model-00001-of-00002.safetensors"},
                    {"lm_head.weight", "model-00002-of-00002.safetensors"},
                    {"mtp.fc.weight", "model-00002-of-00002.safetensors"}});
}

TEST(TensorStore, OpensAShardedCheckpoint) {
  TempDir dir;
  write_sharded(dir);
  const TensorStore store = TensorStore::open_dir(dir.path());
  ASSERT_EQ(store.tensors().size(), 3u);
  EXPECT_TRUE(store.contains("model.embed_tokens.weight"));
  EXPECT_TRUE(store.contains("lm_head.weight"));
  EXPECT_EQ(to_f32(store.get("lm_head.weight")), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(store.get("lm_head.weight").file, dir.file("model-00002-of-00002.safetensors"));
  EXPECT_EQ(store.skipped(), (std::vector<std::string>{"model.visual.patch.weight", "mtp.fc.weight"}));
  EXPECT_EQ(store.files(), (std::vector<std::string>{dir.file("model-00001-of-00002.safetensors"),
                                                     dir.file("model-00002-of-00002.safetensors")}));
  EXPECT_EQ(store.stored_bytes(), 6u * 4u);
  EXPECT_EQ(store.find("mtp.fc.weight"), nullptr);

  const TensorStore all = TensorStore::open_dir(dir.path(), {.include_vision = true, .include_mtp = true});
  EXPECT_EQ(all.tensors().size(), 5u);
  EXPECT_TRUE(all.skipped().empty());
}

TEST(TensorStore, MissingTensorNamesTheFolder) {
  TempDir dir;
  write_sharded(dir);
  const TensorStore store = TensorStore::open_dir(dir.path());
  EXPECT_EQ(error_message([&] { store.get("model.layers.0.mlp.up_proj.weight"); }),
            dir.path() + ": missing tensor 'model.layers.0.mlp.up_proj.weight'");
  EXPECT_EQ(error_message([&] { store.get("mtp.fc.weight"); }), dir.path() + ": missing tensor 'mtp.fc.weight'");
}

TEST(TensorStore, IndexNamingAMissingShard) {
  TempDir dir;
  write_sharded(dir);
  write_index(dir, {{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
                    {"lm_head.weight", "model-00003-of-00003.safetensors"}});
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {dir.file("model.safetensors.index.json"), "shard 'model-00003-of-00003.safetensors'",
                            "lm_head.weight", "not found"}));
}

TEST(TensorStore, IndexedTensorMissingFromItsShard) {
  TempDir dir;
  write_sharded(dir);
  write_index(dir, {{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
                    {"model.norm.weight", "model-00001-of-00002.safetensors"},
                    {"model.visual.patch.weight", "model-00001-of-00002.safetensors"},
                    {"model.layers.0.extra", "model-00001-of-00002.safetensors"},
                    {"lm_head.weight", "model-00002-of-00002.safetensors"},
                    {"mtp.fc.weight", "model-00002-of-00002.safetensors"}});
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {"model.safetensors.index.json", "tensor 'model.layers.0.extra'",
                            "shard 'model-00001-of-00002.safetensors'", "does not hold it"}));
}

TEST(TensorStore, ShardTensorTheIndexDoesNotAssign) {
  TempDir dir;
  write_sharded(dir);
  write_index(dir, {{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
                    {"model.norm.weight", "model-00001-of-00002.safetensors"},
                    {"model.visual.patch.weight", "model-00001-of-00002.safetensors"},
                    {"lm_head.weight", "model-00002-of-00002.safetensors"}});
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {dir.file("model-00002-of-00002.safetensors"), "holds tensor 'mtp.fc.weight'",
                            "does not assign"}));
}

TEST(TensorStore, MalformedIndex) {
  TempDir dir;
  write_sharded(dir);
  testing::write_text(dir.file("model.safetensors.index.json"), "{\"weight_map\": ");
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {"model.safetensors.index.json", "invalid JSON"}));
  testing::write_text(dir.file("model.safetensors.index.json"), "{\"metadata\": {}}");
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {"model.safetensors.index.json", "missing 'weight_map'"}));
  write_index(dir, {{"a", 3}});
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {"model.safetensors.index.json", "tensor 'a'", "not a string"}));
  write_index(dir, {{"a", "../elsewhere.safetensors"}});
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {"model.safetensors.index.json", "'../elsewhere.safetensors'", "not a file inside"}));
}

TEST(TensorStore, SingleFilePreferredOverOtherFiles) {
  TempDir dir;
  testing::write_file(dir.file("model.safetensors"), build_safetensors({f32("a", {1})}));
  testing::write_file(dir.file("other.safetensors"), build_safetensors({f32("a", {2})}));
  const TensorStore store = TensorStore::open_dir(dir.path());
  EXPECT_EQ(store.files(), (std::vector<std::string>{dir.file("model.safetensors")}));
  EXPECT_EQ(to_f32(store.get("a")), (std::vector<float>{1}));
}

TEST(TensorStore, GlobSkipsTheClefHead) {
  TempDir dir;
  testing::write_file(dir.file("b.safetensors"), build_safetensors({f32("y", {2})}));
  testing::write_file(dir.file("a.safetensors"), build_safetensors({f32("x", {1})}));
  // The head holds a name that would collide if it were read with the backbone.
  testing::write_file(dir.file("joint_head.safetensors"), build_safetensors({f32("x", {9})}));
  testing::write_text(dir.file("notes.txt"), "not a tensor file");
  const TensorStore store = TensorStore::open_dir(dir.path());
  EXPECT_EQ(store.files(), (std::vector<std::string>{dir.file("a.safetensors"), dir.file("b.safetensors")}));
  EXPECT_EQ(store.tensors().size(), 2u);

  const TensorStore head = TensorStore::open_files({dir.file("joint_head.safetensors")});
  EXPECT_EQ(to_f32(head.get("x")), (std::vector<float>{9}));
  EXPECT_EQ(error_message([&] { head.get("nope"); }),
            dir.file("joint_head.safetensors") + ": missing tensor 'nope'");
}

TEST(TensorStore, NameInTwoFiles) {
  TempDir dir;
  testing::write_file(dir.file("a.safetensors"), build_safetensors({f32("x", {1}), f32("mtp.z", {1})}));
  testing::write_file(dir.file("b.safetensors"), build_safetensors({f32("x", {2})}));
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {"tensor 'x' appears in both", dir.file("a.safetensors"), dir.file("b.safetensors")}));
  // Skipped names collide too.
  testing::write_file(dir.file("b.safetensors"), build_safetensors({f32("mtp.z", {2})}));
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {"tensor 'mtp.z' appears in both"}));
}

TEST(TensorStore, EmptyOrMissingFolder) {
  TempDir dir;
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {dir.path(), "no model.safetensors.index.json, model.safetensors"}));
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.file("absent")); }),
                           {dir.file("absent"), "not a directory"}));
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_files({}); }), {"no safetensors files"}));
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_files({dir.file("x.safetensors")}); }),
                           {dir.file("x.safetensors")}));
}

TEST(TensorStore, CorruptShardNamesTheFile) {
  TempDir dir;
  write_sharded(dir);
  testing::write_file(dir.file("model-00002-of-00002.safetensors"), {1, 2, 3});
  EXPECT_TRUE(contains_all(error_message([&] { TensorStore::open_dir(dir.path()); }),
                           {dir.file("model-00002-of-00002.safetensors"), "truncated file"}));
}

TEST(TensorStore, SkipRules) {
  const TensorStoreOptions none;
  for (const char* name : {"model.visual.blocks.0.attn.qkv.weight", "visual.merger.weight", "vision_tower.x",
                           "model.vision_tower.x", "mtp.fc.weight", "model.mtp.norm.weight",
                           "language_model.mtp.layers.0.x"})
    EXPECT_TRUE(is_skipped_tensor(name, none)) << name;
  for (const char* name : {"model.language_model.embed_tokens.weight", "language_model.model.norm.weight",
                           "lm_head.weight", "model.visualizer", "mtp_extra"})
    EXPECT_FALSE(is_skipped_tensor(name, none)) << name;
  EXPECT_FALSE(is_skipped_tensor("model.visual.x", {.include_vision = true}));
  EXPECT_TRUE(is_skipped_tensor("mtp.x", {.include_vision = true}));
  EXPECT_FALSE(is_skipped_tensor("mtp.x", {.include_mtp = true}));
}

}  // namespace
}  // namespace verdict::formats
