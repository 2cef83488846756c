#include "server/chat_route.h"

#include <chrono>
#include <ctime>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "chat/reasoning.h"
#include "chat/tool_calls.h"
#include "engine/scheduler.h"
#include "registry/errors.h"
#include "server/admission.h"
#include "server/chat_stream.h"
#include "server/errors.h"
#include "server/log.h"
#include "server/openai_response.h"

namespace verdict::server {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(25);

const char* finish_name(chat::FinishReason reason) {
  return reason == chat::FinishReason::Length ? "length" : "stop";
}

// Everything a running generation needs after the handler returned (streaming): the lease keeps
// the model resident; destroying an unfinished one cancels the generation.
struct Running {
  registry::Lease lease;
  engine::Scheduler* scheduler = nullptr;
  std::shared_ptr<engine::GenerationJob> job;
  std::shared_ptr<ChatStream> stream;
  chat::CompletionRequest request;
  std::vector<chat::TokenId> prompt;
  std::string id;
  int64_t created = 0;
  std::function<bool()> client_connected;
  Metrics* metrics = nullptr;

  ~Running() {
    // A generation whose text ended is done (the engine's bookkeeping may lag a moment): only one
    // still producing is cancelled.
    if (job && scheduler && !job->finished() && !stream->ended()) scheduler->cancel(job);
  }
  bool client_gone() const { return client_connected && !client_connected(); }
  void count() const {
    metrics->add_generation(lease.name(), prompt.size(), stream->tokens().size());
  }
};

// The prompt ids of a request (chat: rendered by the model's template). Throws RequestError.
std::vector<chat::TokenId> prompt_ids(const chat::CompletionRequest& req, const registry::Lease& lease,
                                      std::string& prompt_text) {
  const tokenizer::Tokenizer& tok = lease.tokenizer();
  if (req.endpoint == chat::Endpoint::kChat) {
    try {
      prompt_text = lease.chat_template().render(req.chat);
    } catch (const chat::ChatTemplateError& e) {
      throw chat::RequestError("invalid_request", e.what(), "messages");
    }
    return tok.encode(prompt_text);
  }
  if (req.prompt_text) {
    prompt_text = *req.prompt_text;
    return tok.encode(prompt_text);
  }
  const auto vocab = static_cast<chat::TokenId>(tok.vocab_size());
  for (chat::TokenId id : req.prompt_ids)
    if (id >= vocab)
      throw chat::RequestError("invalid_field",
                               "prompt token id " + std::to_string(id) + " is outside the vocabulary (" +
                                   std::to_string(vocab) + " ids)",
                               "prompt");
  prompt_text = tok.decode(req.prompt_ids);
  return req.prompt_ids;
}

// Waits until the engine admitted the job (queue timeout, client gone).
void wait_started(Running& run, Clock::time_point deadline, const ServerOptions& options) {
  while (!run.job->started() && !run.job->finished()) {
    if (run.client_gone()) {
      run.scheduler->cancel(run.job);
      throw ClientGone();
    }
    if (Clock::now() >= deadline && run.scheduler->cancel(run.job))
      throw queue_timeout_error(options, retry_after_seconds(run.scheduler->estimated_wait_seconds()));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The text parts of a finished generation, tool calls split out when the request gave tools.
struct Answer {
  std::string content;
  std::string reasoning;
  std::vector<chat::ToolCall> calls;
};

Answer answer_of(const Running& run) {
  Answer a{run.stream->content(), run.stream->reasoning(), {}};
  if (run.request.tools_given) {
    chat::ParsedToolCalls parsed = chat::parse_tool_calls(a.content, run.request.chat.tools);
    a.content = std::move(parsed.content);
    a.calls = std::move(parsed.calls);
  }
  return a;
}

ordered_json tool_calls_json(const std::vector<chat::ToolCall>& calls, bool with_index) {
  ordered_json out = ordered_json::array();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    ordered_json c;
    if (with_index) c["index"] = i;
    c["id"] = calls[i].id;
    c["type"] = "function";
    c["function"] = {{"name", calls[i].name}, {"arguments", calls[i].arguments}};
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<chat::SampledToken> sampled_of(const std::vector<chat::StepResult>& steps) {
  std::vector<chat::SampledToken> out;
  for (const chat::StepResult& r : steps)
    if (r.token >= 0) out.push_back(r.sampled);
  return out;
}

HttpResponse whole_response(Running& run) {
  std::vector<chat::StepResult> steps;
  for (;;) {
    if (run.stream->take(steps, Clock::now() + kPollInterval)) break;
    if (run.client_gone()) {
      run.scheduler->cancel(run.job);
      throw ClientGone();
    }
  }
  if (const auto failure = run.stream->failure()) throw Error(*failure);
  run.count();
  const tokenizer::Tokenizer& tok = run.lease.tokenizer();
  const std::vector<chat::TokenId> tokens = run.stream->tokens();
  const bool chat = run.request.endpoint == chat::Endpoint::kChat;
  ordered_json out = envelope(run.id, chat ? "chat.completion" : "text_completion", run.created, run.lease.name());
  ordered_json choice;
  choice["index"] = 0;
  const std::vector<chat::SampledToken> sampled = sampled_of(steps);
  std::string finish = finish_name(run.stream->finish_reason());
  if (chat) {
    const Answer a = answer_of(run);
    ordered_json message;
    message["role"] = "assistant";
    message["content"] = a.content.empty() && !a.calls.empty() ? ordered_json(nullptr) : ordered_json(a.content);
    if (!a.reasoning.empty()) message["reasoning_content"] = a.reasoning;
    if (!a.calls.empty()) {
      message["tool_calls"] = tool_calls_json(a.calls, false);
      finish = "tool_calls";
    }
    choice["message"] = std::move(message);
    choice["logprobs"] = run.request.logprobs ? chat_logprobs(tok, sampled) : ordered_json(nullptr);
  } else {
    choice["text"] = run.stream->content();
    choice["logprobs"] = run.request.logprobs ? text_logprobs(tok, sampled, 0) : ordered_json(nullptr);
  }
  choice["finish_reason"] = finish;
  if (run.request.return_token_ids) choice["token_ids"] = tokens;
  out["choices"] = ordered_json::array({std::move(choice)});
  out["usage"] = usage_json(static_cast<int64_t>(run.prompt.size()), static_cast<int64_t>(tokens.size()));
  if (run.request.return_token_ids) out["prompt_token_ids"] = run.prompt;
  HttpResponse res;
  res.body = dump(out);
  return res;
}

// Writes the SSE stream of a running generation; returns when it ended or the client left.
void write_stream(Running& run, const HttpResponse::Writer& write) {
  const tokenizer::Tokenizer& tok = run.lease.tokenizer();
  const chat::CompletionRequest& req = run.request;
  const bool chat = req.endpoint == chat::Endpoint::kChat;
  const char* object = chat ? "chat.completion.chunk" : "text_completion";
  auto chunk = [&](ordered_json choice_fields) {
    ordered_json c = envelope(run.id, object, run.created, run.lease.name());
    ordered_json choice;
    choice["index"] = 0;
    for (auto& [k, v] : choice_fields.items()) choice[k] = v;
    if (!choice.contains("finish_reason")) choice["finish_reason"] = nullptr;
    c["choices"] = ordered_json::array({std::move(choice)});
    if (req.include_usage) c["usage"] = nullptr;
    return sse_event(c);
  };
  auto gone = [&] {
    run.scheduler->cancel(run.job);
    return;
  };

  if (chat && !write(chunk({{"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr}}))) return gone();

  std::string content;        // all content so far (chat with tools: some of it held back)
  std::size_t content_sent = 0;
  int64_t text_offset = 0;
  std::vector<chat::SampledToken> pending_logprobs;
  std::vector<chat::TokenId> pending_ids;
  std::vector<chat::StepResult> steps;
  bool ended = false;
  while (!ended) {
    steps.clear();
    ended = run.stream->take(steps, Clock::now() + kPollInterval);
    if (steps.empty() && !ended) {
      if (run.client_gone()) return gone();
      continue;
    }
    std::string reasoning_delta;
    for (const chat::StepResult& r : steps) {
      if (r.token >= 0) {
        pending_logprobs.push_back(r.sampled);
        pending_ids.push_back(r.token);
      }
      reasoning_delta += r.delta.reasoning;
      content += r.delta.content;
    }
    std::size_t sendable = content.size();
    if (req.tools_given) sendable = std::min(sendable, chat::tool_call_start(content));
    if (sendable < content_sent) sendable = content_sent;
    const std::string content_delta = content.substr(content_sent, sendable - content_sent);
    content_sent = sendable;
    if (reasoning_delta.empty() && content_delta.empty()) continue;  // held back: sent with later text
    ordered_json fields;
    if (chat) {
      ordered_json delta = ordered_json::object();
      if (!reasoning_delta.empty()) delta["reasoning_content"] = reasoning_delta;
      if (!content_delta.empty()) delta["content"] = content_delta;
      fields["delta"] = std::move(delta);
      fields["logprobs"] = req.logprobs ? chat_logprobs(tok, pending_logprobs) : ordered_json(nullptr);
    } else {
      fields["text"] = content_delta;
      fields["logprobs"] = req.logprobs ? text_logprobs(tok, pending_logprobs, text_offset) : ordered_json(nullptr);
      text_offset += static_cast<int64_t>(content_delta.size());
    }
    if (req.return_token_ids) fields["token_ids"] = pending_ids;
    pending_logprobs.clear();
    pending_ids.clear();
    if (!write(chunk(std::move(fields)))) return gone();
  }

  if (const auto failure = run.stream->failure()) {
    log_line("generation failed: " + *failure);
    ordered_json err;
    err["error"] = {{"message", "generation failed: internal server error"}, {"type", "server_error"}, {"code", "internal_error"}};
    write(sse_event(err));
    return;
  }
  run.count();
  std::string finish = finish_name(run.stream->finish_reason());
  ordered_json last;
  if (chat) {
    ordered_json delta = ordered_json::object();
    if (content_sent < content.size()) {  // held back for tool calls
      chat::ParsedToolCalls parsed = chat::parse_tool_calls(std::string_view(content).substr(content_sent), req.chat.tools);
      if (!parsed.content.empty()) delta["content"] = parsed.content;
      if (!parsed.calls.empty()) {
        delta["tool_calls"] = tool_calls_json(parsed.calls, true);
        finish = "tool_calls";
      }
    }
    last["delta"] = std::move(delta);
    last["logprobs"] = req.logprobs && !pending_logprobs.empty() ? chat_logprobs(tok, pending_logprobs) : ordered_json(nullptr);
  } else {
    last["text"] = "";
    last["logprobs"] = req.logprobs && !pending_logprobs.empty() ? text_logprobs(tok, pending_logprobs, text_offset)
                                                                 : ordered_json(nullptr);
  }
  if (req.return_token_ids) last["token_ids"] = pending_ids;
  last["finish_reason"] = finish;
  if (!write(chunk(std::move(last)))) return;
  if (req.include_usage) {
    ordered_json u = envelope(run.id, object, run.created, run.lease.name());
    u["choices"] = ordered_json::array();
    u["usage"] = usage_json(static_cast<int64_t>(run.prompt.size()), static_cast<int64_t>(run.stream->tokens().size()));
    if (!write(sse_event(u))) return;
  }
  write(kSseDone);
}

}  // namespace

HttpResponse answer_completion(const SystemOneContext& context, const HttpRequest& request, const std::string& body,
                               RequestInfo& info, chat::Endpoint endpoint) {
  const ServerOptions& options = context.options;
  try {
    auto run = std::make_shared<Running>();
    run->request = chat::parse_completion_request(body, endpoint);
    run->lease = context.registry.resolve_chat(run->request.model);
    info.model = run->lease.name();
    std::string prompt_text;
    run->prompt = prompt_ids(run->request, run->lease, prompt_text);
    if (run->prompt.empty()) throw chat::RequestError("invalid_request", "the prompt is empty", "prompt");
    const auto context_tokens = static_cast<int64_t>(run->lease.max_length());
    const auto n = static_cast<int64_t>(run->prompt.size());
    if (n >= context_tokens)
      throw chat::RequestError("context_length_exceeded",
                               "This model's maximum context length is " + std::to_string(context_tokens) +
                                   " tokens. However, your prompt is " + std::to_string(n) +
                                   " tokens, leaving no room for the completion.",
                               endpoint == chat::Endpoint::kChat ? "messages" : "prompt");
    chat::GenerationOptions gen = chat::apply(run->request, run->lease.generation_defaults(), context_tokens - n);
    gen.starts_in_reasoning =
        endpoint == chat::Endpoint::kChat && gen.split_reasoning && chat::prompt_opens_reasoning(prompt_text, gen.tags);
    if (const std::string problem = chat::validate(gen.sampling); !problem.empty())
      throw chat::RequestError("invalid_field", problem);
    run->stream = std::make_shared<ChatStream>(run->lease.tokenizer(), run->prompt, std::move(gen));
    run->id = completion_id(endpoint);
    run->created = static_cast<int64_t>(std::time(nullptr));
    run->client_connected = request.client_connected;
    run->metrics = &context.metrics;

    const Clock::time_point deadline = Clock::now() + options.queue_timeout;
    AwaitingLoad awaiting(context.metrics, run->lease.name(), options.max_queue);
    registry::LoadedModel& model = wait_for_weights(run->lease, request, deadline, options);
    run->scheduler = &model.scheduler();
    awaiting.release();  // before the submission, as EngineWait::run (systemone_route.cc) says why
    try {
      run->job = run->scheduler->submit_generation(run->prompt, run->stream);
    } catch (const engine::QueueFullError& e) {
      throw RetryableError(429, "queue_full", e.what(), retry_after_seconds(run->scheduler->estimated_wait_seconds()));
    }
    wait_started(*run, deadline, options);

    if (!run->request.stream) return whole_response(*run);
    HttpResponse res;
    res.content_type = "text/event-stream";
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.stream = [run](const HttpResponse::Writer& write) { write_stream(*run, write); };
    return res;
  } catch (const chat::RequestError& e) {
    return error_response(400, e.code(), e.what());
  } catch (...) {
    return model_route_error(info.request_id);
  }
}

}  // namespace verdict::server
