#include "support/fixtures.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

namespace verdict::testing {

std::string fixtures_dir() {
  const char* env = std::getenv("VERDICT_FIXTURES");
  std::string dir = env != nullptr ? env : VERDICT_FIXTURES_DEFAULT;
  struct stat st {};
  if (dir.empty() || ::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    ADD_FAILURE() << "fixtures folder not found: '" << dir
                  << "' (set VERDICT_FIXTURES or place shared/ beside the clone)";
    return "";
  }
  return dir;
}

std::string fixture(const std::string& relative) { return fixtures_dir() + "/" + relative; }

std::string verdict_bin() {
  const char* env = std::getenv("VERDICT_BIN");
  return env != nullptr ? env : VERDICT_BIN_PATH;
}

std::string id_list(const Json& ids) {
  std::string out;
  for (const auto& id : ids) {
    if (!out.empty()) out += ',';
    out += std::to_string(id.get<int>());
  }
  return out;
}

}  // namespace verdict::testing
