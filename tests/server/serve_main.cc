// A stand-alone `verdict serve` for the process tests (the same run_serve the CLI dispatches to).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/error.h"

namespace verdict::cli {
int run_serve(Args& args);
extern const char kServeUsage[];
}  // namespace verdict::cli

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& a : args)
    if (a == "--help") {
      std::fputs(verdict::cli::kServeUsage, stdout);
      return 0;
    }
  try {
    verdict::cli::Args parsed(args);
    return verdict::cli::run_serve(parsed);
  } catch (const verdict::UsageError& e) {
    std::fprintf(stderr, "verdict serve: %s (see 'verdict serve --help')\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "verdict serve: %s\n", e.what());
    return 1;
  }
}
