// A chat model's generation defaults, as transformers applies them: stop ids from
// generation_config.json (else config.json's eos_token_id), its sampling settings (do_sample false
// means greedy), and the reasoning split when the tokenizer knows the `</think>` tag. Requests and
// CLI flags override them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "chat/generation.h"
#include "tokenizer/tokenizer.h"

namespace verdict::chat {

// `dir`: the checkpoint folder; `config_eos`: config.json's eos ids (the fallback stop ids).
// Throws verdict::Error when generation_config.json exists but is malformed.
GenerationOptions model_generation_defaults(const std::string& dir, const std::vector<int64_t>& config_eos,
                                            const tokenizer::Tokenizer& tok);

}  // namespace verdict::chat
