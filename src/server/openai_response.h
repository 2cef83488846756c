// The OpenAI wire form of chat and text completions: whole responses, SSE chunks, usage and
// logprobs (chat: {"content": [{token, logprob, bytes, top_logprobs}]}; legacy completions:
// {tokens, token_logprobs, top_logprobs, text_offset}).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "chat/generation.h"
#include "chat/openai_request.h"
#include "tokenizer/tokenizer.h"

namespace verdict::server {

using nlohmann::ordered_json;

// "chatcmpl-…" or "cmpl-…" with 24 random hex digits.
std::string completion_id(chat::Endpoint endpoint);

// Serializes with invalid UTF-8 replaced (model output may hold partial characters).
std::string dump(const ordered_json& value);

// The SSE event carrying `value`: "data: {…}\n\n".
std::string sse_event(const ordered_json& value);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

ordered_json usage_json(int64_t prompt_tokens, int64_t completion_tokens);

// Logprobs of the given sampled tokens: the chat form, or the legacy completions form with text
// offsets counted from `text_offset`.
ordered_json chat_logprobs(const tokenizer::Tokenizer& tok, std::span<const chat::SampledToken> sampled);
ordered_json text_logprobs(const tokenizer::Tokenizer& tok, std::span<const chat::SampledToken> sampled,
                           int64_t text_offset);

// The envelope shared by responses and chunks: id, object, created, model (+ system_fingerprint).
ordered_json envelope(const std::string& id, const char* object, int64_t created, const std::string& model);

}  // namespace verdict::server
