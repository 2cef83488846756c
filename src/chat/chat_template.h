// A model's chat template: OpenAI-style messages → the prompt text, exactly as transformers'
// apply_chat_template renders it.
//
// The template comes from the checkpoint: `chat_template.jinja` when present (it takes precedence,
// as in transformers), else `chat_template` of tokenizer_config.json — a string, or a list of
// {"name", "template"} entries, of which "default" is used (and "tool_use", when present, for
// requests with tools). It is parsed and checked when loaded: a template using something the Jinja
// engine lacks fails here, naming the file, line and column.
//
// The render context is transformers': the tokenizer's special tokens (bos_token, eos_token,
// unk_token, pad_token, additional_special_tokens, as strings; absent ones left undefined), then
// `messages`, `tools` (None when absent), `documents` (None), `add_generation_prompt`, then the
// request's chat_template_kwargs (e.g. enable_thinking), which may override anything but
// `messages` and `tools`.
//
// Messages are passed as given except for two normalisations that vLLM also applies:
//   * an assistant tool call's `function.arguments` given as a JSON string (the OpenAI wire form)
//     is parsed into an object when it holds one, since templates iterate the arguments;
//   * for templates that treat `content` as a string (they never loop over it), a content list of
//     {"type": "text", "text": ...} parts is joined into one string with "\n"; other part types
//     are refused. Templates that loop over content get the parts as they are.
//
// Keep the request's key order: parse request bodies with nlohmann::ordered_json, since `tojson`
// prints tool schemas in the order given (as Python does) and the model saw that order in training.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "chat/jinja/template.h"
#include "core/error.h"

namespace verdict::chat {

// A request the template (or its input) refuses: raise_exception (e.g. "System message must be at
// the beginning."), a type error on the request data, a render limit, malformed messages. The
// message is user-facing; the server answers 400 with it.
class ChatTemplateError : public Error {
 public:
  explicit ChatTemplateError(const std::string& message) : Error(message) {}
};

struct ChatRequest {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;   // null, or the OpenAI tools array
  nlohmann::ordered_json kwargs;  // null, or chat_template_kwargs (an object)
  bool add_generation_prompt = true;
};

class ChatTemplate {
 public:
  // From a checkpoint folder (see above). Throws verdict::Error naming the file when there is no
  // template or it does not parse.
  static ChatTemplate from_model_dir(const std::string& dir);
  // From tokenizer_config.json's content; `what` names it in errors. `override_source` (the text
  // of chat_template.jinja) replaces the config's template.
  static ChatTemplate from_tokenizer_config(const nlohmann::ordered_json& config, const std::string& what,
                                            const std::optional<std::string>& override_source = std::nullopt);
  // One template source with explicit special tokens (name → text, e.g. {"eos_token", "<|im_end|>"}).
  static ChatTemplate from_source(std::string_view source, std::map<std::string, std::string> special_tokens = {},
                                  const std::string& what = "chat template");

  // The prompt text. Throws ChatTemplateError for requests the template refuses.
  std::string render(const ChatRequest& request, const jinja::Limits& limits = {}) const;

  const std::map<std::string, std::string>& special_tokens() const { return special_tokens_; }
  // True when the template loops over message content (understands content-part lists).
  bool takes_content_parts() const { return default_.iterates_content(); }

 private:
  ChatTemplate(jinja::Template default_template, std::optional<jinja::Template> tool_use,
               std::map<std::string, std::string> special_tokens, nlohmann::ordered_json additional_special)
      : default_(std::move(default_template)),
        tool_use_(std::move(tool_use)),
        special_tokens_(std::move(special_tokens)),
        additional_special_(std::move(additional_special)) {}

  jinja::Template default_;
  std::optional<jinja::Template> tool_use_;
  std::map<std::string, std::string> special_tokens_;
  nlohmann::ordered_json additional_special_;  // additional_special_tokens (list of strings) or null
};

}  // namespace verdict::chat
