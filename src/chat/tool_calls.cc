#include "chat/tool_calls.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <utility>

namespace verdict::chat {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
constexpr std::string_view kFunction = "<function=";
constexpr std::string_view kFunctionEnd = "</function>";
constexpr std::string_view kParameter = "<parameter=";
constexpr std::string_view kParameterEnd = "</parameter>";
// How many "</tool_call>" a block tries as its end (a JSON string may hold the close tag); bounds
// the work on adversarial text.
constexpr int kMaxCloseTries = 16;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::size_t skip_space(std::string_view s, std::size_t p) {
  while (p < s.size() && is_space(s[p])) ++p;
  return p;
}

std::string_view trim(std::string_view s) {
  std::size_t b = skip_space(s, 0);
  std::size_t e = s.size();
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

void trim_end(std::string& s) {
  std::size_t e = s.size();
  while (e > 0 && is_space(s[e - 1])) --e;
  s.resize(e);
}

bool at(std::string_view s, std::size_t p, std::string_view what) { return p <= s.size() && s.substr(p).starts_with(what); }

// Compact JSON; invalid UTF-8 (model output) becomes U+FFFD instead of throwing.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json parse_json(std::string_view text) { return Json::parse(text.begin(), text.end(), nullptr, false); }

std::string new_call_id() {
  static constexpr std::string_view kAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  thread_local std::mt19937_64 rng = [] {
    auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    std::uint64_t a = now, b = now >> 32, c = 0x9e3779b97f4a7c15ULL, d = now * 0x2545f4914f6cdd1dULL;
    try {
      std::random_device rd;
      a ^= rd(), b ^= rd(), c ^= rd(), d ^= rd();
    } catch (...) {
      // No entropy source: the clock alone.
    }
    std::seed_seq seq{a, b, c, d};
    return std::mt19937_64(seq);
  }();
  std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1);
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += kAlphabet[pick(rng)];
  return id;
}

// The request's function object named `name` (tools[i].function), or null.
const Json* find_function(const Json& tools, std::string_view name) {
  if (!tools.is_array()) return nullptr;
  for (const auto& tool : tools) {
    if (!tool.is_object()) continue;
    auto f = tool.find("function");
    if (f == tool.end() || !f->is_object()) continue;
    auto n = f->find("name");
    if (n != f->end() && n->is_string() && n->get_ref<const std::string&>() == name) return &*f;
  }
  return nullptr;
}

bool name_allowed(const Json& tools, std::string_view name) {
  return !name.empty() && (!tools.is_array() || find_function(tools, name) != nullptr);
}

// function.parameters.properties[param].type, or null.
const Json* parameter_type(const Json* function, const std::string& param) {
  if (function == nullptr) return nullptr;
  auto params = function->find("parameters");
  if (params == function->end() || !params->is_object()) return nullptr;
  auto props = params->find("properties");
  if (props == params->end() || !props->is_object()) return nullptr;
  auto prop = props->find(param);
  if (prop == props->end() || !prop->is_object()) return nullptr;
  auto type = prop->find("type");
  return type == prop->end() ? nullptr : &*type;
}

bool has_type(const Json& value, std::string_view type) {
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "null") return value.is_null();
  return false;
}

// A raw XML parameter value typed by its schema `type` (see the header).
Json convert_value(std::string_view text, const Json* type) {
  std::vector<std::string_view> types;
  if (type != nullptr && type->is_string()) {
    types.emplace_back(type->get_ref<const std::string&>());
  } else if (type != nullptr && type->is_array()) {
    for (const auto& t : *type)
      if (t.is_string()) types.emplace_back(t.get_ref<const std::string&>());
  }
  bool typed = std::any_of(types.begin(), types.end(), [](std::string_view t) {
    return t == "integer" || t == "number" || t == "boolean" || t == "object" || t == "array" || t == "null";
  });
  if (typed) {
    // The template renders arguments with Jinja's `| string`, which writes Python's True, False
    // and None; the model learned those spellings.
    std::string_view word = trim(text);
    for (auto t : types) {
      if (t == "boolean" && (word == "True" || word == "False")) return Json(word == "True");
      if (t == "null" && word == "None") return Json(nullptr);
    }
    Json parsed = parse_json(text);
    if (!parsed.is_discarded())
      for (auto t : types)
        if (has_type(parsed, t)) return parsed;
  }
  return Json(std::string(text));
}

// A name between "=" and ">" of an XML tag: one line, no markup.
std::optional<std::string_view> tag_name(std::string_view s, std::size_t begin, std::size_t end) {
  std::string_view name = trim(s.substr(begin, end - begin));
  if (name.empty() || name.find_first_of("<\n") != std::string_view::npos) return std::nullopt;
  return name;
}

// The end of a parameter value starting at `p`: the first "</parameter>" followed (after
// whitespace) by the next parameter or "</function>", so values may contain the close tag itself.
std::size_t parameter_value_end(std::string_view body, std::size_t p) {
  while ((p = body.find(kParameterEnd, p)) != std::string_view::npos) {
    std::size_t next = skip_space(body, p + kParameterEnd.size());
    if (at(body, next, kParameter) || at(body, next, kFunctionEnd)) return p;
    ++p;
  }
  return std::string_view::npos;
}

