#include "chat/openai_request.h"

#include <cmath>
#include <limits>

#include "core/json.h"
#include "core/utf8.h"

namespace verdict::chat {
namespace {

using nlohmann::ordered_json;

[[noreturn]] void refuse(const std::string& param, const std::string& message, const std::string& code = "invalid_field") {
  throw RequestError(code, message, param);
}

const char* type_name(const ordered_json& v) {
  switch (v.type()) {
    case ordered_json::value_t::null: return "null";
    case ordered_json::value_t::boolean: return "a boolean";
    case ordered_json::value_t::string: return "a string";
    case ordered_json::value_t::array: return "an array";
    case ordered_json::value_t::object: return "an object";
    default: return "a number";
  }
}

// The field when present and not null.
const ordered_json* field(const ordered_json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> number(const ordered_json& body, const char* name, double min, double max, bool min_open = false) {
  const ordered_json* v = field(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) refuse(name, std::string("'") + name + "' must be a number, got " + type_name(*v));
  const double d = v->get<double>();
  if (!std::isfinite(d) || d > max || d < min || (min_open && d == min)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "'%s' must be in %s%g, %g], got %g", name, min_open ? "(" : "[", min, max, d);
    refuse(name, buf);
  }
  return d;
}

std::optional<int64_t> integer(const ordered_json& body, const char* name, int64_t min, int64_t max) {
  const ordered_json* v = field(body, name);
  if (v == nullptr) return std::nullopt;
  int64_t i = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      i = std::numeric_limits<int64_t>::max();
    else
      i = v->get<int64_t>();
  } else if (v->is_number_float() && std::isfinite(v->get<double>()) && v->get<double>() == std::floor(v->get<double>()) &&
             std::fabs(v->get<double>()) < 9e15) {
    i = static_cast<int64_t>(v->get<double>());  // 5.0 is an integer in JSON Schema terms
  } else {
    refuse(name, std::string("'") + name + "' must be an integer, got " + type_name(*v));
  }
  if (i < min || i > max)
    refuse(name, std::string("'") + name + "' must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                     std::to_string(i));
  return i;
}

bool boolean(const ordered_json& body, const char* name) {
  const ordered_json* v = field(body, name);
  if (v == nullptr) return false;
  if (!v->is_boolean()) refuse(name, std::string("'") + name + "' must be a boolean, got " + type_name(*v));
  return v->get<bool>();
}

void check_text(const std::string& text, const std::string& param) {
  if (!utf8::is_valid(text)) refuse(param, "'" + param + "' is not valid UTF-8");
}

std::vector<std::string> stop_strings(const ordered_json& body, const CompletionLimits& limits) {
  const ordered_json* v = field(body, "stop");
  if (v == nullptr) return {};
  std::vector<std::string> out;
  auto add = [&](const ordered_json& s) {
    if (!s.is_string()) refuse("stop", std::string("'stop' must be a string or an array of strings, got ") + type_name(s));
    const std::string text = s.get<std::string>();
    if (text.empty()) return;  // an empty stop string stops nothing
    if (text.size() > limits.max_stop_bytes)
      refuse("stop", "a stop string is longer than " + std::to_string(limits.max_stop_bytes) + " bytes");
    check_text(text, "stop");
    out.push_back(text);
  };
  if (v->is_array()) {
    if (v->size() > limits.max_stop) refuse("stop", "'stop' holds more than " + std::to_string(limits.max_stop) + " strings");
    for (const ordered_json& s : *v) add(s);
  } else {
    add(*v);
  }
  return out;
}

void check_unsupported(const ordered_json& body, Endpoint endpoint) {
  if (const auto n = integer(body, "n", 1, 128); n && *n != 1) refuse("n", "only n = 1 is supported");
  if (endpoint == Endpoint::kCompletions) {
    if (const auto b = integer(body, "best_of", 1, 128); b && *b != 1) refuse("best_of", "only best_of = 1 is supported");
    if (boolean(body, "echo")) refuse("echo", "'echo' is not supported");
    if (const ordered_json* s = field(body, "suffix"); s != nullptr && !(s->is_string() && s->get<std::string>().empty()))
      refuse("suffix", "'suffix' is not supported");
  }
  if (const ordered_json* f = field(body, "response_format")) {
    if (!f->is_object()) refuse("response_format", "'response_format' must be an object");
    const auto t = f->find("type");
    if (t == f->end() || !t->is_string()) refuse("response_format", "'response_format.type' must be a string");
    if (t->get<std::string>() != "text")
      refuse("response_format", "response_format '" + t->get<std::string>() + "' is not supported (only \"text\")");
  }
}

// Messages: each an object with a known role; content a string, a list of parts or null; the
// assistant's tool_calls and reasoning_content pass through to the template.
ordered_json check_messages(const ordered_json& body, const CompletionLimits& limits) {
  const ordered_json* v = field(body, "messages");
  if (v == nullptr) refuse("messages", "'messages' is required", "missing_field");
  if (!v->is_array()) refuse("messages", std::string("'messages' must be an array, got ") + type_name(*v));
  if (v->empty()) refuse("messages", "'messages' must hold at least one message");
  if (v->size() > limits.max_messages) refuse("messages", "more than " + std::to_string(limits.max_messages) + " messages");
  ordered_json out = ordered_json::array();
  for (std::size_t i = 0; i < v->size(); ++i) {
    const ordered_json& m = (*v)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) refuse(at, at + " must be an object, got " + type_name(m));
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string()) refuse(at + ".role", at + ".role must be a string");
    std::string r = role->get<std::string>();
    if (r != "system" && r != "developer" && r != "user" && r != "assistant" && r != "tool")
      refuse(at + ".role", at + ".role '" + r + "' is not one of system, developer, user, assistant, tool");
    ordered_json copy = m;
    if (r == "developer") copy["role"] = "system";  // OpenAI's newer name for the system message
    const auto content = m.find("content");
    const bool has_content = content != m.end() && !content->is_null();
    if (has_content) {
      if (content->is_string()) {
        check_text(content->get<std::string>(), at + ".content");
      } else if (content->is_array()) {
        for (const ordered_json& part : *content) {
          if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
            refuse(at + ".content", at + ".content parts must be objects with a \"type\"");
          const std::string type = part["type"].get<std::string>();
          // The chat models verdict serves are text-only (qwen35.md §13): an image, audio or file part would
          // render as a placeholder token with nothing behind it, so it is refused, not dropped.
          if (type != "text")
            refuse(at + ".content",
                   at + ".content parts of type '" + type + "' are not supported: this model takes text only",
                   "unsupported_media");
          if (!part.contains("text") || !part["text"].is_string())
            refuse(at + ".content", at + ".content text parts need a string \"text\"");
        }
      } else {
        refuse(at + ".content", at + ".content must be a string, an array of parts or null");
      }
    } else if (r != "assistant") {
      refuse(at + ".content", at + ".content is required for role '" + r + "'", "missing_field");
    }
    if (const auto rc = m.find("reasoning_content"); rc != m.end() && !rc->is_null() && !rc->is_string())
      refuse(at + ".reasoning_content", at + ".reasoning_content must be a string");
    if (const auto tc = m.find("tool_calls"); tc != m.end() && !tc->is_null() && !tc->is_array())
      refuse(at + ".tool_calls", at + ".tool_calls must be an array");
    out.push_back(std::move(copy));
  }
  return out;
}

