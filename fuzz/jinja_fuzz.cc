// libFuzzer target for the Jinja engine: any bytes are parsed as a template and, when they parse,
// rendered with a fixed chat-like context under small limits. Errors (SyntaxError, RenderError,
// RaisedException) are expected; crashes, hangs, leaks and sanitizer reports are not. A rendered
// template must also render the same way a second time (rendering is deterministic, except for
// strftime_now, which the check skips).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "chat/jinja/template.h"

namespace {

using verdict::chat::jinja::Limits;
using verdict::chat::jinja::RenderError;
using verdict::chat::jinja::SyntaxError;
using verdict::chat::jinja::Template;
using verdict::chat::jinja::Value;

const Value& context() {
  static const Value v = Value::from_json(nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "Hi \u00e9 \ud83d\ude80 <think>x</think>"},
      {"role": "assistant", "content": "<think>\nplan\n</think>\n\nHello", "reasoning_content": "r",
       "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": [1, 2.5, null, true]}}}]},
      {"role": "tool", "content": "{\"ok\": 1}"},
      {"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}],
    "add_generation_prompt": true, "enable_thinking": false, "bos_token": "<s>", "eos_token": "</s>",
    "n": 3, "x": -1.5, "nothing": null
  })"));
  return v;
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "jinja_fuzz: invariant violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  Limits limits;
  limits.max_output_bytes = 1 << 20;
  limits.max_items = 1 << 16;
  limits.max_steps = 200000;
  try {
    const Template t = Template::parse(source);
    std::string first;
    try {
      first = t.render(context(), limits);
    } catch (const RenderError&) {
      return 0;
    }
    check(first.size() <= limits.max_output_bytes, "output within the limit");
    if (source.find("strftime_now") == std::string_view::npos)
      check(t.render(context(), limits) == first, "deterministic");
  } catch (const SyntaxError&) {
  }
  return 0;
}
