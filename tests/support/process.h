// Running the verdict binary from tests.
#pragma once
#include <string>
#include <vector>

namespace verdict::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `program args...` (no shell), feeding `input` on stdin; captures stdout and stderr.
ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                          const std::string& input = "");

}  // namespace verdict::testing
