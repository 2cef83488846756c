#include "server/openai_response.h"

#include <random>

#include "core/utf8.h"

namespace verdict::server {

std::string completion_id(chat::Endpoint endpoint) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = endpoint == chat::Endpoint::kChat ? "chatcmpl-" : "cmpl-";
  for (int i = 0; i < 24; ++i) id += kHex[rng() & 15];
  return id;
}

std::string dump(const ordered_json& value) { return value.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

std::string sse_event(const ordered_json& value) { return "data: " + dump(value) + "\n\n"; }

ordered_json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  ordered_json u;
  u["prompt_tokens"] = prompt_tokens;
  u["completion_tokens"] = completion_tokens;
  u["total_tokens"] = prompt_tokens + completion_tokens;
  return u;
}

namespace {

// A token's text for JSON (partial UTF-8 replaced) and its raw bytes.
std::string token_text(const tokenizer::Tokenizer& tok, chat::TokenId id) {
  std::string out;
  utf8::append_lossy(out, tok.token_bytes(id));
  return out;
}

ordered_json token_bytes(const tokenizer::Tokenizer& tok, chat::TokenId id) {
  ordered_json bytes = ordered_json::array();
  for (const unsigned char c : tok.token_bytes(id)) bytes.push_back(static_cast<int>(c));
  return bytes;
}

}  // namespace

ordered_json chat_logprobs(const tokenizer::Tokenizer& tok, std::span<const chat::SampledToken> sampled) {
  ordered_json content = ordered_json::array();
  for (const chat::SampledToken& s : sampled) {
    ordered_json entry;
    entry["token"] = token_text(tok, s.token);
    entry["logprob"] = s.logprob;
    entry["bytes"] = token_bytes(tok, s.token);
    ordered_json top = ordered_json::array();
    for (const chat::TokenLogprob& t : s.top) {
      ordered_json alt;
      alt["token"] = token_text(tok, t.token);
      alt["logprob"] = t.logprob;
      alt["bytes"] = token_bytes(tok, t.token);
      top.push_back(std::move(alt));
    }
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  ordered_json out;
  out["content"] = std::move(content);
  return out;
}

ordered_json text_logprobs(const tokenizer::Tokenizer& tok, std::span<const chat::SampledToken> sampled,
                           int64_t text_offset) {
  ordered_json tokens = ordered_json::array(), logprobs = ordered_json::array(), tops = ordered_json::array(),
               offsets = ordered_json::array();
  for (const chat::SampledToken& s : sampled) {
    const std::string text = token_text(tok, s.token);
    tokens.push_back(text);
    logprobs.push_back(s.logprob);
    ordered_json top = ordered_json::object();
    for (const chat::TokenLogprob& t : s.top) top[token_text(tok, t.token)] = t.logprob;
    tops.push_back(std::move(top));
    offsets.push_back(text_offset);
    text_offset += static_cast<int64_t>(tok.token_bytes(s.token).size());
  }
  ordered_json out;
  out["tokens"] = std::move(tokens);
  out["token_logprobs"] = std::move(logprobs);
  out["top_logprobs"] = std::move(tops);
  out["text_offset"] = std::move(offsets);
  return out;
}

ordered_json envelope(const std::string& id, const char* object, int64_t created, const std::string& model) {
  ordered_json out;
  out["id"] = id;
  out["object"] = object;
  out["created"] = created;
  out["model"] = model;
  out["system_fingerprint"] = "verdict";
  return out;
}

}  // namespace verdict::server
