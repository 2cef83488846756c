// The request bodies of POST /v1/chat/completions and POST /v1/completions (the OpenAI wire form,
// with the extensions vLLM and llama-server clients send: top_k, min_p, repetition_penalty,
// chat_template_kwargs, return_token_ids), parsed and checked before any model is touched.
//
// Unknown fields are ignored (as vLLM and llama-server do); fields verdict cannot honour are refused
// with 400 rather than silently ignored (n > 1, best_of > 1, echo, suffix, response_format other
// than text). Every refusal names the field, OpenAI-style.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "chat/generation.h"
#include "core/error.h"

namespace verdict::chat {

// A request refused before it runs: 400 invalid_request_error with `code` and the field at fault.
class RequestError : public Error {
 public:
  RequestError(std::string code, const std::string& message, std::string param = "")
      : Error(message), code_(std::move(code)), param_(std::move(param)) {}
  const std::string& code() const { return code_; }
  const std::string& param() const { return param_; }

 private:
  std::string code_;
  std::string param_;
};

enum class Endpoint : uint8_t { kChat, kCompletions };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::optional<std::string> model;  // trimmed; absent: the default chat model

  // kChat: what the template renders.
  ChatRequest chat;
  bool tools_given = false;          // `tools` non-empty and tool_choice is not "none"
  // kCompletions: the prompt, as text or as token ids.
  std::optional<std::string> prompt_text;
  std::vector<int32_t> prompt_ids;

  // Generation settings given by the request (the model's defaults fill the rest; see apply()).
  std::optional<int64_t> max_tokens;
  std::optional<double> temperature, top_p, min_p, presence_penalty, frequency_penalty, repetition_penalty;
  std::optional<int64_t> top_k;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  bool logprobs = false;
  int top_logprobs = 0;

  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  bool return_token_ids = false;  // vLLM extension: prompt_token_ids / token_ids in the response
  bool ignore_eos = false;        // vLLM extension: the model's stop ids do not end the generation
};

// Limits on a request (beyond the body size, which the server checks).
struct CompletionLimits {
  std::size_t max_messages = 4096;
  std::size_t max_stop = 16;
  std::size_t max_stop_bytes = 256;
  int max_json_depth = 128;
};

// Parses and checks a body. Throws RequestError.
CompletionRequest parse_completion_request(std::string_view body, Endpoint endpoint, const CompletionLimits& limits = {});

// The generation options for a request: the model's defaults (generation_config.json: sampling,
// stop ids) overridden by what the request gives. `max_tokens` of the result is the request's,
// capped by `room` (tokens left in the context after the prompt); without one it is `room`.
GenerationOptions apply(const CompletionRequest& request, const GenerationOptions& model_defaults, int64_t room);

}  // namespace verdict::chat
