// The `verdict` subcommands. Each lives in its own cmd_*.cc and is listed in commands.cc.
// A command returns the process exit code (0 success); it throws UsageError for usage errors
// (exit 2) and verdict::Error for other failures (exit 1); main() prints the one-line message.
#pragma once
#include <string_view>
#include <vector>

#include "cli/args.h"

namespace verdict::cli {

struct Command {
  std::string_view name;
  std::string_view summary;  // one line, for `verdict --help`
  std::string_view usage;    // full help text, for `verdict NAME --help`
  int (*run)(Args& args);
};

// All commands, in the order `verdict --help` lists them.
const std::vector<Command>& commands();

int run_info(Args& args);
int run_tokenize(Args& args);
int run_forward(Args& args);
int run_generate(Args& args);
int run_make_model(Args& args);
int run_convert(Args& args);
int run_decide(Args& args);
int run_serve(Args& args);
extern const char kServeUsage[];
int run_bench(Args& args);
extern const char kBenchUsage[];
int run_chat(Args& args);

}  // namespace verdict::cli
