// tokenizer.json and tokenizer_config.json of a generated checkpoint: a Hugging Face byte-level BPE
// tokenizer with the Qwen3.5 pipeline (NFC normalizer; Split on the Qwen3.5 regex, `Isolated`; ByteLevel
// without prefix space or regex; ByteLevel decoder), the 256 byte tokens in GPT-2 order, merges learned
// from training_corpus(), and the special tokens of token_layout().
//
// When the corpus yields fewer merges than there are regular ids (always, for the 248,044 regular ids of
// the Qwen35 scheme), the remaining regular ids are filler words: " " followed by three consonant–vowel
// syllables (" bakedi", …), distinct from every learned token. No merge produces them, so encoding never
// returns them; decoding them gives readable pseudo-words (what a random-weight model mostly samples).
#pragma once
#include <string>

#include "modelgen/presets.h"
#include "modelgen/token_layout.h"

namespace verdict::modelgen {

struct TokenizerFiles {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
  std::size_t learned_merges = 0;
  std::size_t filler_tokens = 0;
};

TokenizerFiles make_tokenizer_files(const TokenLayout& layout);

}  // namespace verdict::modelgen
