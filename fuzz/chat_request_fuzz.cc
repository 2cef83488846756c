// libFuzzer target: request body bytes → the chat/completions request parser (both endpoints) →
// the generation options → the tool-call parser over the same bytes as model output. Must never
// crash; refusals are chat::RequestError only, and accepted requests satisfy the parser's promises.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "chat/openai_request.h"
#include "chat/tool_calls.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void parse(std::string_view body, verdict::chat::Endpoint endpoint) {
  using namespace verdict::chat;
  try {
    const CompletionRequest r = parse_completion_request(body, endpoint);
    if (endpoint == Endpoint::kChat) check(!r.chat.messages.empty());
    else check(r.prompt_text.has_value() != !r.prompt_ids.empty());
    check(r.top_logprobs >= 0 && r.top_logprobs <= 20);
    check(!r.include_usage || r.stream);
    GenerationOptions defaults;
    const GenerationOptions o = apply(r, defaults, 100);
    check(o.max_tokens >= 1 && o.max_tokens <= 100);
    check(validate(o.sampling).empty());
    (void)parse_tool_calls(body, r.chat.tools);
  } catch (const RequestError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  parse(body, verdict::chat::Endpoint::kChat);
  parse(body, verdict::chat::Endpoint::kCompletions);
  const std::size_t start = verdict::chat::tool_call_start(body);
  check(start == std::string_view::npos || start <= body.size());
  (void)verdict::chat::parse_tool_calls(body, nullptr);
  return 0;
}
