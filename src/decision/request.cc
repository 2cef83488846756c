#include "decision/request.h"

#include <algorithm>
#include <numeric>

#include "decision/render.h"

namespace verdict::decision {

namespace {

DecisionError bad_request(const char* code, const std::string& message) {
  return DecisionError(400, code, message);
}

// Moves the value of `key` out of `object` (nullopt when absent).
std::optional<Value> take(Value& object, std::string_view key) {
  if (Value* v = object.find(key)) return std::move(*v);
  return std::nullopt;
}

std::optional<QuestionType> parse_type(const Value* type) {
  if (type == nullptr || !type->is_string()) return std::nullopt;
  const std::string& s = type->as_string();
  if (s == "noul") return QuestionType::kNoul;
  if (s == "choice") return QuestionType::kChoice;
  if (s == "score") return QuestionType::kScore;
  return std::nullopt;
}

std::optional<Value> description_of(Value v) {
  if (v.is_null()) return std::nullopt;
  return v;
}

// Rules Q3–Q11 for one question; builds its options in head order.
Question build_question(std::string id, Value q, const RequestLimits& limits) {
  if (!q.is_object()) throw bad_request("invalid_question", id + ": question must be an object");
  const std::optional<QuestionType> type = parse_type(q.find("type"));
  if (!type) {
    throw bad_request("invalid_question_type", id + ": type must be noul, choice, or score");
  }
  std::optional<Value> criteria = take(q, "criteria");
  const bool truthy = criteria && criteria->truthy();

  Question out;
  out.type = *type;
  switch (*type) {
    case QuestionType::kChoice: {
      if (!truthy) throw bad_request("empty_criteria", id + ": criteria must not be empty");
      if (!criteria->is_object()) {
        throw bad_request("invalid_criteria",
                          id + ": choice criteria must be an object mapping option ids to descriptions");
      }
      std::vector<Member>& members = criteria->members();
      if (members.size() > limits.max_choice_options) {
        throw bad_request("too_many_options",
                          id + ": too many options per choice: " + std::to_string(members.size()) +
                              " given; maximum is " + std::to_string(limits.max_choice_options));
      }
      // Head order: keys sorted by code point (= UTF-8 byte order); keys are unique after parsing.
      std::vector<std::size_t> sorted(members.size());
      std::iota(sorted.begin(), sorted.end(), std::size_t{0});
      std::sort(sorted.begin(), sorted.end(),
                [&](std::size_t a, std::size_t b) { return members[a].key < members[b].key; });
      out.request_order.resize(members.size());
      for (std::size_t h = 0; h < sorted.size(); ++h) {
        Member& m = members[sorted[h]];
        out.options.push_back(Option{m.key, description_of(std::move(m.value))});
        out.request_order[sorted[h]] = h;
      }
      break;
    }
    case QuestionType::kScore: {
      if (!truthy) throw bad_request("empty_criteria", id + ": criteria must not be empty");
      if (!criteria->is_array()) {
        throw bad_request("invalid_criteria", id + ": score criteria must be an array of level descriptions");
      }
      std::vector<Value>& levels = criteria->items();
      if (levels.size() > limits.max_score_levels) {
        throw bad_request("too_many_levels",
                          id + ": too many score levels: " + std::to_string(levels.size()) +
                              " given; maximum is " + std::to_string(limits.max_score_levels));
      }
      for (std::size_t k = 0; k < levels.size(); ++k) {
        out.options.push_back(Option{std::to_string(k), description_of(levels[k])});
        out.request_order.push_back(k);
      }
      out.levels = std::move(levels);
      break;
    }
    case QuestionType::kNoul: {
      std::optional<Value> true_desc = Value::string(std::string(kNoulTrueDefault));
      std::optional<Value> false_desc = Value::string(std::string(kNoulFalseDefault));
      if (truthy) {
        if (!criteria->is_object()) {
          throw bad_request(
              "invalid_criteria",
              id + ": noul criteria must be an object with optional \"true\" and \"false\" keys");
        }
        if (std::optional<Value> t = take(*criteria, "true")) true_desc = description_of(std::move(*t));
        if (std::optional<Value> f = take(*criteria, "false")) false_desc = description_of(std::move(*f));
      }
      out.options.push_back(Option{"true", std::move(true_desc)});
      out.options.push_back(Option{"false", std::move(false_desc)});
      out.request_order = {0, 1};
      break;
    }
  }

  std::optional<Value> instructions = take(q, "instructions");
  const bool fallback = !instructions || instructions->is_null() ||
                        (instructions->is_string() && instructions->as_string().empty());
  if (fallback && id.empty()) {
    throw bad_request("empty_question_text", "a question with an empty id needs non-empty instructions");
  }
  out.instruction = fallback ? Value::string(id) : std::move(*instructions);
  out.id = std::move(id);
  return out;
}

bool is_base64(std::string_view s) {
  std::size_t end = s.size();
  std::size_t padding = 0;
  while (end > 0 && s[end - 1] == '=' && padding < 2) {
    --end;
    ++padding;
  }
  if (end == 0) return false;
  for (std::size_t i = 0; i < end; ++i) {
    const char c = s[i];
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (!ok) return false;
  }
  if (padding > 0) return s.size() % 4 == 0;
  return s.size() % 4 != 1;
}

// A data URL "data:<media type>;base64,<payload>" or a bare base64 payload.
bool is_media_item(std::string_view s) {
  if (s.rfind("data:", 0) == 0) {
    const std::size_t comma = s.find(',');
    if (comma == std::string_view::npos) return false;
    const std::string_view meta = s.substr(5, comma - 5);
    constexpr std::string_view kSuffix = ";base64";
    if (meta.size() < kSuffix.size() || meta.substr(meta.size() - kSuffix.size()) != kSuffix) return false;
    return is_base64(s.substr(comma + 1));
  }
  return is_base64(s);
}

struct MediaField {
  const char* name;
  bool supported;
  std::size_t max;
  std::optional<Value> value;
  std::vector<std::string>* items;  // where accepted items go
};

// D1–D5, applied rule by rule over the fields images, files, audio, videos.
void check_media(Value& body, const RequestLimits& limits, const MediaSupport& media,
                 std::string_view model_name, DecisionRequest& out) {
  MediaField fields[] = {{"images", media.images, limits.max_images, take(body, "images"), &out.images},
                         {"files", media.images, limits.max_images, take(body, "files"), &out.images},
                         {"audio", media.audio, limits.max_audio, take(body, "audio"), &out.audio},
                         {"videos", media.videos, limits.max_videos, take(body, "videos"), &out.videos}};
  for (MediaField& f : fields) {  // D1
    if (f.value && !f.value->is_null() && !f.value->is_array()) {
      throw bad_request("invalid_media", std::string(f.name) + " must be an array");
    }
  }
  auto count = [](const MediaField& f) { return f.value && f.value->is_array() ? f.value->size() : 0; };
  if (count(fields[0]) > 0 && count(fields[1]) > 0) {  // D2
    throw bad_request("invalid_media", "send images or files, not both");
  }
  for (const MediaField& f : fields) {  // D3
    if (count(f) > 0 && !f.supported) {
      throw bad_request("unsupported_media",
                        "model '" + std::string(model_name) + "' does not accept " + f.name);
    }
  }
  for (const MediaField& f : fields) {  // D4
    if (count(f) > f.max) {
      throw bad_request("too_many_media", "too many " + std::string(f.name) + ": " +
                                              std::to_string(count(f)) + " given; maximum is " +
                                              std::to_string(f.max));
    }
  }
  for (MediaField& f : fields) {  // D5
    if (count(f) == 0) continue;
    std::vector<Value>& items = f.value->items();
    for (std::size_t k = 0; k < items.size(); ++k) {
      if (!items[k].is_string() || !is_media_item(items[k].as_string())) {
        throw bad_request("invalid_media", std::string(f.name) + "[" + std::to_string(k) +
                                               "]: expected a base64 data URL or a base64 string");
      }
      f.items->push_back(items[k].as_string());
    }
  }
}

}  // namespace

std::string_view question_type_name(QuestionType type) {
  switch (type) {
    case QuestionType::kNoul:
      return "noul";
    case QuestionType::kChoice:
      return "choice";
    case QuestionType::kScore:
      return "score";
  }
  return "noul";
}

std::string trim_ascii_whitespace(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

Value read_request_body(std::string_view body, const RequestLimits& limits) {
  JsonReadOptions options;
  options.max_depth = limits.max_json_depth;
  try {
    return read_json(body, options);
  } catch (const JsonError& e) {
    switch (e.kind()) {
      case JsonErrorKind::kSyntax:
        throw bad_request("invalid_json", "request body is not valid JSON");
      case JsonErrorKind::kTooDeep:
        throw bad_request("invalid_json", "request body is nested deeper than " +
                                              std::to_string(limits.max_json_depth) + " levels");
      case JsonErrorKind::kFloatOverflow:
        throw bad_request("invalid_json", "request body contains a number too large for a double");
    }
    throw;
  }
}

Envelope check_envelope(const Value& body) {
  if (!body.is_object()) throw bad_request("invalid_request", "request body must be a JSON object");
  const Value* model = body.find("model");
  if (model == nullptr || !model->is_string() || body.find("state") == nullptr) {
    throw bad_request("missing_field", "model and state are required");
  }
  Envelope env;
  env.model = model->as_string();
  if (const Value* t = body.find("truncate"); t != nullptr && !t->is_null()) {
    if (!t->is_bool()) throw bad_request("invalid_field", "truncate must be a boolean");
    env.truncate = t->as_bool();
  }
  return env;
}

DecisionRequest build_request(Value body, const RequestLimits& limits, const MediaSupport& media,
                              std::string_view model_name) {
  const Envelope env = check_envelope(body);
  DecisionRequest out;
  out.model = env.model;
  out.truncate = env.truncate;
  out.state = std::move(*body.find("state"));

  Value* questions = body.find("questions");
  if (questions == nullptr || !questions->is_object() || questions->size() == 0) {
    throw bad_request("missing_questions", "at least one question is required");
  }
  std::vector<Member>& members = questions->members();
  if (members.size() > limits.max_questions) {
    throw bad_request("too_many_questions", "too many questions: " + std::to_string(members.size()) +
                                                " given; maximum is " + std::to_string(limits.max_questions));
  }
  out.questions.reserve(members.size());
  for (Member& m : members) out.questions.push_back(build_question(m.key, std::move(m.value), limits));

  check_media(body, limits, media, model_name, out);
  return out;
}

std::string shortcut_request_body(std::string_view model, std::string_view state_text,
                                  std::string_view questions_json, const RequestLimits& limits) {
  Value body = Value::object();
  body.set("model", Value::string(std::string(model)));
  body.set("state", Value::string(std::string(state_text)));
  body.set("questions", read_request_body(questions_json, limits));
  return write_json(body, /*sort_keys=*/false);
}

DecisionRequest parse_request(std::string_view body, const RequestLimits& limits,
                              const ModelResolver& resolve) {
  Value parsed = read_request_body(body, limits);
  const Envelope env = check_envelope(parsed);
  const ResolvedModel model = resolve(trim_ascii_whitespace(env.model));
  return build_request(std::move(parsed), limits, model.media, model.canonical_name);
}

}  // namespace verdict::decision
