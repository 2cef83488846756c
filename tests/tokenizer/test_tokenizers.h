// Shared fixtures for the tokenizer tests: the big tokenizers are loaded once per process.
#pragma once
#include <string>

#include "tokenizer/tokenizer.h"

namespace verdict::tokenizer::testing {

// The real Qwen3 tokenizer (qwen3-tokenizer/tokenizer.json), loaded on first use.
const Tokenizer& qwen3();
// The Qwen3.5 test tokenizer (qwen35-tiny/tokenizer.json), loaded on first use.
const Tokenizer& qwen35_tiny();

// Builds a tokenizer from JSON text (throws verdict::Error like from_json).
Tokenizer from_text(const std::string& json);

// A small BPE tokenizer.json: `model_fields` (the members of "model" after "type") and the other
// arguments are JSON fragments spliced into the file.
std::string tiny_json(const std::string& model_fields, const std::string& added_tokens = "[]",
                      const std::string& normalizer = "null", const std::string& pre_tokenizer = "null",
                      const std::string& decoder = "null");

}  // namespace verdict::tokenizer::testing