void check_tools(const ordered_json& body, CompletionRequest& out) {
  const ordered_json* tools = field(body, "tools");
  if (tools == nullptr) return;
  if (!tools->is_array()) refuse("tools", std::string("'tools' must be an array, got ") + type_name(*tools));
  for (std::size_t i = 0; i < tools->size(); ++i) {
    const ordered_json& t = (*tools)[i];
    const std::string at = "tools[" + std::to_string(i) + "]";
    if (!t.is_object() || t.value("type", "") != "function" || !t.contains("function") || !t["function"].is_object())
      refuse(at, at + " must be {\"type\": \"function\", \"function\": {...}}");
    const ordered_json& f = t["function"];
    if (!f.contains("name") || !f["name"].is_string() || f["name"].get<std::string>().empty())
      refuse(at + ".function.name", at + ".function.name must be a non-empty string");
  }
  std::string choice = "auto";
  if (const ordered_json* c = field(body, "tool_choice")) {
    if (c->is_string()) {
      choice = c->get<std::string>();
      if (choice != "auto" && choice != "none" && choice != "required")
        refuse("tool_choice", "'tool_choice' must be \"auto\", \"none\" or \"required\"");
      if (choice == "required") refuse("tool_choice", "tool_choice \"required\" is not supported");
    } else {
      refuse("tool_choice", "only tool_choice \"auto\" and \"none\" are supported");
    }
  }
  if (tools->empty() || choice == "none") return;
  out.chat.tools = *tools;
  out.tools_given = true;
}

void parse_prompt(const ordered_json& body, CompletionRequest& out) {
  const ordered_json* p = field(body, "prompt");
  if (p == nullptr) refuse("prompt", "'prompt' is required", "missing_field");
  if (p->is_string()) {
    out.prompt_text = p->get<std::string>();
  } else if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
    out.prompt_text = (*p)[0].get<std::string>();
  } else if (p->is_array() && !p->empty() && (*p)[0].is_number()) {
    for (const ordered_json& id : *p) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
        refuse("prompt", "a token-id prompt must hold non-negative integers");
      out.prompt_ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
  } else if (p->is_array() && !p->empty() && ((*p)[0].is_array() || (*p)[0].is_string())) {
    refuse("prompt", "only one prompt per request is supported");
  } else {
    refuse("prompt", "'prompt' must be a string, an array of token ids or an array of one string");
  }
  if (out.prompt_text) {
    check_text(*out.prompt_text, "prompt");
    if (out.prompt_text->empty()) refuse("prompt", "'prompt' must not be empty");
  }
}

}  // namespace

