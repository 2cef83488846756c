// verdict chat: talk to a Qwen3.5 chat model from the terminal. Interactive (one line per user turn,
// the conversation kept, tokens streamed as they come) or one-shot with -p. The prompt goes through
// the model's own chat template; sampling, stop ids and the reasoning split are the server's.
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "chat/generate.h"
#include "chat/model_defaults.h"
#include "cli/commands.h"
#include "cli/model_files.h"
#include "core/error.h"
#include "core/json.h"
#include "core/mapped_file.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/backbone.h"
#include "registry/model_source.h"
#include "tokenizer/tokenizer.h"

namespace verdict::cli {
namespace {

using nlohmann::ordered_json;

std::string number_text(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

std::optional<double> real(Args& args, std::string_view name, double min, double max) {
  const auto v = args.value(name);
  if (!v) return std::nullopt;
  double out = 0;
  const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size() || !(out >= min && out <= max))
    throw UsageError("option --" + std::string(name) + " needs a number in [" + number_text(min) + ", " +
                     number_text(max) + "], got '" + *v + "'");
  return out;
}

void write_out(std::FILE* f, const std::string& s) {
  if (s.empty()) return;
  std::fwrite(s.data(), 1, s.size(), f);
  std::fflush(f);
}

struct ChatSession {
  std::unique_ptr<models::qwen35::Backbone> model;
  tokenizer::Tokenizer tok;
  chat::ChatTemplate chat_template;
  chat::GenerationOptions options;
  ordered_json kwargs;
  int64_t context = 0;
};

// Streams one assistant turn: reasoning to stderr (dimmed on a terminal), the answer to stdout.
chat::GenerateResult run_turn(ChatSession& s, models::qwen35::SeqStatePool& pool, int64_t slot,
                              const ordered_json& messages, bool stream, std::vector<chat::TokenId>* prompt_out) {
  chat::ChatRequest request;
  request.messages = messages;
  request.kwargs = s.kwargs;
  const std::string prompt = s.chat_template.render(request);
  const std::vector<chat::TokenId> ids = s.tok.encode(prompt);
  if (prompt_out) *prompt_out = ids;
  chat::GenerationOptions options = s.options;
  options.starts_in_reasoning = chat::prompt_opens_reasoning(prompt, options.tags);
  const int64_t room = s.context - static_cast<int64_t>(ids.size());
  if (room < 1)
    throw Error("the conversation (" + std::to_string(ids.size()) + " tokens) no longer fits --context " +
                std::to_string(s.context));
  options.max_tokens = std::min(options.max_tokens, room);
  pool.reset(slot);
  const bool tty_err = isatty(STDERR_FILENO) != 0;
  bool in_reasoning = false;
  auto on_step = [&](const chat::StepResult& r) {
    if (!stream) return true;
    if (!r.delta.reasoning.empty()) {
      if (!in_reasoning && tty_err) write_out(stderr, "\x1b[2m");
      in_reasoning = true;
      write_out(stderr, r.delta.reasoning);
    }
    if (!r.delta.content.empty()) {
      if (in_reasoning) write_out(stderr, tty_err ? "\x1b[0m\n" : "\n");
      in_reasoning = false;
      write_out(stdout, r.delta.content);
    }
    return true;
  };
  chat::GenerateResult result = chat::generate(*s.model, pool, slot, s.tok, ids, options, on_step);
  if (stream) {
    if (in_reasoning) write_out(stderr, tty_err ? "\x1b[0m\n" : "\n");
    write_out(stdout, "\n");
  }
  return result;
}

}  // namespace

int run_chat(Args& args) {
  const std::string dir = args.required("model");
  std::optional<std::string> prompt = args.value("prompt");
  const std::optional<std::string> system = args.value("system");
  const auto max_tokens = args.integer("max-tokens", 1, int64_t{1} << 24);
  const auto temperature = real(args, "temperature", 0, 100);
  const auto top_p = real(args, "top-p", 1e-9, 1);
  const auto top_k = args.integer("top-k", 0, int64_t{1} << 30);
  const auto min_p = real(args, "min-p", 0, 1);
  const auto repetition_penalty = real(args, "repetition-penalty", 1e-6, 100);
  const auto seed = args.integer("seed", 0, INT64_MAX);
  const bool no_think = args.flag("no-think");
  const bool json = args.flag("json");
  const auto context = args.integer("context", 16, int64_t{1} << 24);
  const std::vector<std::string> stops = args.values("stop");
  if (const auto threads = args.integer("threads", 1, 1024)) kernels::set_num_threads(static_cast<int>(*threads));
  const std::vector<std::string> rest = args.positionals();
  if (rest.size() == 2 && rest[0] == "-p" && !prompt)
    prompt = rest[1];
  else if (!rest.empty())
    throw UsageError("unexpected argument '" + rest[0] + "' (the prompt goes after -p)");
  args.finish();
  if (json && !prompt) throw UsageError("--json needs a one-shot prompt (-p)");

  if (detect_kind(dir) == ModelKind::Decision)
    throw Error(dir + ": a decision model cannot chat (use 'verdict decide')");
  // A checkpoint folder or a qwen35 .gguf file (tokenizer and template from its metadata).
  auto backbone = models::qwen35::Backbone::load(dir);
  tokenizer::Tokenizer tok = registry::read_model_tokenizer(dir);
  chat::ChatTemplate chat_template = registry::read_chat_template(dir, tok);
  ChatSession s{std::move(backbone), std::move(tok), std::move(chat_template), {}, nullptr, 0};

  // Defaults from generation_config.json (as transformers applies them), then the flags.
  s.options = chat::model_generation_defaults(dir, s.model->config().eos_token_ids, s.tok);
  chat::GenerationOptions& o = s.options;
  if (temperature) o.sampling.temperature = *temperature;
  if (top_p) o.sampling.top_p = *top_p;
  if (top_k) o.sampling.top_k = *top_k;
  if (min_p) o.sampling.min_p = *min_p;
  if (repetition_penalty) o.sampling.repetition_penalty = *repetition_penalty;
  if (seed) o.sampling.seed = static_cast<uint64_t>(*seed);
  if (const std::string problem = chat::validate(o.sampling); !problem.empty()) throw UsageError(problem);
  o.max_tokens = max_tokens.value_or(1024);
  o.stop = stops;
  if (no_think) s.kwargs = ordered_json{{"enable_thinking", false}};
  s.context = context.value_or(8192);

  models::qwen35::SeqStatePool pool = s.model->make_pool(1, s.context);
  const int64_t slot = pool.acquire();
  ordered_json messages = ordered_json::array();
  if (system) messages.push_back({{"role", "system"}, {"content", *system}});

  if (prompt) {
    messages.push_back({{"role", "user"}, {"content", *prompt}});
    std::vector<chat::TokenId> prompt_ids;
    const chat::GenerateResult r = run_turn(s, pool, slot, messages, !json, &prompt_ids);
    if (json) {
      ordered_json out;
      out["prompt_ids"] = prompt_ids;
      out["ids"] = r.tokens;
      out["reasoning_content"] = r.reasoning;
      out["content"] = r.content;
      out["finish_reason"] = chat::finish_reason_name(r.finish_reason);
      out["usage"] = {{"prompt_tokens", r.prompt_tokens}, {"completion_tokens", static_cast<int64_t>(r.tokens.size())}};
      write_out(stdout, out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    }
    return 0;
  }

  const bool tty = isatty(STDIN_FILENO) != 0;
  if (tty) write_out(stderr, "verdict chat — /reset starts over, /exit (or Ctrl-D) quits\n");
  std::string line;
  for (;;) {
    if (tty) write_out(stdout, "> ");
    if (!std::getline(std::cin, line)) break;
    if (line == "/exit" || line == "/quit") break;
    if (line == "/reset") {
      messages = ordered_json::array();
      if (system) messages.push_back({{"role", "system"}, {"content", *system}});
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    try {
      const chat::GenerateResult r = run_turn(s, pool, slot, messages, true, nullptr);
      messages.push_back({{"role", "assistant"}, {"content", r.content}, {"reasoning_content", r.reasoning}});
    } catch (const Error& e) {  // a refused request or a full context: report it, keep the session
      messages.erase(messages.size() - 1);
      write_out(stderr, std::string("error: ") + e.what() + "\n");
    }
  }
  if (tty) write_out(stdout, "\n");
  return 0;
}

}  // namespace verdict::cli