// One `<function=NAME>...</function>` at `p` (which is at "<function="); returns the position after
// it, or nullopt.
std::optional<std::size_t> parse_xml_function(std::string_view body, std::size_t p, const Json& tools,
                                               std::vector<ToolCall>& out) {
  p += kFunction.size();
  std::size_t gt = body.find('>', p);
  if (gt == std::string_view::npos) return std::nullopt;
  auto name = tag_name(body, p, gt);
  if (!name || !name_allowed(tools, *name)) return std::nullopt;
  const Json* function = find_function(tools, *name);
  Json args = Json::object();
  p = gt + 1;
  for (;;) {
    p = skip_space(body, p);
    if (at(body, p, kFunctionEnd)) {
      p += kFunctionEnd.size();
      break;
    }
    if (!at(body, p, kParameter)) return std::nullopt;
    p += kParameter.size();
    gt = body.find('>', p);
    if (gt == std::string_view::npos) return std::nullopt;
    auto param = tag_name(body, p, gt);
    if (!param) return std::nullopt;
    std::size_t value_begin = gt + 1;
    std::size_t value_end = parameter_value_end(body, value_begin);
    if (value_end == std::string_view::npos) return std::nullopt;
    std::string_view value = body.substr(value_begin, value_end - value_begin);
    if (value.starts_with('\n')) value.remove_prefix(1);
    if (value.ends_with('\n')) value.remove_suffix(1);
    std::string key(*param);
    args[key] = convert_value(value, parameter_type(function, key));
    p = value_end + kParameterEnd.size();
  }
  out.push_back({new_call_id(), std::string(*name), dump(args)});
  return p;
}

bool parse_xml_block(std::string_view body, const Json& tools, std::vector<ToolCall>& out) {
  std::size_t p = skip_space(body, 0);
  do {
    if (!at(body, p, kFunction)) return false;
    auto end = parse_xml_function(body, p, tools, out);
    if (!end) return false;
    p = skip_space(body, *end);
  } while (p < body.size());
  return true;
}

bool parse_json_block(std::string_view body, const Json& tools, std::vector<ToolCall>& out) {
  Json call = parse_json(body);
  if (!call.is_object()) return false;
  auto name = call.find("name");
  if (name == call.end() || !name->is_string()) return false;
  const auto& name_text = name->get_ref<const std::string&>();
  if (!name_allowed(tools, name_text)) return false;
  auto args = call.find("arguments");
  if (args == call.end()) args = call.find("parameters");
  std::string arguments;
  if (args == call.end() || args->is_null()) {
    arguments = "{}";
  } else if (args->is_object()) {
    arguments = dump(*args);
  } else if (args->is_string()) {
    Json inner = parse_json(args->get_ref<const std::string&>());
    if (!inner.is_object()) return false;
    arguments = dump(inner);
  } else {
    return false;
  }
  out.push_back({new_call_id(), name_text, std::move(arguments)});
  return true;
}

// The text between "<tool_call>" and "</tool_call>": calls appended to `out`, or false (and `out`
// unchanged).
bool parse_block(std::string_view body, const Json& tools, std::vector<ToolCall>& out) {
  std::vector<ToolCall> calls;
  std::size_t p = skip_space(body, 0);
  bool ok = at(body, p, kFunction) ? parse_xml_block(body, tools, calls)
            : at(body, p, "{")     ? parse_json_block(body, tools, calls)
                                   : false;
  if (!ok) return false;
  for (auto& c : calls) out.push_back(std::move(c));
  return true;
}

}  // namespace

ParsedToolCalls parse_tool_calls(std::string_view text, const nlohmann::ordered_json& tools) {
  try {
    ParsedToolCalls result;
    std::size_t copied = 0;  // content taken up to here
    std::size_t pos = 0;     // search for the next block from here
    std::size_t start;
    while ((start = text.find(kOpen, pos)) != std::string_view::npos) {
      std::size_t body = start + kOpen.size();
      std::size_t end = std::string_view::npos;
      std::size_t close = text.find(kClose, body);
      if (close == std::string_view::npos) {
        // Unterminated: a call only when the rest is one complete call.
        if (parse_block(text.substr(body), tools, result.calls)) end = text.size();
      } else {
        for (int tries = 0; tries < kMaxCloseTries && close != std::string_view::npos; ++tries) {
          if (parse_block(text.substr(body, close - body), tools, result.calls)) {
            end = close + kClose.size();
            break;
          }
          close = text.find(kClose, close + kClose.size());
        }
      }
      if (end == std::string_view::npos) {
        pos = body;  // not a call: it stays content
        continue;
      }
      result.content.append(text.substr(copied, start - copied));
      copied = pos = end;
    }
    result.content.append(text.substr(copied));
    trim_end(result.content);
    return result;
  } catch (...) {
    // Only allocation failure can get here; the text as content is the safe answer.
    ParsedToolCalls fallback;
    try {
      fallback.content = std::string(text);
      trim_end(fallback.content);
    } catch (...) {
    }
    return fallback;
  }
}

std::size_t tool_call_start(std::string_view text) {
  std::size_t start = text.find(kOpen);
  if (start != std::string_view::npos) return start;
  for (std::size_t n = std::min(text.size(), kOpen.size() - 1); n > 0; --n)
    if (text.ends_with(kOpen.substr(0, n))) return text.size() - n;
  return std::string_view::npos;
}

}  // namespace verdict::chat