CompletionRequest parse_completion_request(std::string_view body_text, Endpoint endpoint, const CompletionLimits& limits) {
  if (json_nesting_depth(body_text) > limits.max_json_depth)
    throw RequestError("invalid_json", "request body nests deeper than " + std::to_string(limits.max_json_depth) + " levels");
  ordered_json body;
  try {
    body = ordered_json::parse(body_text.begin(), body_text.end());
  } catch (const ordered_json::exception& e) {
    throw RequestError("invalid_json", std::string("request body is not valid JSON: ") + e.what());
  }
  if (!body.is_object()) throw RequestError("invalid_request", std::string("request body must be a JSON object, got ") + type_name(body));

  CompletionRequest out;
  out.endpoint = endpoint;
  if (const ordered_json* m = field(body, "model")) {
    if (!m->is_string()) refuse("model", std::string("'model' must be a string, got ") + type_name(*m));
    std::string name = m->get<std::string>();
    const auto first = name.find_first_not_of(" \t\r\n");
    const auto last = name.find_last_not_of(" \t\r\n");
    name = first == std::string::npos ? "" : name.substr(first, last - first + 1);
    if (!name.empty()) out.model = name;
  }
  check_unsupported(body, endpoint);

  if (endpoint == Endpoint::kChat) {
    out.chat.messages = check_messages(body, limits);
    check_tools(body, out);
    if (const ordered_json* k = field(body, "chat_template_kwargs")) {
      if (!k->is_object()) refuse("chat_template_kwargs", "'chat_template_kwargs' must be an object");
      out.chat.kwargs = *k;
    }
    out.max_tokens = integer(body, "max_completion_tokens", 1, std::numeric_limits<int32_t>::max());
    if (!out.max_tokens) out.max_tokens = integer(body, "max_tokens", 1, std::numeric_limits<int32_t>::max());
    out.logprobs = boolean(body, "logprobs");
    if (const auto top = integer(body, "top_logprobs", 0, 20)) {
      if (*top > 0 && !out.logprobs) refuse("top_logprobs", "'top_logprobs' needs 'logprobs': true");
      out.top_logprobs = static_cast<int>(*top);
    }
  } else {
    parse_prompt(body, out);
    out.max_tokens = integer(body, "max_tokens", 1, std::numeric_limits<int32_t>::max());
    if (const auto lp = integer(body, "logprobs", 0, 5)) {  // the legacy API: a count of alternatives
      out.logprobs = true;
      out.top_logprobs = static_cast<int>(*lp);
    }
  }

  out.temperature = number(body, "temperature", 0, 2);
  out.top_p = number(body, "top_p", 0, 1, /*min_open=*/true);
  out.min_p = number(body, "min_p", 0, 1);
  out.presence_penalty = number(body, "presence_penalty", -2, 2);
  out.frequency_penalty = number(body, "frequency_penalty", -2, 2);
  out.repetition_penalty = number(body, "repetition_penalty", 0, 10, /*min_open=*/true);
  out.top_k = integer(body, "top_k", -1, std::numeric_limits<int32_t>::max());
  if (const ordered_json* s = field(body, "seed")) {
    if (!s->is_number_integer()) refuse("seed", std::string("'seed' must be an integer, got ") + type_name(*s));
    out.seed = s->is_number_unsigned() ? s->get<uint64_t>() : static_cast<uint64_t>(s->get<int64_t>());
  }
  out.stop = stop_strings(body, limits);
  out.stream = boolean(body, "stream");
  if (const ordered_json* so = field(body, "stream_options")) {
    if (!so->is_object()) refuse("stream_options", "'stream_options' must be an object");
    if (!out.stream) refuse("stream_options", "'stream_options' is only allowed with 'stream': true");
    out.include_usage = boolean(*so, "include_usage");
  }
  out.return_token_ids = boolean(body, "return_token_ids");
  out.ignore_eos = boolean(body, "ignore_eos");
  return out;
}

GenerationOptions apply(const CompletionRequest& request, const GenerationOptions& model_defaults, int64_t room) {
  GenerationOptions o = model_defaults;
  SamplingParams& s = o.sampling;
  if (request.temperature) s.temperature = *request.temperature;
  if (request.top_p) s.top_p = *request.top_p;
  if (request.top_k) s.top_k = *request.top_k < 0 ? 0 : *request.top_k;
  if (request.min_p) s.min_p = *request.min_p;
  if (request.presence_penalty) s.presence_penalty = *request.presence_penalty;
  if (request.frequency_penalty) s.frequency_penalty = *request.frequency_penalty;
  if (request.repetition_penalty) s.repetition_penalty = *request.repetition_penalty;
  s.seed = request.seed;
  s.logprobs = request.logprobs;
  s.top_logprobs = request.top_logprobs;
  o.stop = request.stop;
  if (request.ignore_eos) o.stop_ids.clear();
  o.max_tokens = std::max<int64_t>(1, std::min(request.max_tokens.value_or(room), room));
  if (request.endpoint == Endpoint::kCompletions) o.split_reasoning = false;
  return o;
}

}  // namespace verdict::chat
