// From logits to SystemOne answers (clef-decision.md §8, systemone-api.md §8): per-question fp32
// softmax, Python round(x, 4), the noul / choice / score answer shapes, usage and the response.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decision/json_value.h"
#include "decision/request.h"

namespace verdict::decision {

// softmax(z) computed in fp32 with max subtraction (as the reference does after converting the
// logits to fp32), each probability widened to double.
std::vector<double> softmax_f32(std::span<const double> logits);

// Python's round(x, digits) for 0 ≤ digits ≤ 17: the exact binary value rounded to `digits`
// decimals, exact ties to even (round_decimals(0.03125, 4) = 0.0312), -0.0 kept. Non-finite values
// are returned unchanged.
double round_decimals(double x, int digits);
inline double round4(double x) { return round_decimals(x, 4); }

// The `answers` object: one entry per question in request order. `probabilities[i]` holds the
// unrounded probabilities of question i in the head's option order. Throws DecisionError 500
// (non_finite_output, with `request_id` in the message) when a probability is not finite.
Value build_answers(const DecisionRequest& request, const std::vector<std::vector<double>>& probabilities,
                    std::string_view request_id = "-");

// DecisionError 500 `non_finite_output` (rule I2).
DecisionError non_finite_error(std::string_view request_id);

struct Usage {
  std::size_t input_tokens = 0;                 // encoded length actually run
  std::optional<double> latency_ms;             // written rounded to 0.1 ms when set
  std::optional<std::size_t> cached_tokens;     // written when set
  std::optional<std::size_t> truncated_tokens;  // only when truncation was in effect
};

// {"input_tokens":…,"output_tokens":0[,"latency_ms":…][,"cached_tokens":…][,"truncated_tokens":…]}
Value usage_value(const Usage& usage);

// {"model":…,"answers":…,"usage":…} as compact JSON.
std::string response_json(std::string_view model_name, const Value& answers, const Usage& usage);

}  // namespace verdict::decision
