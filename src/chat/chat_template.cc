#include "chat/chat_template.h"

#include "core/mapped_file.h"

namespace verdict::chat {
namespace {

using nlohmann::ordered_json;

jinja::Template parse_template(const std::string& source, const std::string& what) {
  try {
    return jinja::Template::parse(source);
  } catch (const jinja::SyntaxError& e) {
    throw Error(what + ": chat template: " + e.what());
  }
}

// A special token as tokenizer_config.json writes it: "text", or an AddedToken dict {"content": ...}.
std::optional<std::string> token_text(const ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object()) {
    const auto it = v.find("content");
    if (it != v.end() && it->is_string()) return it->get<std::string>();
  }
  return std::nullopt;
}

ordered_json read_config(const std::string& path) {
  const std::string text = read_text_file(path);
  ordered_json j = ordered_json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(path + ": invalid JSON (expected an object)");
  return j;
}

// OpenAI content parts → one string, for templates that treat content as text.
std::string join_text_parts(const ordered_json& parts) {
  std::string joined;
  bool first = true;
  for (const auto& part : parts) {
    std::string piece;
    if (part.is_string()) {
      piece = part.get<std::string>();
    } else if (part.is_object() && part.value("type", std::string("text")) == "text" && part.contains("text") &&
               part["text"].is_string()) {
      piece = part["text"].get<std::string>();
    } else {
      const std::string type = part.is_object() && part.contains("type") && part["type"].is_string()
                                   ? part["type"].get<std::string>()
                                   : std::string(part.type_name());
      throw ChatTemplateError("content parts of type '" + type + "' are not supported by this model");
    }
    if (!first) joined += '\n';
    first = false;
    joined += piece;
  }
  return joined;
}

ordered_json normalize_messages(const ordered_json& messages, bool takes_content_parts) {
  if (!messages.is_array()) throw ChatTemplateError("'messages' must be an array");
  ordered_json out = ordered_json::array();
  for (const auto& m : messages) {
    if (!m.is_object()) throw ChatTemplateError("each message must be an object");
    ordered_json copy = m;
    const auto calls = copy.find("tool_calls");
    if (calls != copy.end() && calls->is_array()) {
      for (auto& call : *calls) {
        if (!call.is_object()) continue;
        const auto fn = call.find("function");
        if (fn == call.end() || !fn->is_object()) continue;
        const auto args = fn->find("arguments");
        if (args == fn->end() || !args->is_string()) continue;
        ordered_json parsed = ordered_json::parse(args->get<std::string>(), nullptr, false);
        if (!parsed.is_discarded() && parsed.is_object()) *args = std::move(parsed);
      }
    }
    const auto content = copy.find("content");
    if (!takes_content_parts && content != copy.end() && content->is_array()) *content = join_text_parts(*content);
    out.push_back(std::move(copy));
  }
  return out;
}

}  // namespace

ChatTemplate ChatTemplate::from_model_dir(const std::string& dir) {
  const std::string config_path = dir + "/tokenizer_config.json";
  const std::string jinja_path = dir + "/chat_template.jinja";
  std::optional<std::string> override_source;
  if (file_exists(jinja_path)) override_source = read_text_file(jinja_path);
  ordered_json config = ordered_json::object();
  if (file_exists(config_path))
    config = read_config(config_path);
  else if (!override_source)
    throw Error(dir + ": no chat template (neither chat_template.jinja nor tokenizer_config.json)");
  return from_tokenizer_config(config, override_source ? jinja_path : config_path, override_source);
}

ChatTemplate ChatTemplate::from_tokenizer_config(const ordered_json& config, const std::string& what,
                                                 const std::optional<std::string>& override_source) {
  std::map<std::string, std::string> tokens;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"}) {
    const auto it = config.find(key);
    if (it == config.end()) continue;
    if (auto text = token_text(*it)) tokens[key] = *text;
  }
  ordered_json additional;
  if (const auto it = config.find("additional_special_tokens"); it != config.end() && it->is_array()) {
    additional = ordered_json::array();
    for (const auto& t : *it)
      if (auto text = token_text(t)) additional.push_back(*text);
  }
  if (override_source)
    return ChatTemplate(parse_template(*override_source, what), std::nullopt, std::move(tokens), std::move(additional));

  const auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) throw Error(what + ": no chat_template");
  if (it->is_string())
    return ChatTemplate(parse_template(it->get<std::string>(), what), std::nullopt, std::move(tokens),
                        std::move(additional));
  if (!it->is_array()) throw Error(what + ": chat_template must be a string or a list of named templates");
  std::optional<jinja::Template> default_template, tool_use;
  for (const auto& entry : *it) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") || !entry["name"].is_string() ||
        !entry["template"].is_string())
      throw Error(what + ": chat_template list entries must be {\"name\": ..., \"template\": ...}");
    const std::string name = entry["name"].get<std::string>();
    if (name == "default")
      default_template = parse_template(entry["template"].get<std::string>(), what + " (default)");
    else if (name == "tool_use")
      tool_use = parse_template(entry["template"].get<std::string>(), what + " (tool_use)");
  }
  if (!default_template) throw Error(what + ": chat_template list has no 'default' template");
  return ChatTemplate(std::move(*default_template), std::move(tool_use), std::move(tokens), std::move(additional));
}

ChatTemplate ChatTemplate::from_source(std::string_view source, std::map<std::string, std::string> special_tokens,
                                       const std::string& what) {
  return ChatTemplate(parse_template(std::string(source), what), std::nullopt, std::move(special_tokens), nullptr);
}

std::string ChatTemplate::render(const ChatRequest& request, const jinja::Limits& limits) const {
  ordered_json context = ordered_json::object();
  for (const auto& [k, v] : special_tokens_) context[k] = v;
  if (!additional_special_.is_null()) context["additional_special_tokens"] = additional_special_;
  context["messages"] = normalize_messages(request.messages, takes_content_parts());
  context["tools"] = request.tools;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = request.add_generation_prompt;
  if (!request.kwargs.is_null()) {
    if (!request.kwargs.is_object()) throw ChatTemplateError("'chat_template_kwargs' must be an object");
    for (const auto& [k, v] : request.kwargs.items()) {
      if (k == "messages" || k == "tools") throw ChatTemplateError("'chat_template_kwargs' may not set '" + k + "'");
      context[k] = v;
    }
  }
  const bool with_tools = request.tools.is_array() && !request.tools.empty();
  const jinja::Template& t = with_tools && tool_use_ ? *tool_use_ : default_;
  try {
    return t.render(context, limits);
  } catch (const jinja::RaisedException& e) {
    throw ChatTemplateError(e.what());
  } catch (const jinja::RenderError& e) {
    throw ChatTemplateError(std::string("chat template error: ") + e.what());
  }
}

}  // namespace verdict::chat
