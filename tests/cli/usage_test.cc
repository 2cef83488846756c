// Exit codes and help: 0 on success, 2 on usage errors, 1 on other failures, one line on stderr.
#include <gtest/gtest.h>

#include "support/process.h"
#include "support/fixtures.h"

namespace verdict {
namespace {

using testing::run_process;
using testing::verdict_bin;

TEST(Usage, HelpListsTheCommands) {
  auto r = run_process(verdict_bin(), {"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("info"), std::string::npos);
  EXPECT_NE(r.out.find("tokenize"), std::string::npos);
}

TEST(Usage, EveryCommandHasHelp) {
  for (const char* cmd : {"info", "tokenize", "forward", "generate", "decide", "make-model", "serve", "chat"}) {
    auto r = run_process(verdict_bin(), {cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find(std::string("usage: verdict ") + cmd), std::string::npos) << r.out;
  }
}

TEST(Usage, UsageErrorsExitTwo) {
  EXPECT_EQ(run_process(verdict_bin(), {}).exit_code, 2);
  EXPECT_EQ(run_process(verdict_bin(), {"no-such-command"}).exit_code, 2);
  auto unknown = run_process(verdict_bin(), {"info", "x", "--bogus"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--bogus"), std::string::npos) << unknown.err;
  auto missing = run_process(verdict_bin(), {"tokenize"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--model"), std::string::npos) << missing.err;
  EXPECT_EQ(run_process(verdict_bin(), {"info"}).exit_code, 2);
}

}  // namespace
}  // namespace verdict
