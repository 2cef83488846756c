// verdict::Error: the one exception type every parser and loader throws.
// Its message is complete and user-facing ("model.safetensors: header length 9e9 past end of file").
#pragma once
#include <stdexcept>
#include <string>

namespace verdict {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A usage error in the CLI (exit code 2).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
};

}  // namespace verdict
