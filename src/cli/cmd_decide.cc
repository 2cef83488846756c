// verdict decide: one SystemOne decision from the command line, through the same code path as the
// server's POST /v1/systemone (validation, encoding, backbone prefill, joint head, answers).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include "cli/commands.h"
#include "cli/model_files.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "decision/decision.h"
#include "decision/lexical.h"
#include "decision/tokenizer_adapter.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/backbone.h"
#include "registry/model_source.h"
#include "tokenizer/tokenizer.h"

namespace verdict::cli {
namespace {

std::string read_request(Args& args) {
  const auto file = args.value("request");
  const auto state = args.value("state");
  const auto questions = args.value("questions");
  if (file && (state || questions)) throw UsageError("use either --request or --state/--questions, not both");
  if (state.has_value() != questions.has_value()) throw UsageError("--state and --questions go together");
  if (state) return decision::shortcut_request_body("default", *state, *questions);
  if (!file || *file == "-")
    return std::string((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  return read_text_file(*file);
}

}  // namespace

int run_decide(Args& args) {
  const std::string dir = args.required("model");
  const auto max_length = args.integer("max-length", 1, int64_t{1} << 24);
  const bool truncate = args.flag("truncate");
  const bool explain = args.flag("explain");
  const std::string name = args.value("name").value_or("default");
  if (const auto threads = args.integer("threads", 1, 1024)) kernels::set_num_threads(static_cast<int>(*threads));
  const std::string body = read_request(args);
  args.finish();

  if (detect_kind(dir) != ModelKind::Decision)
    throw Error(dir + ": not a decision model (no joint_head.safetensors + joint_head_config.json)");
  models::qwen35::LoadOptions load;
  load.pack_output = false;  // a decision reads hidden states, never logits
  const auto backbone = models::qwen35::Backbone::load(registry::backbone_path(dir), load);
  const auto tok = registry::read_model_tokenizer(dir);
  decision::HfPieceTokenizer pieces(tok);
  decision::RecordEncoder encoder(pieces);
  const decision::JointHead head = decision::JointHead::load_dir(dir);
  const auto hidden = static_cast<std::size_t>(backbone->config().hidden);
  if (head.config().hidden_size != hidden)
    throw Error(dir + ": joint head hidden_size " + std::to_string(head.config().hidden_size) +
                " does not match the backbone's " + std::to_string(hidden));

  decision::DecisionModel model{
      encoder, head,
      [&](std::span<const decision::TokenId> ids, std::span<const int64_t> seams) {
        auto pool = backbone->make_pool(1, static_cast<int64_t>(ids.size()));
        const int64_t slot = pool.acquire();
        // Pieces restarted at the record's seams: the rows the server computes, bit for bit.
        const auto out = backbone->prefill(pool, slot, ids, {}, models::qwen35::kDefaultPrefillChunk, seams);
        return decision::HiddenRows{out.hidden, ids.size(), hidden};
      },
      decision::lexical_rows(backbone->weights().output())};

  decision::SystemOneOptions options;
  options.model_name = name;
  if (max_length) options.decide.max_length = static_cast<std::size_t>(*max_length);
  options.decide.truncate_by_default = truncate;
  options.explain = explain;
  options.received_at = std::chrono::steady_clock::now();
  const decision::SystemOneResult r = decision::answer_systemone(body, model, options);
  if (has_random_weights(dir))
    std::fprintf(stderr, "verdict decide: note: %s holds random weights (verdict make-model): the answers are "
                 "meaningless\n", dir.c_str());
  std::cout << r.body << "\n";
  if (r.status != 200) {
    std::cout.flush();
    std::fprintf(stderr, "verdict decide: request refused with status %d%s%s\n", r.status,
                 r.internal_error.empty() ? "" : ": ", r.internal_error.c_str());
    return 1;
  }
  return 0;
}

}  // namespace verdict::cli
