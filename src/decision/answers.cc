#include "decision/answers.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "decision/render.h"

namespace verdict::decision {

std::vector<double> softmax_f32(std::span<const double> logits) {
  std::vector<float> z(logits.begin(), logits.end());
  float max = -std::numeric_limits<float>::infinity();
  for (float v : z) max = std::max(max, v);
  float sum = 0.0f;
  for (float& v : z) {
    v = std::exp(v - max);
    sum += v;
  }
  std::vector<double> p;
  p.reserve(z.size());
  for (float v : z) p.push_back(static_cast<double>(v / sum));
  return p;
}

double round_decimals(double x, int digits) {
  if (!std::isfinite(x) || digits < 0 || digits > 17) return x;
  // std::to_chars with a precision formats the exact binary value, rounding ties to even, exactly
  // as CPython's round() does through its correctly rounded dtoa; from_chars reads it back.
  char buf[400];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, digits);
  double out = 0;
  std::from_chars(buf, res.ptr, out);
  if (out == 0.0) out = std::copysign(0.0, x);
  return out;
}

DecisionError non_finite_error(std::string_view request_id) {
  return DecisionError(
      500, "non_finite_output",
      "internal server error: non-finite scores (request id " + std::string(request_id) + ")");
}

Value build_answers(const DecisionRequest& request, const std::vector<std::vector<double>>& probabilities,
                    std::string_view request_id) {
  if (probabilities.size() != request.questions.size()) {
    throw Error("answers: " + std::to_string(probabilities.size()) + " probability lists for " +
                std::to_string(request.questions.size()) + " questions");
  }
  Value answers = Value::object();
  for (std::size_t i = 0; i < request.questions.size(); ++i) {
    const Question& q = request.questions[i];
    const std::vector<double>& p = probabilities[i];
    if (p.size() != q.options.size()) throw Error("answers: wrong number of probabilities for " + q.id);
    for (double v : p) {
      if (!std::isfinite(v)) throw non_finite_error(request_id);
    }
    Value a = Value::object();
    a.set("type", Value::string(std::string(question_type_name(q.type))));
    switch (q.type) {
      case QuestionType::kNoul:
        a.set("noul", Value::floating(round4(p[0])));  // options are true, false
        break;
      case QuestionType::kChoice: {
        // The first maximum in request order (ties go to the earliest key as sent).
        std::size_t best = q.request_order[0];
        for (std::size_t h : q.request_order) {
          if (p[h] > p[best]) best = h;
        }
        a.set("choice", Value::string(q.options[best].id));
        a.set("confidence", Value::floating(round4(p[best])));
        Value probs = Value::object();
        for (std::size_t h : q.request_order) {
          probs.members().push_back(Member{q.options[h].id, Value::floating(round4(p[h]))});
        }
        a.set("probabilities", std::move(probs));
        break;
      }
      case QuestionType::kScore: {
        double expected = 0.0;
        double max = p[0];
        for (std::size_t k = 0; k < p.size(); ++k) {
          expected += static_cast<double>(k) * p[k];
          max = std::max(max, p[k]);
        }
        a.set("score", Value::floating(round4(expected)));
        a.set("confidence", Value::floating(round4(max)));
        Value legend = Value::object();
        Value probs = Value::object();
        for (std::size_t k = 0; k < p.size(); ++k) {
          legend.members().push_back(Member{std::to_string(k), q.levels[k]});
          probs.members().push_back(Member{std::to_string(k), Value::floating(round4(p[k]))});
        }
        a.set("legend", std::move(legend));
        a.set("probabilities", std::move(probs));
        break;
      }
    }
    // Question ids are unique (duplicate keys were merged when the body was read).
    answers.members().push_back(Member{q.id, std::move(a)});
  }
  return answers;
}

Value usage_value(const Usage& usage) {
  Value u = Value::object();
  u.set("input_tokens", Value::integer(static_cast<int64_t>(usage.input_tokens)));
  u.set("output_tokens", Value::integer(0));
  if (usage.latency_ms) u.set("latency_ms", Value::floating(round_decimals(*usage.latency_ms, 1)));
  if (usage.cached_tokens) u.set("cached_tokens", Value::integer(static_cast<int64_t>(*usage.cached_tokens)));
  if (usage.truncated_tokens) {
    u.set("truncated_tokens", Value::integer(static_cast<int64_t>(*usage.truncated_tokens)));
  }
  return u;
}

std::string response_json(std::string_view model_name, const Value& answers, const Usage& usage) {
  std::string out = "{\"model\":";
  append_json_string(out, model_name);
  out += ",\"answers\":";
  write_json(answers, /*sort_keys=*/false, out);
  out += ",\"usage\":";
  write_json(usage_value(usage), /*sort_keys=*/false, out);
  out += '}';
  return out;
}

}  // namespace verdict::decision
