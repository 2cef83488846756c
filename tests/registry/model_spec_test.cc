#include "registry/model_spec.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "core/error.h"
#include "decision/head.h"
#include "fixture_dirs.h"
#include "registry/memory.h"
#include "formats/hf_config.h"
#include "models/qwen35/config.h"
#include "models/qwen35/seq_state.h"
#include "support/fixtures.h"

namespace verdict::registry {
namespace {

TEST(ModelSpec, ModelFlagsNameAndPath) {
  ModelSpec a = model_from_flag("judge=" + clef_dir());
  EXPECT_EQ(a.name, "judge");
  EXPECT_EQ(a.path, clef_dir());
  EXPECT_EQ(a.kind, ModelKind::kDecision);
  ModelSpec b = model_from_flag(clef_dir() + "/");
  EXPECT_EQ(b.name, "bf16");  // the folder's name
  EXPECT_EQ(b.path, clef_dir());
  EXPECT_EQ(model_from_flag(chat_dir()).kind, ModelKind::kChat);
  EXPECT_THROW(model_from_flag("x=/nonexistent/folder"), Error);
  EXPECT_THROW(model_from_flag(" x=" + clef_dir()), Error);  // surrounding whitespace
  EXPECT_THROW(model_from_flag("=" + clef_dir()), Error);
  EXPECT_THROW(model_from_flag(verdict::testing::fixture("clef-tiny")), Error);  // no config.json there
}

TEST(ModelSpec, ModelNames) {
  for (const char* ok : {"clef", "clef-flash", "Qwen3.5-9B", "mi modelo", "modèle", "a:b@c+d"}) EXPECT_NO_THROW(check_model_name(ok));
  for (const char* bad : {"", " clef", "clef ", "a/b", "tab\there", "\xff", "\xc0\x80"}) EXPECT_THROW(check_model_name(bad), Error) << bad;
  EXPECT_THROW(check_model_name(std::string(129, 'a')), Error);
}

TEST(ModelSpec, ModelsFolderFindsEveryCheckpoint) {
  char tmpl[] = "/tmp/verdict-models-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ASSERT_EQ(::symlink(clef_dir().c_str(), (dir + "/zeta-judge").c_str()), 0);
  ASSERT_EQ(::symlink(chat_dir().c_str(), (dir + "/alpha-chat").c_str()), 0);
  ASSERT_EQ(::mkdir((dir + "/empty").c_str(), 0755), 0);
  ASSERT_EQ(std::system(("touch " + dir + "/notes.txt").c_str()), 0);
  // A .gguf file is a chat model named without its extension, as `--model FILE.gguf` names it.
  const std::string gguf = verdict::testing::fixture("qwen35-tiny/model-f32.gguf");
  ASSERT_EQ(::symlink(gguf.c_str(), (dir + "/tiny-f32.gguf").c_str()), 0);
  const std::vector<ModelSpec> found = scan_models_dir(dir + "/");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].name, "alpha-chat");
  EXPECT_EQ(found[0].kind, ModelKind::kChat);
  EXPECT_EQ(found[1].name, "tiny-f32");
  EXPECT_EQ(found[1].path, dir + "/tiny-f32.gguf");
  EXPECT_EQ(found[1].name, model_from_flag(found[1].path).name);
  EXPECT_EQ(found[2].name, "zeta-judge");
  EXPECT_EQ(found[2].kind, ModelKind::kDecision);
  EXPECT_EQ(found[2].path, dir + "/zeta-judge");
  ASSERT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
  EXPECT_THROW(scan_models_dir("/nonexistent/models"), Error);
}

TEST(Memory, ParsesSizes) {
  EXPECT_EQ(parse_memory_size("8G"), std::size_t{8} << 30);
  EXPECT_EQ(parse_memory_size("512M"), std::size_t{512} << 20);
  EXPECT_EQ(parse_memory_size("512mb"), std::size_t{512} << 20);
  EXPECT_EQ(parse_memory_size("2GiB"), std::size_t{2} << 30);
  EXPECT_EQ(parse_memory_size("1.5G"), std::size_t{3} << 29);
  EXPECT_EQ(parse_memory_size("64k"), std::size_t{64} << 10);
  EXPECT_EQ(parse_memory_size("1073741824"), std::size_t{1} << 30);
  EXPECT_EQ(parse_memory_size("1T"), std::size_t{1} << 40);
  if (physical_memory_bytes() > 0) {
    EXPECT_NEAR(static_cast<double>(parse_memory_size("50%")), physical_memory_bytes() / 2.0, 1.0);
    EXPECT_EQ(default_memory_budget(), physical_memory_bytes() / 4 * 3);
  }
  for (const char* bad : {"", "G", "-1", "1.2.3", "0", "5X", "101%", "0%", "8 G", "nan", "1e3"})
    EXPECT_THROW(parse_memory_size(bad), Error) << bad;
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(std::size_t{3} << 29), "1.5 GiB");
}

TEST(Memory, TheStateEstimateIsWhatThePoolHolds) {
  const std::string path = clef_dir() + "/config.json";
  const models::qwen35::Config config = models::qwen35::make_config(formats::load_model_config(path), path);
  for (const auto& [slots, tokens] : {std::pair<int64_t, int64_t>{1, 16}, {4, 480}, {8, 16384}}) {
    const models::qwen35::SeqStatePool pool(config, slots, tokens);
    EXPECT_EQ(state_pool_bytes(config, slots, tokens), pool.bytes()) << slots << " × " << tokens;
  }
  const MemoryEstimate e = estimate_model_memory(clef_dir(), config, 4, 16384, 8192);
  EXPECT_GE(e.weights, 682960u);  // model.safetensors
  // joint_head.safetensors (127,528 bytes, BF16) as the loaded head holds it: BF16 matrices, fp32 vectors.
  EXPECT_EQ(e.head, decision::JointHead::load_dir(clef_dir()).weight_bytes());
  EXPECT_LT(e.head, 2u * 127528u);
  EXPECT_EQ(e.state, state_pool_bytes(config, 4, 16384));
  EXPECT_GT(e.activations, 0u);
  EXPECT_EQ(e.total(), e.weights + e.head + e.state + e.activations);
}

}  // namespace
}  // namespace verdict::registry
