// The fixture checkpoints the registry tests load.
#pragma once
#include <string>

#include "support/fixtures.h"

namespace verdict::registry {

inline std::string clef_dir() { return verdict::testing::fixture("clef-tiny/bf16"); }
inline std::string chat_dir() { return verdict::testing::fixture("qwen35-tiny"); }

}  // namespace verdict::registry
