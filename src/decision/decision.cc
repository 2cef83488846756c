#include "decision/decision.h"

#include <cmath>

#include "decision/render.h"

namespace verdict::decision {

namespace {

Value span_value(const Span& s) {
  Value v = Value::array();
  v.push_back(Value::integer(static_cast<int64_t>(s.begin)));
  v.push_back(Value::integer(static_cast<int64_t>(s.end)));
  return v;
}

}  // namespace

Decision decide(const DecisionRequest& request, const DecisionModel& model, const DecideOptions& options) {
  Decision d;
  d.truncation_in_effect = request.truncate.value_or(options.truncate_by_default);
  d.record = model.encoder.encode(request, options.max_length, d.truncation_in_effect);

  const std::vector<int64_t> seams = record_seams(d.record);
  const HiddenRows hidden = model.backbone(d.record.input_ids, seams);
  d.cached_tokens = hidden.cached_tokens;
  const std::size_t hs = model.head.config().hidden_size;
  if (hidden.rows != d.record.input_ids.size() || hidden.cols != hs ||
      hidden.data.size() != hidden.rows * hs) {
    throw Error("backbone returned " + std::to_string(hidden.rows) + " x " + std::to_string(hidden.cols) +
                " hidden rows for " + std::to_string(d.record.input_ids.size()) + " tokens; the head needs " +
                "hidden size " + std::to_string(hs));
  }
  HeadInput in;
  in.hidden = hidden.data;
  in.input_ids = d.record.input_ids;
  in.questions = d.record.questions;
  in.lexical = model.lexical;
  const auto head = [&] { d.logits = model.head.forward(in, options.precision); };
  if (options.run_head) {
    options.run_head(head);
  } else {
    head();
  }

  d.probabilities.reserve(d.logits.size());
  for (const std::vector<double>& z : d.logits) {
    for (double v : z) {
      if (!std::isfinite(v)) throw non_finite_error(options.request_id);
    }
    d.probabilities.push_back(softmax_f32(z));
  }
  d.answers = build_answers(request, d.probabilities, options.request_id);
  return d;
}

Usage decision_usage(const Decision& decision, std::optional<double> latency_ms, bool with_cache_field) {
  Usage u;
  u.input_tokens = decision.record.input_ids.size();
  u.latency_ms = latency_ms;
  if (with_cache_field) u.cached_tokens = decision.cached_tokens;
  if (decision.truncation_in_effect) u.truncated_tokens = decision.record.dropped_tokens();
  return u;
}

Value explain_value(const DecisionRequest& request, const Decision& decision) {
  Value e = Value::object();
  e.set("record_text", Value::string(record_text(request)));
  Value ids = Value::array();
  for (TokenId id : decision.record.input_ids) ids.push_back(Value::integer(id));
  e.set("input_ids", std::move(ids));
  Value questions = Value::array();
  for (std::size_t i = 0; i < decision.record.questions.size(); ++i) {
    const EncodedQuestion& q = decision.record.questions[i];
    Value v = Value::object();
    v.set("question_id", Value::string(q.question_id));
    v.set("type", Value::string(std::string(question_type_name(request.questions[i].type))));
    v.set("question_span", span_value(q.question_span));
    Value spans = Value::array();
    for (const Span& s : q.option_spans) spans.push_back(span_value(s));
    v.set("option_spans", std::move(spans));
    Value option_ids = Value::array();
    for (const std::string& id : q.option_ids) option_ids.push_back(Value::string(id));
    v.set("option_ids", std::move(option_ids));
    Value probs = Value::array();
    for (double p : decision.probabilities[i]) probs.push_back(Value::floating(p));
    v.set("probabilities", std::move(probs));
    questions.push_back(std::move(v));
  }
  e.set("questions", std::move(questions));
  return e;
}

SystemOneResult answer_systemone(std::string_view body, const DecisionModel& model,
                                 const SystemOneOptions& options) {
  SystemOneResult result;
  try {
    ModelResolver resolve = options.resolve;
    if (!resolve) {
      resolve = [&](const std::string&) { return ResolvedModel{options.model_name, MediaSupport{}}; };
    }
    Value parsed = read_request_body(body, options.limits);
    const Envelope env = check_envelope(parsed);
    const ResolvedModel resolved = resolve(trim_ascii_whitespace(env.model));
    const DecisionRequest request =
        build_request(std::move(parsed), options.limits, resolved.media, resolved.canonical_name);
    Decision d = decide(request, model, options.decide);

    std::optional<double> latency;
    if (options.received_at) {
      latency =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - *options.received_at)
              .count();
    }
    const Usage usage = decision_usage(d, latency, options.received_at.has_value());
    std::string out = response_json(resolved.canonical_name, d.answers, usage);
    if (options.explain) {
      out.pop_back();  // the closing '}'
      out += ",\"explain\":";
      write_json(explain_value(request, d), /*sort_keys=*/false, out);
      out += '}';
    }
    result.status = 200;
    result.body = std::move(out);
    result.decision = std::move(d);
  } catch (const DecisionError& e) {
    result.status = e.status();
    result.body = e.body();
  } catch (const std::exception& e) {
    // A fault inside verdict (backbone, head, allocation): rule I1; the details go to the log.
    result.status = 500;
    result.internal_error = e.what();
    result.body = error_body(500, "internal_error",
                             "internal server error (request id " + options.decide.request_id + ")");
  }
  return result;
}

}  // namespace verdict::decision
