// `verdict make-model` as users run it: help, dry runs, usage errors, and a written checkpoint that the
// other commands accept.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "scratch.h"
#include "support/fixtures.h"
#include "support/process.h"

namespace verdict {
namespace {

using modelgen::testing::ScratchDir;
using testing::run_process;
using testing::verdict_bin;

TEST(MakeModelCli, HelpAndListing) {
  auto help = run_process(verdict_bin(), {"make-model", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: verdict make-model"), std::string::npos);
  EXPECT_NE(help.out.find("clef-flash-shape"), std::string::npos);
  auto list = run_process(verdict_bin(), {"--help"});
  EXPECT_NE(list.out.find("make-model"), std::string::npos);
}

TEST(MakeModelCli, DryRunPrintsTheTensorTableAndTotals) {
  auto r = run_process(verdict_bin(), {"make-model", "--preset", "qwen35-9b", "--seed", "1", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model.safetensors: 427 tensors"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("backbone parameters: 8953803264"), std::string::npos);
  EXPECT_NE(r.out.find("BF16  [248320, 4096]"), std::string::npos);
  auto head = run_process(verdict_bin(), {"make-model", "--preset=clef-flash-shape", "--seed=0", "--dry-run"});
  ASSERT_EQ(head.exit_code, 0) << head.err;
  EXPECT_NE(head.out.find("head parameters: 121762820"), std::string::npos);
}

TEST(MakeModelCli, UsageErrorsExitTwo) {
  ScratchDir dir;
  const std::string out = dir.file("m");
  auto unknown = run_process(verdict_bin(), {"make-model", "--preset", "gpt-5", "--seed", "1", out});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("qwen35-tiny"), std::string::npos) << unknown.err;
  EXPECT_EQ(run_process(verdict_bin(), {"make-model", "--preset", "qwen35-tiny", out}).exit_code, 2);
  EXPECT_EQ(run_process(verdict_bin(), {"make-model", "--preset", "qwen35-tiny", "--seed", "1"}).exit_code, 2);
  EXPECT_EQ(run_process(verdict_bin(), {"make-model", "--preset", "qwen35-tiny", "--seed", "1", "--dtype", "f16", out})
                .exit_code,
            2);
  EXPECT_EQ(run_process(verdict_bin(), {"make-model", "--preset", "qwen35-tiny", "--seed", "1", "--dtype", "f32",
                                        "--quantize", "mlx4", out})
                .exit_code,
            2);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(MakeModelCli, WritesACheckpointTheOtherCommandsRead) {
  ScratchDir dir;
  const std::string out = dir.file("tiny-mlx4");
  auto r = run_process(verdict_bin(),
                       {"make-model", "--preset", "qwen35-tiny", "--seed", "5", "--quantize", "mlx4", "--threads", "2", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote"), std::string::npos);
  auto info = run_process(verdict_bin(), {"info", out});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("mlx"), std::string::npos) << info.out;
  auto fwd = run_process(verdict_bin(), {"forward", "--model", out, "--tokens", "757,100,200,758"});
  ASSERT_EQ(fwd.exit_code, 0) << fwd.err;
  EXPECT_EQ(fwd.out.rfind("{\"hidden\":[[", 0), 0u);
  EXPECT_EQ(fwd.out.find("null"), std::string::npos);
}

}  // namespace
}  // namespace verdict
