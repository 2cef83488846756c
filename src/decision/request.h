// The SystemOne request (systemone-api.md §3) read and validated in the order of §5, with the
// exact messages, into a DecisionRequest whose questions already carry their options in the head's
// order (clef-decision.md §4.4, §4.5).
//
// The HTTP layer calls, in this order:
//   read_request_body()  J1–J3       (after its own R, A, O2/O5, B0, B1 rules)
//   check_envelope()     V1–V3
//   resolve the model    M1, M2      (the registry's business; see ResolvedModel)
//   build_request()      Q1–Q11, D1–D5
// parse_request() runs the whole chain with a resolver callback.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decision/errors.h"
#include "decision/json_value.h"

namespace verdict::decision {

enum class QuestionType : uint8_t { kNoul = 0, kChoice = 1, kScore = 2 };

// "noul", "choice", "score".
std::string_view question_type_name(QuestionType type);
// The head's type id (§4.3): noul 0, choice 1, score 2.
inline int question_type_id(QuestionType type) { return static_cast<int>(type); }

// The two default noul descriptions (§4.2).
inline constexpr std::string_view kNoulTrueDefault = "The proposition is true or the answer is yes.";
inline constexpr std::string_view kNoulFalseDefault = "The proposition is false or the answer is no.";

struct Option {
  std::string id;
  std::optional<Value> description;  // nullopt: absent (the option is described by its id only)
};

struct Question {
  std::string id;  // the request key, byte-identical
  QuestionType type = QuestionType::kNoul;
  Value instruction;            // instruction_value of §4.4 (the id when absent, null or "")
  std::vector<Option> options;  // head order (§4.5)
  // Answer key order: request_order[r] is the index in `options` of the r-th key in request order
  // (choice: the criteria keys as sent; noul and score: the head order).
  std::vector<std::size_t> request_order;
  std::vector<Value> levels;  // score only: the criteria elements as sent (the response legend)
};

struct RequestLimits {
  std::size_t max_questions = 256;
  std::size_t max_choice_options = 255;
  std::size_t max_score_levels = 64;
  std::size_t max_json_depth = 128;
  std::size_t max_images = 8;  // also for `files`
  std::size_t max_audio = 4;
  std::size_t max_videos = 4;
};

// The media kinds a model accepts. Text-only models accept none (rule D3).
struct MediaSupport {
  bool images = false;
  bool audio = false;
  bool videos = false;
};

struct DecisionRequest {
  std::string model;  // the `model` value as sent
  Value state;
  std::vector<Question> questions;  // request order
  std::optional<bool> truncate;     // nullopt: absent or null (the server default applies)
  // Media items as sent (shape-checked only); `files` items are reported under images.
  std::vector<std::string> images;
  std::vector<std::string> audio;
  std::vector<std::string> videos;
};

// J1–J3: parses the body (Python json.loads semantics for what reaches the prompt).
Value read_request_body(std::string_view body, const RequestLimits& limits = {});

struct Envelope {
  std::string model;             // as sent (not trimmed)
  std::optional<bool> truncate;  // nullopt: absent or null
};

// V1–V3 on a parsed body.
Envelope check_envelope(const Value& body);

// Q1–Q11 and D1–D5 on a body that passed check_envelope(). `model_name` is the canonical name of
// the resolved model (used in the D3 message). Consumes `body` (the state and values are moved out).
DecisionRequest build_request(Value body, const RequestLimits& limits, const MediaSupport& media,
                              std::string_view model_name);

// The outcome of model resolution (rules M1 and M2 are the resolver's: it throws DecisionError).
struct ResolvedModel {
  std::string canonical_name;
  MediaSupport media;
};
// Called with the trimmed `model` value.
using ModelResolver = std::function<ResolvedModel(const std::string& trimmed_model)>;

// The whole chain J → V → M → Q → D. Throws DecisionError with the first failing rule.
DecisionRequest parse_request(std::string_view body, const RequestLimits& limits,
                              const ModelResolver& resolve);

// The request body of the CLI shortcut `--state TEXT --questions JSON`:
// {"model":model,"state":state_text,"questions":<questions_json>} (the state is used as a string;
// `questions_json` keeps its member order and number forms). Throws DecisionError J1–J3 when
// `questions_json` is not valid JSON.
std::string shortcut_request_body(std::string_view model, std::string_view state_text,
                                  std::string_view questions_json, const RequestLimits& limits = {});

// Leading and trailing ASCII whitespace removed (how `model` is matched, systemone-api.md §4).
std::string trim_ascii_whitespace(std::string_view s);

}  // namespace verdict::decision
