// The Clef decision pipeline, end to end (clef-decision.md §2):
//   request → encode_record → backbone (final-norm hidden rows) → joint head → softmax → answers.
//
// The backbone and the lexical table are plugged in as functions, so the same code runs the real
// Qwen3.5 backbone and the fixtures' deterministic fake.
//
//   RecordEncoder encoder(piece_tokenizer);             // once per model
//   JointHead head = JointHead::load_dir(model_dir);    // once per model
//   DecisionModel model{encoder, head, backbone_fn, lexical_fn};
//   SystemOneResult r = answer_systemone(body, model, options);   // status + JSON body
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decision/answers.h"
#include "decision/encoder.h"
#include "decision/head.h"
#include "decision/request.h"

namespace verdict::decision {

// Final-norm hidden rows [rows, cols] row-major (rows = record length, cols = hidden size).
struct HiddenRows {
  std::vector<float> data;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t cached_tokens = 0;  // leading rows reused from a prefix cache (usage.cached_tokens)
};

// Runs the backbone over one record (positions 0 … L−1, no padding) and returns the hidden state of
// every position after the final norm. `seams` are the record's seams (record_seams()): the backbone
// restarts its prefill grid there, and a prefix cache may resume the record there.
using BackboneFn = std::function<HiddenRows(std::span<const TokenId> input_ids, std::span<const int64_t> seams)>;

// The model-side pieces of one Clef model. References must outlive the calls.
struct DecisionModel {
  const RecordEncoder& encoder;
  const JointHead& head;
  BackboneFn backbone;
  LexicalRowFn lexical;
};

struct DecideOptions {
  std::size_t max_length = 16384;    // the model's context limit (64,000 for clef-omni)
  bool truncate_by_default = false;  // the server's --truncate; a request's `truncate` overrides
  HeadPrecision precision = HeadPrecision::kF32;
  std::string request_id = "-";  // named in 500 messages
  // Runs the head's computation (the function it is given), e.g. on the kernel pool or on the calling
  // thread alone (the server: engine::run_beside_steps). Empty: called directly, its products spread over
  // the kernel pool.
  std::function<void(const std::function<void()>& head)> run_head;
};

struct Decision {
  EncodedRecord record;
  bool truncation_in_effect = false;
  std::size_t cached_tokens = 0;                   // from the backbone (HiddenRows::cached_tokens)
  QuestionLogits logits;                           // per question, head option order
  std::vector<std::vector<double>> probabilities;  // fp32 softmax widened, head option order
  Value answers;                                   // the `answers` object (rounded)
};

// Encodes, runs the backbone and the head, builds the answers. Throws DecisionError (413 length
// rules, 500 non-finite scores) or verdict::Error (backbone/head faults, e.g. a wrong hidden size).
Decision decide(const DecisionRequest& request, const DecisionModel& model, const DecideOptions& options);

// The usage block of a decision (`truncated_tokens` only when truncation was in effect);
// `with_cache_field` writes usage.cached_tokens (Decision::cached_tokens).
Usage decision_usage(const Decision& decision, std::optional<double> latency_ms, bool with_cache_field);

// The `explain` object of `verdict decide --explain`: record_text (state uncut), input_ids, and per
// question question_id, type, question_span, option_spans, option_ids and the unrounded
// probabilities (head order).
Value explain_value(const DecisionRequest& request, const Decision& decision);

struct SystemOneOptions {
  RequestLimits limits;
  // Resolves the trimmed `model` value (rules M1/M2, by throwing DecisionError). When empty, every
  // name is accepted and answered as `model_name`, text only (what `verdict decide` does).
  ModelResolver resolve;
  std::string model_name;
  DecideOptions decide;
  // When set, usage.latency_ms is measured from this instant and usage.cached_tokens is written; the
  // wire contract needs both, the fixtures' pipeline has neither.
  std::optional<std::chrono::steady_clock::time_point> received_at;
  bool explain = false;  // add a top-level "explain" object to the response
};

struct SystemOneResult {
  int status = 200;
  std::string body;                  // the response or the error body
  std::optional<Decision> decision;  // set when answered
  std::string internal_error;        // for 500 internal_error: the fault's message (log it)
};

// A raw request body → the response (200) or the error body of the first failing rule.
// verdict::Error from the backbone or head becomes 500 internal_error.
SystemOneResult answer_systemone(std::string_view body, const DecisionModel& model,
                                 const SystemOneOptions& options);

}  // namespace verdict::decision
