// verdict: the command-line entry point and composition root.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/heap.h"

namespace {

void print_help(std::FILE* out) {
  std::fprintf(out,
               "verdict — decision (Clef) and chat (Qwen3.5) inference server\n\n"
               "usage: verdict COMMAND [OPTIONS]\n\ncommands:\n");
  for (const auto& c : verdict::cli::commands())
    std::fprintf(out, "  %-11s %.*s\n", std::string(c.name).c_str(), static_cast<int>(c.summary.size()),
                 c.summary.data());
  std::fprintf(out, "\n'verdict COMMAND --help' describes a command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  verdict::tune_heap_for_inference();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_help(stderr);
    return 2;
  }
  const std::string name = args[0];
  if (name == "--help" || name == "-h" || name == "help") {
    print_help(stdout);
    return 0;
  }
  if (name == "--version") {
    std::printf("verdict 0.1.0\n");
    return 0;
  }
  for (const auto& c : verdict::cli::commands()) {
    if (c.name != name) continue;
    std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const auto& a : rest)
      if (a == "--help" || a == "-h") {
        std::fwrite(c.usage.data(), 1, c.usage.size(), stdout);
        return 0;
      }
    try {
      verdict::cli::Args parsed(rest);
      return c.run(parsed);
    } catch (const verdict::UsageError& e) {
      std::fprintf(stderr, "verdict %s: %s (see 'verdict %s --help')\n", name.c_str(), e.what(),
                   name.c_str());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "verdict %s: %s\n", name.c_str(), e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "verdict: unknown command '%s'\n\n", name.c_str());
  print_help(stderr);
  return 2;
}
