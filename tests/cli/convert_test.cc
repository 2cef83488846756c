// `verdict convert` and the commands that take a .gguf model path (info, tokenize, forward), driven as
// a user would.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/json.h"
#include "support/fixtures.h"
#include "support/gguf_edit.h"
#include "support/process.h"
#include "support/scoped_env.h"

namespace verdict {
namespace {

using testing::fixture;
using testing::id_list;
using testing::run_process;
using testing::verdict_bin;

std::string temp_dir(const std::string& tag) {
  const std::string dir = ::testing::TempDir() + "/convert_test_" + tag + "_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(Convert, UsageErrorsExitTwo) {
  EXPECT_EQ(run_process(verdict_bin(), {"convert"}).exit_code, 2);
  EXPECT_EQ(run_process(verdict_bin(), {"convert", fixture("qwen35-tiny")}).exit_code, 2);
  const auto bad_type = run_process(verdict_bin(), {"convert", fixture("qwen35-tiny"), "x.gguf", "--type", "iq2_xxs"});
  EXPECT_EQ(bad_type.exit_code, 2);
  EXPECT_NE(bad_type.err.find("--type must be"), std::string::npos) << bad_type.err;
  const auto help = run_process(verdict_bin(), {"convert", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: verdict convert IN_DIR OUT.gguf"), std::string::npos);
}

// The _K_M recipes by name: Q6_K for the output matrix and 4 of qwen35-small's 8 layers' attn_v / attn_qkv
// and ffn_down, the base type for the other matrices.
TEST(Convert, KMRecipesByName) {
  const std::string dir = temp_dir("k_m");
  for (const auto& [type, base] : {std::pair{"q4_k_m", "Q4_K"}, std::pair{"q5_k_m", "Q5_K"}}) {
    const std::string out = dir + "/small-" + type + ".gguf";
    const auto r = run_process(verdict_bin(), {"convert", fixture("qwen35-small"), out, "--type", type});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("109 tensors (45 F32, 55 " + std::string(base) + ", 9 Q6_K)"), std::string::npos) << r.out;
  }
  std::filesystem::remove_all(dir);
}

TEST(Convert, MissingInputIsAnError) {
  const std::string dir = temp_dir("missing");
  const auto r = run_process(verdict_bin(), {"convert", dir + "/nope", dir + "/out.gguf"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.gguf"));
  std::filesystem::remove_all(dir);
}

TEST(Convert, WritesAFileTheOtherCommandsLoad) {
  const std::string dir = temp_dir("q8");
  const std::string out = dir + "/tiny-q8_0.gguf";  // no tokenizer.json beside it: the GGUF's own is used
  const auto r = run_process(verdict_bin(), {"convert", fixture("qwen35-tiny"), out, "--type", "q8_0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("55 tensors (23 F32, 32 Q8_0)"), std::string::npos) << r.out;

  const auto info = run_process(verdict_bin(), {"info", out, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const Json j = parse_json(info.out, "info");
  EXPECT_EQ(j["dimensions"]["hidden_size"], 64);
  EXPECT_EQ(j["dimensions"]["vocab_size"], 768);
  EXPECT_EQ(j["tokenizer"]["vocab_size"], 765);
  EXPECT_EQ(j["quantization"]["format"], "gguf");
  EXPECT_EQ(j["quantization"]["name"], "Q8_0");
  EXPECT_EQ(j["quantization"]["file_type"], 7);
  // Loaded, in the tests' exact mode (VERDICT_PACK=0): the tensors as stored. With the packed kernels: the
  // Q8_0 records (34 bytes per 32 weights as stored, rows padded to 16) plus the packed copy of the tied
  // embeddings for the logits.
  EXPECT_EQ(j["loaded_bytes"], j["memory_bytes"]);
  {
    testing::ScopedEnv pack("VERDICT_PACK", "1");
    const auto packed = run_process(verdict_bin(), {"info", out, "--json"});
    ASSERT_EQ(packed.exit_code, 0) << packed.err;
    const Json p = parse_json(packed.out, "info");
    EXPECT_EQ(p["memory_bytes"], j["memory_bytes"]);
    EXPECT_GT(p["loaded_bytes"].get<int64_t>(), p["memory_bytes"].get<int64_t>());
    EXPECT_LT(p["loaded_bytes"].get<int64_t>(), 2 * p["memory_bytes"].get<int64_t>());
  }

  const Json cases = load_json_file(fixture("qwen35-tiny/tokenizer_cases.json"));
  for (const Json& c : cases["cases"]) {
    const auto t = run_process(verdict_bin(), {"tokenize", "--model", out}, c["text"].get<std::string>());
    ASSERT_EQ(t.exit_code, 0) << t.err;
    EXPECT_EQ(parse_json(t.out, "ids"), c["ids"]) << c["text"];
  }

  // Q8_0 weights: the logits stay within the quantization's error and keep the golden top-1.
  const Json golden = load_json_file(fixture("qwen35-tiny/golden.json"));
  for (const Json& p : golden["prompts"]) {
    const auto f = run_process(verdict_bin(), {"forward", "--model", out, "--tokens", id_list(p["ids"])});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const Json logits = parse_json(f.out, "forward")["logits"];
    const Json& want = p["logits_last"];
    double max_diff = 0, max_ref = 0;
    std::size_t best = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      max_diff = std::max(max_diff, std::abs(logits[i].get<double>() - want[i].get<double>()));
      max_ref = std::max(max_ref, std::abs(want[i].get<double>()));
      if (logits[i].get<double>() > logits[best].get<double>()) best = i;
    }
    EXPECT_LT(max_diff / max_ref, 0.15) << p["name"];
    EXPECT_EQ(static_cast<int>(best), p["argmax_rows"].back().get<int>()) << p["name"];
  }
  std::filesystem::remove_all(dir);
}

// A file with a tensor type the loader cannot compute with: `info` still describes it and names the type,
// the commands that load it fail with one line naming it. The file is a Q3_K conversion whose
// blk.0.ffn_down.weight is relabelled IQ3_S (ggml type 21: also 110 bytes per 256 values).
TEST(Convert, UnsupportedTensorTypesAreNamed) {
  const std::string dir = temp_dir("iq3");
  const std::string out = dir + "/small-iq3_s.gguf";
  ASSERT_EQ(run_process(verdict_bin(), {"convert", fixture("qwen35-small"), out, "--type", "q3_k"}).exit_code, 0);
  ASSERT_EQ(testing::relabel_gguf_tensor(out, "blk.0.ffn_down.weight", 21), 11u);  // Q3_K → IQ3_S
  const auto info = run_process(verdict_bin(), {"info", out, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const Json j = parse_json(info.out, "info");
  EXPECT_EQ(j["unsupported_tensor_types"], Json::array({"IQ3_S"}));
  EXPECT_EQ(j["stored_dtypes"]["IQ3_S"], 1);
  EXPECT_TRUE(j["loaded_bytes"].is_null());
  const auto text = run_process(verdict_bin(), {"info", out});
  EXPECT_NE(text.out.find("cannot run this file: IQ3_S tensors"), std::string::npos) << text.out;

  const auto forward = run_process(verdict_bin(), {"forward", "--model", out, "--tokens", "1,2"});
  EXPECT_EQ(forward.exit_code, 1);
  EXPECT_NE(forward.err.find("blk.0.ffn_down.weight: type IQ3_S is not supported"), std::string::npos)
      << forward.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace verdict
