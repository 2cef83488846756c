// Which ids a generated tokenizer gives its tokens (spec qwen35.md §12).
//  * Qwen35: regular tokens 0…248043, then the 33 special tokens at their real ids 248044…248076 in the
//    spec's order (248072–248075 spelled <tts_pad>, <tts_text_bos>, <tts_text_eod>, <tts_text_bos_single>,
//    then <|audio_pad|>, as in the public Qwen3.5 files); `special` is false for the tool-call, FIM,
//    repo/file and think tokens, as in the Qwen tokenizer_config.
//  * Compact (the fixture scheme): 756 regular tokens, then <|endoftext|>, <|im_start|>, <|im_end|>,
//    <think>, </think>, <|vision_start|>, <|vision_end|>, <|image_pad|>, <|video_pad|> at 756…764.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "modelgen/presets.h"

namespace verdict::modelgen {

struct SpecialToken {
  int64_t id = 0;
  std::string content;
  bool special = true;
};

struct TokenLayout {
  int64_t regular_tokens = 0;  // ids [0, regular_tokens) are BPE vocabulary entries
  std::vector<SpecialToken> specials;

  // The id of a special token; throws verdict::Error when the layout has none of that name.
  int64_t id_of(std::string_view content) const;
};

TokenLayout token_layout(TokenizerScheme scheme);

}  // namespace verdict::modelgen
