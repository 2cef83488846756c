// A small command-line parser for the subcommands: `--flag VALUE`, `--flag=VALUE`, boolean `--flag`,
// repeatable flags and positionals. Unknown flags are usage errors (exit code 2).
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::cli {

class Args {
 public:
  explicit Args(std::vector<std::string> argv) : argv_(std::move(argv)) {}

  // The value of `--name VALUE` / `--name=VALUE` (the last one if repeated).
  std::optional<std::string> value(std::string_view name);
  // Like value(), but a usage error when absent.
  std::string required(std::string_view name);
  // Every value of a repeatable flag, in order.
  std::vector<std::string> values(std::string_view name);
  // True if the boolean `--name` is present.
  bool flag(std::string_view name);
  // Integer value with range check; usage error when malformed.
  std::optional<long long> integer(std::string_view name, long long min, long long max);
  // A required comma-separated list of token ids ("1,2,3"); usage error when malformed.
  std::vector<int32_t> token_ids(std::string_view name);
  // The positional arguments (everything not consumed by the calls above). Call after the flags.
  std::vector<std::string> positionals();
  // Throws UsageError if any `--flag` was not consumed.
  void finish();

 private:
  std::vector<std::string> argv_;
  std::set<std::size_t> used_;
};

}  // namespace verdict::cli
