// The Qwen3.5 ChatML chat template that generated checkpoints ship in tokenizer_config.json.
#pragma once
#include <string_view>

namespace verdict::modelgen {

std::string_view qwen35_chat_template();

}  // namespace verdict::modelgen
