#include "modelgen/token_layout.h"

#include "core/error.h"

namespace verdict::modelgen {
namespace {

TokenLayout qwen35_layout() {
  struct Entry {
    const char* content;
    bool special;
  };
  static constexpr Entry kSpecials[] = {
      {"<|endoftext|>", true},     {"<|im_start|>", true},     {"<|im_end|>", true},
      {"<|object_ref_start|>", true}, {"<|object_ref_end|>", true}, {"<|box_start|>", true},
      {"<|box_end|>", true},       {"<|quad_start|>", true},   {"<|quad_end|>", true},
      {"<|vision_start|>", true},  {"<|vision_end|>", true},   {"<|vision_pad|>", true},
      {"<|image_pad|>", true},     {"<|video_pad|>", true},    {"<tool_call>", false},
      {"</tool_call>", false},     {"<|fim_prefix|>", false},  {"<|fim_middle|>", false},
      {"<|fim_suffix|>", false},   {"<|fim_pad|>", false},     {"<|repo_name|>", false},
      {"<|file_sep|>", false},     {"<tool_response>", false}, {"</tool_response>", false},
      {"<think>", false},          {"</think>", false},        {"<|audio_start|>", true},
      {"<|audio_end|>", true},     {"<tts_pad>", true},        {"<tts_text_bos>", true},
      {"<tts_text_eod>", true},    {"<tts_text_bos_single>", true}, {"<|audio_pad|>", true},
  };
  TokenLayout layout;
  layout.regular_tokens = 248044;
  int64_t id = layout.regular_tokens;
  for (const Entry& e : kSpecials) layout.specials.push_back({id++, e.content, e.special});
  return layout;
}

TokenLayout compact_layout() {
  TokenLayout layout;
  layout.regular_tokens = 756;
  int64_t id = layout.regular_tokens;
  for (const auto& [content, special] :
       std::initializer_list<std::pair<const char*, bool>>{{"<|endoftext|>", true},
                                                           {"<|im_start|>", true},
                                                           {"<|im_end|>", true},
                                                           {"<think>", false},
                                                           {"</think>", false},
                                                           {"<|vision_start|>", true},
                                                           {"<|vision_end|>", true},
                                                           {"<|image_pad|>", true},
                                                           {"<|video_pad|>", true}})
    layout.specials.push_back({id++, content, special});
  return layout;
}

}  // namespace

int64_t TokenLayout::id_of(std::string_view content) const {
  for (const SpecialToken& t : specials)
    if (t.content == content) return t.id;
  throw Error("token layout has no special token " + std::string(content));
}

TokenLayout token_layout(TokenizerScheme scheme) {
  return scheme == TokenizerScheme::Qwen35 ? qwen35_layout() : compact_layout();
}

}  // namespace verdict::modelgen
