// Sets an environment variable for the lifetime of the guard, then restores what was there.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>

namespace verdict::testing {

class ScopedEnv {
 public:
  // value == nullptr unsets the variable for the scope.
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    if (value == nullptr) ::unsetenv(name);
    else ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (saved_) ::setenv(name_.c_str(), saved_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace verdict::testing
