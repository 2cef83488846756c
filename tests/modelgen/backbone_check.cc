#include "backbone_check.h"

#include <algorithm>
#include <cmath>

#include "models/qwen35/backbone.h"
#include "tokenizer/tokenizer.h"

namespace verdict::modelgen::testing {

ForwardStats run_backbone(const std::string& dir, const std::string& text) {
  const auto tok = tokenizer::Tokenizer::from_file(dir + "/tokenizer.json");
  const std::vector<int32_t> ids = tok.encode(text);
  const auto model = models::qwen35::Backbone::load(dir);
  auto pool = model->make_pool(1, static_cast<int64_t>(ids.size()));
  const int64_t last = static_cast<int64_t>(ids.size()) - 1;
  const auto out = model->prefill(pool, pool.acquire(), ids, std::span<const int64_t>(&last, 1), 16);
  ForwardStats s;
  s.min_row_rms = 1e30;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    const auto row = out.hidden_row(0, static_cast<int64_t>(t));
    double sum2 = 0;
    for (float v : row) {
      s.finite = s.finite && std::isfinite(v);
      sum2 += static_cast<double>(v) * v;
    }
    const double rms = std::sqrt(sum2 / static_cast<double>(row.size()));
    s.min_row_rms = std::min(s.min_row_rms, rms);
    s.max_row_rms = std::max(s.max_row_rms, rms);
    s.hidden.emplace_back(row.begin(), row.end());
  }
  const auto logits = out.logits_row(0, 0);
  s.last_logits.assign(logits.begin(), logits.end());
  double mean = 0;
  for (float v : logits) {
    s.finite = s.finite && std::isfinite(v);
    mean += v;
  }
  mean /= static_cast<double>(logits.size());
  double var = 0;
  for (float v : logits) var += (v - mean) * (v - mean);
  s.logits_std = std::sqrt(var / static_cast<double>(logits.size()));
  return s;
}

}  // namespace verdict::modelgen::testing
