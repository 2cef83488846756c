// Locating the golden fixtures (../shared/fixtures) from tests.
#pragma once
#include <string>

#include "core/json.h"

namespace verdict::testing {

// The fixtures folder: $VERDICT_FIXTURES, else the path configured at build time.
// Fails the calling test (via ADD_FAILURE) and returns "" when the folder does not exist.
std::string fixtures_dir();
// fixtures_dir() + "/" + relative.
std::string fixture(const std::string& relative);
// The verdict executable ($VERDICT_BIN).
std::string verdict_bin();
// A JSON array of token ids as the CLI's --tokens argument: "1,2,3".
std::string id_list(const Json& ids);

}  // namespace verdict::testing
