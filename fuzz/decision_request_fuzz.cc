// libFuzzer target: request body bytes → JSON reader → SystemOne validation → record encoding with a
// byte tokenizer (both length policies) → answers and response JSON. Must never crash; checks that
// the canonical writer's output reads back to the same value and that encodings are consistent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decision/answers.h"
#include "decision/encoder.h"
#include "decision/render.h"
#include "decision/request.h"

namespace {

using namespace verdict::decision;

void check(bool ok) {
  if (!ok) std::abort();
}

const ByteTokenizer& tokenizer() {
  static const ByteTokenizer tok({{"<|endoftext|>", 256},
                                  {"<|im_start|>", 257},
                                  {"<|im_end|>", 258},
                                  {"<think>", 259},
                                  {"</think>", 260}});
  return tok;
}

void check_encoding(const DecisionRequest& req, const EncodedRecord& rec, std::size_t max_length,
                    bool truncate) {
  check(rec.input_ids.size() == rec.fixed_tokens + rec.state_tokens_kept);
  check(rec.input_ids.size() <= max_length);
  check(truncate || rec.state_tokens_kept == rec.state_tokens);
  check(rec.questions.size() == req.questions.size());
  for (const EncodedQuestion& q : rec.questions) {
    check(q.question_span.begin < q.question_span.end && q.question_span.end <= rec.input_ids.size());
    for (const Span& s : q.option_spans) check(s.begin < s.end && s.end <= rec.input_ids.size());
  }
}

void run(std::string_view body, uint8_t flags) {
  RequestLimits limits;
  limits.max_json_depth = 32;
  limits.max_questions = 16;
  limits.max_choice_options = 16;
  limits.max_score_levels = 16;
  Value parsed;
  try {
    parsed = read_request_body(body, limits);
  } catch (const DecisionError&) {
    return;
  }
  // The canonical and the ordered writers produce JSON that reads back to the same value.
  try {
    const std::string sorted = write_json(parsed, true);
    check(write_json(read_json(sorted), true) == sorted);
    const std::string ordered = write_json(parsed, false);
    check(read_json(ordered) == parsed);
  } catch (const verdict::Error&) {
    std::abort();
  }

  MediaSupport media;
  media.images = (flags & 1) != 0;
  DecisionRequest req;
  try {
    (void)check_envelope(parsed);
    req = build_request(std::move(parsed), limits, media, "fuzz");
  } catch (const DecisionError& e) {
    check(e.status() == 400);
    return;
  }
  if (!req.images.empty()) return;  // media placeholders are not implemented by the encoder

  const RecordEncoder encoder(tokenizer());
  const std::size_t max_length = 300 + (flags >> 1) * 8;
  std::optional<EncodedRecord> kept;
  for (bool truncate : {false, true}) {
    try {
      EncodedRecord rec = encoder.encode(req, max_length, truncate);
      check_encoding(req, rec, max_length, truncate);
      kept = std::move(rec);
    } catch (const DecisionError& e) {
      check(e.status() == 413);
    }
  }
  (void)record_text(req);

  // Answers from uniform probabilities, and the response text.
  std::vector<std::vector<double>> probs;
  for (const Question& q : req.questions) {
    probs.emplace_back(q.options.size(), 1.0 / static_cast<double>(q.options.size()));
  }
  const Value answers = build_answers(req, probs);
  Usage usage;
  usage.input_tokens = kept ? kept->input_ids.size() : 0;
  const std::string response = response_json(req.model, answers, usage);
  check(read_json(response).is_object());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  run(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), data[0]);
  return 0;
}
